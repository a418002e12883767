"""What the model reads when a query failed or found nothing: what exists, and a way on.

A small model corrects a query only with something to correct it with. When the database
names a table or column it does not know, the observation lists what exists (close names
first); when a query returns no row, it repeats the filter that matched nothing and, for a
text column compared with ``=``, says how that column's values look and shows the query
rewritten with ``LIKE``. Every line is a named template and every part is bounded, so an
observation stays short whatever the schema or the query.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlglot import exp

from langchain_agent_rules.tools._sql_catalog import Catalog, CatalogColumn, CatalogTable
from langchain_agent_rules.tools._sql_hints import SILENT_HINTS, query_hints
from langchain_agent_rules.tools._sql_schema_text import sql_literal, table_listing

__all__ = [
    "AMBIGUOUS_COLUMN",
    "CLOSE_NAMES",
    "COLUMN_ELSEWHERE",
    "EXISTING_TABLES",
    "KEY_COLUMN",
    "KEY_COLUMN_SELF",
    "MAX_FILTER_CHARS",
    "MAX_LISTING_BYTES",
    "NOTHING_COUNTED",
    "NO_GROUPS",
    "NO_ROWS",
    "NO_ROWS_UNFILTERED",
    "QUERY_COLUMNS",
    "TEXT_DATES",
    "TEXT_DATE_TIMES",
    "TEXT_EQUALS",
    "TEXT_EQUALS_NO_EXAMPLES",
    "NameProblem",
    "ProblemKind",
    "failure_lines",
    "result_note",
]

MAX_LISTING_BYTES = 800
"""The most bytes of tables and columns an error observation lists."""
MAX_FILTER_CHARS = 300
"""The most characters of a repeated WHERE or HAVING clause."""
_MAX_HINTS = 3
_MAX_CLOSE_NAMES = 3
_MAX_NAME_CHARS = 64

CLOSE_NAMES = "Did you mean {names}?"
EXISTING_TABLES = "The tables are: {tables}."
QUERY_COLUMNS = "Columns of the query's tables: {tables}."
COLUMN_ELSEWHERE = "{column} is a column of {tables}, which the query does not read; join it."
AMBIGUOUS_COLUMN = (
    "{column} is a column of more than one table of the query; write it with its table: {choices}."
)
# A key column returned as it is: measured with the embedded 1.5B model, it answered "the
# manager is Agent 4" from a bare manager_id, twice in 25 tasks.
KEY_COLUMN = (
    "{column} holds ids of {referred} rows: to show who or what they are, join {referred} ON {on}."
)
KEY_COLUMN_SELF = (
    "{column} holds ids of other {referred} rows: to show who or what they are, join "
    "{referred} a second time under another name ON {on}."
)
NO_ROWS = "0 rows: no row matched {filter}."
NO_GROUPS = "0 rows: no group matched {filter}."
NO_ROWS_UNFILTERED = "0 rows: the query matched no row."
NOTHING_COUNTED = "{count} is 0: no row matched {filter}."
TEXT_EQUALS = (
    "{column} holds text such as {examples}; = needs the exact text. To find part of it in "
    "any case, try: {query}"
)
TEXT_EQUALS_NO_EXAMPLES = (
    "{column} is text; = needs the exact text. To find part of it in any case, try: {query}"
)
TEXT_DATES = (
    "{column} holds dates as text such as {example}, so = matches one day only; for a month "
    "write {column} LIKE '{month}-%' or {column} BETWEEN '{month}-01' AND '{month}-31'."
)
TEXT_DATE_TIMES = (
    "{column} holds dates and times as text such as {example}, so = needs the exact time. "
    "For the whole day, try: {query}"
)

_YEAR_MONTH = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])(?!\d)")


ProblemKind = Literal["table", "column", "ambiguous"]


@dataclass(frozen=True)
class NameProblem:
    """A name the database could not use, as it wrote it (``e.emp_id``).

    ``kind`` says why: an unknown ``table``, an unknown ``column``, or an ``ambiguous``
    column (one that more than one table of the query has).
    """

    kind: ProblemKind
    name: str

    @property
    def bare(self) -> str:
        """The name without its table or schema qualifier."""
        return self.name.rsplit(".", 1)[-1]

    @property
    def qualifier(self) -> str | None:
        """The table or alias before the dot, if any."""
        return self.name.rsplit(".", 1)[0] if "." in self.name else None


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _close(name: str, candidates: Sequence[str]) -> str | None:
    if len(name) > _MAX_NAME_CHARS:  # difflib is quadratic in the lengths it compares
        return None
    by_lower = {candidate.lower(): candidate for candidate in candidates}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=_MAX_CLOSE_NAMES)
    if not close:
        return None
    return CLOSE_NAMES.format(
        names=" or ".join(_short(by_lower[c], _MAX_NAME_CHARS) for c in close)
    )


def _query_tables(statement: exp.Expr, catalog: Catalog) -> dict[str, CatalogTable]:
    """The catalog's tables the query reads, by alias (or name), lower case, in order."""
    ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
    found: dict[str, CatalogTable] = {}
    for node in statement.find_all(exp.Table):
        if node.db or node.name.lower() in ctes:
            continue
        catalog_table = catalog.table(node.name)
        if catalog_table is not None:
            found.setdefault(node.alias_or_name.lower(), catalog_table)
    return found


