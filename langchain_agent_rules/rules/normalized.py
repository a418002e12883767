"""The normalised view of a text: what a reader reads, whatever characters spell it.

`normalize(text)` returns a `NormalizedText`: ``text`` is the view, and `original_span`
maps a span of the view back to the span of the original a reader reads as it, so a
redaction removes the whole of a match, invisible characters inside it included. The view:

- Unicode NFKC, cluster by cluster (a character and the combining marks after it, at most
  `MAX_MARKS_PER_CLUSTER` of them): fullwidth, mathematical, circled and superscript forms
  become plain letters and digits, the fullwidth and small commercial at become ``@``,
  the fullwidth full stop and one dot leader ``.``, a letter and its combining marks are
  composed, ligatures are split;
- default-ignorable and format characters are removed (zero-width spaces and joiners,
  word joiner, BOM, soft hyphen, bidi controls, variation selectors, tag characters,
  Hangul fillers), and so are control characters other than tab and line breaks;
- every Unicode space is a plain space; line and paragraph separators are line feeds;
- every decimal digit is its ASCII digit (Arabic-Indic, Devanagari, ...);
- look-alikes NFKC keeps: ideographic and stenographic full stops become ``.``; the
  hyphen, non-breaking hyphen, figure dash, en dash and minus sign become ``-``;
- in a word that also holds a Latin letter or an ASCII digit, Cyrillic and Greek letters
  that look like Latin ones become them (``paypal`` spelt with a Cyrillic ``p`` and ``a``).
  Words wholly in Cyrillic or Greek are left alone, so patterns in those scripts work.

Letter case is kept: patterns say ``(?i)`` when case does not matter.

Cost, linear in the text's length: an ASCII text without control characters is its own
view. Otherwise the distinct characters of the text are looked up once each (cached); an
NFKC-normal text is then translated in one call, with one anchor of the map per run of
removed characters; any other text is walked cluster by cluster where something changes.
Each lookup in the map is a binary search.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from functools import lru_cache, partial
from itertools import accumulate, repeat

import regex

__all__ = ["MAX_MARKS_PER_CLUSTER", "NormalizedText", "normalize"]

MAX_MARKS_PER_CLUSTER = 32
"""Combining marks composed with one character; longer runs (Zalgo text) are cut up, which
keeps NFKC's reordering of marks linear."""

_REPLACE_CALLS = 8  # up to this many characters to change, str.replace beats str.translate
# Past these, characters are not looked up one by one nor named in a pattern (the regex
# module tests a class of named characters one by one): Unicode properties find them.
_MANY_CHARACTERS = 8192
_MANY_TO_NAME = 64
_ASCII_CONTROL = regex.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_REMOVED_CLASS = r"\p{Default_Ignorable_Code_Point}\p{Cf}[\p{Cc}--[\t\n\x0b\x0c\r]]"
_REMOVED = regex.compile(f"(?V1)[{_REMOVED_CLASS}]")
_COMPOSING = regex.compile(r"\p{NFKC_QC=Maybe}")
_ANY_CLUSTER = regex.compile(
    rf"(?V1)[^\p{{M}}{_REMOVED_CLASS}]?(?:[{_REMOVED_CLASS}]*\p{{M}}){{1,{MAX_MARKS_PER_CLUSTER}}}"
    r"|[[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Zs}\p{Zl}\p{Zp}\p{NFKC_QC=No}"
    r"\p{Nd}\u3002\u2e3c\u2010-\u2013\u2212]--[\t\n\x0b\x0c\r 0-9]]"
)
_LOOK_ALIKES = {
    "\u3002": ".",  # ideographic full stop (and, through NFKC, the halfwidth one)
    "\u2e3c": ".",  # stenographic full stop
    "\u2010": "-",  # hyphen (and, through NFKC, the non-breaking hyphen)
    "\u2012": "-",  # figure dash
    "\u2013": "-",  # en dash
    "\u2212": "-",  # minus sign
}
_LATIN_LOOK_ALIKES = str.maketrans(
    # Cyrillic: A B E K M H O P C T Y X S I J Q W Y I a e o p c y x s i j d q w h l y
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425"
    "\u0405\u0406\u0408\u051a\u051c\u04ae\u04c0"
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458"
    "\u0501\u051b\u051d\u04bb\u04cf\u04af"
    # Greek: A B E Z H I K M N O P T Y X a o v p u c j
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"
    "\u03b1\u03bf\u03bd\u03c1\u03c5\u03f2\u03f3",
    "ABEKMHOPCTYXSIJQWYIaeopcyxsijdqwhlyABEZHIKMNOPTYXaovpucj",
)
_LOOK_ALIKE_LETTERS = "".join(chr(code) for code in _LATIN_LOOK_ALIKES)
_HAS_LOOK_ALIKE_LETTER = regex.compile(f"[{_LOOK_ALIKE_LETTERS}]")
_MIXED_WORD = regex.compile(rf"(?<!\w)(?=\w*?[{_LOOK_ALIKE_LETTERS}])(?=\w*?[\p{{Latin}}0-9])\w+")

