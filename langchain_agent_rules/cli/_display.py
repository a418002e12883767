"""How the commands show things: steps, answers, traces, rules and what a change did."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.display._common import STATUS_STYLES, rule_marks, shorten
from langchain_agent_rules.rules.check import RuleCheck
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.suggest import CheckSuggestion

__all__ = [
    "RULE_STATUS_STYLES",
    "print_result",
    "print_step",
    "rule_changes",
    "rule_summary",
    "rules_table",
    "suggestion_lines",
    "trace_table",
]

RULE_STATUS_STYLES = {
    "passed": "dim green",
    "redacted": "yellow",
    "revised": "yellow",
    "approval": "yellow",
    "omitted": "yellow",
}
_ARGS_WIDTH = 70
# A longer id (or tool name and rule marks) folds, so the text columns keep room at 80.
_RULE_WIDTH = 24
# C0 and C1 control characters but newline: a rules file must not drive the terminal.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _args_text(args: Mapping[str, Any]) -> str:
    return _printable(shorten(json.dumps(args, ensure_ascii=False), _ARGS_WIDTH))


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
    """A stored trace as a table whose arguments and observations wrap: nothing is cut.

    One row per tool call; the second column holds the tool over its status, time and
    what the rules did to the call, so the arguments and the observation share the rest
    of the width (about 28 columns each on an 80-column terminal).
    """
    table = Table(
        title=f"trace of thread {thread_id}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )
    table.add_column("step", justify="right", no_wrap=True)
    table.add_column("tool\nstatus, time", overflow="fold", max_width=_RULE_WIDTH)
    table.add_column("args", overflow="fold", ratio=1)
    table.add_column("observation", overflow="fold", ratio=1)
    for step in steps:
        status = str(step["status"])
        call = Text(_printable(str(step["tool"])), style="bold")
        call.append(f"\n{status}", style=STATUS_STYLES.get(status, "red"))
        call.append(f", {float(step['duration_ms']):.0f} ms", style="dim")
        marks = rule_marks(step)
        if marks:
            call.append(f"\nrule {_printable(marks)}", style="yellow")
        table.add_row(
            str(step["step"]),
            call,
            Text(_printable(json.dumps(step["args"], ensure_ascii=False))),
            Text(_printable(str(step["observation"]))),
        )
    return table


def rules_table(rules: Sequence[Rule]) -> Table:
    """Rules as a table whose content column wraps: every word is shown at any width.

    The first column holds the id over its scope and priority, the second the type
    over the target, so the content keeps half of an 80-column terminal.
    """
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("rule\nscope, priority", overflow="fold", max_width=_RULE_WIDTH)
    table.add_column("type\ntarget", no_wrap=True)
    table.add_column("content", overflow="fold")
    for rule in rules:
        where = Text(f"{_scope_text(rule.project_id)}, priority {rule.priority}", style="dim")
        content = Text(_printable(rule.content))
        if rule.check is not None:
            content.append(f"\ncheck: {_printable(_check_text(rule.check))}", style="dim")
        table.add_row(
            Text("\n").join([Text(rule.id), where]),
            f"{rule.type.name}\n{rule.target.name}",
            content,
        )
    return table


def _printable(text: str) -> str:
    r"""``text`` with each control character but newline shown as its escape (``\x1b``)."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def _scope_text(project_id: int | None) -> str:
    """``global`` or ``project N``."""
    return "global" if project_id is None else f"project {project_id}"


def _check_text(check: RuleCheck | None) -> str:
    """A check on one line: its keys as given, then what a failure does; ``none`` without one."""
    if check is None:
        return "none"
    given = json.dumps(check.to_record(), ensure_ascii=False, separators=(",", ":"))
    return f"{given} → {check.action}"


def rule_summary(rule: Rule) -> str:
    """The rule's id, then its type, target, scope, priority and check in brackets."""
    parts = [rule.type.name, rule.target.name, _scope_text(rule.project_id)]
    parts.append(f"priority {rule.priority}")
    if rule.check is not None:
        parts.append(f"check {_check_text(rule.check)}")
    return f"{rule.id} ({', '.join(parts)})"


def rule_changes(before: Rule, after: Rule) -> list[str]:
    """Each field that differs, as ``field old -> new``, in the order a rule lists them."""
    shown: dict[str, Callable[[Rule], str]] = {
        "type": lambda rule: rule.type.name,
        "target": lambda rule: rule.target.name,
        "content": lambda rule: _printable(json.dumps(rule.content, ensure_ascii=False)),
        "priority": lambda rule: str(rule.priority),
        "scope": lambda rule: _scope_text(rule.project_id),
        "check": lambda rule: _check_text(rule.check),
    }
    changes = []
    for field, show in shown.items():
        old, new = show(before), show(after)
        if old != new:
            changes.append(f"{field} {old} -> {new}")
    return changes


def suggestion_lines(suggestion: CheckSuggestion) -> list[str]:
    """A suggested check as a diff of its rule: the check before (-) and after (+)."""
    rule = suggestion.rule
    lines = [
        rule_summary(rule),
        f"  content: {_printable(rule.content)}",
        f"- check: {_check_text(rule.check)}",
        f"+ check: {_check_text(suggestion.check)}",
        f"  because: {_printable(json.dumps(suggestion.because, ensure_ascii=False))}",
    ]
    lines.extend(
        f"  also asks for: {_check_text(check)} (one check per rule: split the rule for it)"
        for check in suggestion.also
    )
    return [*lines, ""]
