"""The normalised view: what a reader reads, mapped back to the characters it came from."""

from __future__ import annotations

import time
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_agent_rules.rules.normalized import (
    _ANY_CLUSTER,
    MAX_MARKS_PER_CLUSTER,
    _walked,
    normalize,
)


def read_as(text: str) -> list[str]:
    """Each view character with the original characters it was read from."""
    view = normalize(text)
    return [text[slice(*view.original_span(index, index + 1))] for index in range(len(view.text))]


@pytest.mark.parametrize(
    ("text", "view"),
    [
        ("alice.martin\u200b@example.com", "alice.martin@example.com"),
        ("a\u200cb\u200dc\u2060d\ufeffe\u00adf\u180eg", "abcdefg"),
        ("bidi\u202e\u2066\u2069\u200e\u200fend", "bidiend"),
        ("vs\ufe0f\U000e0101x\U000e0041y", "vsxy"),
        ("hangul\u3164\u115f\uffa0filler", "hangulfiller"),
        ("nul\x00bell\x07del\x7fnel\x85csi\x9bend", "nulbelldelnelcsiend"),
        ("tabs\tand\nlines\r\nstay\x0b\x0c", "tabs\tand\nlines\r\nstay\x0b\x0c"),
        ("4111\u00a01111\u202f1111\u2009111\u30001", "4111 1111 1111 111 1"),
        ("line\u2028para\u2029end", "line\npara\nend"),
        ("alice\uff20example\uff0ecom", "alice@example.com"),
        ("alice\ufe6bexample\u2024com", "alice@example.com"),
        (
            "example\u3002com example\uff61org example\u2e3cnet",
            "example.com example.org example.net",
        ),
        ("4111\u20111111\u20121111\u20131111\u22121", "4111-1111-1111-1111-1"),
        (
            "\uff14\uff11\uff11\uff11 \u0664\u0661\u0661\u0661 \u0967\u0968 \U0001d7cf\u00b2\u2460",
            "4111 4111 12 121",
        ),
        ("\uff21\uff2b\uff29\uff21 \U0001d400\U0001d41a \u24b6", "AKIA Aa A"),
        ("\ufb01nd the \ufb02ag", "find the flag"),
        ("cafe\u0301 and \u212b", "café and Å"),
        ("\u0440\u0430ypal and \u0410KIA2 and \u0441\u0430fe", "paypal and AKIA2 and cafe"),
        ("\u043f\u0430\u0440\u043e\u043b\u044c \u0393\u03b5\u03b9\u03ac", "пароль Γειά"),
        ("plain ASCII stays as it is.", "plain ASCII stays as it is."),
        ("Żółta gęś, 東京, हिन्दी", "Żółta gęś, 東京, हिन्दी"),
    ],
)
def test_the_view_is_what_a_reader_reads(text: str, view: str) -> None:
    assert normalize(text).text == view


def test_an_unchanged_text_is_its_own_view() -> None:
    for text in ["plain", "Żółta gęś", "東京"]:
        view = normalize(text)
        assert view.text == text and not view.changed


def test_removed_characters_inside_a_match_belong_to_it() -> None:
    text = "Mail alice.mar\u200btin\u2060@exa\ufeffmple.com now"
    view = normalize(text)
    start = view.text.index("alice")
    end = view.text.index(".com") + 4
    assert (
        text[slice(*view.original_span(start, end))] == "alice.mar\u200btin\u2060@exa\ufeffmple.com"
    )


def test_each_view_character_maps_to_what_it_was_read_from() -> None:
    assert read_as("\ufb01x\u200b\uff21\u0301y\u00a0") == [
        "\ufb01",
        "\ufb01",
        "x",
        "\uff21\u0301",
        "y",
        "\u00a0",
    ]
    assert read_as("e\u0301t\u00e9") == ["e\u0301", "t", "\u00e9"]
    assert read_as("\u200b\u200b") == []


