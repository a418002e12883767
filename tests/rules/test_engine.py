"""The check engine: every condition with every on_fail, the order of work, the time bound."""

from __future__ import annotations

import time
from typing import Any

import pytest

from langchain_agent_rules.rules.engine import (
    CHECK_BUDGET_SECONDS,
    MAX_CHECKED_CHARS,
    AnswerVerdict,
    check_answer,
    check_tool_call,
    redact_observation,
)
from langchain_agent_rules.rules.model import Rule

# Backtracks for minutes on "x" * 5000; its end is a class, not a literal, so no screen
# can tell up front that it cannot match.
CATASTROPHIC = r"regex:(x+x+)+[yz]"
NEVER_ENDING = "x" * 5000


def checked(
    rule_id: str, check: dict[str, Any], *, target: str = "output", priority: int = 0
) -> Rule:
    return Rule(
        id=rule_id,
        type="requirement",
        target=target,
        content=f"The rule called {rule_id}.",
        priority=priority,
        check=check,
    )


def statuses(verdict: Any) -> list[tuple[str, str]]:
    return [(event["rule_id"], event["status"]) for event in verdict.events]


# -- forbid ---------------------------------------------------------------------------


def test_forbid_redacts_every_match_by_default() -> None:
    rules = [checked("no_email", {"forbid": "email"})]
    verdict = check_answer(rules, "Write to alice.martin@example.com or bob@example.org.")
    assert verdict.status == "redacted"
    assert verdict.text == "Write to [redacted: email] or [redacted: email]."
    assert verdict.events == (
        {"rule_id": "no_email", "status": "redacted", "detail": "redacted 2 matches of email"},
    )
    assert verdict.failures == ()


def test_forbid_passes_a_clean_answer_unchanged() -> None:
    verdict = check_answer([checked("no_email", {"forbid": "email"})], "Alice lives in Lyon.")
    assert (verdict.status, verdict.text) == ("passed", "Alice lives in Lyon.")
    assert verdict.events == (
        {"rule_id": "no_email", "status": "passed", "detail": "no match of email"},
    )


@pytest.mark.parametrize(
    ("on_fail", "status", "event"),
    [("revise", "needs_revision", "revised"), ("block", "blocked", "blocked")],
)
def test_forbid_can_revise_or_block_instead(on_fail: str, status: str, event: str) -> None:
    rule = checked("no_email", {"forbid": "email", "on_fail": on_fail})
    verdict = check_answer([rule], "Her address is alice@example.com.")
    assert verdict.status == status
    assert verdict.text == "Her address is alice@example.com."
    assert [(f.rule.id, f.detail) for f in verdict.failures] == [
        ("no_email", "found 1 match of email")
    ]
    assert statuses(verdict) == [("no_email", event)]


def test_forbid_with_a_pattern_redacts_with_the_regex_mark() -> None:
    rule = checked("no_codes", {"forbid": r"regex:\bPRJ-\d{4}\b"})
    verdict = check_answer([rule], "See PRJ-1234 and PRJ-98765.")
    assert verdict.text == "See [redacted: regex] and PRJ-98765."
    assert verdict.events[0]["detail"] == "redacted 1 match of regex"


# -- require --------------------------------------------------------------------------


EUR = {"require": r"regex:\d[.,]\d{2} ?EUR\b", "when": r"regex:\d[.,]\d"}


@pytest.mark.parametrize(
    ("answer", "status", "detail"),
    [
        ("The total is 329.00 EUR.", "passed", "the required pattern matched"),
        ("We have 3 customers.", "passed", "not required: the when pattern did not match"),
        ("329.0", "revised", "the when pattern matched but the required pattern did not"),
    ],
)
def test_require_with_when_applies_only_when_when_matches(
    answer: str, status: str, detail: str
) -> None:
    verdict = check_answer([checked("amounts_in_eur", EUR)], answer)
    assert verdict.events == ({"rule_id": "amounts_in_eur", "status": status, "detail": detail},)
    assert verdict.status == ("passed" if status == "passed" else "needs_revision")


def test_require_without_when_must_always_match_and_can_block() -> None:
    rule = checked("signed", {"require": r"regex:— the shop$", "on_fail": "block"})
    assert check_answer([rule], "Thanks — the shop").status == "passed"
    verdict = check_answer([rule], "Thanks")
    assert verdict.status == "blocked"
    assert verdict.failures[0].detail == "the required pattern did not match"


