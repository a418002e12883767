"""Show a run in a notebook or a terminal: its trace, its rule events and a timeline.

Example:
    .. code-block:: python

        from langchain_agent_rules import rule_events_table, timeline_chart, trace_table

        result = agent.invoke("How many active customers do we have?")
        trace_table(result)  # one row per tool call
        rule_events_table(result)  # what the rules' checks did, and where
        timeline_chart(result)  # model turns and tool calls (the notebooks extra)

In Jupyter each one shows itself (an HTML table, a PNG chart); in a terminal ``print()``
the tables. `timeline_chart` needs matplotlib: ``pip install
"langchain-agent-rules[notebooks]"``.
"""

from __future__ import annotations

import html
import io
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.cli._display import STATUS_STYLES, shorten

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["RunTable", "TimelineChart", "rule_events_table", "timeline_chart", "trace_table"]

MATPLOTLIB_MISSING = (
    "timeline_chart needs matplotlib; install it with: "
    'pip install "langchain-agent-rules[notebooks]"'
)
RULE_STATUS_STYLES = {
    "passed": "green",
    "redacted": "yellow",
    "revised": "yellow",
    "approval": "yellow",
    "omitted": "yellow",
}
"""The colour of each rule event status; ``blocked``, ``denied`` and others are red."""

_NAME_WIDTH = 64
_ARGS_WIDTH = 120
_OBSERVATION_WIDTH = 200
_DETAIL_WIDTH = 200
# Rich style -> colour in HTML and in the chart (GitHub's light palette).
_COLOURS = {"green": "#1a7f37", "yellow": "#9a6700", "red": "#cf222e"}
_MODEL_COLOUR = "#57606a"
# Control characters and lone surrogates: shown as U+FFFD, never sent to a terminal or a
# notebook file (a lone surrogate cannot be written as UTF-8).
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _cell(text: str, width: int) -> str:
    return _UNPRINTABLE.sub("\ufffd", shorten(text, width))


def _label(text: str, width: int) -> str:
    """A cell for the chart: a dollar sign is shown, never read as the start of math."""
    return _cell(text, width).replace("$", r"\$")


def _colour(style: str) -> str:
    return _COLOURS.get(style, _COLOURS["red"])


@dataclass(frozen=True)
class RunTable:
    """Rows about a run: an HTML table in Jupyter, a text table in a terminal.

    ``rows`` hold the cells as shown (one line each, long text cut with an ellipsis);
    ``styles`` the colour of each row's status cell (a rich style: ``green``,
    ``yellow`` or ``red``), the cell in column ``status_column``.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    styles: tuple[str, ...]
    status_column: int

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in self.columns)
        body = []
        for row, style in zip(self.rows, self.styles, strict=True):
            cells = []
            for index, cell in enumerate(row):
                colour = f"color:{_colour(style)};" if index == self.status_column else ""
                cells.append(f"<td style='text-align:left;{colour}'>{html.escape(cell)}</td>")
            body.append(f"<tr>{''.join(cells)}</tr>")
        return (
            f"<table><caption style='text-align:left'>{html.escape(self.title)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )

    def __rich__(self) -> Table:
        table = Table(title=self.title, title_justify="left")
        for column in self.columns:
            table.add_column(column, overflow="fold")
        for row, style in zip(self.rows, self.styles, strict=True):
            table.add_row(
                *[
                    Text(cell, style=style if index == self.status_column else "")
                    for index, cell in enumerate(row)
                ]
            )
        return table

    def __str__(self) -> str:
        width = shutil.get_terminal_size((100, 24)).columns
        text = io.StringIO()
        # force_jupyter=False: in a notebook, rich would display the table instead.
        console = Console(file=text, width=width, color_system=None, force_jupyter=False)
        console.print(self.__rich__())
        return text.getvalue().rstrip("\n")

    __repr__ = __str__


def _step_events(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """What the rules' checks did about one tool call (steps of older runs have none)."""
    return list(step.get("rule_events") or [])


def _rule_marks(step: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{event['rule_id']} {event['status']}"
        for event in _step_events(step)
        if event["status"] != "passed"
    )