def test_an_empty_span_maps_to_a_position() -> None:
    view = normalize("ab\u200bcd")
    assert view.original_span(2, 2) == (3, 3)
    assert view.original_span(4, 4) == (5, 5)


def test_long_runs_of_combining_marks_stay_linear() -> None:
    # NFKC sorts marks by insertion: 40,000 marks out of order take seconds in one call.
    zalgo = "a" + "\u0301\u0316" * 250_000
    started = time.monotonic()
    view = normalize(zalgo)
    assert time.monotonic() - started < 5
    assert view.text[0] == "\u00e1"  # a and its first acute, composed
    assert len(view.text) == len(zalgo) - 1
    assert MAX_MARKS_PER_CLUSTER == 32


@pytest.mark.parametrize(
    "text",
    [
        "a\u200b" * 200_000,
        "\u00a0" * 400_000,
        "\ufb01" * 400_000,
        "e\u0301" * 200_000,
        "\u0440\u0430ypal " * 60_000,
    ],
)
def test_a_hostile_megabyte_builds_its_view_and_map_in_bounded_time(text: str) -> None:
    started = time.monotonic()
    view = normalize(text)
    view.original_span(len(view.text) // 2, len(view.text) // 2 + 1)
    assert time.monotonic() - started < 5


_PIECES = st.sampled_from(
    [
        "a",
        "Z",
        "7",
        "@",
        ".",
        " ",
        "\n",
        "\u200b",
        "\u2060",
        "\ufeff",
        "\u00ad",
        "\u00a0",
        "\u202f",
        "\uff20",
        "\uff0e",
        "\uff11",
        "\u0661",
        "\ufb01",
        "\u0301",
        "e\u0301",
        "\u0430",
        "\u0441",
        "\ufe0f",
        "\x00",
        "\u3002",
        "\u2013",
        "\U0001d400",
    ]
)


@given(st.lists(_PIECES, max_size=40).map("".join))
@settings(max_examples=300, deadline=None)
def test_the_map_covers_the_original_in_order(text: str) -> None:
    view = normalize(text)
    last = (0, 0)
    for index in range(len(view.text)):
        start, end = view.original_span(index, index + 1)
        assert 0 <= start < end <= len(text)
        assert (start, end) == last or start >= last[1]
        last = (start, end)
    if view.text:
        start, end = view.original_span(0, len(view.text))
        # Only removed characters lie outside the span of the whole view.
        outside = text[:start] + text[end:]
        assert normalize(outside).text == ""


@given(st.lists(_PIECES, max_size=40).map("".join))
@settings(max_examples=200, deadline=None)
def test_the_view_holds_no_invisible_or_look_alike_character(text: str) -> None:
    view = normalize(text).text
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in view if c != "\n")
    assert not any(c in view for c in "\u00a0\u202f\uff20\uff0e\uff11\u0661\u3002\u2013")
    if "\u0301" not in text:  # a look-alike folded next to an accent stays uncomposed
        assert normalize(view).text == view


@given(st.lists(_PIECES, max_size=40).map("".join))
@settings(max_examples=300, deadline=None)
def test_a_text_of_many_characters_gets_the_same_view(text: str) -> None:
    # Past 8,192 distinct characters, Unicode properties find what changes instead of
    # named characters: both ways give one view, and maps to what each character was
    # read from (the first may take a whole cluster where the second takes a character).
    by_property = _walked(text, _ANY_CLUSTER)
    named = normalize(text)
    assert by_property.text == named.text

    for index in range(len(named.text)):
        one, other = sorted(
            (view.original_span(index, index + 1) for view in (by_property, named)),
            key=lambda span: span[1] - span[0],
        )
        assert other[0] <= one[0] and one[1] <= other[1]


def test_a_hidden_address_among_every_character_is_read() -> None:
    every = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 9000))
    text = f"{every} alice\u200b\uff20example\uff0ecom {every}"
    view = normalize(text)
    start = view.text.index("alice@example.com")
    span = view.original_span(start, start + len("alice@example.com"))
    assert text[slice(*span)] == "alice\u200b\uff20example\uff0ecom"
