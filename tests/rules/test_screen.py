"""The screen that skips a pattern a text cannot match must never skip one that matches."""

from __future__ import annotations

import sys

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from langchain_agent_rules.rules.screen import Screen, fold, screen_of


@pytest.mark.parametrize(
    ("pattern", "screen"),
    [
        (r"\bcode-\d{4}\b", Screen("code-", folded=False)),
        (r"\d[.,]\d{2} ?EUR\b", Screen("EUR", folded=False)),
        (r"(?i)\bSecret3\b", Screen("secret3", folded=True)),
        (r"colou?r", Screen("colo", folded=False)),
        (r"ab+cd", Screen("cd", folded=False)),
        (r"\$\d+ total", Screen(" total", folded=False)),
        (r"(?:EUR|USD) only", Screen(" only", folded=False)),
        (r"x{0}yz", Screen("yz", folded=False)),
    ],
)
def test_the_longest_literal_every_match_holds_is_read(pattern: str, screen: Screen) -> None:
    assert screen_of(pattern) == screen


@pytest.mark.parametrize(
    "pattern",
    [
        r"EUR|USD",  # an alternation: no literal is in every match
        r"abc(?i)def",  # inline flags apply to the whole pattern
        r"abc(?:(?x) d e f)",
        r"[[:alpha:]x]yz",  # a POSIX class inside a set
        r"abc(?#comment (with) parens)",
        r"(?:abc){e<=1}",  # fuzzy matching
        r"\p{L}abc",  # an escape with arguments
        r"\x41BC",
        r"(a)\1bc",  # a back reference
        r"\Gabc",
        r"(?i)çava",  # case-insensitive and not ASCII
        r"\d+",  # no literal at all
    ],
)
def test_what_is_not_fully_understood_is_never_screened(pattern: str) -> None:
    assert screen_of(pattern) is None


def test_a_screened_pattern_is_skipped_only_when_its_literal_is_absent() -> None:
    screen = screen_of(r"\bcode-\d{4}\b")
    assert screen is not None
    assert not screen.may_match("no codes here")
    assert screen.may_match("use code-1234")


def test_every_case_insensitive_match_of_an_ascii_character_survives_the_fold() -> None:
    # The regex module's case-insensitive matching, checked over every code point.
    candidates = regex.compile(r"(?i)[a-z0-9]")
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        character = chr(code)
        if candidates.fullmatch(character) is None:
            continue
        letters = [
            letter
            for letter in "abcdefghijklmnopqrstuvwxyz0123456789"
            if regex.fullmatch(f"(?i){letter}", character)
        ]
        assert [fold(character)] == letters, hex(code)


_LITERALS = st.sampled_from([*"abcAB -_.#é", r"\.", r"\-", r"\ "])
_ATOMS = st.one_of(
    _LITERALS,
    st.sampled_from([r"\d", r"\w", r"\s", r"\b", "[a-c]", "[^b]", "[.]", ".", "^", "$"]),
)
_QUANTIFIERS = st.sampled_from(["", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,}", "+?", "??"])


def _quantified(parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(parts, _QUANTIFIERS).map("".join)


def _sequences(parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(parts, min_size=1, max_size=6).map("".join)


# st.from_regex checks its padded texts with Python's backtracking `re`, which never times out:
# a quantifier over a group holding a quantifier or an alternation, such as (a+)+ or (?:a|a)*,
# can make one draw run for hours. Only groups of plain atoms are quantified, so every pattern
# stays polynomial while groups, alternations and lookaheads still nest.
_PLAIN_GROUPS = st.lists(_ATOMS, min_size=1, max_size=4).flatmap(
    lambda atoms: st.sampled_from([f"({''.join(atoms)})", f"(?:{''.join(atoms)})"])
)

_PATTERNS = st.recursive(
    _sequences(_quantified(_ATOMS)),
    lambda inner: _sequences(
        st.one_of(
            _quantified(_ATOMS),
            _quantified(_PLAIN_GROUPS),
            inner.map(lambda body: f"({body})"),
            inner.map(lambda body: f"(?:{body})"),
            st.tuples(inner, inner).map(lambda pair: f"(?:{pair[0]}|{pair[1]})"),
            inner.map(lambda body: f"(?={body})"),
        )
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=_PATTERNS,
    flags=st.sampled_from(["", "(?i)", "(?s)", "(?im)"]),
    data=st.data(),
)
def test_a_text_the_pattern_matches_is_never_screened_out(
    body: str, flags: str, data: st.DataObject
) -> None:
    pattern = flags + body
    try:
        compiled = regex.compile(pattern)
        text = data.draw(st.from_regex(pattern))
    except (regex.error, Exception):
        assume(False)
        return
    try:
        matched = compiled.search(text, timeout=0.05) is not None
    except TimeoutError:
        assume(False)
        return
    screen = screen_of(pattern)
    if matched and screen is not None:
        assert screen.may_match(text), (pattern, text, screen)