def _distinct(tables: dict[str, CatalogTable]) -> list[CatalogTable]:
    return list({t.name: t for t in tables.values()}.values())


def _unknown_table_lines(problem: NameProblem, catalog: Catalog) -> list[str]:
    names = [t.name for t in catalog.tables]
    close = _close(problem.bare, names)
    listing = EXISTING_TABLES.format(tables=table_listing(catalog.tables, MAX_LISTING_BYTES))
    return [close, listing] if close else [listing]


def _unknown_column_lines(problem: NameProblem, statement: exp.Expr, catalog: Catalog) -> list[str]:
    aliases = _query_tables(statement, catalog)
    qualified = aliases.get(problem.qualifier.lower()) if problem.qualifier else None
    read = [qualified] if qualified else _distinct(aliases)
    if not read:
        listing = table_listing(catalog.tables, MAX_LISTING_BYTES)
        return [EXISTING_TABLES.format(tables=listing)]
    lines = []
    close = _close(problem.bare, [c.name for t in read for c in t.columns])
    if close:
        lines.append(close)
    elsewhere = [
        t.shown
        for t in catalog.tables
        if t not in _distinct(aliases) and t.column(problem.bare) is not None
    ][:_MAX_CLOSE_NAMES]
    if elsewhere:
        lines.append(
            COLUMN_ELSEWHERE.format(
                column=_short(problem.bare, _MAX_NAME_CHARS), tables=", ".join(elsewhere)
            )
        )
    lines.append(QUERY_COLUMNS.format(tables=table_listing(read, MAX_LISTING_BYTES)))
    return lines


def _ambiguous_column_lines(
    problem: NameProblem, statement: exp.Expr, catalog: Catalog
) -> list[str]:
    aliases = _query_tables(statement, catalog)
    having = [alias for alias, t in aliases.items() if t.column(problem.bare) is not None]
    if len(having) < 2:
        return []
    column = _short(problem.bare, _MAX_NAME_CHARS)
    choices = " or ".join(f"{_short(alias, _MAX_NAME_CHARS)}.{column}" for alias in having[:4])
    return [AMBIGUOUS_COLUMN.format(column=column, choices=choices)]


def failure_lines(
    statement: exp.Expr, dialect: str, catalog: Catalog, problem: NameProblem | None
) -> list[str]:
    """What to say after the database's own words about a query it rejected."""
    hints = query_hints(statement, dialect, problem.bare if problem else None)[:_MAX_HINTS]
    lines = [hint.text for hint in hints]
    if problem is None or any(hint.explains == problem.bare.lower() for hint in hints):
        return lines
    if problem.kind == "table":
        return lines + _unknown_table_lines(problem, catalog)
    if problem.kind == "ambiguous":
        return lines + _ambiguous_column_lines(problem, statement, catalog)
    return lines + _unknown_column_lines(problem, statement, catalog)


def _filter(select: exp.Select, dialect: str) -> str | None:
    parts = []
    for key in ("where", "having"):
        clause = select.args.get(key)
        if clause is not None:
            parts.append(f"{key.upper()} {clause.this.sql(dialect=dialect)}")
    return _short(" ".join(parts), MAX_FILTER_CHARS) if parts else None


@dataclass(frozen=True)
class _Compared:
    """A ``text_column = 'literal'`` of a WHERE clause, resolved in the catalog."""

    table: CatalogTable
    column: CatalogColumn
    value: str
    position: int  # which EQ node of the WHERE clause, in walk order


def _compared_text_column(select: exp.Select, catalog: Catalog) -> _Compared | None:
    """The first ``text_column = 'literal'`` of the WHERE clause, resolved in the catalog."""
    where = select.args.get("where")
    if where is None:
        return None
    aliases = _query_tables(select, catalog)
    for position, node in enumerate(where.find_all(exp.EQ)):
        sides = (node.this, node.expression)
        column = next((s for s in sides if isinstance(s, exp.Column)), None)
        literal = next((s for s in sides if isinstance(s, exp.Literal) and s.is_string), None)
        if column is None or literal is None:
            continue
        if column.table:
            candidates = [aliases[column.table.lower()]] if column.table.lower() in aliases else []
        else:
            candidates = [t for t in _distinct(aliases) if t.column(column.name) is not None]
        if len(candidates) != 1:
            continue
        found = candidates[0].column(column.name)
        if found is not None and found.is_text:
            return _Compared(candidates[0], found, str(literal.this), position)
    return None