# -- language -------------------------------------------------------------------------


def test_language_passes_the_expected_language() -> None:
    verdict = check_answer([checked("french", {"language": "fr"})], "Nous avons trois clients.")
    assert verdict.status == "passed"
    assert verdict.events[0]["detail"].startswith("written in fr (score ")


@pytest.mark.parametrize(
    ("on_fail", "status"), [("revise", "needs_revision"), ("block", "blocked")]
)
def test_language_fails_another_language_or_a_bare_number(on_fail: str, status: str) -> None:
    rule = checked("french", {"language": "fr", "on_fail": on_fail})
    english = check_answer([rule], "We have three customers.")
    assert english.status == status
    assert english.failures[0].detail.startswith("detected en (score 0.")
    assert english.failures[0].detail.endswith("); expected fr")
    bare = check_answer([rule], "329.0")
    assert bare.failures[0].detail == "no language detected; expected fr"


def test_redaction_marks_do_not_sway_the_language() -> None:
    rules = [checked("no_email", {"forbid": "email"}), checked("french", {"language": "fr"})]
    verdict = check_answer(rules, "Alice Martin (alice.martin@example.com) a payé 329,00 EUR.")
    assert verdict.status == "redacted"
    assert statuses(verdict) == [("no_email", "redacted"), ("french", "passed")]


# -- max_chars ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("on_fail", "status"), [("revise", "needs_revision"), ("block", "blocked")]
)
def test_max_chars_counts_characters(on_fail: str, status: str) -> None:
    rule = checked("brief", {"max_chars": 5, "on_fail": on_fail})
    assert check_answer([rule], "żółtą").events[0]["detail"] == "5 characters, within max_chars=5"
    verdict = check_answer([rule], "żółtąa")
    assert verdict.status == status
    assert verdict.failures[0].detail == "6 characters; the limit is max_chars=5"


# -- several rules --------------------------------------------------------------------


def test_checks_after_redaction_judge_the_redacted_text() -> None:
    rules = [
        checked("no_email", {"forbid": "email"}, priority=10),
        checked("no_example", {"forbid": r"regex:example\.com", "on_fail": "block"}),
        checked("brief", {"max_chars": 30}),
    ]
    verdict = check_answer(rules, "Mail alice@example.com now.")
    assert (verdict.status, verdict.text) == ("redacted", "Mail [redacted: email] now.")
    assert statuses(verdict) == [
        ("no_email", "redacted"),
        ("no_example", "passed"),
        ("brief", "passed"),
    ]


def test_a_block_wins_over_a_revision_and_names_the_blocking_rule_first() -> None:
    rules = [
        checked("french", {"language": "fr"}, priority=90),
        checked("no_secret", {"forbid": "secret", "on_fail": "block"}, priority=10),
        checked("no_email", {"forbid": "email"}, priority=100),
    ]
    key = "sk-proj-" + "a1B2c3D4" * 4
    verdict = check_answer(rules, f"The key is {key}, ask bob@example.com.")
    assert verdict.status == "blocked"
    assert [f.rule.id for f in verdict.failures] == ["no_secret", "french"]
    assert statuses(verdict) == [
        ("no_email", "redacted"),
        ("french", "blocked"),
        ("no_secret", "blocked"),
    ]


def test_revisions_list_every_failing_rule_in_priority_order() -> None:
    rules = [
        checked("amounts_in_eur", EUR, priority=50),
        checked("french", {"language": "fr"}, priority=90),
    ]
    verdict = check_answer(rules, "The total is 329.0")
    assert verdict.status == "needs_revision"
    assert [f.rule.id for f in verdict.failures] == ["french", "amounts_in_eur"]


def test_as_blocked_turns_revisions_into_blocks() -> None:
    verdict = check_answer([checked("french", {"language": "fr"})], "Hello there, friend.")
    blocked = verdict.as_blocked()
    assert isinstance(blocked, AnswerVerdict)
    assert (blocked.status, blocked.failures) == ("blocked", verdict.failures)
    assert statuses(blocked) == [("french", "blocked")]


def test_rules_without_an_answer_check_are_skipped() -> None:
    rules = [
        Rule(id="prompt_only", type="guideline", target="output", content="Be brief and kind."),
        checked("no_delete", {"tool": "sql_query"}, target="tool"),
    ]
    verdict = check_answer(rules, "Anything at all.")
    assert (verdict.status, verdict.events) == ("passed", ())


