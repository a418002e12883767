"""The forbid detectors find what they name and are confirmed by the library that knows it."""

from __future__ import annotations

import pytest

from langchain_agent_rules.rules.check import parse_detector
from langchain_agent_rules.rules.detectors import find_spans
from langchain_agent_rules.rules.language import detect_language, supported_languages


def found(detector: str, text: str) -> list[str]:
    return [text[start:end] for start, end in find_spans(parse_detector(detector), text, 1.0)]


@pytest.mark.parametrize(
    ("detector", "text", "matches"),
    [
        ("email", "Write to alice.martin@example.com.", ["alice.martin@example.com"]),
        (
            "email",
            "ünïcode@exämple.de and x+tag@sub.example.co.uk",
            ["ünïcode@exämple.de", "x+tag@sub.example.co.uk"],
        ),
        ("email", "Not an address: @example.com or alice@ or a@b", []),
        (
            "phone",
            "Call +33 6 12 34 56 78 or +1 (650) 253-0000.",
            ["+33 6 12 34 56 78", "+1 (650) 253-0000"],
        ),
        ("phone", "Call 06 12 34 56 78 today.", []),
        ("phone:FR", "Call 06 12 34 56 78 today.", ["06 12 34 56 78"]),
        ("phone", "Order 1234567 of 2026-03-14 cost 329.00 EUR.", []),
        (
            "credit_card",
            "Card 4111 1111 1111 1111 or 5500-0000-0000-0004.",
            ["4111 1111 1111 1111", "5500-0000-0000-0004"],
        ),
        ("credit_card", "Order 4111 1111 1111 1112 failed the Luhn check.", []),
        ("iban", "Pay to DE89 3704 0044 0532 0130 00 EUR today.", ["DE89 3704 0044 0532 0130 00"]),
        ("iban", "Compact GB82WEST12345698765432.", ["GB82WEST12345698765432"]),
        ("iban", "Wrong checksum DE88 3704 0044 0532 0130 00.", []),
        ("ipv4", "Hosts 192.168.1.10 and 8.8.8.8.", ["192.168.1.10", "8.8.8.8"]),
        ("ipv4", "Version 999.1.2.3 and 1.2.3.4.5 are not addresses.", []),
        (
            "ipv6",
            "Reach 2001:db8::1 or fe80::1ff:fe23:4567:890a.",
            ["2001:db8::1", "fe80::1ff:fe23:4567:890a"],
        ),
        ("ipv6", "At 12:30:45, std::vector and :: are not addresses.", []),
        ("secret", "AWS AKIAIOSFODNN7EXAMPLE here.", ["AKIAIOSFODNN7EXAMPLE"]),
        ("secret", "token ghp_" + "a" * 36 + " end", ["ghp_" + "a" * 36]),
        ("secret", "key sk-proj-" + "Ab1_" * 8, ["sk-proj-" + "Ab1_" * 8]),
        ("secret", "Stripe sk_live_" + "x9" * 12 + ".", ["sk_live_" + "x9" * 12]),
        ("secret", "Tell me about sk-learn and ask-me-anything.", []),
    ],
)
def test_detectors_find_what_they_name(detector: str, text: str, matches: list[str]) -> None:
    assert found(detector, text) == matches


def test_a_private_key_block_is_found_whole() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----"
    assert found("secret", f"Here: {block} done") == [block]


def test_a_json_web_token_is_a_secret() -> None:
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
    assert found("secret", f"Bearer {token}") == [token]


def test_the_language_model_knows_120_iso_codes() -> None:
    languages = supported_languages()
    assert {"en", "fr", "de", "es", "it", "pl"} <= languages
    assert len(languages) == 120 and all(len(code) == 2 for code in languages)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Nous avons trois clients à Lyon.", "fr"),
        ("We have three customers in Lyon.", "en"),
        ("Wir haben drei Kunden in Lyon.", "de"),
    ],
)
def test_the_language_of_a_short_answer_is_detected(text: str, language: str) -> None:
    detected = detect_language(text)
    assert detected is not None and detected[0] == language


def test_a_text_without_letters_or_with_a_lone_surrogate_is_handled() -> None:
    assert detect_language("329.0 — 42 [1, 2]") is None
    detected = detect_language("Nous avons \ud800 trois clients à Lyon.")
    assert detected is not None and detected[0] == "fr"
