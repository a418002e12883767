r"""A literal that every match of a pattern contains, to skip patterns a text cannot match.

`screen_of` reads a ``regex:<pattern>`` source and finds the longest run of literal
characters that any match must contain (``\bcode-\d{4}\b`` -> ``code-``); `Screen`
then says in one ``str`` search whether the pattern *may* match a text. When the literal
is absent the pattern cannot match, so its timed search (the `regex` module's timeout
costs ~2 µs a call, more than most searches of a short answer) is skipped.

The reader is conservative: it only looks at the top level of the pattern and gives up
(returns ``None``, so the pattern always runs) on anything it does not fully understand:
an alternation, an escape other than ``\b \B \d \D \w \W \s \S \A \Z \z`` or
punctuation, a nested or POSIX character class, a comment, a brace that is not a plain
repeat count, or inline flags other than a leading ``(?i)``, ``(?m)``, ``(?s)``. Groups,
classes and quantified characters end a run and are not part of any literal. With
``(?i)`` only an ASCII literal is used, compared with `fold` of the text: the `regex`
module matches ``i`` with a dotted capital I (U+0130) and ``I`` with a dotless small i
(U+0131) case-insensitively, which Python's ``casefold`` alone does not map (pinned by a
test over every code point).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import regex

__all__ = ["Screen", "fold", "screen_of"]

_LEADING_FLAGS = regex.compile(r"\(\?([ims]+)\)")
_ANY_FLAGS = regex.compile(r"\(\?[a-zA-Z]*(?:-[a-zA-Z]*)?\)")
_REPEAT = regex.compile(r"\{\d*(?:,\d*)?\}")
_ZERO_WIDTH_AND_CLASS_ESCAPES = frozenset("bBdDwWsSAZz")


@dataclass(frozen=True)
class Screen:
    """A literal every match contains; ``folded``: compare case-insensitively (ASCII)."""

    literal: str
    folded: bool

    def may_match(self, text: str) -> bool:
        """False only when no match of the pattern can be in ``text``."""
        return self.literal in (fold(text) if self.folded else text)


@lru_cache(maxsize=4)  # the answer being checked and its view, the same once redacted
def fold(text: str) -> str:
    """``text`` case-folded so that it holds every case-insensitive match of an ASCII literal."""
    return text.casefold().replace("\u0131", "i").replace("\u0307", "")


def _class_end(pattern: str, start: int) -> int | None:
    """The index after the character class that starts at ``start``, or None."""
    index = start + 1
    if pattern.startswith("^", index):
        index += 1
    if pattern.startswith("]", index):
        index += 1
    while index < len(pattern):
        character = pattern[index]
        if character == "\\":
            index += 2
        elif character == "[":
            return None  # a POSIX class or a nested set: not read here
        elif character == "]":
            return index + 1
        else:
            index += 1
    return None


def _group_end(pattern: str, start: int) -> int | None:
    """The index after the group that starts at ``start``, or None."""
    depth = 0
    index = start
    while index < len(pattern):
        character = pattern[index]
        if character == "\\":
            index += 2
            continue
        if character == "[":
            end = _class_end(pattern, index)
            if end is None:
                return None
            index = end
            continue
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


def _runs(pattern: str, start: int) -> list[str] | None:
    """The runs of literal characters at the top level of ``pattern``, or None."""
    runs: list[str] = []
    run: list[str] = []
    last_is_literal = False
    index = start
    while index < len(pattern):
        character = pattern[index]
        if character == "\\":
            following = pattern[index + 1 : index + 2]
            if not following or not following.isascii():
                return None
            if following.isalnum():
                if following not in _ZERO_WIDTH_AND_CLASS_ESCAPES:
                    return None
                runs.append("".join(run))
                run, last_is_literal = [], False
            else:
                run.append(following)
                last_is_literal = True
            index += 2
            continue
        if character in "*+?{":
            if character == "{":
                repeat = _REPEAT.match(pattern, index)
                if repeat is None:
                    return None
                index = repeat.end()
            else:
                index += 1
            if index < len(pattern) and pattern[index] in "?+":
                index += 1  # lazy or possessive
            if last_is_literal:
                run.pop()  # the repeated character may be absent (or repeated)
            runs.append("".join(run))
            run, last_is_literal = [], False
            continue
        if character in "([":
            end = (_group_end if character == "(" else _class_end)(pattern, index)
            if end is None:
                return None
            runs.append("".join(run))
            run, last_is_literal = [], False
            index = end
            continue
        if character in "|)]}":
            return None
        if character in ".^$":
            runs.append("".join(run))
            run, last_is_literal = [], False
        else:
            run.append(character)
            last_is_literal = True
        index += 1
    runs.append("".join(run))
    return runs


@lru_cache(maxsize=4096)
def screen_of(pattern: str) -> Screen | None:
    """The `Screen` of a pattern source, or None when no literal can be read safely."""
    if "(?#" in pattern:
        return None
    leading = _LEADING_FLAGS.match(pattern)
    start = leading.end() if leading else 0
    if _ANY_FLAGS.search(pattern, start) is not None:
        return None  # inline flags apply to the whole pattern
    folded = leading is not None and "i" in leading.group(1)
    runs = _runs(pattern, start)
    if runs is None:
        return None
    if folded:
        runs = [run.lower() for run in runs if run.isascii()]
    literal = max(runs, key=len, default="")
    return Screen(literal, folded) if literal else None
