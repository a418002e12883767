"""How the ``run``, ``demo`` and ``trace`` commands show steps, answers and traces."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from langchain_agent_rules.agent.result import RunResult

__all__ = ["STATUS_STYLES", "print_result", "print_step", "shorten", "trace_table"]

STATUS_STYLES = {"ok": "green", "repeated": "yellow", "rejected": "yellow"}
_ARGS_WIDTH = 70
_OBSERVATION_WIDTH = 60


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _args_text(args: Mapping[str, Any]) -> str:
    return shorten(json.dumps(args, ensure_ascii=False), _ARGS_WIDTH)


def print_step(console: Console, step: Mapping[str, Any]) -> None:
    """One line for one tool call: tool, arguments, status and time."""
    status = str(step["status"])
    style = STATUS_STYLES.get(status, "red")
    console.print(
        f"  [bold]{escape(str(step['tool']))}[/bold] {escape(_args_text(step['args']))} "
        f"[{style}]{escape(status)}[/{style}] [dim]{float(step['duration_ms']):.0f} ms[/dim]",
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
    for event in result.rule_events:
        console.print(
            f"[yellow]rule {escape(event['rule_id'])} {escape(event['status'])}: "
            f"{escape(event['detail'])}[/yellow]",
            highlight=False,
        )
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


def trace_table(thread_id: str, steps: Sequence[Mapping[str, Any]]) -> Table:
    """A stored trace as a table: one row per tool call."""
    table = Table(title=f"trace of thread {thread_id}", title_justify="left")
    for column, justify in (
        ("step", "right"),
        ("tool", "left"),
        ("status", "left"),
        ("ms", "right"),
        ("args", "left"),
        ("observation", "left"),
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
        )
    return table