def _status_text(step: Mapping[str, Any]) -> str:
    status, approval = str(step["status"]), step.get("approval")
    return f"{status} ({approval})" if approval and approval != status else status


def trace_table(run: RunResult | Sequence[Mapping[str, Any]]) -> RunTable:
    """One row per tool call of ``run`` (a `RunResult` or its ``trace``).

    Columns: step, model turn, tool, status (with the human's decision for calls that
    needed approval), milliseconds, arguments, the observation the model read, and,
    when any rule's check acted on a call, what it did.
    """
    steps = run.trace if isinstance(run, RunResult) else list(run)
    marks = [_rule_marks(step) for step in steps]
    columns = ["step", "turn", "tool", "status", "ms", "args", "observation"]
    if any(marks):
        columns.append("rules")
    rows = []
    for step, mark in zip(steps, marks, strict=True):
        row = [
            str(step["step"]),
            str(step["iteration"]),
            _cell(str(step["tool"]), _NAME_WIDTH),
            _cell(_status_text(step), _NAME_WIDTH),
            f"{float(step['duration_ms']):,.1f}",
            _cell(_json(step["args"]), _ARGS_WIDTH),
            _cell(str(step["observation"]), _OBSERVATION_WIDTH),
        ]
        if any(marks):
            row.append(_cell(mark, _DETAIL_WIDTH))
        rows.append(tuple(row))
    return RunTable(
        title=_summary(run) if isinstance(run, RunResult) else _count(len(steps), "tool call"),
        columns=tuple(columns),
        rows=tuple(rows),
        styles=tuple(STATUS_STYLES.get(str(step["status"]), "red") for step in steps),
        status_column=3,
    )


def rule_events_table(run: RunResult) -> RunTable:
    """One row per rule event of ``run``: the rule, what happened, where, and why.

    Where is ``step N (tool)`` for a check on a tool call or its observation, ``prompt``
    for a rule left out of the prompt (``omitted``) and ``answer`` for the rest.
    """
    places = _event_places(run)
    rows = [
        (
            _cell(str(event["rule_id"]), _NAME_WIDTH),
            _cell(str(event["status"]), _NAME_WIDTH),
            place,
            _cell(str(event["detail"]), _DETAIL_WIDTH),
        )
        for event, place in zip(run.rule_events, places, strict=True)
    ]
    return RunTable(
        title=f"rule events: {len(rows)}",
        columns=("rule", "status", "where", "detail"),
        rows=tuple(rows),
        styles=tuple(RULE_STATUS_STYLES.get(str(e["status"]), "red") for e in run.rule_events),
        status_column=1,
    )


def _event_places(run: RunResult) -> list[str]:
    """Where each of ``run.rule_events`` happened (each step's events matched once)."""
    owners: list[tuple[Mapping[str, Any], str]] = [
        (event, f"step {step['step']} ({step['tool']})")
        for step in run.trace
        for event in _step_events(step)
    ]
    places = []
    for event in run.rule_events:
        owner = next((pair for pair in owners if pair[0] == event), None)
        if owner is not None:
            owners.remove(owner)
            places.append(_cell(owner[1], _NAME_WIDTH))
        else:
            places.append("prompt" if event["status"] == "omitted" else "answer")
    return places


@dataclass(frozen=True)
class TimelineChart:
    """A matplotlib figure of a run's model calls and tool calls; a PNG in Jupyter.

    ``figure`` is a plain `matplotlib.figure.Figure` (no pyplot state): change it or
    save it with ``chart.figure.savefig("run.png")``. ``summary`` is its title.
    """

    figure: Figure
    summary: str

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()

    def __repr__(self) -> str:
        return f"<TimelineChart: {self.summary}>"


@dataclass(frozen=True)
class _Box:
    slot: int
    lane: int
    label: str
    colour: str


