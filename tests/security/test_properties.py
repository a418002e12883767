"""Invariants of the checks, stated as properties (hypothesis).

- Invisible characters anywhere inside an e-mail address, a card number or an API key
  never let it pass, and the redacted answer reads exactly as the text around it.
- Look-alike characters and Unicode spaces change nothing either.
- A forbidden keyword in tool arguments is denied however it is spaced, cased, hidden or
  nested.
- Any text ends in a verdict, and a redacted answer passes its own checks again.
"""

from __future__ import annotations

from typing import Any

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_agent_rules.rules.engine import check_answer, check_tool_call
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.normalized import normalize

_DEFAULT_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
IGNORABLE = [chr(code) for code in range(0x30000) if _DEFAULT_IGNORABLE.match(chr(code))]
IGNORABLE += ["\U000e0001", "\U000e0041", "\U000e01ef", "\x00", "\x1b", "\x7f", "\x9b"]
SPACES = ["\u00a0", "\u202f", "\u2007", "\u2009", "\u200a", "\u2002", "\u3000", "\u205f"]
DETECTORS = ("email", "phone", "credit_card", "iban", "ipv4", "ipv6", "secret")
BEFORE, AFTER = "Contact: ", " today."


def forbidding(forbid: str, on_fail: str = "redact", rule_id: str = "hidden") -> Rule:
    return Rule(
        id=rule_id,
        type="prohibition",
        target="output",
        content="Never show what this detector finds.",
        check={"forbid": forbid, "on_fail": on_fail},
    )


def scattered(text: str, hidden: list[tuple[int, str]]) -> str:
    """``text`` with each hidden character put before the character at its position."""
    pieces = list(text)
    for position, character in hidden:
        index = 1 + position % (len(text) - 1)  # inside: never before the first character
        pieces[index] = character + pieces[index]
    return "".join(pieces)


def reads_as(text: str) -> str:
    return normalize(text).text


def assert_hidden_and_redacted(forbid: str, hidden_match: str) -> None:
    answer = f"{BEFORE}{hidden_match}{AFTER}"
    assert check_answer([forbidding(forbid, "block")], answer).status == "blocked"
    verdict = check_answer([forbidding(forbid)], answer)
    assert verdict.status == "redacted"
    assert reads_as(verdict.text) == f"{BEFORE}[redacted: {forbid}]{AFTER}"


_HIDDEN = st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(IGNORABLE)), max_size=8)


@given(_HIDDEN)
@settings(max_examples=200)
def test_invisible_characters_inside_an_email_never_let_it_pass(hidden: Any) -> None:
    assert_hidden_and_redacted("email", scattered("alice.martin@example.com", hidden))


@given(_HIDDEN)
@settings(max_examples=100)
def test_invisible_characters_inside_a_card_never_let_it_pass(hidden: Any) -> None:
    assert_hidden_and_redacted("credit_card", scattered("4111 1111 1111 1111", hidden))


@given(_HIDDEN)
@settings(max_examples=100)
def test_invisible_characters_inside_an_api_key_never_let_it_pass(hidden: Any) -> None:
    assert_hidden_and_redacted("secret", scattered("AKIAIOSFODNN7EXAMPLE", hidden))


_AT = st.sampled_from(["@", "\uff20", "\ufe6b"])
_DOT = st.sampled_from([".", "\uff0e", "\u3002", "\uff61", "\u2024", "\ufe52", "\u2e3c"])
_FULLWIDTH = st.booleans()


@given(_AT, _DOT, _DOT, _FULLWIDTH, _HIDDEN)
@settings(max_examples=200)
def test_look_alike_email_characters_never_let_it_pass(
    at: str, dot: str, other_dot: str, fullwidth: bool, hidden: Any
) -> None:
    local = "alice" if not fullwidth else "\uff41\uff4c\uff49\uff43\uff45"
    address = f"{local}{dot}martin{at}example{other_dot}com"
    assert_hidden_and_redacted("email", scattered(address, hidden))


_DIGIT_ZEROS = st.sampled_from([0x30, 0xFF10, 0x0660, 0x06F0, 0x0966, 0x09E6, 0x0E50, 0x1D7CE])
_GROUP_SEPARATORS = st.sampled_from([" ", "-", "\u2011", "\u2012", "\u2013", "\u2212", *SPACES])


@given(_DIGIT_ZEROS, st.lists(_GROUP_SEPARATORS, min_size=3, max_size=3))
@settings(max_examples=200)
def test_a_card_in_any_digits_and_grouping_never_passes(zero: int, separators: list[str]) -> None:
    groups = [
        "".join(chr(zero + int(d)) for d in group) for group in ("4111", "1111", "1111", "1111")
    ]
    card = groups[0] + "".join(s + g for s, g in zip(separators, groups[1:], strict=True))
    assert_hidden_and_redacted("credit_card", card)


@given(st.lists(st.sampled_from([*SPACES, " "]), min_size=5, max_size=5), _DIGIT_ZEROS)
@settings(max_examples=100)
def test_an_iban_in_any_spaces_and_digits_never_passes(spaces: list[str], zero: int) -> None:
    groups = ["DE89", "3704", "0044", "0532", "0130", "00"]
    digits = ["".join(chr(zero + int(c)) if c.isdigit() else c for c in g) for g in groups]
    iban = digits[0] + "".join(s + g for s, g in zip(spaces, digits[1:], strict=True))
    assert_hidden_and_redacted("iban", iban)


_CASES = st.lists(st.booleans(), min_size=6, max_size=6)
_WORD_SEPARATORS = st.sampled_from(
    [" ", "\n", "\t", "\r\n", "  ", " --c\n", "/**/", "/* x */", "\u00a0", "\x0c"]
)


def _nest(value: Any, shape: int) -> Any:
    return [
        {"sql": value},
        {"batch": [{"sql": value}]},
        {"steps": ({"q": value},)},
        {"a": {"b": {"c": [value]}}},
    ][shape]


@given(_CASES, _WORD_SEPARATORS, _HIDDEN, st.integers(0, 3))
@settings(max_examples=300)
def test_a_forbidden_keyword_in_arguments_is_always_denied(
    upper: list[bool], separator: str, hidden: Any, shape: int
) -> None:
    keyword = "".join(c.upper() if u else c for c, u in zip("delete", upper, strict=True))
    sql = f"{scattered(keyword, hidden)}{separator}FROM orders"
    rule = Rule(
        id="no_delete",
        type="prohibition",
        target="tool",
        content="Never delete rows.",
        check={"tool": "sql_query", "args": r"regex:(?i)\bdelete\b"},
    )
    assert check_tool_call([rule], "sql_query", _nest(sql, shape)).status == "denied"


ALL_DETECTORS = [forbidding(name, rule_id=f"no_{name}") for name in DETECTORS]


@given(st.text(st.characters(exclude_categories=()), max_size=200))
@settings(max_examples=300)
def test_any_text_ends_in_a_verdict_and_a_redaction_passes_again(text: str) -> None:
    verdict = check_answer(ALL_DETECTORS, text)
    assert verdict.status in ("passed", "redacted")
    if verdict.status == "redacted":
        assert check_answer(ALL_DETECTORS, verdict.text).status == "passed"
