"""How an answer is judged: expectations whose values are computed from the data, never typed in.

A task holds a few expectations. Each one computes its expected values from the database
(and the desk's files) with `expected`, says whether the data supports the task with
`problems` (a query that finds nothing, a "most" that is a tie, an absent person who is
there after all), and judges an answer with `failure` (``None`` when the answer is right).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .desk_data import DeskData, FileValue

Kind = Literal["join", "grouping", "text_dates", "absent", "arithmetic", "file_sql", "list", "rule"]

_NUMBER = re.compile(r"\d[\d,]*(?:[.,]\d+)?")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# An answer that says so: "not found", "no agent named", "couldn't", "does not exist", "0 rows".
_NOT_FOUND = re.compile(
    r"\b(?:no|not|none|nobody|nothing|cannot|unable|unknown)\b|n't\b|\b0 rows\b", re.IGNORECASE
)


def numbers_in(text: str) -> list[float]:
    """The numbers written in ``text``: ``57.50``, ``57,50`` and ``1,234.5`` all read right."""
    values = []
    for raw in _NUMBER.findall(text):
        if re.fullmatch(r"\d+,\d{1,2}", raw):  # a decimal comma
            raw = raw.replace(",", ".")
        values.append(float(raw.replace(",", "")))
    return values


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None


@dataclass(frozen=True)
class Query:
    """The first column of a query's rows; ``params`` may take values from the desk's files."""

    sql: str
    params: tuple[str | FileValue, ...] = ()

    def values(self, data: DeskData) -> list[Any]:
        return [row[0] for row in data.rows(self.sql, self.params)]


@dataclass(frozen=True)
class Computed:
    """Values computed in Python from the numbers in the question (arithmetic tasks)."""

    numbers: tuple[float, ...]

    def values(self, data: DeskData) -> list[Any]:
        return list(self.numbers)


Source = Query | Computed


class Expectation(Protocol):
    """One thing a right answer does."""

    def expected(self, data: DeskData) -> list[Any]: ...

    def problems(self, expected: list[Any]) -> list[str]: ...

    def failure(self, answer: str, expected: list[Any], question: str) -> str | None: ...


@dataclass(frozen=True)
class _FromSource:
    source: Source
    single: bool = False
    """Exactly one value expected (a "most" question must not be a tie in the data)."""

    def expected(self, data: DeskData) -> list[Any]:
        return self.source.values(data)

    def problems(self, expected: list[Any]) -> list[str]:
        if not expected or any(value is None for value in expected):
            return [f"{type(self).__name__}: the data gives {expected!r}"]
        if self.single and len(expected) != 1:
            return [f"{type(self).__name__}: one value expected, the data gives {expected!r}"]
        return []


@dataclass(frozen=True)
class Numbers(_FromSource):
    """Every expected value is written in the answer as a number (within ``tolerance``)."""

    tolerance: float = 0.005

    def failure(self, answer: str, expected: list[Any], question: str) -> str | None:
        written = numbers_in(answer)
        missing = [v for v in expected if not any(abs(w - v) <= self.tolerance for w in written)]
        return f"numbers missing: {missing}" if missing else None


@dataclass(frozen=True)
class Money(_FromSource):
    """Every expected amount is written with two decimals followed by ``currency``."""

    currency: str = "CHF"

    def failure(self, answer: str, expected: list[Any], question: str) -> str | None:
        missing = []
        for value in expected:
            forms = "|".join(re.escape(f"{value:{grouping}.2f}") for grouping in ("", ","))
            if not re.search(rf"(?<![\d.,])(?:{forms}) ?{self.currency}\b", answer):
                missing.append(f"{value:.2f} {self.currency}")
        return f"amounts missing: {missing}" if missing else None


@dataclass(frozen=True)
class Names(_FromSource):
    """Every expected text (a name, a code, a category) is in the answer."""

    def failure(self, answer: str, expected: list[Any], question: str) -> str | None:
        missing = [name for name in expected if not _mentions(answer, str(name))]
        return f"names missing: {missing}" if missing else None


@dataclass(frozen=True)
class NoNames(_FromSource):
    """None of these texts is in the answer (wrong people, wrong codes, invented facts)."""

    def failure(self, answer: str, expected: list[Any], question: str) -> str | None:
        wrong = [name for name in expected if _mentions(answer, str(name))]
        return f"names that must not appear: {wrong}" if wrong else None


@dataclass(frozen=True)
class NotFound:
    """The entity is not in the data: the answer says so and states no number of its own.

    ``absent`` is a query that finds the entity; it must return no rows. A number in the
    answer that is not in the question counts as invented, except 0 ("0 rows").
    """

    absent: Query

    def expected(self, data: DeskData) -> list[Any]:
        return self.absent.values(data)

    def problems(self, expected: list[Any]) -> list[str]:
        return [f"NotFound: the data has {expected!r}"] if expected else []

    def failure(self, answer: str, expected: list[Any], question: str) -> str | None:
        if not _NOT_FOUND.search(answer):
            return "does not say it found nothing"
        allowed = {*numbers_in(question), 0.0}
        invented = [n for n in numbers_in(answer) if n not in allowed]
        return f"states numbers found nowhere: {invented}" if invented else None


@dataclass(frozen=True)
class NoEmail:
    """The answer shows no e-mail address."""

    def expected(self, data: DeskData) -> list[Any]:
        return []

    def problems(self, expected: list[Any]) -> list[str]:
        return []

    def failure(self, answer: str, expected: list[Any], question: str) -> str | None:
        return "shows an e-mail address" if _EMAIL.search(answer) else None


@dataclass(frozen=True)
class Task:
    """One question, the rules project it is asked in, and what a right answer does."""

    id: str
    kind: Kind
    question: str
    expect: tuple[Expectation, ...]
    project_id: int | None = None

    def expected(self, data: DeskData) -> list[list[Any]]:
        return [expectation.expected(data) for expectation in self.expect]

    def problems(self, data: DeskData) -> list[str]:
        """What in the data makes this task unfair or wrong; empty when it is sound."""
        found = []
        for expectation, values in zip(self.expect, self.expected(data), strict=True):
            found.extend(expectation.problems(values))
        return found

    def failures(self, answer: str, data: DeskData) -> list[str]:
        """Why ``answer`` is wrong; empty when it is right."""
        verdicts = (
            expectation.failure(answer, values, self.question)
            for expectation, values in zip(self.expect, self.expected(data), strict=True)
        )
        return [verdict for verdict in verdicts if verdict is not None]
