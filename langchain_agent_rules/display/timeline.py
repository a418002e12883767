"""A run as a picture: its model calls and tool calls on a time axis (`timeline_chart`)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.display._common import (
    event_places,
    label,
    status_colour,
    step_events,
    summary,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "MATPLOTLIB_MISSING",
    "ORDER_AXIS_LABEL",
    "PURPOSE_COLOURS",
    "TIME_AXIS_LABEL",
    "TimelineChart",
    "timeline_chart",
]

MATPLOTLIB_MISSING = (
    "timeline_chart needs matplotlib; install it with: "
    'pip install "langchain-agent-rules[notebooks]"'
)
PURPOSE_COLOURS = {
    "turn": "#57606a",
    "review": "#8250df",
    "revision": "#bf3989",
    "summary": "#0969da",
}
"""The colour of a model call by its purpose (`ModelCallPurpose`)."""

TIME_AXIS_LABEL = "seconds from the start of the run"
ORDER_AXIS_LABEL = "steps in order (this run was stored without times)"
_WAIT_COLOUR = "#8c959f"
_WAIT_LABEL = "waiting for approval"
# A box narrower than this share of the run is drawn this wide, so a 1 ms tool call
# beside 10 s model calls can still be seen; its label gives its real duration.
_MIN_WIDTH_SHARE = 0.004
# A model call's label goes inside its box when the box is this wide (share of the run).
_INSIDE_LABEL_SHARE = 0.06
# Labels of boxes this far right are written to their left, so they stay in the chart.
_LEFT_LABEL_SHARE = 0.7


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
    """One box: its lane, where it starts and how wide it is, and what it says.

    ``gid`` names what the box shows (``model:<n>``, ``tool:<step>``, ``wait:<step>``,
    or in the ordered chart ``turn:<n>``, ``answer``); it is the patch's ``gid``.
    """

    gid: str
    lane: int
    start: float
    width: float
    text: str
    colour: str
    inside: bool = True
    hatched: bool = False


def timeline_chart(run: RunResult) -> TimelineChart:
    """``run`` on a time axis: a box per model call and per tool call, at its time.

    The x axis is in seconds from the run's start. Model calls are on the top lane,
    coloured by purpose (`PURPOSE_COLOURS`: a ``turn`` of the loop, a ``review`` or
    ``revision`` of the answer for the rules, a ``summary`` after a spent budget); the
    turn that gave the answer is labelled ``answer``. Tool calls are below, coloured by
    status, the calls of one turn one above the other (they run concurrently), each
    labelled with its step, tool, status, duration and what the rules did. The time
    a call waited for a human's approval is a hatched box before it. Very short calls
    are drawn a little wider than they lasted, so they stay visible.

    A run stored by an earlier version of this package has no times: then the chart
    shows its steps in order (a box per model turn, per tool call and for the answer).
    Raises `ImportError` naming the ``notebooks`` extra when matplotlib is missing.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(MATPLOTLIB_MISSING) from error

    timed = bool(run.model_calls) and all("started_at" in step for step in run.trace)
    boxes = _timed_boxes(run) if timed else _ordered_boxes(run)
    lanes = max((box.lane for box in boxes), default=0) + 1
    end = max((box.start + box.width for box in boxes), default=1.0)
    width = 10.0 if timed else min(2.0 + 1.4 * end, 24.0)
    figure = Figure(figsize=(width, min(1.6 + 0.7 * lanes, 12.0)), layout="constrained")
    axes = figure.subplots()
    for box in boxes:
        _draw(axes, box, end)
    axes.set_yticks(range(lanes), ["model", "tools", *[""] * (lanes - 2)][:lanes])
    axes.set_ylim(lanes - 0.5, -0.5)
    if timed:
        axes.set_xlim(0, end * 1.02)
        axes.set_xlabel(TIME_AXIS_LABEL)
    else:
        axes.set_xlim(0, end)
        axes.set_xticks([])
        axes.set_xlabel(ORDER_AXIS_LABEL)
    title = summary(run)
    axes.set_title(title, loc="left", fontsize=10)
    _legend(axes, run, boxes)
    return TimelineChart(figure, title)


