"""How the ``run``, ``demo`` and ``trace`` commands show steps, answers and traces."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from langchain_agent_rules.agent.result import RunResult

__all__ = [
    "RULE_STATUS_STYLES",
    "STATUS_STYLES",
    "print_result",
    "print_step",
    "rule_marks",
    "shorten",
    "trace_table",
]

STATUS_STYLES = {"ok": "green", "repeated": "yellow", "rejected": "yellow"}
RULE_STATUS_STYLES = {
    "passed": "dim green",
    "redacted": "yellow",
    "revised": "yellow",
    "approval": "yellow",
    "omitted": "yellow",
}
_ARGS_WIDTH = 70
_OBSERVATION_WIDTH = 60


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _args_text(args: Mapping[str, Any]) -> str:
    return shorten(json.dumps(args, ensure_ascii=False), _ARGS_WIDTH)


def rule_marks(step: Mapping[str, Any]) -> str:
    """What the rules did to a tool call, as ``<rule> <status>`` (passed checks left out)."""
    return ", ".join(
        f"{event['rule_id']} {event['status']}"
        for event in step.get("rule_events") or []
        if event["status"] != "passed"
    )


def _event_line(event: Mapping[str, Any]) -> str:
    style = RULE_STATUS_STYLES.get(str(event["status"]), "red")
    return (
        f"[{style}]rule {escape(str(event['rule_id']))} {escape(str(event['status']))}: "
        f"{escape(str(event['detail']))}[/{style}]"
    )


def print_step(console: Console, step: Mapping[str, Any]) -> None:
    """One line for one tool call: tool, arguments, status, time and what the rules did."""
    status = str(step["status"])
    style = STATUS_STYLES.get(status, "red")
    marks = rule_marks(step)
    console.print(
        f"  [bold]{escape(str(step['tool']))}[/bold] {escape(_args_text(step['args']))} "
        f"[{style}]{escape(status)}[/{style}] [dim]{float(step['duration_ms']):.0f} ms[/dim]"
        + (f" [yellow](rule {escape(marks)})[/yellow]" if marks else ""),
        highlight=False,
    )


def print_result(console: Console, result: RunResult, *, shown: str = "") -> None:
    """The answer (unless ``shown`` already printed it), rule events, usage and the thread.

    ``shown`` is what was printed while the answer streamed; when it is not the whole
    answer (the model changed course after it), the answer is printed in full.
    """
    if shown.strip() != result.answer.strip():
        if shown:
            console.print()
        console.print(escape(result.answer), highlight=False)
    elif shown:
        console.print()
    step_events = [event for step in result.trace for event in step.get("rule_events") or []]
    for event in _remaining(result.rule_events, step_events):
        console.print(_event_line(event), highlight=False)
    usage = result.usage
    tokens = f"{usage['input_tokens'] + usage['output_tokens']:,} tokens"
    if usage["cached_input_tokens"]:
        tokens += f" ({usage['cached_input_tokens']:,} input tokens from cache)"
    thread = escape(result.thread_id or "")
    console.print(
        f"[dim]stop: {escape(str(result.stop_reason))} · {usage['model_calls']} model call(s), "
        f"{tokens} · thread: {thread} (agent-rules trace {thread})[/dim]",
        highlight=False,
    )


def _remaining(
    events: Sequence[Mapping[str, Any]], shown: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """``events`` without those already shown with their tool call (each one once)."""
    left = list(shown)
    kept = []
    for event in events:
        if event in left:
            left.remove(event)
        else:
            kept.append(event)
    return kept


def trace_table(thread_id: str, steps: Sequence[Mapping[str, Any]]) -> Table:
    """A stored trace as a table: one row per tool call, with what the rules did to it."""
    table = Table(title=f"trace of thread {thread_id}", title_justify="left")
    for column, justify in (
        ("step", "right"),
        ("tool", "left"),
        ("status", "left"),
        ("ms", "right"),
        ("args", "left"),
        ("observation", "left"),
        ("rules", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for step in steps:
        status = str(step["status"])
        style = STATUS_STYLES.get(status, "red")
        table.add_row(
            str(step["step"]),
            escape(str(step["tool"])),
            f"[{style}]{escape(status)}[/{style}]",
            f"{float(step['duration_ms']):.0f}",
            escape(_args_text(step["args"])),
            escape(shorten(str(step["observation"]), _OBSERVATION_WIDTH)),
            f"[yellow]{escape(rule_marks(step))}[/yellow]",
        )
    return table