Span = tuple[int, int]


_Anchors = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
_IDENTITY: _Anchors = ((0,), (0,), (-1,))


class NormalizedText:
    """A text and its normalised view, with the map from the view back to the text.

    The map is a list of anchors in view order: from ``view_starts[k]`` on, the view
    follows the original from ``original_starts[k]`` on, character for character, when
    ``original_ends[k]`` is -1; otherwise every view character up to the next anchor
    comes from all of ``original[original_starts[k]:original_ends[k]]``. The map is built
    on the first lookup: most checks only ask whether something is found.
    """

    __slots__ = ("_anchors", "_build_map", "original", "text")

    def __init__(
        self,
        original: str,
        text: str,
        build_map: Callable[[], _Anchors] | None = None,
    ) -> None:
        self.original = original
        self.text = text
        self._anchors = _IDENTITY
        self._build_map = build_map  # None once built, or when the view copies the original

    @property
    def changed(self) -> bool:
        """Whether the view differs from the original."""
        return self.text is not self.original and self.text != self.original

    def original_span(self, start: int, end: int) -> Span:
        """The span of the original that the view's ``text[start:end]`` was made from."""
        if start >= end:
            position = self._at(start)[0] if start < len(self.text) else len(self.original)
            return position, position
        return self._at(start)[0], self._at(end - 1)[1]

    def _at(self, index: int) -> Span:
        if self._build_map is not None:
            self._anchors = self._build_map()
            self._build_map = None
        view_starts, original_starts, original_ends = self._anchors
        anchor = bisect_right(view_starts, index) - 1
        original_start = original_starts[anchor]
        original_end = original_ends[anchor]
        if original_end < 0:
            position = original_start + index - view_starts[anchor]
            return position, position + 1
        return original_start, original_end


def _resized_anchors(original: str, resized: list[str]) -> _Anchors:
    """The map of a view that folds ``original`` character by character.

    Only the ``resized`` characters became more or fewer than one; built with slices, in C.
    """
    parts = _splitter(f"({_character_class(resized)}+)").split(original)
    runs = len(parts) // 2  # parts alternate: kept, run, kept, ..., run, kept
    view_lengths = list(map(len, parts))
    if any(_folded_character(c) for c in resized):
        table = {ord(c): _folded_character(c) for c in resized}
        view_lengths[1::2] = map(len, map(str.translate, parts[1::2], repeat(table)))
    else:
        view_lengths[1::2] = repeat(0, runs)
    ends = [0, *accumulate(map(len, parts))]  # part i is original[ends[i]:ends[i + 1]]
    view_ends = [0, *accumulate(view_lengths)]
    # Each run is two anchors: the run itself (every view character it became comes from
    # all of it; none when it was removed), then the kept part after it, copied.
    view_starts = [0] * (2 * runs + 1)
    original_starts = [0] * (2 * runs + 1)
    original_ends = [-1] * (2 * runs + 1)
    view_starts[1::2] = view_ends[1 : 2 * runs : 2]
    view_starts[2::2] = view_ends[2 : 2 * runs + 1 : 2]
    original_starts[1::2] = ends[1 : 2 * runs : 2]
    original_starts[2::2] = ends[2 : 2 * runs + 1 : 2]
    original_ends[1::2] = ends[2 : 2 * runs + 1 : 2]
    return tuple(view_starts), tuple(original_starts), tuple(original_ends)


class _AnchorBuilder:
    """Anchors of a map, in view order; an anchor that covers nothing is replaced."""

    __slots__ = ("original_ends", "original_starts", "view_starts")

    def __init__(self) -> None:
        self.view_starts, self.original_starts, self.original_ends = [0], [0], [-1]

    def add(self, view_start: int, original_start: int, original_end: int) -> None:
        if self.view_starts[-1] == view_start:
            self.original_starts[-1] = original_start
            self.original_ends[-1] = original_end
        else:
            self.view_starts.append(view_start)
            self.original_starts.append(original_start)
            self.original_ends.append(original_end)

    def anchors(self) -> _Anchors:
        return tuple(self.view_starts), tuple(self.original_starts), tuple(self.original_ends)


@lru_cache(maxsize=65536)
def _folded_character(character: str) -> str:
    """What one character is in the view, after NFKC (which may make it several)."""
    return "".join(map(_folded_normal, unicodedata.normalize("NFKC", character)))