# -- the time bound -------------------------------------------------------------------


def test_a_backtracking_pattern_is_stopped_and_fails_safe_for_answers() -> None:
    redacting = checked("slow", {"forbid": CATASTROPHIC})
    verdict = check_answer([redacting], NEVER_ENDING)
    assert verdict.status == "blocked"
    assert verdict.events == (
        {
            "rule_id": "slow",
            "status": "blocked",
            "detail": "the forbid check timed out after 0.1 s; treated as failed",
        },
    )
    revising = checked("slow", {"require": r"regex:(x+x+)+y", "on_fail": "revise"})
    assert check_answer([revising], NEVER_ENDING).status == "needs_revision"


def test_a_backtracking_pattern_fails_safe_for_tool_calls_and_observations() -> None:
    tool_rule = checked("slow", {"tool": "*", "args": CATASTROPHIC}, target="tool")
    verdict = check_tool_call([tool_rule], "http_get", {"url": NEVER_ENDING})
    assert verdict.status == "denied"
    assert verdict.failures[0].detail == "the tool check timed out after 0.1 s; treated as failed"
    observed = checked("slow", {"forbid": CATASTROPHIC, "scope": "answer_and_observations"})
    assert redact_observation([observed], NEVER_ENDING).text == "[redacted: regex]"


def test_a_text_over_the_size_bound_fails_every_content_check() -> None:
    huge = "a" * (MAX_CHECKED_CHARS + 1)
    detail = (
        "the {} check cannot read 1,048,577 characters; checks read at most 1,048,576; "
        "treated as failed"
    )
    rules = [
        checked("no_email", {"forbid": "email"}, priority=2),
        checked("signed", {"require": r"regex:a"}, priority=1),
    ]
    verdict = check_answer(rules, huge)
    assert verdict.status == "blocked"
    assert [(e["status"], e["detail"]) for e in verdict.events] == [
        ("blocked", detail.format("forbid")),
        ("blocked", detail.format("require")),
    ]
    observed = checked("no_email", {"forbid": "email", "scope": "answer_and_observations"})
    assert redact_observation([observed], huge).text == "[redacted: email]"
    tool_rule = checked("no_a", {"tool": "*", "args": "regex:b"}, target="tool")
    assert check_tool_call([tool_rule], "t", {"text": huge}).failures[0].detail == (
        "the tool check cannot read 1,048,588 characters; checks read at most 1,048,576; "
        "treated as failed"
    )


def test_the_checks_of_one_text_share_a_time_budget() -> None:
    rules = [checked(f"slow_{n}", {"require": CATASTROPHIC}) for n in range(30)]
    started = time.monotonic()
    verdict = check_answer(rules, NEVER_ENDING)
    took = time.monotonic() - started
    assert took < CHECK_BUDGET_SECONDS + 1.0
    details = {event["detail"] for event in verdict.events}
    assert details == {
        "the require check timed out after 0.1 s; treated as failed",
        "the require check ran out of the 1 s the checks of one text may take; treated as failed",
    }
    assert all(event["status"] == "revised" for event in verdict.events)


def test_a_phone_scan_that_cannot_finish_blocks_instead_of_passing() -> None:
    decoys = "1234567 " * 70_000 + "Call +33 6 12 34 56 78."
    verdict = check_answer([checked("no_phone", {"forbid": "phone"})], decoys)
    assert verdict.status == "blocked"
    assert verdict.events[0]["detail"].startswith(
        "the forbid check met 560,001 characters in a row that may all belong to phone numbers"
    )


def test_redaction_removes_what_a_reader_reads_invisible_characters_included() -> None:
    rules = [checked("no_email", {"forbid": "email"})]
    verdict = check_answer(rules, "Write to alice.mar\u200btin\u2060\uff20example\uff0ecom now.")
    assert verdict.text == "Write to [redacted: email] now."
    assert verdict.events[0]["detail"] == "redacted 1 match of email"


def test_a_pattern_for_a_character_the_view_removes_still_finds_it() -> None:
    rule = checked("no_zero_width", {"forbid": r"regex:\u200b", "on_fail": "block"})
    assert check_answer([rule], "hid\u200bden").status == "blocked"


# -- tool calls -----------------------------------------------------------------------


DELETE = {"tool": "sql_query", "args": r"regex:(?i)\bdelete\b"}


