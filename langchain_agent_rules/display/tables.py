"""Tables of a run: one row per tool call (`trace_table`), one per rule event."""

from __future__ import annotations

import html
import io
import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.display._common import (
    NAME_WIDTH,
    STATUS_STYLES,
    cell,
    colour,
    count,
    event_places,
    rule_marks,
    summary,
)

__all__ = ["RULE_STATUS_STYLES", "RunTable", "rule_events_table", "trace_table"]

RULE_STATUS_STYLES = {
    "passed": "green",
    "redacted": "yellow",
    "revised": "yellow",
    "approval": "yellow",
    "omitted": "yellow",
}
"""The colour of each rule event status; ``blocked``, ``denied`` and others are red."""

_ARGS_WIDTH = 120
_OBSERVATION_WIDTH = 200
_DETAIL_WIDTH = 200


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
            for index, text in enumerate(row):
                css = f"color:{colour(style)};" if index == self.status_column else ""
                cells.append(f"<td style='text-align:left;{css}'>{html.escape(text)}</td>")
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
                    Text(text, style=style if index == self.status_column else "")
                    for index, text in enumerate(row)
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
    marks = [rule_marks(step) for step in steps]
    columns = ["step", "turn", "tool", "status", "ms", "args", "observation"]
    if any(marks):
        columns.append("rules")
    rows = []
    for step, mark in zip(steps, marks, strict=True):
        row = [
            str(step["step"]),
            str(step["iteration"]),
            cell(str(step["tool"]), NAME_WIDTH),
            cell(_status_text(step), NAME_WIDTH),
            f"{float(step['duration_ms']):,.1f}",
            cell(_json(step["args"]), _ARGS_WIDTH),
            cell(str(step["observation"]), _OBSERVATION_WIDTH),
        ]
        if any(marks):
            row.append(cell(mark, _DETAIL_WIDTH))
        rows.append(tuple(row))
    return RunTable(
        title=summary(run) if isinstance(run, RunResult) else count(len(steps), "tool call"),
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
    places = event_places(run)
    rows = [
        (
            cell(str(event["rule_id"]), NAME_WIDTH),
            cell(str(event["status"]), NAME_WIDTH),
            place,
            cell(str(event["detail"]), _DETAIL_WIDTH),
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


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