@lru_cache(maxsize=65536)
def _folded_normal(character: str) -> str:
    if _REMOVED.match(character):
        return ""
    category = unicodedata.category(character)
    if category == "Zs":
        return " "
    if category in ("Zl", "Zp"):
        return "\n"
    if category == "Nd":
        digit = unicodedata.decimal(character, None)
        return character if digit is None else str(digit)
    return _LOOK_ALIKES.get(character, character)


def _folded_cluster(cluster: str) -> str:
    return _folded_short_cluster(cluster) if len(cluster) <= 8 else _folded_any_cluster(cluster)


def _folded_any_cluster(cluster: str) -> str:
    kept = _REMOVED.sub("", cluster)
    return "".join(map(_folded_normal, unicodedata.normalize("NFKC", kept)))


_folded_short_cluster = lru_cache(maxsize=8192)(_folded_any_cluster)


@lru_cache(maxsize=65536)
def _may_compose(character: str) -> bool:
    """Whether NFKC may join or reorder ``character`` with the one before it."""
    return unicodedata.combining(character) != 0 or _COMPOSING.match(character) is not None


def _character_class(characters: list[str]) -> str:
    """A class of ``characters`` both `re` and `regex` read."""
    return "[" + "".join(re.escape(character) for character in characters) + "]"


@lru_cache(maxsize=256)
def _pattern(source: str) -> regex.Pattern[str]:
    return regex.compile(source)


@lru_cache(maxsize=256)
def _splitter(source: str) -> re.Pattern[str]:
    return re.compile(source)  # splits faster than the regex module


def _latin_look_alikes_folded(text: str) -> str:
    if _HAS_LOOK_ALIKE_LETTER.search(text) is None:
        return text
    return _MIXED_WORD.sub(lambda word: word.group().translate(_LATIN_LOOK_ALIKES), text)


def normalize(text: str) -> NormalizedText:
    """The normalised view of ``text`` and its map back to ``text``; see the module docs."""
    if text.isascii() and _ASCII_CONTROL.search(text) is None:
        return NormalizedText(text, text)
    present = set(text)
    if len(present) > _MANY_CHARACTERS:
        return _walked(text, _ANY_CLUSTER)
    changing = [c for c in present if _folded_character(c) != c]
    composing = [c for c in present if _may_compose(c)]
    if len(changing) + len(composing) > _MANY_TO_NAME:
        return _walked(text, _ANY_CLUSTER)
    folded = _replaced(text, changing)  # character by character, in C
    if not composing or unicodedata.is_normalized("NFKC", folded):  # no cluster to compose
        resized = [c for c in changing if len(_folded_character(c)) != 1]
        build_map = partial(_resized_anchors, text, resized) if resized else None
        return NormalizedText(text, _latin_look_alikes_folded(folded), build_map)
    removed = [c for c in changing if not _folded_character(c)]
    return _walked(text, _named_clusters(changing, composing, removed))


def _replaced(text: str, characters: list[str]) -> str:
    """``text`` with each of ``characters`` folded, in C."""
    if len(characters) <= _REPLACE_CALLS:
        for character in characters:
            text = text.replace(character, _folded_character(character))
        return text
    return text.translate({ord(c): _folded_character(c) for c in characters})


def _named_clusters(
    changing: list[str], composing: list[str], removed: list[str]
) -> regex.Pattern[str]:
    """The clusters that may change, for a text whose characters were looked up."""
    # A cluster: a character, then marks, with removed characters among them skipped
    # (a zero-width space between a letter and its accent hides nothing).
    base = _character_class([*composing, *removed]).replace("[", "[^", 1)
    skipped = f"{_character_class(removed)}*" if removed else ""
    marks = f"(?:{skipped}{_character_class(composing)}){{1,{MAX_MARKS_PER_CLUSTER}}}"
    alternatives = [f"{base}?{marks}"]
    if changing:
        alternatives.append(_character_class(changing))
    return _pattern("|".join(alternatives))


def _walked(text: str, clusters: regex.Pattern[str]) -> NormalizedText:
    """The view of ``text`` folded cluster by cluster where ``clusters`` match."""
    view = clusters.sub(lambda cluster: _folded_cluster(cluster.group()), text)
    return NormalizedText(
        text, _latin_look_alikes_folded(view), partial(_walked_anchors, text, clusters)
    )


def _walked_anchors(text: str, clusters: regex.Pattern[str]) -> _Anchors:
    builder = _AnchorBuilder()
    copied = 0  # the original up to here is accounted for
    view_length = 0
    for match in clusters.finditer(text):
        cluster = match.group()
        folded = _folded_cluster(cluster)
        if folded == cluster or len(folded) == 1 == len(cluster):
            continue  # the view follows the original on, character for character
        start, end = match.span()
        view_length += start - copied
        copied = end
        if folded:
            builder.add(view_length, start, end)
            view_length += len(folded)
        builder.add(view_length, end, -1)
    return builder.anchors()
