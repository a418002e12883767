"""RuleCheck: what a check may say, its defaults, and the errors that name what is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_agent_rules.errors import RuleValidationError
from langchain_agent_rules.rules.check import MAX_PATTERN_CHARS, RuleCheck
from langchain_agent_rules.rules.model import Rule


def output_rule(check: Any, target: str = "output") -> Rule:
    return Rule(
        id="checked_rule",
        type="prohibition",
        target=target,
        content="A rule that carries a check.",
        check=check,
    )


@pytest.mark.parametrize(
    ("check", "condition", "action"),
    [
        ({"forbid": "email"}, "forbid", "redact"),
        ({"forbid": "phone:FR"}, "forbid", "redact"),
        ({"forbid": "regex:(?i)confidential", "on_fail": "block"}, "forbid", "block"),
        ({"require": r"regex:\bEUR\b", "when": r"regex:\d[.,]\d"}, "require", "revise"),
        ({"language": "fr"}, "language", "revise"),
        ({"max_chars": 500, "on_fail": "block"}, "max_chars", "block"),
    ],
)
def test_a_plain_dict_becomes_a_check_with_its_default_on_fail(
    check: dict[str, Any], condition: str, action: str
) -> None:
    rule = output_rule(check)
    assert rule.check is not None
    assert (rule.check.condition, rule.check.action) == (condition, action)
    assert rule.check.to_record() == check


@pytest.mark.parametrize(
    ("check", "action"),
    [
        ({"tool": "sql_query"}, "deny"),
        ({"tool": "*", "args": "regex:x", "on_fail": "approve"}, "approve"),
    ],
)
def test_tool_checks_belong_to_tool_rules_and_deny_by_default(
    check: dict[str, Any], action: str
) -> None:
    rule = output_rule(check, target="tool")
    assert rule.check is not None and rule.check.action == action
    assert not rule.check.is_answer_check


def test_the_record_keeps_only_what_was_given() -> None:
    check = RuleCheck(forbid="email", on_fail="redact", scope="answer_and_observations")
    assert check.to_record() == {
        "forbid": "email",
        "on_fail": "redact",
        "scope": "answer_and_observations",
    }
    assert RuleCheck(**check.to_record()) == check
    assert RuleCheck(language="fr").to_record() == {"language": "fr"}


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (
            {"forbid": "mail"},
            "invalid rule: invalid check: unknown detector 'mail' in forbid; allowed: email, "
            "phone, phone:<REGION>, credit_card, iban, ipv4, ipv6, secret or regex:<pattern>",
        ),
        (
            {"forbid": "phone:XX"},
            "invalid rule: invalid check: unknown phone region 'XX' in forbid; allowed: "
            "phone:<REGION> with a region code such as FR, DE or US",
        ),
        (
            {"forbid": "email", "require": "regex:x"},
            "invalid rule: invalid check: a check needs exactly one of forbid, require, "
            "language, max_chars, tool; got forbid, require",
        ),
        (
            {},
            "invalid rule: invalid check: a check needs exactly one of forbid, require, "
            "language, max_chars, tool; got none",
        ),
        (
            {"require": "EUR"},
            "invalid rule: invalid check: require must be regex:<pattern>, got 'EUR'",
        ),
        (
            {"require": "regex:"},
            "invalid rule: invalid check: require has an empty pattern; give regex:<pattern>",
        ),
        (
            {"require": "regex:(EUR"},
            "invalid rule: invalid check: invalid pattern in require: missing ) at position 4",
        ),
        (
            {"forbid": "regex:x*"},
            "invalid rule: invalid check: the pattern in forbid matches an empty text, so it "
            "would match every text",
        ),
        (
            {"require": "regex:" + "x" * (MAX_PATTERN_CHARS + 1)},
            f"invalid rule: invalid check: the pattern in require has {MAX_PATTERN_CHARS + 1} "
            f"characters; the limit is {MAX_PATTERN_CHARS}",
        ),
        (
            {"language": "french"},
            "invalid rule: invalid check: unknown language 'french'; allowed: a lower-case ISO "
            "639-1 code the language detector knows, such as en, fr, de or es",
        ),
        (
            {"require": "regex:EUR", "on_fail": "redact"},
            "invalid rule: invalid check: on_fail 'redact' does not go with require; allowed: "
            "revise or block",
        ),
        (
            {"forbid": "email", "on_fail": "deny"},
            "invalid rule: invalid check: on_fail 'deny' does not go with forbid; allowed: "
            "redact, revise or block",
        ),
        (
            {"forbid": "email", "when": "regex:x"},
            "invalid rule: invalid check: when goes with require only",
        ),
        (
            {"language": "fr", "scope": "answer_and_observations"},
            "invalid rule: invalid check: scope goes with forbid only",
        ),
        (
            {"max_chars": 0},
            "invalid rule: invalid check: invalid check.max_chars 0: a positive integer within "
            "64 bits",
        ),
        (
            {"forbid": "email", "colour": "red"},
            "invalid rule: invalid check: unknown field 'check.colour'; allowed fields: forbid, "
            "require, when, language, max_chars, tool, args, on_fail, scope",
        ),
        (
            "email",
            "invalid rule: invalid check 'email': null or a JSON object with one of forbid, "
            "require, language, max_chars, tool",
        ),
        (
            {"forbid": "regex:\ud800"},
            "invalid rule: invalid check: forbid holds a lone surrogate (\\ud800); text must be "
            "valid Unicode, without lone surrogates",
        ),
    ],
)
def test_a_bad_check_raises_naming_what_is_allowed(check: Any, message: str) -> None:
    with pytest.raises(RuleValidationError) as caught:
        output_rule(check)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("check", "target", "message"),
    [
        (
            {"tool": "sql_query"},
            "output",
            "invalid rule: a tool check needs target TOOL, got OUTPUT",
        ),
        ({"forbid": "email"}, "tool", "invalid rule: a forbid check needs target OUTPUT, got TOOL"),
        (
            {"language": "fr"},
            "agent",
            "invalid rule: a language check needs target OUTPUT, got AGENT",
        ),
    ],
)
def test_a_check_must_fit_the_rule_target(check: dict[str, Any], target: str, message: str) -> None:
    with pytest.raises(RuleValidationError) as caught:
        output_rule(check, target=target)
    assert str(caught.value) == message


def test_a_tool_check_needs_a_tool_name_or_a_star() -> None:
    with pytest.raises(RuleValidationError) as caught:
        output_rule({"tool": "sql query"}, target="tool")
    assert str(caught.value) == (
        "invalid rule: invalid check: invalid tool 'sql query'; allowed: a tool name "
        "(1 to 128 characters, no spaces) or *"
    )
    with pytest.raises(RuleValidationError, match="args goes with tool only"):
        output_rule({"max_chars": 10, "args": "regex:x"})


def test_a_check_built_alone_raises_rule_validation_error_too() -> None:
    with pytest.raises(RuleValidationError) as caught:
        RuleCheck(forbid="nothing")
    assert str(caught.value).startswith("invalid check: unknown detector 'nothing' in forbid")


def test_changing_a_rule_keeps_its_check_and_can_remove_it() -> None:
    rule = output_rule({"forbid": "email"})
    assert rule.with_changes(priority=3).check == rule.check
    assert rule.with_changes(check=None).check is None