def timeline_chart(run: RunResult) -> TimelineChart:
    """``run`` step by step: a box per model call and per tool call, coloured by status.

    The model lane holds a box for each model turn that called tools, then one for the
    answer (with how many model calls it took when the answer was revised, reviewed or
    summarised). The tool calls of a turn follow their model call, one above the other
    (they run concurrently), each labelled with its status and milliseconds. The trace
    does not record when a step started nor how long a model call took, so a box is one
    step, not a span of time. Raises `ImportError` naming the ``notebooks`` extra when
    matplotlib is missing.
    """
    try:
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch
    except ImportError as error:
        raise ImportError(MATPLOTLIB_MISSING) from error

    boxes = _boxes(run)
    slots = max((box.slot for box in boxes), default=0) + 1
    lanes = max((box.lane for box in boxes), default=0) + 1
    figure = Figure(
        figsize=(min(2.0 + 1.4 * slots, 24.0), min(1.4 + 0.7 * lanes, 12.0)),
        layout="constrained",
    )
    axes = figure.subplots()
    axes.barh(
        [box.lane for box in boxes],
        [0.9] * len(boxes),
        left=[box.slot + 0.05 for box in boxes],
        height=0.8,
        color=[box.colour for box in boxes],
    )
    for box in boxes:
        axes.text(
            box.slot + 0.5,
            box.lane,
            box.label,
            ha="center",
            va="center",
            fontsize=7,
            color="white",
        )
    axes.set_yticks(range(lanes), ["model", "tools", *[""] * (lanes - 2)][:lanes])
    axes.set_ylim(lanes - 0.5, -0.5)
    axes.set_xlim(0, slots)
    axes.set_xticks([])
    axes.set_xlabel("steps in order (the trace does not time model calls)")
    summary = _summary(run)
    axes.set_title(summary, loc="left", fontsize=10)
    statuses = dict.fromkeys(str(step["status"]) for step in run.trace)
    axes.legend(
        handles=[
            Patch(color=_MODEL_COLOUR, label="model call"),
            *(
                Patch(color=_colour(STATUS_STYLES.get(s, "red")), label=_label(s, 16))
                for s in statuses
            ),
        ],
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=8,
    )
    return TimelineChart(figure, summary)


def _boxes(run: RunResult) -> list[_Box]:
    """The model calls and tool calls of ``run`` in the order they happened."""
    boxes: list[_Box] = []
    turns: dict[int, list[Mapping[str, Any]]] = {}
    for traced in run.trace:
        turns.setdefault(int(traced["iteration"]), []).append(traced)
    for turn, steps in turns.items():
        slot = len({box.slot for box in boxes})
        boxes.append(_Box(slot, 0, f"turn {turn}", _MODEL_COLOUR))
        for lane, step in enumerate(steps, start=1):
            lines = [
                f"{step['step']} {_label(str(step['tool']), 16)}",
                _label(str(step["status"]), 16),
                f"{float(step['duration_ms']):,.1f} ms",
                *_acted(_step_events(step)),
            ]
            colour = _colour(STATUS_STYLES.get(str(step["status"]), "red"))
            boxes.append(_Box(slot + 1, lane, "\n".join(lines), colour))
    answer_calls = run.usage["model_calls"] - len(turns)
    if answer_calls > 0:
        slot = len({box.slot for box in boxes})
        places = _event_places(run)
        answer_events = [e for e, p in zip(run.rule_events, places, strict=True) if p == "answer"]
        lines = ["answer", *([f"{answer_calls} calls"] if answer_calls > 1 else [])]
        boxes.append(_Box(slot, 0, "\n".join([*lines, *_acted(answer_events)]), _MODEL_COLOUR))
    return boxes


def _acted(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line naming what the rules' checks did (passed checks left out), or none."""
    done = dict.fromkeys(str(e["status"]) for e in events if e["status"] != "passed")
    return [_label(f"rule: {', '.join(done)}", 40)] if done else []


def _summary(run: RunResult) -> str:
    """How many model and tool calls ``run`` made, and why it stopped."""
    return (
        f"{_count(run.usage['model_calls'], 'model call')}, "
        f"{_count(len(run.trace), 'tool call')}, stop: {run.stop_reason}"
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
