"""Tool checks read what the tool receives: decoded strings, nested values, keys, the JSON.

Every call of the corpus hides a forbidden word from the compact JSON the tool checks
used to read only (a line break is ``\\n`` there), or behind invisible characters and
look-alikes; each must be denied. The controls must stay allowed, and arguments that
cannot be read count as matching.
"""

from __future__ import annotations

import time
from operator import attrgetter
from typing import Any

import pytest

from langchain_agent_rules.rules.engine import CHECK_BUDGET_SECONDS, check_tool_call
from langchain_agent_rules.rules.model import Rule

from .corpus import ALLOWED_CALLS, DELETE, TOOL_CASES, ToolCase


def guarding(pattern: str, on_fail: str = "deny") -> Rule:
    return Rule(
        id="guard",
        type="prohibition",
        target="tool",
        content="Never run calls that match this pattern.",
        check={"tool": "sql_query", "args": pattern, "on_fail": on_fail},
    )


@pytest.mark.parametrize("case", TOOL_CASES, ids=attrgetter("id"))
def test_a_hidden_forbidden_word_is_denied(case: ToolCase) -> None:
    verdict = check_tool_call([guarding(case.pattern)], "sql_query", case.arguments)
    assert verdict.status == "denied"
    assert verdict.events[0]["detail"] == "the arguments of sql_query match the pattern"


@pytest.mark.parametrize("case", TOOL_CASES[::4], ids=attrgetter("id"))
def test_a_hidden_forbidden_word_asks_for_approval(case: ToolCase) -> None:
    verdict = check_tool_call([guarding(case.pattern, "approve")], "sql_query", case.arguments)
    assert verdict.status == "approval"


@pytest.mark.parametrize("case", ALLOWED_CALLS, ids=attrgetter("id"))
def test_robust_patterns_do_not_over_match(case: ToolCase) -> None:
    assert check_tool_call([guarding(case.pattern)], "sql_query", case.arguments).status == (
        "allowed"
    )


def _cycle() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def _deep(depth: int) -> Any:
    nested: Any = "SELECT 1"
    for _ in range(depth):
        nested = [nested]
    return nested


@pytest.mark.parametrize(
    "arguments",
    [
        {"sql": {"SELECT 1"}},
        {"sql": object()},
        {"sql": _cycle()},
        {"sql": _deep(100_000)},
        {"sql": b"SELECT 1"},
    ],
    ids=["set", "object", "cycle", "deep", "bytes"],
)
def test_arguments_that_cannot_be_read_count_as_matching(arguments: Any) -> None:
    verdict = check_tool_call([guarding(DELETE)], "sql_query", arguments)
    assert verdict.status == "denied"
    assert verdict.events[0]["detail"] == (
        "the arguments of sql_query cannot be written as JSON; treated as matching"
    )


def test_many_strings_are_read_in_bounded_time() -> None:
    rows = [f"value {n}" for n in range(50_000)]
    started = time.monotonic()
    clean = check_tool_call([guarding(DELETE)], "sql_query", {"rows": rows})
    hidden = check_tool_call([guarding(DELETE)], "sql_query", {"rows": [*rows, "DELETE\nFROM"]})
    assert time.monotonic() - started < 2 * CHECK_BUDGET_SECONDS + 2
    assert clean.status == "allowed"
    assert hidden.status == "denied"


def test_the_corpus_of_calls_is_large_enough() -> None:
    assert len(TOOL_CASES) >= 45
    assert len({case.id for case in TOOL_CASES}) == len(TOOL_CASES)
