"""Render a project's effective rules into the system prompt, within the configured limits.

`read_rules` / `aread_rules` read the rules afresh (so a rule changed between two model
calls shows up in the second one), keep those that fit the `AgentRuleToolConfig` limits
in priority order and say which they left out; `render_rules_prompt` groups the kept
rules by type (requirements, prohibitions, constraints, guidelines), keeping the
priority order within each group.

A rule over a limit never fails a run: it is left out of the prompt and reported as a
`RuleEvent` with status ``"omitted"`` naming the limit. (The ``agent_rule`` tool, by
contrast, refuses the whole payload with `ToolExecutionError`, so a model asking for the
rules learns that something is wrong.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from langchain_agent_rules.rules.engine import RuleEvent
from langchain_agent_rules.rules.limits import (
    AgentRuleToolConfig,
    EffectiveRules,
    compact_json,
    public_rule,
    utf8_len,
)
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.store import RuleReader

__all__ = [
    "RULES_HEADER",
    "RULE_GROUP_HEADERS",
    "RULE_LINE",
    "RulesPrompt",
    "aread_effective_rules",
    "aread_rules",
    "aread_rules_prompt",
    "fitting_rules",
    "read_effective_rules",
    "read_rules",
    "read_rules_prompt",
    "render_rules_prompt",
]

# Model-facing text: how the rules appear in the system prompt (tested word for word).
RULES_HEADER = "Follow these rules; a rule listed earlier in a group takes precedence."
RULE_GROUP_HEADERS = {
    "REQUIREMENT": "Requirements (always do this):",
    "PROHIBITION": "Prohibitions (never do this):",
    "CONSTRAINT": "Constraints (stay within these limits):",
    "GUIDELINE": "Guidelines (follow when you can):",
}
RULE_LINE = "- [{target}] {content}"


@dataclass(frozen=True)
class RulesPrompt:
    """The rules section of a system prompt, the rules left out of it and every rule read.

    ``rules`` are all the effective rules, those left out included: a rule's check holds
    even when the limits keep its text out of the prompt.
    """

    text: str
    omitted: list[RuleEvent] = field(default_factory=list)
    rules: tuple[Rule, ...] = ()


def render_rules_prompt(payload: EffectiveRules) -> str:
    """The rules section of a system prompt, or ``""`` when there are no rules."""
    if not payload["rules"]:
        return ""
    sections = [RULES_HEADER]
    for rule_type, header in RULE_GROUP_HEADERS.items():
        lines = [
            RULE_LINE.format(target=rule["target"].lower(), content=rule["content"])
            for rule in payload["rules"]
            if rule["type"] == rule_type
        ]
        if lines:
            sections.append("\n".join([header, *lines]))
    return "\n\n".join(sections)


def _omitted(rule: Rule, detail: str) -> RuleEvent:
    return {"rule_id": rule.id, "status": "omitted", "detail": detail}


def fitting_rules(
    rules: Sequence[Rule], project_id: int | None, config: AgentRuleToolConfig
) -> tuple[EffectiveRules, list[RuleEvent]]:
    """The rules that fit the limits, highest priority first, and an event for each left out.

    A rule is left out when ``max_rules`` rules are already kept, when its content is
    over ``max_rule_content_bytes``, or when adding it would take the compact JSON
    payload (what ``agent_rule`` returns) over ``max_payload_bytes``; a smaller rule of
    lower priority may still fit after it. The sort is stable: rules of equal priority
    keep the store's order.
    """
    kept: list[Rule] = []
    omitted: list[RuleEvent] = []

    def payload_of(selected: list[Rule]) -> EffectiveRules:
        return {
            "project_id": project_id,
            "count": len(selected),
            "rules": [public_rule(rule) for rule in selected],
        }

    empty_size = utf8_len(compact_json(payload_of([])))  # with "count":0
    entries_size = 0
    for rule in sorted(rules, key=lambda r: -r.priority):
        content_bytes = utf8_len(rule.content)
        if len(kept) >= config.max_rules:
            omitted.append(_omitted(rule, f"max_rules={config.max_rules}"))
            continue
        if content_bytes > config.max_rule_content_bytes:
            detail = (
                f"max_rule_content_bytes={config.max_rule_content_bytes} "
                f"(its content has {content_bytes} bytes)"
            )
            omitted.append(_omitted(rule, detail))
            continue
        entry = utf8_len(compact_json(public_rule(rule)))
        count = len(kept) + 1
        # The payload with this rule: the entries, a comma between each two, and the
        # count's digits in place of the empty payload's "0".
        size = empty_size + entries_size + entry + (count - 1) + len(str(count)) - 1
        if size > config.max_payload_bytes:
            omitted.append(_omitted(rule, f"max_payload_bytes={config.max_payload_bytes}"))
            continue
        kept.append(rule)
        entries_size += entry
    return payload_of(kept), omitted


def read_effective_rules(reader: RuleReader, project_id: int | None) -> list[Rule]:
    """The effective rules of ``project_id``, read now (for their checks)."""
    return reader.get_all_by_project(project_id)


async def aread_effective_rules(reader: RuleReader, project_id: int | None) -> list[Rule]:
    """Async `read_effective_rules`: uses the reader's ``aget_all_by_project`` when it has one.

    Otherwise the sync read runs in a thread, so a slow store does not block the loop.
    """
    native = getattr(reader, "aget_all_by_project", None)
    if native is None:
        return await asyncio.to_thread(reader.get_all_by_project, project_id)
    fetch = cast(Callable[[int | None], Awaitable[list[Rule]]], native)
    return await fetch(project_id)


def read_rules(
    reader: RuleReader, project_id: int | None, config: AgentRuleToolConfig
) -> RulesPrompt:
    """Read the effective rules of ``project_id`` now; render those that fit the limits."""
    return _render(read_effective_rules(reader, project_id), project_id, config)


async def aread_rules(
    reader: RuleReader, project_id: int | None, config: AgentRuleToolConfig
) -> RulesPrompt:
    """Async `read_rules` (see `aread_effective_rules`)."""
    return _render(await aread_effective_rules(reader, project_id), project_id, config)


def _render(
    rules: Sequence[Rule], project_id: int | None, config: AgentRuleToolConfig
) -> RulesPrompt:
    payload, omitted = fitting_rules(rules, project_id, config)
    return RulesPrompt(render_rules_prompt(payload), omitted, tuple(rules))


def read_rules_prompt(
    reader: RuleReader, project_id: int | None, config: AgentRuleToolConfig
) -> str:
    """The rules section for ``project_id``, read now (rules over a limit are left out)."""
    return read_rules(reader, project_id, config).text


async def aread_rules_prompt(
    reader: RuleReader, project_id: int | None, config: AgentRuleToolConfig
) -> str:
    """Async `read_rules_prompt`."""
    return (await aread_rules(reader, project_id, config)).text
