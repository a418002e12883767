"""Text helpers shared by the tools: cutting bytes and keeping observations valid text."""

from __future__ import annotations

import re

__all__ = ["first_surrogate", "utf8_prefix", "valid_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def first_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text`` (U+D800 to U+DFFF), which no encoding can carry."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return found.group() if found else None


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it always encodes as UTF-8."""
    return text if first_surrogate(text) is None else _SURROGATE.sub("\ufffd", text)


def utf8_prefix(data: bytes, limit: int) -> bytes:
    """Return the longest prefix of ``data`` of at most ``limit`` bytes ending on a whole character.

    Only an incomplete UTF-8 sequence at the cut is dropped (at most three bytes); bytes
    that are not UTF-8 at all are left for the caller's decoder to judge.
    """
    if len(data) <= limit:
        return data
    cut = limit
    # Step back over continuation bytes (10xxxxxx) to the lead byte of the last character.
    start = cut
    while start > 0 and cut - start < 4 and (data[start - 1] & 0xC0) == 0x80:
        start -= 1
    if start == 0 or cut - start >= 4:
        return data[:cut]
    lead = data[start - 1]
    if lead >= 0xC0:
        length = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if (cut - start + 1) < length:
            return data[: start - 1]
    return data[:cut]
