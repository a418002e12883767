"""Which values may be example values: formats yes, anything a forbid check redacts no."""

from __future__ import annotations

import pytest

from langchain_agent_rules.tools._safe_values import (
    MAX_EXAMPLE_CHARS,
    is_private_column,
    is_shown_value,
)


@pytest.mark.parametrize(
    "value",
    ["2026-03-01", "2026-03-01 09:15:00", "2026-03-01T09:15:00Z", "09:15", "12345678",
     "-3.25", "C-17", "open", "Tea cups (set of 4)", "Zoë Müller", "x" * MAX_EXAMPLE_CHARS],
)  # fmt: skip
def test_formats_and_plain_words_are_shown(value: str) -> None:
    assert is_shown_value(value)


@pytest.mark.parametrize(
    "value",
    [
        "ann@example.com",
        "+41 44 668 18 00",
        "044 668 18 00",  # a national phone number: seven digits that are no date or number
        "4111-1111-1111-1111",
        "GB82 WEST 1234 5698 7654 32",
        "10.0.0.1",
        "fe80::1",
        "AKIAIOSFODNN7EXAMPLE",
        "x" * (MAX_EXAMPLE_CHARS + 1),
        "two\nlines",
        "tab\there",
        "",
        "   ",
        "\ud800",
    ],
)
def test_private_long_or_unprintable_values_are_not_shown(value: str) -> None:
    assert not is_shown_value(value)


@pytest.mark.parametrize(
    ("name", "private"),
    [
        ("email", True),
        ("EMail_Address", True),
        ("phone_number", True),
        ("passwordHash", True),
        ("api_key", True),
        ("apiKey", True),
        ("refresh_token", True),
        ("card_last4", True),
        ("client_ip", True),
        ("pin", True),
        ("name", False),
        ("description", False),  # holds "ip" only inside a word
        ("shipping_city", False),
        ("monkey", False),
        ("opened", False),
    ],
)
def test_column_names_say_what_is_private(name: str, private: bool) -> None:
    assert is_private_column(name) is private