def _with_like(select: exp.Select, compared: _Compared, pattern: str, dialect: str) -> str:
    """The query with the compared ``=`` made a case-blind LIKE; that predicate alone if long."""
    rewritten = select.copy()
    node = list(rewritten.args["where"].find_all(exp.EQ))[compared.position]
    column = next(s for s in (node.this, node.expression) if isinstance(s, exp.Column))
    like = exp.ILike if dialect == "postgres" else exp.Like  # SQLite's LIKE ignores case
    node.replace(like(this=column.copy(), expression=exp.Literal.string(pattern)))
    text = rewritten.sql(dialect=dialect)
    if len(text) <= MAX_FILTER_CHARS:
        return text
    return like(this=column.copy(), expression=exp.Literal.string(pattern)).sql(dialect=dialect)


def _iso_kind(value: str) -> Literal["date", "date_time"] | None:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        pass
    else:
        return "date" if len(value) == 10 else None
    try:
        dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return "date_time"


def _text_hint(select: exp.Select, dialect: str, catalog: Catalog) -> str | None:
    compared = _compared_text_column(select, catalog)
    if compared is None or len(compared.value) > _MAX_NAME_CHARS:
        return None
    value = compared.value
    examples = compared.table.examples.get(compared.column.name, ())
    kinds = {_iso_kind(example) for example in examples}
    name = compared.column.shown
    if kinds == {"date"}:
        month = value[:7] if _YEAR_MONTH.match(value) else examples[0][:7]
        return TEXT_DATES.format(column=name, example=sql_literal(examples[0]), month=month)
    if kinds == {"date_time"}:
        day = value[:10] if _iso_kind(value[:10]) == "date" else examples[0][:10]
        query = _with_like(select, compared, f"{day}%", dialect)
        return TEXT_DATE_TIMES.format(column=name, example=sql_literal(examples[0]), query=query)
    query = _with_like(select, compared, f"%{value}%", dialect)
    if examples:
        shown = ", ".join(sql_literal(example) for example in examples)
        return TEXT_EQUALS.format(column=name, examples=shown, query=query)
    return TEXT_EQUALS_NO_EXAMPLES.format(column=name, query=query)


def _zero_count(select: exp.Select, row: Sequence[Any]) -> str | None:
    """The ``COUNT(*)`` of an ungrouped query that counted nothing, as the query wrote it."""
    if select.args.get("group") is not None or len(select.expressions) != len(row):
        return None
    for expression, value in zip(select.expressions, row, strict=True):
        counted = expression.unalias()
        if isinstance(counted, exp.Count) and value == 0:
            argument = counted.this
            if isinstance(argument, exp.Star) or (
                isinstance(argument, exp.Literal) and not argument.is_string
            ):
                return _short(counted.sql(), _MAX_NAME_CHARS)
    return None


def _key_column_notes(select: exp.Select, catalog: Catalog) -> list[str]:
    """For each key column the query returns bare, how to join the rows it refers to."""
    tables = _query_tables(select, catalog)
    read = [table.name for table in tables.values()]
    notes = []
    for expression in select.expressions:
        column = expression.unalias()
        if not isinstance(column, exp.Column):
            continue
        owner = tables.get(column.table.lower()) if column.table else None
        candidates = [owner] if owner else _distinct(tables)
        for key in catalog.foreign_keys:
            if len(key.columns) != 1 or key.columns[0].lower() != column.name.lower():
                continue
            if not any(table and table.name == key.table for table in candidates):
                continue
            on = f"{key.table}.{key.columns[0]} = {key.referred_table}.{key.referred_columns[0]}"
            if key.referred_table == key.table and read.count(key.table) < 2:
                notes.append(KEY_COLUMN_SELF.format(column=column.name, referred=key.table, on=on))
            elif key.referred_table != key.table and key.referred_table not in read:
                notes.append(
                    KEY_COLUMN.format(column=column.name, referred=key.referred_table, on=on)
                )
    return list(dict.fromkeys(notes))


def result_note(
    statement: exp.Expr,
    dialect: str,
    catalog: Catalog,
    rows: Sequence[Sequence[Any]],
) -> str | None:
    """A note beside a query's rows: what an empty result or a zero count means, and why."""
    lines = []
    if isinstance(statement, exp.Select):
        filtered = _filter(statement, dialect)
        counted = _zero_count(statement, rows[0]) if len(rows) == 1 else None
        if not rows and filtered is None:
            lines.append(NO_ROWS_UNFILTERED)
        elif not rows:
            grouped = statement.args.get("where") is None
            lines.append((NO_GROUPS if grouped else NO_ROWS).format(filter=filtered))
        elif counted and filtered:
            lines.append(NOTHING_COUNTED.format(count=counted, filter=filtered))
        if lines and filtered:
            hint = _text_hint(statement, dialect, catalog)
            if hint:
                lines.append(hint)
        if rows:
            lines += _key_column_notes(statement, catalog)
    elif not rows:
        lines.append(NO_ROWS_UNFILTERED)
    lines += [hint.text for hint in query_hints(statement, dialect, table=SILENT_HINTS)]
    return "\n".join(lines) or None
