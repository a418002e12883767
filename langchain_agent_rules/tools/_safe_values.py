"""Which database values may be shown as examples: never what a ``forbid`` check redacts.

A value is shown only when it is short, one printable line, and none of the project's
``forbid`` detectors (e-mail, phone, card, IBAN, IP, secret) finds anything in it. Phone
numbers written without a country code (``06 12 34 56 78``) are not found by the phone
detector without a region, so any run of seven digits is refused too unless the value
is an ISO date, time or a plain number. A column whose name says what it holds
(``email``, ``phone``, ``password``, ``token``, ...) is never sampled at all.
"""

from __future__ import annotations

import datetime as dt
import re

from langchain_agent_rules.rules.check import DETECTORS, Detector
from langchain_agent_rules.rules.detectors import find_spans

__all__ = ["MAX_EXAMPLE_CHARS", "is_private_column", "is_shown_value"]

MAX_EXAMPLE_CHARS = 24
"""The longest example value shown; longer text says little about a format and costs tokens."""

_DETECTORS = tuple(Detector(name) for name in DETECTORS)
_DETECTOR_TIMEOUT = 0.05  # seconds per detector; values are at most MAX_EXAMPLE_CHARS long
_DIGIT_RUN = re.compile(r"\d(?:[\s().\-/]{0,3}\d){6}")
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")
# Name parts that say a column holds contact data, credentials or payment data.
_PRIVATE_WORDS = ("mail", "phone", "mobile", "passw", "token", "secret", "card", "iban")
_PRIVATE_PARTS = frozenset(
    {"tel", "fax", "pwd", "pin", "ip", "key", "apikey", "ssn", "hash", "salt", "otp", "cvv"}
)
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_private_column(name: str) -> bool:
    """Whether a column's name says it holds private data (``email``, ``api_key``, ``ipAddr``)."""
    lowered = name.lower()
    if any(word in lowered for word in _PRIVATE_WORDS):
        return True
    return any(part.lower() in _PRIVATE_PARTS for part in _NAME_PARTS.findall(name))


def _is_date_time_or_number(text: str) -> bool:
    if _NUMBER.fullmatch(text):
        return True
    for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat, dt.time.fromisoformat):
        try:
            parse(text)
        except ValueError:
            continue
        return True
    return False


def is_shown_value(text: str) -> bool:
    """Whether ``text`` may be shown as an example value of a column."""
    if not text.strip() or len(text) > MAX_EXAMPLE_CHARS or not text.isprintable():
        return False
    if _DIGIT_RUN.search(text) and not _is_date_time_or_number(text):
        return False
    try:
        return not any(find_spans(d, text, _DETECTOR_TIMEOUT) for d in _DETECTORS)
    except TimeoutError:
        return False
