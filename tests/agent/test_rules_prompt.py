from __future__ import annotations

import pytest

from langchain_agent_rules.agent.rules_prompt import (
    aread_rules_prompt,
    read_rules_prompt,
    render_rules_prompt,
)
from langchain_agent_rules.errors import ToolExecutionError
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule


def rule(
    rule_id: str, rule_type: str, content: str, priority: int, project: int | None = None
) -> Rule:
    return Rule(
        id=rule_id,
        type=rule_type,
        target="output",
        content=content,
        priority=priority,
        project_id=project,
    )


RULES = [
    rule("low_req", "REQUIREMENT", "Write amounts with EUR.", 1),
    rule("no_names", "PROHIBITION", "Never print customer names.", 5),
    rule("high_req", "REQUIREMENT", "Always answer in English.", 9),
    rule("be_short", "GUIDELINE", "Keep answers under three sentences.", 0),
    rule("max_rows", "CONSTRAINT", "Show at most ten rows.", 3),
    rule("other_project", "REQUIREMENT", "Only for project two here.", 99, project=2),
]

EXPECTED = (
    "Follow these rules; a rule listed earlier in a group takes precedence.\n\n"
    "Requirements (always do this):\n"
    "- [output] Always answer in English.\n"
    "- [output] Write amounts with EUR.\n\n"
    "Prohibitions (never do this):\n"
    "- [output] Never print customer names.\n\n"
    "Constraints (stay within these limits):\n"
    "- [output] Show at most ten rows.\n\n"
    "Guidelines (follow when you can):\n"
    "- [output] Keep answers under three sentences."
)


def test_rules_render_by_type_then_priority_word_for_word() -> None:
    store = InMemoryRuleStore(RULES)
    assert read_rules_prompt(store, 1, AgentRuleToolConfig()) == EXPECTED


def test_no_rules_render_nothing() -> None:
    assert render_rules_prompt({"project_id": None, "count": 0, "rules": []}) == ""


def test_limits_apply_to_the_prompt() -> None:
    store = InMemoryRuleStore(RULES)
    with pytest.raises(ToolExecutionError, match="max_rules=2"):
        read_rules_prompt(store, None, AgentRuleToolConfig(max_rules=2))


async def test_async_read_uses_the_sync_reader_in_a_thread() -> None:
    assert await aread_rules_prompt(InMemoryRuleStore(RULES), 1, AgentRuleToolConfig()) == EXPECTED


class AsyncOnlyReader:
    """A reader whose async method is the one to use: its sync read fails loudly."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.async_reads = 0

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        raise AssertionError("the async path must use aget_all_by_project")

    async def aget_all_by_project(self, project_id: int | None) -> list[Rule]:
        self.async_reads += 1
        return [r for r in self.rules if r.project_id in (None, project_id)]

    def get(self, rule_id: str) -> Rule:
        raise AssertionError("not used")


async def test_async_read_prefers_the_readers_async_method() -> None:
    reader = AsyncOnlyReader(RULES)
    assert await aread_rules_prompt(reader, 1, AgentRuleToolConfig()) == EXPECTED
    assert reader.async_reads == 1


async def test_async_read_applies_limits_too() -> None:
    with pytest.raises(ToolExecutionError, match="max_rules=1"):
        await aread_rules_prompt(AsyncOnlyReader(RULES), 1, AgentRuleToolConfig(max_rules=1))
