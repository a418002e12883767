"""Checks that cannot read the whole text fail: never a pass, always a reason.

Patterns that backtrack for minutes, phone-number decoys that exhaust libphonenumber,
texts over the size bound and rules that together overrun the time budget each end a
check with its ``on_fail`` (a redaction that cannot find its matches blocks; a tool
result becomes the mark), in bounded time, with an event that says why.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from langchain_agent_rules.rules.checked_text import CHECK_BUDGET_SECONDS, MAX_CHECKED_CHARS
from langchain_agent_rules.rules.engine import check_answer, check_tool_call, redact_observation
from langchain_agent_rules.rules.model import Rule

# Each backtracks for minutes on its text, and ends in a class, so no screen skips it.
CATASTROPHIC = [
    (r"(x+x+)+[yz]", "x" * 5000),
    (r"(a|aa)+[bc]", "a" * 5000),
    (r"(\w+\s?)+[!?]", "word " * 2000),
    (r"^(\d+)+[a-z]$", "1" * 5000),
    (r"(.*a){20}[bc]", "a" * 5000),
    (r"(?i)(e|ee)+[fg]", "E" * 5000),
    (r"([a-z]+)*[0-9]", "a" * 5000),
]
TIMED_OUT = "the {} check timed out after 0.1 s; treated as failed"


def rule(check: dict[str, Any], target: str = "output", rule_id: str = "guard") -> Rule:
    return Rule(
        id=rule_id,
        type="prohibition",
        target=target,
        content="A rule with a check to break.",
        check=check,
    )


def finished_within(seconds: float, started: float) -> bool:
    return time.monotonic() - started < seconds


@pytest.mark.parametrize(("pattern", "text"), CATASTROPHIC)
@pytest.mark.parametrize(
    ("check", "status", "condition"),
    [
        ({"on_fail": "redact"}, "blocked", "forbid"),
        ({"on_fail": "revise"}, "needs_revision", "forbid"),
        ({"on_fail": "block"}, "blocked", "forbid"),
    ],
)
def test_a_forbid_pattern_that_times_out_fails(
    pattern: str, text: str, check: dict[str, str], status: str, condition: str
) -> None:
    started = time.monotonic()
    verdict = check_answer([rule({"forbid": f"regex:{pattern}", **check})], text)
    assert finished_within(CHECK_BUDGET_SECONDS + 2, started)
    assert verdict.status == status
    assert verdict.events[0]["detail"] == TIMED_OUT.format(condition)


@pytest.mark.parametrize(("pattern", "text"), CATASTROPHIC)
def test_a_require_or_when_pattern_that_times_out_fails(pattern: str, text: str) -> None:
    require = check_answer([rule({"require": f"regex:{pattern}"})], text)
    when = check_answer([rule({"require": "regex:EUR", "when": f"regex:{pattern}"})], text)
    for verdict in (require, when):
        assert verdict.status == "needs_revision"
        assert verdict.events[0]["detail"] == TIMED_OUT.format("require")


@pytest.mark.parametrize(("pattern", "text"), CATASTROPHIC)
@pytest.mark.parametrize(("on_fail", "status"), [("deny", "denied"), ("approve", "approval")])
def test_a_tool_pattern_that_times_out_applies_its_on_fail(
    pattern: str, text: str, on_fail: str, status: str
) -> None:
    check = {"tool": "*", "args": f"regex:{pattern}", "on_fail": on_fail}
    verdict = check_tool_call([rule(check, target="tool")], "http_get", {"url": text})
    assert verdict.status == status
    assert verdict.events[0]["detail"] == TIMED_OUT.format("tool")


@pytest.mark.parametrize(("pattern", "text"), CATASTROPHIC)
def test_an_observation_whose_pattern_times_out_becomes_the_mark(pattern: str, text: str) -> None:
    check = {"forbid": f"regex:{pattern}", "scope": "answer_and_observations"}
    redaction = redact_observation([rule(check)], text)
    assert redaction.text == "[redacted: regex]"
    assert redaction.events[0]["detail"] == TIMED_OUT.format("forbid")


PHONE_DECOYS = ["1234567 ", "12 34 56 78 ", "+1 234 ", "(12) ", "123-45 ", "1/1 ", "0" * 40 + " "]


@pytest.mark.parametrize("decoy", PHONE_DECOYS)
@pytest.mark.parametrize("forbid", ["phone", "phone:FR", "phone:DE"])
def test_a_number_behind_phone_decoys_blocks_instead_of_passing(decoy: str, forbid: str) -> None:
    text = decoy * (600_000 // len(decoy)) + " Call +33 6 12 34 56 78."
    started = time.monotonic()
    verdict = check_answer([rule({"forbid": forbid})], text)
    assert finished_within(CHECK_BUDGET_SECONDS + 2, started)
    assert verdict.status == "blocked"
    assert "may all belong to phone numbers" in verdict.events[0]["detail"]


def test_a_stretch_with_too_many_phone_candidates_blocks() -> None:
    verdict = check_answer([rule({"forbid": "phone"})], "1/1 " * 2000 + "+33 6 12 34 56 78")
    assert verdict.events[0]["detail"] == (
        "the forbid check stopped after 4,096 phone number candidates; treated as failed"
    )


def test_phone_decoys_in_many_short_stretches_end_at_the_timeout() -> None:
    text = "12 34 56 78 b" * 50_000 + "06 12 34 56 78"
    started = time.monotonic()
    verdict = check_answer([rule({"forbid": "phone:FR"})], text)
    assert finished_within(CHECK_BUDGET_SECONDS + 2, started)
    assert verdict.status == "blocked"
    assert verdict.events[0]["detail"] in (
        TIMED_OUT.format("forbid"),
        "the forbid check ran out of the 1 s the checks of one text may take; treated as failed",
    )


@pytest.mark.parametrize(
    "check",
    [
        {"forbid": "email"},
        {"forbid": "phone", "on_fail": "revise"},
        {"forbid": "regex:secret"},
        {"require": "regex:EUR"},
        {"require": "regex:EUR", "when": "regex:a"},
    ],
)
def test_a_text_over_the_size_bound_fails_its_content_checks(check: dict[str, str]) -> None:
    verdict = check_answer([rule(check)], "a" * (MAX_CHECKED_CHARS + 1))
    assert verdict.status in ("blocked", "needs_revision")
    assert "checks read at most 1,048,576; treated as failed" in verdict.events[0]["detail"]


def test_length_and_language_checks_still_judge_a_text_over_the_size_bound() -> None:
    verdict = check_answer([rule({"max_chars": 2**40})], "a" * (MAX_CHECKED_CHARS + 1))
    assert verdict.status == "passed"


def test_many_slow_rules_share_one_budget() -> None:
    pattern, text = CATASTROPHIC[0]
    rules = [rule({"forbid": f"regex:{pattern}"}, rule_id=f"slow_{n}") for n in range(40)]
    started = time.monotonic()
    verdict = check_answer(rules, text)
    assert finished_within(CHECK_BUDGET_SECONDS + 2, started)
    assert verdict.status == "blocked"
    details = [event["detail"] for event in verdict.events]
    assert details[-1] == (
        "the forbid check ran out of the 1 s the checks of one text may take; treated as failed"
    )
    assert all(event["status"] == "blocked" for event in verdict.events)


@pytest.mark.parametrize(
    "unit",
    ["a\u200b", "\u00a0", "\uff11", "e\u0301", "\ufb01", "1.2.3.4@a.b ", "4111 1111 1111 1111 "],
)
def test_a_hostile_megabyte_ends_in_bounded_time_with_a_verdict(unit: str) -> None:
    text = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
    rules = [
        rule({"forbid": name}, rule_id=f"no_{name}")
        for name in ("email", "phone", "credit_card", "iban", "ipv4", "ipv6", "secret")
    ]
    started = time.monotonic()
    verdict = check_answer(rules, text)
    assert finished_within(CHECK_BUDGET_SECONDS + 5, started)
    assert verdict.status in ("passed", "redacted", "blocked")
