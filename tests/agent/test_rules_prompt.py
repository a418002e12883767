from __future__ import annotations

import pytest

from langchain_agent_rules.rules.limits import AgentRuleToolConfig, compact_json, utf8_len
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.prompt import (
    aread_rules,
    aread_rules_prompt,
    fitting_rules,
    read_rules,
    read_rules_prompt,
    render_rules_prompt,
)


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


def test_rules_over_max_rules_are_left_out_in_priority_order() -> None:
    store = InMemoryRuleStore(RULES)
    read = read_rules(store, 1, AgentRuleToolConfig(max_rules=2))
    assert read.text == (
        "Follow these rules; a rule listed earlier in a group takes precedence.\n\n"
        "Requirements (always do this):\n"
        "- [output] Always answer in English.\n\n"
        "Prohibitions (never do this):\n"
        "- [output] Never print customer names."
    )
    assert read.omitted == [
        {"rule_id": rule_id, "status": "omitted", "detail": "max_rules=2"}
        for rule_id in ("max_rows", "low_req", "be_short")
    ]


def test_a_rule_over_the_content_limit_is_left_out_and_a_smaller_one_still_fits() -> None:
    long_rule = rule("long", "REQUIREMENT", "x" * 40, 50)
    store = InMemoryRuleStore([long_rule, rule("short", "REQUIREMENT", "Be brief, always.", 1)])
    read = read_rules(store, None, AgentRuleToolConfig(max_rule_content_bytes=30))
    assert "- [output] Be brief, always." in read.text
    assert "xxx" not in read.text
    assert read.omitted == [
        {
            "rule_id": "long",
            "status": "omitted",
            "detail": "max_rule_content_bytes=30 (its content has 40 bytes)",
        }
    ]


@pytest.mark.parametrize("extra", range(-3, 4))
def test_the_payload_limit_keeps_exactly_what_fits(extra: int) -> None:
    rules = [rule(f"rule_{i}", "GUIDELINE", f"Guideline number {i}.", 50 - i) for i in range(12)]
    payload, _ = fitting_rules(rules, 1, AgentRuleToolConfig())
    full = utf8_len(compact_json(payload))
    first_eleven, _ = fitting_rules(rules[:11], 1, AgentRuleToolConfig())
    limit = utf8_len(compact_json(first_eleven)) + extra
    kept, omitted = fitting_rules(rules, 1, AgentRuleToolConfig(max_payload_bytes=limit))
    assert utf8_len(compact_json(kept)) <= limit
    expected = 12 if limit >= full else 11 if extra >= 0 else 10
    assert kept["count"] == expected
    assert [event["rule_id"] for event in omitted] == [f"rule_{i}" for i in range(expected, 12)]
    assert {event["detail"] for event in omitted} <= {f"max_payload_bytes={limit}"}


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
    read = await aread_rules(AsyncOnlyReader(RULES), 1, AgentRuleToolConfig(max_rules=1))
    assert "Always answer in English." in read.text
    assert [event["rule_id"] for event in read.omitted] == [
        "no_names",
        "max_rows",
        "low_req",
        "be_short",
    ]
