"""The ``forbid`` detectors: where a text holds e-mail addresses, phone numbers, cards, ...

Each detector returns the ``(start, end)`` spans of its matches, in order. A candidate
pattern finds what looks right and a library confirms it where one exists:
``credit_card`` is Luhn-checked and ``iban`` checksum-checked by python-stdnum, ``ipv4``
and ``ipv6`` parsed by the standard `ipaddress`, ``phone`` found and validated by Google's
libphonenumber (phonenumberslite): numbers in international form (``+33 6 12 34 56 78``)
always, national forms (``06 12 34 56 78``) with ``phone:<REGION>``. ``secret`` knows the
documented formats of common API keys and tokens, JWTs and PEM private keys.

Every ``regex:<pattern>`` runs with the `regex` module's ``timeout`` and raises
`TimeoutError` past it, unless its `Screen` shows it cannot match (a literal every match
holds is not in the text). The built-in patterns bound every repetition, so a text of n
characters costs them at most n times their longest bound; on texts of up to
`UNTIMED_TEXT_CHARS` characters the worst inputs we know take a few milliseconds
(benchmarks/bench_checks.py), far below any timeout, so they run without one there:
the timeout costs ~2 µs a call, more than most searches of a short answer. Longer texts
get the timeout.

libphonenumber has no timeout, costs up to a few µs a character on hostile text, and
its matcher silently stops after a number of candidates that are not numbers. So the phone
detector hands it only the stretches that may hold a number: around each run of at
least as many digits as the shortest valid number, the characters up to the nearest
character no phone number can hold (a line break, a quote, ``!``, ``@``, most Latin
letters: `PHONE_BREAKS`), which makes the result the one of the whole text. The deadline
is checked before each stretch and after each number found. A stretch longer than
`MAX_PHONE_STRETCH_CHARS`, or one where the matcher ran out of candidates, cannot be
examined: `IncompleteScan`, and the check fails.
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import regex
from stdnum import iban, luhn

from langchain_agent_rules.rules.check import Detector, compile_pattern
from langchain_agent_rules.rules.screen import screen_of

__all__ = [
    "MAX_PHONE_STRETCH_CHARS",
    "PHONE_BREAKS",
    "UNTIMED_TEXT_CHARS",
    "IncompleteScan",
    "Span",
    "find_spans",
]

Span = tuple[int, int]
UNTIMED_TEXT_CHARS = 2048
MAX_PHONE_STRETCH_CHARS = 8192
PHONE_BREAKS = "\n\r\x0b\x0c!\"$%&'*<>?@\\^_`{|}bcdfghjklmpqruvwyzBCDFGHJKLMPQRUVWYZ"
"""Characters no phone number libphonenumber finds can hold (pinned by a test against its
candidate pattern), and whose presence next to a number does not change its verdict."""

PHONE_STRETCH_REASON = (
    "met {length:,} characters in a row that may all belong to phone numbers "
    "(the phone scan reads at most {limit:,})"
)
PHONE_CANDIDATES_REASON = "stopped after {limit:,} phone number candidates"


class IncompleteScan(Exception):
    """A detector could not examine the whole text.

    The message says why, to follow ``the <condition> check ...``.
    """


_EMAIL = regex.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@[^\W_](?:[\w-]{0,62})(?:\.[\w-]{1,63}){0,8}\.[^\W\d_]{2,63}"
    r"(?![\w-])"
)
_CARD = regex.compile(r"(?<!\d)\d(?:[ \t-]{0,3}\d){12,18}(?!\d)")
_CARD_SEPARATORS = str.maketrans("", "", " \t-")
_CARD_LAST_GROUP = regex.compile(r"(?r)[ \t-]+\d+$")
_IBAN = regex.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){3,8}(?![A-Za-z0-9])")
_IBAN_LAST_GROUP = regex.compile(r"(?r) [A-Za-z0-9]+$")
_IPV4 = regex.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d)")
_IPV6 = regex.compile(
    r"(?<![\w:.])(?=[0-9A-Fa-f:.]{0,45}[0-9A-Fa-f])(?:[0-9A-Fa-f]{0,4}:){2,7}"
    r"(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})(?![\w:])"
)
_PHONE_BREAK = regex.compile(f"[{regex.escape(PHONE_BREAKS)}]")
_PHONE_BREAK_BEFORE = regex.compile(f"(?r)[{regex.escape(PHONE_BREAKS)}]")
_PHONE_MAX_CANDIDATES = 4096  # per stretch; hostile ones of 8,192 characters reach it
MIN_INTERNATIONAL_PHONE_DIGITS = 6
"""The fewest digits of a valid international number: country code and shortest national
number over libphonenumber's metadata (a test recomputes it; loading every region's
metadata takes seconds, too long for a first check)."""
_SECRET = regex.compile(
    "|".join(
        (
            r"-----BEGIN[A-Z ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:(?!-----END)[\s\S]){0,16384}(?:-----END[A-Z ]{0,30}PRIVATE KEY(?: BLOCK)?-----)?",
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",  # AWS access key id
            r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b",
            r"\bglpat-[A-Za-z0-9_-]{20,255}",  # GitLab
            r"\bxox[abposr]-[A-Za-z0-9-]{10,255}",  # Slack
            r"\bsk-(?:proj-|ant-[a-z0-9]{2,8}-)?[A-Za-z0-9_-]{20,255}",  # OpenAI, Anthropic
            r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,255}\b",  # Stripe secret/restricted keys
            r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",  # Google API key
            r"\bhf_[A-Za-z0-9]{30,255}\b",  # Hugging Face
            r"\bnpm_[A-Za-z0-9]{36}\b",  # npm
            r"\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}",  # JWT
        )
    )
)


def _matches(
    pattern: regex.Pattern[str], text: str, timeout: float | None, *, overlapped: bool = False
) -> Any:
    if timeout is None:
        return pattern.finditer(text, overlapped=overlapped)
    return pattern.finditer(text, overlapped=overlapped, timeout=timeout)


def _spans(
    pattern: regex.Pattern[str],
    text: str,
    timeout: float | None,
    confirm: Callable[[str], bool] | None = None,
) -> list[Span]:
    if confirm is None:
        return [match.span() for match in _matches(pattern, text, timeout)]
    return [match.span() for match in _matches(pattern, text, timeout) if confirm(match.group())]


def _is_card(candidate: str) -> bool:
    digits = candidate.translate(_CARD_SEPARATORS)
    return len(digits) >= 13 and luhn.is_valid(digits)


def _is_ip(candidate: str) -> bool:
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        return False
    return True


def _grouped_spans(
    pattern: regex.Pattern[str],
    last_group: regex.Pattern[str],
    text: str,
    timeout: float | None,
    confirm: Callable[[str], bool],
) -> list[Span]:
    """Numbers written in groups (cards, IBANs), wherever they start and end in a run.

    Groups written before or after one (``12 4111 1111 1111 1111 34``) hide nothing:
    every group start is a candidate, cut back group by group until confirmed.
    """
    spans: list[Span] = []
    covered = 0
    for match in _matches(pattern, text, timeout, overlapped=True):
        start = match.start()
        if start < covered:
            continue
        option: str | None = match.group()
        while option is not None and not confirm(option):
            last = last_group.search(option)
            option = None if last is None else option[: last.start()]
        if option is not None:
            covered = start + len(option)
            spans.append((start, covered))
    return spans


@lru_cache(maxsize=64)
def _phone_hint(region: str | None) -> re.Pattern[str]:
    """The digits of the shortest valid number, at most 4 other characters apart.

    Four is the most punctuation libphonenumber allows between two digits of a number.
    The pattern is linear, so it needs no timeout, and `re` searches it faster than `regex`.
    """
    digits = _min_phone_digits(region)
    return re.compile(rf"\d(?:[^\d{re.escape(PHONE_BREAKS)}]{{0,4}}+\d){{{digits - 1}}}")


@lru_cache(maxsize=64)
def _min_phone_digits(region: str | None) -> int:
    """The fewest digits of a valid number found with ``region``.

    International numbers are always found; with a region, its national numbers too.
    """
    if region is None:
        return MIN_INTERNATIONAL_PHONE_DIGITS
    from phonenumbers import PhoneMetadata

    metadata = PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.general_desc is None:
        return MIN_INTERNATIONAL_PHONE_DIGITS
    return min(MIN_INTERNATIONAL_PHONE_DIGITS, *metadata.general_desc.possible_length)


def _phone_stretches(text: str, region: str | None) -> list[Span]:
    """The stretches of ``text`` that may hold a number.

    Each has the break characters around it, so the matcher sees the same neighbours as in
    the whole text.
    """
    stretches: list[Span] = []
    end = 0
    for hint in _phone_hint(region).finditer(text):
        if hint.start() < end:
            continue  # inside the last stretch
        before = _PHONE_BREAK_BEFORE.search(text, 0, hint.start())
        after = _PHONE_BREAK.search(text, hint.end())
        start = 0 if before is None else before.start()
        end = len(text) if after is None else after.end()
        if end - start > MAX_PHONE_STRETCH_CHARS:
            raise IncompleteScan(
                PHONE_STRETCH_REASON.format(length=end - start, limit=MAX_PHONE_STRETCH_CHARS)
            )
        stretches.append((start, end))
    return stretches


def _phone_spans(text: str, region: str | None, timeout: float) -> list[Span]:
    deadline = time.monotonic() + timeout
    stretches = _phone_stretches(text, region)
    if not stretches:
        return []
    from phonenumbers import Leniency, PhoneNumberMatcher

    spans: list[Span] = []
    for start, end in stretches:
        if time.monotonic() > deadline:
            raise TimeoutError("phone detection timed out")
        matcher = PhoneNumberMatcher(
            text[start:end], region, leniency=Leniency.VALID, max_tries=_PHONE_MAX_CANDIDATES
        )
        for match in matcher:
            spans.append((start + match.start, start + match.end))
            if time.monotonic() > deadline:
                raise TimeoutError("phone detection timed out")
        # The matcher ends quietly when its candidates run out; it says so only here.
        if getattr(matcher, "_max_tries", 0) <= 0:
            raise IncompleteScan(PHONE_CANDIDATES_REASON.format(limit=_PHONE_MAX_CANDIDATES))
    return spans


def find_spans(detector: Detector, text: str, timeout: float) -> list[Span]:
    """The spans of ``detector``'s matches in ``text``.

    `TimeoutError` past ``timeout`` s; `IncompleteScan` when the phone detector cannot
    examine the whole text.
    """
    name = detector.name
    if name == "regex":
        assert detector.pattern is not None
        screen = screen_of(detector.pattern)
        if screen is not None and not screen.may_match(text):
            return []
        return _spans(compile_pattern(detector.pattern), text, timeout)
    if name == "phone":
        return _phone_spans(text, detector.region, timeout)
    limit = None if len(text) <= UNTIMED_TEXT_CHARS else timeout
    if name == "email":
        return _spans(_EMAIL, text, limit)
    if name == "credit_card":
        return _grouped_spans(_CARD, _CARD_LAST_GROUP, text, limit, _is_card)
    if name == "iban":
        return _grouped_spans(_IBAN, _IBAN_LAST_GROUP, text, limit, iban.is_valid)
    if name == "ipv4":
        return _spans(_IPV4, text, limit, _is_ip)
    if name == "ipv6":
        return _spans(_IPV6, text, limit, _is_ip)
    return _spans(_SECRET, text, limit)