def test_a_tool_check_with_args_denies_only_matching_calls() -> None:
    rules = [checked("no_delete", DELETE, target="tool")]
    denied = check_tool_call(rules, "sql_query", {"query": "DELETE FROM customers"})
    assert denied.status == "denied"
    assert denied.events == (
        {
            "rule_id": "no_delete",
            "status": "denied",
            "detail": "the arguments of sql_query match the pattern",
        },
    )
    allowed = check_tool_call(rules, "sql_query", {"query": "SELECT name FROM customers"})
    assert allowed.status == "allowed"
    assert allowed.events[0]["detail"] == "the arguments of sql_query do not match the pattern"
    assert check_tool_call(rules, "file_read", {"path": "delete.md"}).events == ()


def test_arguments_are_matched_as_compact_json_with_sorted_keys() -> None:
    rule = checked("exact", {"tool": "*", "args": r'regex:^\{"a":1,"b":"é"\}$'}, target="tool")
    assert check_tool_call([rule], "any_tool", {"b": "é", "a": 1}).status == "denied"


@pytest.mark.parametrize(
    ("pattern", "arguments"),
    [
        (r"regex:(?i)\bemail\b", {"sql": "SELECT\nemail FROM customers"}),
        (r"regex:(?i)\bemail\b", {"sql": "SELECT\temail FROM customers"}),
        (r"regex:(?i)\bemail\b", {"sql": "SELECT\r\nemail FROM customers"}),
        (r"regex:(?i)\bemail\b", {"sql": "SELECT --x\nemail FROM customers"}),
        (r"regex:(?i)delete\s+from", {"sql": "DELETE\nFROM customers"}),
        (r"regex:^DROP", {"sql": "DROP TABLE customers"}),
        (r"regex:(?i)\bemail\b", {"queries": [{"sql": "SELECT\nemail FROM c"}]}),
        (r"regex:(?i)\bemail\b", {"filters": {"email\n": "x"}}),
        (r"regex:(?i)\bdelete\b", {"sql": "DEL\u200bETE FROM customers"}),
    ],
)
def test_args_patterns_search_what_the_tool_receives(pattern: str, arguments: object) -> None:
    rule = checked("guard", {"tool": "*", "args": pattern}, target="tool")
    assert check_tool_call([rule], "sql_query", arguments).status == "denied"


def test_a_tool_check_can_ask_for_approval_and_a_denial_wins() -> None:
    approve = checked("ask_first", {"tool": "http_get", "on_fail": "approve"}, target="tool")
    verdict = check_tool_call([approve], "http_get", {"url": "https://example.com"})
    assert verdict.status == "approval"
    assert verdict.events == (
        {
            "rule_id": "ask_first",
            "status": "approval",
            "detail": "the call to http_get is covered by the check",
        },
    )
    deny_all = checked("nothing_online", {"tool": "*"}, target="tool", priority=-1)
    both = check_tool_call([approve, deny_all], "http_get", {})
    assert both.status == "denied"
    assert [f.rule.id for f in both.failures] == ["nothing_online"]
    assert statuses(both) == [("ask_first", "denied"), ("nothing_online", "denied")]


def test_arguments_that_cannot_be_json_count_as_matching() -> None:
    nested: Any = []
    for _ in range(100_000):
        nested = [nested]
    rule = checked("no_delete", DELETE, target="tool")
    verdict = check_tool_call([rule], "sql_query", {"query": nested})
    assert verdict.status == "denied"
    assert verdict.failures[0].detail == (
        "the arguments of sql_query cannot be written as JSON; treated as matching"
    )


# -- observations ---------------------------------------------------------------------


def test_observations_are_redacted_for_checks_that_cover_them_whatever_on_fail_says() -> None:
    rules = [
        checked(
            "no_email", {"forbid": "email", "scope": "answer_and_observations", "on_fail": "block"}
        ),
        checked("no_phone", {"forbid": "phone"}),
    ]
    observation = '[{"email": "alice@example.com", "phone": "+33 6 12 34 56 78"}]'
    redaction = redact_observation(rules, observation)
    assert redaction.text == '[{"email": "[redacted: email]", "phone": "+33 6 12 34 56 78"}]'
    assert redaction.events == (
        {"rule_id": "no_email", "status": "redacted", "detail": "redacted 1 match of email"},
    )
    assert redact_observation(rules, "nothing here").events == ()