def _draw(axes: Axes, box: _Box, end: float) -> None:
    if box.hatched:
        [patch] = axes.barh(
            box.lane,
            box.width,
            left=box.start,
            height=0.8,
            fill=False,
            hatch="//",
            edgecolor=box.colour,
            linewidth=0.8,
        )
    else:
        # A white edge keeps back-to-back model calls apart; a thin tool box keeps its colour.
        [patch] = axes.barh(
            box.lane,
            box.width,
            left=box.start,
            height=0.8,
            color=box.colour,
            edgecolor="white" if box.lane == 0 else box.colour,
            linewidth=1.0 if box.lane == 0 else 0.0,
        )
    patch.set_gid(box.gid)
    if not box.text:
        return
    if box.inside:
        x, align, colour = box.start + box.width / 2, "center", "white"
        if box.hatched:
            colour = "#24292f"
    elif box.start > end * _LEFT_LABEL_SHARE:
        x, align, colour = box.start - end * 0.005, "right", "#24292f"
    else:
        x, align, colour = box.start + box.width + end * 0.005, "left", "#24292f"
    text = axes.text(x, box.lane, box.text, ha=align, va="center", fontsize=7, color=colour)
    text.set_gid(box.gid)


def _legend(axes: Axes, run: RunResult, boxes: Sequence[_Box]) -> None:
    from matplotlib.patches import Patch

    purposes = dict.fromkeys(str(call["purpose"]) for call in run.model_calls)
    handles = [
        Patch(color=PURPOSE_COLOURS.get(p, PURPOSE_COLOURS["turn"]), label=f"model: {p}")
        for p in purposes or ["turn"]
    ]
    statuses = dict.fromkeys(str(step["status"]) for step in run.trace)
    handles += [Patch(color=status_colour(s), label=label(s, 16)) for s in statuses]
    if any(box.hatched for box in boxes):
        handles.append(Patch(fill=False, hatch="//", edgecolor=_WAIT_COLOUR, label=_WAIT_LABEL))
    axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)


# --- on a time axis ----------------------------------------------------------------------


def _end(span: Mapping[str, Any]) -> float:
    return float(span["started_at"]) + float(span["duration_ms"]) / 1000


def _call_names(run: RunResult) -> list[str]:
    """``turn 1``, ``turn 2``, ... ``answer`` (the turn that answered), ``revision``, ..."""
    turns = [i for i, call in enumerate(run.model_calls) if call["purpose"] == "turn"]
    answered = turns[-1] if turns and run.stop_reason == "final" else None
    names = []
    for index, call in enumerate(run.model_calls):
        if index == answered:
            names.append("answer")
        elif call["purpose"] == "turn":
            names.append(f"turn {turns.index(index) + 1}")
        else:
            names.append(str(call["purpose"]))
    return names


