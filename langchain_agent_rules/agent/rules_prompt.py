"""Render a project's effective rules into the system prompt.

`render_rules_prompt` groups the rules by type (requirements, prohibitions, constraints,
guidelines) and keeps the priority order within each group; `read_rules_prompt` and
`aread_rules_prompt` read the rules afresh through `effective_rules_payload`, so every
`AgentRuleToolConfig` limit applies and a rule changed between two model calls shows up
in the second one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import cast

from langchain_agent_rules.agent.prompts import RULE_GROUP_HEADERS, RULE_LINE, RULES_HEADER
from langchain_agent_rules.rules.limits import (
    AgentRuleToolConfig,
    EffectiveRules,
    effective_rules_payload,
)
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["aread_rules_prompt", "read_rules_prompt", "render_rules_prompt"]


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


def read_rules_prompt(
    reader: RuleReader, project_id: int | None, config: AgentRuleToolConfig
) -> str:
    """Read the effective rules of ``project_id`` now and render them."""
    return render_rules_prompt(effective_rules_payload(reader, project_id, config))


class _Snapshot:
    """A reader over rules already fetched, so the limits code stays in one place."""

    def __init__(self, rules: list[Rule]) -> None:
        self._rules = rules

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        return self._rules

    def get(self, rule_id: str) -> Rule:  # pragma: no cover - not used by the limits
        raise NotImplementedError


async def aread_rules_prompt(
    reader: RuleReader, project_id: int | None, config: AgentRuleToolConfig
) -> str:
    """Async `read_rules_prompt`: uses the reader's ``aget_all_by_project`` when it has one.

    Otherwise the sync read runs in a thread, so a slow store does not block the loop.
    """
    native = getattr(reader, "aget_all_by_project", None)
    if native is None:
        return await asyncio.to_thread(read_rules_prompt, reader, project_id, config)
    fetch = cast(Callable[[int | None], Awaitable[list[Rule]]], native)
    rules = await fetch(project_id)
    return read_rules_prompt(_Snapshot(rules), project_id, config)
