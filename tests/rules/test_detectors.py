"""The forbid detectors find what they name and are confirmed by the library that knows it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phonenumbers import (
    COUNTRY_CODES_FOR_NON_GEO_REGIONS,
    SUPPORTED_REGIONS,
    Leniency,
    PhoneMetadata,
    PhoneNumberMatcher,
)
from phonenumbers.phonenumbermatcher import _PATTERN as LIBPHONENUMBER_CANDIDATE

from langchain_agent_rules.rules.check import parse_detector
from langchain_agent_rules.rules.detectors import (
    MAX_PHONE_STRETCH_CHARS,
    MIN_INTERNATIONAL_PHONE_DIGITS,
    PHONE_BREAKS,
    IncompleteScan,
    find_spans,
)
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
        ("credit_card", "Card 4111  1111  1111  1111.", ["4111  1111  1111  1111"]),
        ("credit_card", "Card 4111 - 1111 - 1111 - 1111.", ["4111 - 1111 - 1111 - 1111"]),
        ("credit_card", "Card\t4111\t1111\t1111\t1111.", ["4111\t1111\t1111\t1111"]),
        ("credit_card", "ref-4111111111111111", ["4111111111111111"]),
        ("credit_card", "1234 4111 1111 1111 1111 5678", ["4111 1111 1111 1111"]),
        ("credit_card", "7 7 4111 1111 1111 1111", ["4111 1111 1111 1111"]),
        ("credit_card", "A 20-digit number 41111111111111111111 is no card.", []),
        ("iban", "XX12 DE89 3704 0044 0532 0130 00", ["DE89 3704 0044 0532 0130 00"]),
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


# -- the phone detector reads every stretch that may hold a number, or says it cannot --


def test_no_phone_number_libphonenumber_finds_holds_a_break_character() -> None:
    for character in PHONE_BREAKS:
        for text in (
            f"+1 650{character}253 0000",
            f"1{character}2{character}3",
            f"{character}+33 6 12 34 56 78{character}",
            f"+33 6 12 34 56 78 ext{character}123",
        ):
            for candidate in LIBPHONENUMBER_CANDIDATE.finditer(text):
                assert character not in candidate.group(), (character, text)


def test_the_shortest_international_number_has_the_digits_the_detector_waits_for() -> None:
    every = [PhoneMetadata.metadata_for_region(code) for code in SUPPORTED_REGIONS]
    every += [
        PhoneMetadata.metadata_for_nongeo_region(code) for code in COUNTRY_CODES_FOR_NON_GEO_REGIONS
    ]
    shortest = min(
        len(str(metadata.country_code)) + min(metadata.general_desc.possible_length)
        for metadata in every
    )
    assert shortest == MIN_INTERNATIONAL_PHONE_DIGITS


_NUMBERS = ["+33 6 12 34 56 78", "+1 (650) 253-0000", "+44 20 7946 0958", "06 12 34 56 78"]
_TEXT_PIECES = st.sampled_from(
    [
        *_NUMBERS,
        "1234567",
        "12 34",
        "+1 234",
        "(12)",
        " ",
        "\n",
        "b",
        "call",
        "x",
        "ext.",
        "'",
        ":",
        "%",
        "2026-03-14",
    ]
)


@given(st.lists(_TEXT_PIECES, max_size=25).map("".join), st.sampled_from([None, "FR", "DE"]))
@settings(max_examples=300, deadline=None)
def test_reading_stretches_finds_what_reading_the_whole_text_finds(
    text: str, region: str | None
) -> None:
    whole = PhoneNumberMatcher(text, region, leniency=Leniency.VALID, max_tries=10**9)
    detector = parse_detector(f"phone:{region}" if region else "phone")
    assert find_spans(detector, text, 10.0) == [(match.start, match.end) for match in whole]


def test_a_number_after_a_megabyte_of_decoys_fails_the_scan_instead_of_passing() -> None:
    # libphonenumber alone stops after 65,535 candidates and reports no number at all.
    text = "1234567 " * 70_000 + "Call +33 6 12 34 56 78."
    assert list(PhoneNumberMatcher(text, None, leniency=Leniency.VALID)) == []
    with pytest.raises(IncompleteScan) as raised:
        find_spans(parse_detector("phone"), text, 10.0)
    assert str(raised.value) == (
        "met 560,001 characters in a row that may all belong to phone numbers "
        f"(the phone scan reads at most {MAX_PHONE_STRETCH_CHARS:,})"
    )


def test_decoys_cut_by_break_characters_hide_no_number() -> None:
    text = "1234567 b" * 10_000 + " Call +33 6 12 34 56 78."
    assert found("phone", text) == ["+33 6 12 34 56 78"]


def test_a_stretch_with_too_many_candidates_fails_the_scan() -> None:
    text = "1/1 " * 2000 + "+33 6 12 34 56 78"
    with pytest.raises(IncompleteScan) as raised:
        find_spans(parse_detector("phone"), text, 10.0)
    assert str(raised.value) == "stopped after 4,096 phone number candidates"


def test_many_stretches_end_at_the_deadline() -> None:
    text = "12 34 56 78 b" * 50_000
    with pytest.raises(TimeoutError):
        find_spans(parse_detector("phone:FR"), text, 0.05)