def _timed_boxes(run: RunResult) -> list[_Box]:
    spans: list[Mapping[str, Any]] = [*run.model_calls, *run.trace]
    origin = min(float(span["started_at"]) for span in spans)
    run_seconds = max(max(_end(span) for span in spans) - origin, 1e-3)
    shortest = run_seconds * _MIN_WIDTH_SHARE

    def box_at(gid: str, lane: int, span: Mapping[str, Any], text: str, colour: str) -> _Box:
        seconds = float(span["duration_ms"]) / 1000
        inside = lane == 0
        if inside and seconds < run_seconds * _INSIDE_LABEL_SHARE:
            text = ""
        start = float(span["started_at"]) - origin
        return _Box(gid, lane, start, max(seconds, shortest), text, colour, inside)

    boxes = [
        box_at(
            f"model:{index + 1}",
            0,
            call,
            f"{name}\n{_duration(float(call['duration_ms']))}",
            PURPOSE_COLOURS.get(str(call["purpose"]), PURPOSE_COLOURS["turn"]),
        )
        for index, (call, name) in enumerate(zip(run.model_calls, _call_names(run), strict=True))
    ]
    call_ends = sorted(_end(call) for call in run.model_calls)
    for lane, step in _tool_lanes(run.trace):
        boxes.append(
            box_at(
                f"tool:{step['step']}",
                lane,
                step,
                "\n".join(_step_lines(step)),
                status_colour(str(step["status"])),
            )
        )
        if step.get("approval"):
            started = float(step["started_at"])
            asked = max((e for e in call_ends if e <= started), default=started)
            if started > asked:
                wait = started - asked
                text = "approval" if wait >= run_seconds * _INSIDE_LABEL_SHARE else ""
                boxes.append(
                    _Box(
                        f"wait:{step['step']}",
                        lane,
                        asked - origin,
                        wait,
                        text,
                        _WAIT_COLOUR,
                        hatched=True,
                    )
                )
    return boxes


def _tool_lanes(steps: Sequence[Mapping[str, Any]]) -> list[tuple[int, Mapping[str, Any]]]:
    """Each step with its lane: the calls of one turn one above the other, from lane 1."""
    seen: dict[int, int] = {}
    lanes = []
    for step in steps:
        turn = int(step["iteration"])
        seen[turn] = seen.get(turn, 0) + 1
        lanes.append((seen[turn], step))
    return lanes


def _step_lines(step: Mapping[str, Any]) -> list[str]:
    return [
        f"{step['step']} {label(str(step['tool']), 16)}",
        f"{label(str(step['status']), 16)} {_duration(float(step['duration_ms']))}",
        *_acted(step_events(step)),
    ]


def _duration(milliseconds: float) -> str:
    return f"{milliseconds / 1000:,.1f} s" if milliseconds >= 1000 else f"{milliseconds:,.1f} ms"


# --- in order, for runs stored without times ------------------------------------------------


def _ordered_boxes(run: RunResult) -> list[_Box]:
    """The model turns, tool calls and answer of ``run`` in order, one slot each."""
    boxes: list[_Box] = []
    turns: dict[int, list[Mapping[str, Any]]] = {}
    for traced in run.trace:
        turns.setdefault(int(traced["iteration"]), []).append(traced)
    slot = 0
    for turn, steps in turns.items():
        boxes.append(_slot(f"turn:{turn}", slot, 0, f"turn {turn}", PURPOSE_COLOURS["turn"]))
        for lane, step in enumerate(steps, start=1):
            lines = [
                f"{step['step']} {label(str(step['tool']), 16)}",
                label(str(step["status"]), 16),
                f"{float(step['duration_ms']):,.1f} ms",
                *_acted(step_events(step)),
            ]
            colour = status_colour(str(step["status"]))
            boxes.append(_slot(f"tool:{step['step']}", slot + 1, lane, "\n".join(lines), colour))
        slot += 2
    answer_calls = run.usage["model_calls"] - len(turns)
    if answer_calls > 0:
        places = event_places(run)
        answer_events = [e for e, p in zip(run.rule_events, places, strict=True) if p == "answer"]
        lines = ["answer", *([f"{answer_calls} calls"] if answer_calls > 1 else [])]
        text = "\n".join([*lines, *_acted(answer_events)])
        boxes.append(_slot("answer", slot, 0, text, PURPOSE_COLOURS["turn"]))
    return boxes


def _slot(gid: str, slot: int, lane: int, text: str, colour: str) -> _Box:
    return _Box(gid, lane, slot + 0.05, 0.9, text, colour)


def _acted(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line naming what the rules' checks did (passed checks left out), or none."""
    done = dict.fromkeys(str(e["status"]) for e in events if e["status"] != "passed")
    return [label(f"rule: {', '.join(done)}", 40)] if done else []
