"""`suggest_checks`: the checks plain-text rules ask for, measured on real rules files.

The figures are pinned: the demo's rules with their checks taken off, and four
adachsoft-style files (tests/rules/fixtures/suggest/), each with the checks a careful
reader would attach (``*.expected.json``: per rule, the acceptable checks, ``null``
meaning "no check" is acceptable). shop_support and dev_assistant were written with the
suggester; bank_helpdesk was written before it and run once it was done; travel_agency
was written after it, to probe wording it had not seen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_agent_rules import (
    CheckSuggestion,
    JsonFileRuleStore,
    Rule,
    RuleCheck,
    suggest_checks,
)
from langchain_agent_rules.demo import demo_rules_path

FIXTURES = Path(__file__).parent / "fixtures" / "suggest"


@dataclass(frozen=True)
class Figures:
    rules: int
    suggested: int
    correct: int
    false: int
    missed: int


def measure(rules: list[Rule], expected: dict[str, list[dict[str, Any] | None]]) -> Figures:
    suggestions = {suggestion.rule.id: suggestion for suggestion in suggest_checks(rules)}
    correct = false = missed = 0
    for rule in rules:
        acceptable = [None if a is None else RuleCheck(**a) for a in expected[rule.id]]
        suggestion = suggestions.get(rule.id)
        if suggestion is None:
            missed += None not in acceptable
        elif suggestion.check in acceptable:
            correct += 1
        else:
            false += 1
    return Figures(len(rules), len(suggestions), correct, false, missed)


@pytest.mark.parametrize(
    ("name", "figures"),
    [
        ("shop_support", Figures(rules=30, suggested=15, correct=15, false=0, missed=0)),
        ("dev_assistant", Figures(rules=25, suggested=12, correct=12, false=0, missed=0)),
        ("bank_helpdesk", Figures(rules=25, suggested=12, correct=12, false=0, missed=0)),
        ("travel_agency", Figures(rules=20, suggested=10, correct=10, false=0, missed=2)),
    ],
)
def test_the_figures_on_adachsoft_style_rules_files(name: str, figures: Figures) -> None:
    rules = JsonFileRuleStore(FIXTURES / f"{name}.json").get_all()
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text(encoding="utf-8"))
    assert sorted(expected) == sorted(rule.id for rule in rules)

    assert measure(rules, expected) == figures


def test_the_demo_rules_stripped_of_their_checks_get_each_shipped_check_back() -> None:
    shipped = JsonFileRuleStore(demo_rules_path()).get_all()
    stripped = [rule.with_changes(check=None) for rule in shipped]

    suggested = {s.rule.id: s.check for s in suggest_checks(stripped)}

    assert suggested == {rule.id: rule.check for rule in shipped if rule.check is not None}
    assert len(suggested) == 3


def output_rule(content: str, type: str = "requirement", **fields: Any) -> Rule:
    return Rule(id="the_rule", type=type, target="output", content=content, **fields)


def suggested(content: str, type: str = "requirement") -> dict[str, Any] | None:
    suggestions = suggest_checks([output_rule(content, type)])
    return suggestions[0].check.to_record() if suggestions else None


@pytest.mark.parametrize(
    ("content", "type", "check"),
    [
        ("Never reveal customer e-mail addresses.", "prohibition", {"forbid": "email"}),
        ("Do not show phone numbers in answers.", "requirement", {"forbid": "phone"}),
        ("Mask payment card numbers.", "requirement", {"forbid": "credit_card"}),
        ("Never disclose a client's IBAN.", "prohibition", {"forbid": "iban"}),
        ("Never mention IPv6 addresses.", "prohibition", {"forbid": "ipv6"}),
        ("Customer IP addresses are confidential.", "guideline", {"forbid": "ipv4"}),
        ("Never print passwords, API keys or tokens.", "prohibition", {"forbid": "secret"}),
        ("Keep API tokens out of every answer.", "prohibition", {"forbid": "secret"}),
        ("Always answer in French.", "requirement", {"language": "fr"}),
        ("Respond in Spanish to the Madrid store.", "requirement", {"language": "es"}),
        ("Answer in French, never with a bare number.", "requirement", {"language": "fr"}),
        (
            "Write amounts with the currency code EUR.",
            "requirement",
            {"require": r"regex:\d ?EUR\b", "when": r"regex:\d[.,]\d"},
        ),
        (
            "Give prices with two decimals, for example 12.50 CHF.",
            "requirement",
            {"require": r"regex:\d[.,]\d{2} ?CHF\b", "when": r"regex:\d[.,]\d"},
        ),
        ("Keep answers to at most 600 characters.", "constraint", {"max_chars": 600}),
        ("Replies: no more than 1,000 characters.", "constraint", {"max_chars": 1000}),
        ("Keep answers under 500 characters.", "guideline", {"max_chars": 499}),
    ],
)
def test_wording_that_asks_for_a_check_gets_it(
    content: str, type: str, check: dict[str, Any]
) -> None:
    assert suggested(content, type) == check


@pytest.mark.parametrize(
    ("content", "type"),
    [
        ("Give the support e-mail address when asked how to reach us.", "requirement"),
        ("Include the customer's phone number in the delivery note.", "requirement"),
        ("Do not guess e-mail addresses; look them up.", "guideline"),
        ("Never reveal e-mail addresses unless the user is an admin.", "prohibition"),
        ("Do not show phone numbers if the customer opted out.", "prohibition"),
        ("Answer in English unless the user writes in another language.", "requirement"),
        ("Answer in French or Dutch, as the client writes.", "requirement"),
        ("Never answer in English.", "prohibition"),
        ("Keep summaries under 100 words.", "guideline"),
        ("Product codes have at most 12 characters; quote them exactly.", "guideline"),
        ("Write commit messages with a subject line of at most 72 characters.", "guideline"),
        ("Do not output more than 2000 tokens.", "guideline"),
        ("Give times in UTC.", "guideline"),
        ("Never predict share prices.", "prohibition"),
        ("Be friendly and polite.", "guideline"),
    ],
)
def test_wording_that_asks_for_no_check_or_is_unsure_gets_none(content: str, type: str) -> None:
    assert suggested(content, type) is None


def test_a_rule_asking_for_two_checks_gets_the_first_and_lists_the_other() -> None:
    rule = output_rule("Never reveal e-mail addresses or phone numbers.", "prohibition")

    [suggestion] = suggest_checks([rule])

    assert suggestion == CheckSuggestion(
        rule=rule,
        check=RuleCheck(forbid="email"),
        because="Never reveal e-mail addresses or phone numbers",
        also=(RuleCheck(forbid="phone"),),
    )
    assert suggestion.checked_rule == rule.with_changes(check={"forbid": "email"})


def test_rules_with_a_check_or_another_target_get_no_suggestion() -> None:
    checked = output_rule("Never reveal e-mail addresses.", "prohibition", check={"max_chars": 9})
    agent = Rule(
        id="agent_rule", type="prohibition", target="agent", content="Never reveal e-mails."
    )

    assert suggest_checks([checked, agent]) == []


PIECES = [
    *"abcdefghijklmnopqrstuvwxyz ABCEFIRUSP0123456789.,;:()\"'-\u00a0\u200b",
    " never ", " e-mail ", " in French ", " EUR ", " at most ", " characters ", " IP ",
    " unless ", " passwords ", " 12.50 ", " tokens ", " answers ", " not ",
]  # fmt: skip
TEXT = st.lists(st.sampled_from(PIECES), min_size=3, max_size=80).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=TEXT, type=st.sampled_from(["requirement", "prohibition", "guideline"]))
def test_any_content_gets_a_valid_check_or_none_the_same_every_time(
    content: str, type: str
) -> None:
    if len(content.strip()) < 10:
        return
    rule = output_rule(content, type)

    suggestions = suggest_checks([rule])

    assert suggestions == suggest_checks([rule])
    for suggestion in suggestions:
        assert suggestion.checked_rule.check == suggestion.check  # a valid rule with it
        assert suggestion.because in content
