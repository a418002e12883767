r"""How a check reads a text: as written and as read, whole, within a time budget.

`CheckedText` is one text a check examines. Detectors and ``regex:`` patterns search it
twice when its normalised view (`normalize`) differs: as written and as a reader reads
it. A match in either counts, and a match in the view is mapped back to the characters
it was read from, so a redaction removes all of them, invisible ones included. A pattern
written for the characters the view folds (``\u200b``, a no-break space) still finds
them in the text as written.

A check never passes a text it could not read whole. `IncompleteScan` says why, and the
engine fails the check with its ``on_fail``:

- a text longer than `MAX_CHECKED_CHARS` characters is not read at all;
- one search may take `PATTERN_TIMEOUT_SECONDS` (the `regex` module's timeout; for the
  phone detector, a deadline checked between stretches and numbers);
- all the searches of one call of the engine share a `Budget` of `CHECK_BUDGET_SECONDS`;
  once it is spent every remaining search fails at once.

So the work per text is bounded by its size times the rules, and the time by the budget
plus the longest step that cannot be interrupted (building the view of a megabyte, one
stretch of libphonenumber, a search the `regex` module lets overrun its timeout: it looks
at its clock between attempts), measured in benchmarks/bench_checks.py.
"""

from __future__ import annotations

import time
from operator import itemgetter

import regex

from langchain_agent_rules.rules.check import Detector
from langchain_agent_rules.rules.detectors import IncompleteScan, Span, find_spans
from langchain_agent_rules.rules.normalized import NormalizedText, normalize
from langchain_agent_rules.rules.screen import Screen

__all__ = [
    "CHECK_BUDGET_SECONDS",
    "MAX_CHECKED_CHARS",
    "PATTERN_TIMEOUT_SECONDS",
    "Budget",
    "CheckedText",
]

PATTERN_TIMEOUT_SECONDS = 0.1
CHECK_BUDGET_SECONDS = 1.0
MAX_CHECKED_CHARS = 1_048_576

TIMED_OUT_REASON = "timed out after {seconds:g} s"
OUT_OF_BUDGET_REASON = "ran out of the {seconds:g} s the checks of one text may take"
TOO_LONG_REASON = "cannot read {length:,} characters; checks read at most {limit:,}"

_START = itemgetter(0)


class Budget:
    """The time the searches of one call of the engine may take, together."""

    __slots__ = ("_deadline", "_seconds")

    def __init__(self, seconds: float = CHECK_BUDGET_SECONDS) -> None:
        self._seconds = seconds
        self._deadline = time.monotonic() + seconds

    def timeout(self) -> float:
        """The time the next search may take; `IncompleteScan` when none is left."""
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise self._spent()
        return min(PATTERN_TIMEOUT_SECONDS, remaining)

    def timed_out(self) -> IncompleteScan:
        """Why a search that raised `TimeoutError` stopped: its timeout, or the budget."""
        if time.monotonic() >= self._deadline:
            return self._spent()
        return IncompleteScan(TIMED_OUT_REASON.format(seconds=PATTERN_TIMEOUT_SECONDS))

    def _spent(self) -> IncompleteScan:
        return IncompleteScan(OUT_OF_BUDGET_REASON.format(seconds=self._seconds))


class CheckedText:
    """One text under check: searched as written and as read, whole or not at all."""

    __slots__ = ("_budget", "_normalized", "text")

    def __init__(self, text: str, budget: Budget) -> None:
        self.text = text
        self._budget = budget
        self._normalized: NormalizedText | None = None

    def of(self, text: str) -> CheckedText:
        """Another text under the same budget (the text after a redaction)."""
        return CheckedText(text, self._budget)

    def _forms(self) -> NormalizedText:
        if self._normalized is None:
            if len(self.text) > MAX_CHECKED_CHARS:
                raise IncompleteScan(
                    TOO_LONG_REASON.format(length=len(self.text), limit=MAX_CHECKED_CHARS)
                )
            self._budget.timeout()  # building the view cannot be stopped: start it in time
            self._normalized = normalize(self.text)
        return self._normalized

    def found(self, pattern: regex.Pattern[str], screen: Screen | None) -> bool:
        """Whether ``pattern`` is found as written or as read; `IncompleteScan` if unsure."""
        forms = self._forms()
        texts = (self.text, forms.text) if forms.changed else (self.text,)
        for text in texts:
            if screen is not None and not screen.may_match(text):
                continue
            try:
                if pattern.search(text, timeout=self._budget.timeout()) is not None:
                    return True
            except TimeoutError:
                raise self._budget.timed_out() from None
        return False

    def spans(self, detector: Detector) -> list[Span]:
        """The spans of the text that hold a match of ``detector``, as written or as read.

        Spans that overlap are joined; `IncompleteScan` when the text cannot be read whole.
        """
        forms = self._forms()
        try:
            spans = find_spans(detector, self.text, self._budget.timeout())
            if forms.changed:
                read = find_spans(detector, forms.text, self._budget.timeout())
                spans += [forms.original_span(start, end) for start, end in read]
        except TimeoutError:
            raise self._budget.timed_out() from None
        return _joined(spans)


def _joined(spans: list[Span]) -> list[Span]:
    """``spans`` in order, those that overlap joined into one."""
    if len(spans) < 2:
        return spans
    spans.sort(key=_START)
    joined = [spans[0]]
    for start, end in spans[1:]:
        last_start, last_end = joined[-1]
        if start < last_end or (start == last_start == last_end):
            joined[-1] = (last_start, max(last_end, end))
        else:
            joined.append((start, end))
    return joined
