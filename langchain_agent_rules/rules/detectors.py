"""The ``forbid`` detectors: where a text holds e-mail addresses, phone numbers, cards, ...

Each detector returns the ``(start, end)`` spans of its matches, in order. A candidate
pattern finds what looks right and a library confirms it where one exists:
``credit_card`` is Luhn-checked and ``iban`` checksum-checked by python-stdnum, ``ipv4``
and ``ipv6`` parsed by the standard `ipaddress`, ``phone`` found and validated by Google's
libphonenumber (phonenumberslite): numbers in international form (``+33 6 12 34 56 78``)
always, national forms (``06 12 34 56 78``) with ``phone:<REGION>``. ``secret`` knows the
documented formats of common API keys and tokens, JWTs and PEM private keys.

The built-in patterns bound every repetition, so they run in time linear in the text;
every pattern, ours and ``regex:<pattern>``, runs with the `regex` module's ``timeout``
and raises `TimeoutError` past it. libphonenumber has no timeout: it is linear (about
0.5 s for a hostile megabyte) and the deadline is checked after each number it finds.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable

import regex
from stdnum import iban, luhn

from langchain_agent_rules.rules.check import Detector, compile_pattern

__all__ = ["Span", "find_spans"]

Span = tuple[int, int]

_EMAIL = regex.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@[^\W_](?:[\w-]{0,62})(?:\.[\w-]{1,63}){0,8}\.[^\W\d_]{2,63}"
    r"(?![\w-])"
)
_CARD = regex.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])")
_IBAN = regex.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){3,8}(?![A-Za-z0-9])")
_IPV4 = regex.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d)")
_IPV6 = regex.compile(
    r"(?<![\w:.])(?=[0-9A-Fa-f:.]{0,45}[0-9A-Fa-f])(?:[0-9A-Fa-f]{0,4}:){2,7}"
    r"(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})(?![\w:])"
)
_PHONE_HINT = regex.compile(r"\d(?:[\s().\-/]{0,3}\d){6}")
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


def _spans(
    pattern: regex.Pattern[str],
    text: str,
    timeout: float,
    confirm: Callable[[str], bool] | None = None,
) -> list[Span]:
    spans = []
    for match in pattern.finditer(text, timeout=timeout):
        if confirm is None or confirm(match.group()):
            spans.append(match.span())
    return spans


def _is_card(candidate: str) -> bool:
    return luhn.is_valid(candidate.replace(" ", "").replace("-", ""))


def _is_ip(candidate: str) -> bool:
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        return False
    return True


def _iban_spans(text: str, timeout: float) -> list[Span]:
    spans = []
    for match in _IBAN.finditer(text, timeout=timeout):
        # The last groups may be the next words ("... 3000 EUR today"): drop them one by one.
        option = match.group()
        while True:
            if iban.is_valid(option):
                spans.append((match.start(), match.start() + len(option)))
                break
            if " " not in option:
                break
            option = option.rsplit(" ", 1)[0]
    return spans


def _phone_spans(text: str, region: str | None, timeout: float) -> list[Span]:
    if _PHONE_HINT.search(text, timeout=timeout) is None:
        return []
    from phonenumbers import Leniency, PhoneNumberMatcher

    deadline = time.monotonic() + timeout
    spans = []
    for match in PhoneNumberMatcher(text, region, leniency=Leniency.VALID):
        spans.append((match.start, match.end))
        if time.monotonic() > deadline:
            raise TimeoutError("phone detection timed out")
    return spans


def find_spans(detector: Detector, text: str, timeout: float) -> list[Span]:
    """The spans of ``detector``'s matches in ``text``; `TimeoutError` past ``timeout`` s."""
    name = detector.name
    if name == "regex":
        assert detector.pattern is not None
        return _spans(compile_pattern(detector.pattern), text, timeout)
    if name == "email":
        return _spans(_EMAIL, text, timeout)
    if name == "credit_card":
        return _spans(_CARD, text, timeout, _is_card)
    if name == "iban":
        return _iban_spans(text, timeout)
    if name == "ipv4":
        return _spans(_IPV4, text, timeout, _is_ip)
    if name == "ipv6":
        return _spans(_IPV6, text, timeout, _is_ip)
    if name == "phone":
        return _phone_spans(text, detector.region, timeout)
    return _spans(_SECRET, text, timeout)
