"""What the model reads when a query failed or found nothing: what exists, and a way on.

A small model corrects a query only with something to correct it with. When the database
names a table or column it does not know, the observation lists what exists (close names
first, or the table of the query that has the column); when a query returns no row, it
repeats the filter that matched nothing and, for a text column compared with ``=``, says
how that column's values look and shows the query rewritten with ``LIKE`` (or with the
column of a small table that holds that text), and for ``NOT IN`` over a column that can be
NULL, how to leave the NULLs out. Every line is a named template and every part is bounded, so an
observation stays short whatever the schema or the query.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlglot import exp

from langchain_agent_rules._json_text import compact_json
from langchain_agent_rules.tools._safe_values import is_private_column, is_shown_value
from langchain_agent_rules.tools._sql_catalog import (
    Catalog,
    CatalogColumn,
    CatalogTable,
    ForeignKey,
)
from langchain_agent_rules.tools._sql_hints import SILENT_HINTS, query_hints
from langchain_agent_rules.tools._sql_schema_text import sql_literal, table_listing

__all__ = [
    "AMBIGUOUS_COLUMN",
    "CLOSE_NAMES",
    "COLUMN_ELSEWHERE",
    "COLUMN_OF_ANOTHER",
    "EXISTING_TABLES",
    "KEYS_NAMED",
    "KEY_COLUMN",
    "KEY_COLUMN_SELF",
    "KEY_NAMED",
    "KEY_OF_THE_ROW",
    "MAX_FILTER_CHARS",
    "MAX_LISTING_BYTES",
    "MAX_LOOKED_UP_KEYS",
    "MAX_WITHOUT_NULLS_ROWS",
    "NOTHING_COUNTED",
    "NOT_IN_NULLS",
    "NO_GROUPS",
    "NO_ROWS",
    "NO_ROWS_UNFILTERED",
    "QUERY_COLUMNS",
    "TEXT_DATES",
    "TEXT_DATE_TIMES",
    "TEXT_EQUALS",
    "TEXT_EQUALS_NO_EXAMPLES",
    "VALUE_ELSEWHERE",
    "WITHOUT_NULLS_ROWS",
    "KeyLookup",
    "NameProblem",
    "ProblemKind",
    "WithoutNulls",
    "failure_lines",
    "found_nothing",
    "key_lookups",
    "key_name_line",
    "not_in_without_nulls",
    "result_note",
    "without_nulls_line",
]

MAX_LISTING_BYTES = 800
"""The most bytes of tables and columns an error observation lists."""
MAX_FILTER_CHARS = 300
"""The most characters of a repeated WHERE or HAVING clause."""
_MAX_HINTS = 3
_MAX_CLOSE_NAMES = 3
_MAX_NAME_CHARS = 64
_MAX_LOOKUPS = 2
MAX_LOOKED_UP_KEYS = 5
"""The most distinct ids of a bare key column whose names a result note gives."""
_LABEL_COLUMNS = ("name", "full_name", "display_name", "title", "label")

CLOSE_NAMES = "Did you mean {names}?"
EXISTING_TABLES = "The tables are: {tables}."
QUERY_COLUMNS = "Columns of the query's tables: {tables}."
COLUMN_ELSEWHERE = "{column} is a column of {tables}, which the query does not read; join it."
COLUMN_OF_ANOTHER = "{column} is a column of {owners}, not of {table}."
KEY_OF_THE_ROW = "{key} holds the {id} of {referred} rows: here, write {alias}.{id}."
AMBIGUOUS_COLUMN = (
    "{column} is a column of more than one table of the query; write it with its table: {choices}."
)
# A key column returned as it is: measured with the embedded 1.5B model, it answered "the
# manager is Agent 4" from a bare manager_id, twice in 25 tasks.
KEY_COLUMN = (
    "{column} holds ids of {referred} rows: to show who or what they are, join {referred} ON {on}."
)
KEY_NAMED = "{column} {key} is the {referred} row whose {label} is {name}."
KEYS_NAMED = "{column} values are {referred} rows whose {label} is: {pairs}."
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
VALUE_ELSEWHERE = "{column} holds no {value}, but {other} holds {found}; try: {query}"
NOT_IN_NULLS = (
    "NOT IN matches no row when its list holds a NULL, and {column} can be NULL; leave the "
    "NULLs out, as in: {query}"
)
WITHOUT_NULLS_ROWS = "Without the NULLs, that query returns {count}: {rows}"
MAX_WITHOUT_NULLS_ROWS = 10
"""The most rows of the query without NULLs that a note shows."""
MAX_WITHOUT_NULLS_CHARS = 600
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
    owners = [
        _table_and_alias(t, alias)
        for alias, t in aliases.items()
        if qualified and t is not qualified and t.column(problem.bare) is not None
    ][:_MAX_CLOSE_NAMES]
    close = _close(problem.bare, [c.name for t in read for c in t.columns])
    if owners and qualified:
        # The name is right and the table wrong: a close name of that table would mislead.
        lines.append(
            COLUMN_OF_ANOTHER.format(
                column=_short(problem.bare, _MAX_NAME_CHARS),
                owners=" or ".join(owners),
                table=_table_and_alias(qualified, problem.qualifier or ""),
            )
        )
    elif close:
        lines.append(close)
    if qualified and problem.qualifier:
        lines += _own_key_lines(problem, qualified, catalog)
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


def _own_key_lines(problem: NameProblem, table: CatalogTable, catalog: Catalog) -> list[str]:
    """``agents.agent_id`` where ``tickets.agent_id`` refers to agents: write ``agents.id``."""
    for key in catalog.foreign_keys:
        if (
            len(key.columns) == 1
            and key.columns[0].lower() == problem.bare.lower()
            and key.referred_table == table.shown
        ):
            return [
                KEY_OF_THE_ROW.format(
                    key=f"{key.table}.{key.columns[0]}",
                    referred=_short(table.shown, _MAX_NAME_CHARS),
                    alias=_short(problem.qualifier or "", _MAX_NAME_CHARS),
                    id=key.referred_columns[0],
                )
            ]
    return []


def _table_and_alias(catalog_table: CatalogTable, alias: str) -> str:
    name = _short(catalog_table.shown, _MAX_NAME_CHARS)
    if alias.lower() == catalog_table.name.lower():
        return name
    return f"{name} ({_short(alias, _MAX_NAME_CHARS)})"


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


def _compared_column(select: exp.Select, compared: _Compared) -> tuple[exp.EQ, exp.Column]:
    """The compared ``=`` of ``select``'s WHERE clause, and its column side."""
    node = list(select.args["where"].find_all(exp.EQ))[compared.position]
    column = next(side for side in (node.this, node.expression) if isinstance(side, exp.Column))
    return node, column


def _rewritten(
    select: exp.Select,
    compared: _Compared,
    predicate: Callable[[exp.Column], exp.Expr],
    dialect: str,
) -> str:
    """The query with the compared ``=`` replaced; that predicate alone if the query is long."""
    rewritten = select.copy()
    node, column = _compared_column(rewritten, compared)
    node.replace(predicate(column))
    text = rewritten.sql(dialect=dialect)
    if len(text) <= MAX_FILTER_CHARS:
        return text
    return predicate(_compared_column(select, compared)[1]).sql(dialect=dialect)


def _with_like(select: exp.Select, compared: _Compared, pattern: str, dialect: str) -> str:
    """The query with the compared ``=`` made a case-blind LIKE; that predicate alone if long."""
    like = exp.ILike if dialect == "postgres" else exp.Like  # SQLite's LIKE ignores case
    return _rewritten(
        select,
        compared,
        lambda column: like(this=column.copy(), expression=exp.Literal.string(pattern)),
        dialect,
    )


def _value_elsewhere(select: exp.Select, compared: _Compared, dialect: str) -> str | None:
    """The compared text, found (in any case) in one other column of the same small table.

    Only a value equal to the text the query looked for is named, so the note shows
    nothing the model did not already write.
    """
    wanted = compared.value.casefold()
    own = compared.table.values.get(compared.column.name, frozenset())
    if any(value.casefold() == wanted for value in own):
        return None  # only the case is wrong: the LIKE hint says so
    matches = (
        (other, value)
        for name, values in compared.table.values.items()
        if (other := compared.table.column(name)) is not None and other != compared.column
        for value in sorted(values)
        if value.casefold() == wanted
    )
    other, found = next(matches, (None, ""))
    if other is None:
        return None

    def equals_found(column: exp.Column) -> exp.Expr:
        name = exp.column(other.name, column.table or None, quoted=other.shown != other.name)
        return exp.EQ(this=name, expression=exp.Literal.string(found))

    return VALUE_ELSEWHERE.format(
        column=compared.column.shown,
        value=sql_literal(compared.value),
        other=other.shown,
        found=sql_literal(found),
        query=_rewritten(select, compared, equals_found, dialect),
    )


@dataclass(frozen=True)
class WithoutNulls:
    """A query whose ``NOT IN (SELECT column ...)`` may be empty only for the column's NULLs."""

    column: str
    """The listed column, as ``table.column``."""
    query: exp.Select
    """The query with ``column IS NOT NULL`` added to that subquery."""
    listing: exp.Select
    """That subquery, within ``query``."""


def not_in_without_nulls(statement: exp.Expr, catalog: Catalog) -> WithoutNulls | None:
    """For a ``NOT IN (SELECT column ...)`` whose column can be NULL: the query without them.

    ``x NOT IN (list)`` is never true once the list holds a NULL, so such a query finds no
    row, whatever the data, as soon as one NULL is listed.
    """
    if not isinstance(statement, exp.Select):
        return None
    for position, negation in enumerate(statement.find_all(exp.Not)):
        membership = negation.this
        if not isinstance(membership, exp.In):
            continue
        query = membership.args.get("query")
        inner = query.this if isinstance(query, exp.Subquery) else query
        if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
            continue
        listed = inner.expressions[0].unalias()
        if not isinstance(listed, exp.Column):
            continue
        owners = [
            t for t in _distinct(_query_tables(inner, catalog)) if t.column(listed.name) is not None
        ]
        found = owners[0].column(listed.name) if len(owners) == 1 else None
        if found is None or not found.nullable:
            continue
        rewritten = statement.copy()
        subquery = list(rewritten.find_all(exp.Not))[position].this.args["query"]
        target = subquery.this if isinstance(subquery, exp.Subquery) else subquery
        target.where(exp.Not(this=exp.Is(this=listed.copy(), expression=exp.Null())), copy=False)
        return WithoutNulls(f"{owners[0].shown}.{found.shown}", rewritten, target)
    return None


def _not_in_nulls(select: exp.Select, dialect: str, catalog: Catalog) -> str | None:
    without = not_in_without_nulls(select, catalog)
    if without is None:
        return None
    text = without.query.sql(dialect=dialect)
    if len(text) > MAX_FILTER_CHARS:
        text = _short(without.listing.sql(dialect=dialect), MAX_FILTER_CHARS)
    return NOT_IN_NULLS.format(column=without.column, query=text)


def without_nulls_line(rows: Sequence[Mapping[str, object]], more: bool) -> str:
    """What the query without the NULLs returned: its first rows, within a bound."""
    shown = list(rows)
    while shown and len(compact_json(shown)) > MAX_WITHOUT_NULLS_CHARS:
        shown.pop()
    if not rows:
        count = "no row either"
    elif more or len(shown) < len(rows):
        count = f"more rows than shown here; the first {len(shown)}"
    else:
        count = f"{len(rows)} row{'s' if len(rows) != 1 else ''}"
    return WITHOUT_NULLS_ROWS.format(count=count, rows=compact_json(shown))


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
    elsewhere = _value_elsewhere(select, compared, dialect)
    if elsewhere:
        return elsewhere
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


@dataclass(frozen=True)
class _BareKey:
    """A key column the query returns without the rows it refers to."""

    index: int  # its position in each result row
    name: str
    key: ForeignKey
    same_table: bool  # the key refers to rows of its own table (``manager_id``)


def _bare_keys(select: exp.Select, catalog: Catalog) -> list[_BareKey]:
    tables = _query_tables(select, catalog)
    read = [table.name for table in tables.values()]
    if any(isinstance(expression, exp.Star) for expression in select.expressions):
        return []  # positions in the rows are not the expressions' positions
    found = []
    for index, expression in enumerate(select.expressions):
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
            if key.referred_table == key.table and read.count(key.table) < 2:
                found.append(_BareKey(index, column.name, key, same_table=True))
            elif key.referred_table != key.table and key.referred_table not in read:
                found.append(_BareKey(index, column.name, key, same_table=False))
    return found


def _key_column_notes(select: exp.Select, catalog: Catalog) -> list[str]:
    """For each key column the query returns bare, how to join the rows it refers to."""
    notes = []
    for bare in _bare_keys(select, catalog):
        key = bare.key
        on = f"{key.table}.{key.columns[0]} = {key.referred_table}.{key.referred_columns[0]}"
        template = KEY_COLUMN_SELF if bare.same_table else KEY_COLUMN
        notes.append(template.format(column=bare.name, referred=key.referred_table, on=on))
    return list(dict.fromkeys(notes))


@dataclass(frozen=True)
class KeyLookup:
    """How to read the names of the rows a bare key column of a result refers to."""

    index: int
    """The key column's position in each result row."""
    column: str
    """The key column, as the query wrote it."""
    table: CatalogTable
    """The table the key refers to."""
    key: CatalogColumn
    """The column of ``table`` the key's values are."""
    label: CatalogColumn
    """The column of ``table`` that names a row (``name``, ``title``, ...)."""


def _label_column(catalog_table: CatalogTable) -> CatalogColumn | None:
    for wanted in _LABEL_COLUMNS:
        column = catalog_table.column(wanted)
        if column is not None and column.is_text and not is_private_column(column.name):
            return column
    return None


def key_lookups(statement: exp.Expr, catalog: Catalog) -> list[KeyLookup]:
    """The bare key columns of a query's result whose rows have a name to look up."""
    if not isinstance(statement, exp.Select):
        return []
    lookups = []
    for bare in _bare_keys(statement, catalog):
        referred = next((t for t in catalog.tables if t.shown == bare.key.referred_table), None)
        if referred is None:
            continue
        key = next((c for c in referred.columns if c.shown == bare.key.referred_columns[0]), None)
        label = _label_column(referred)
        if key is not None and label is not None and label != key:
            lookups.append(KeyLookup(bare.index, bare.name, referred, key, label))
    return lookups[:_MAX_LOOKUPS]


def key_name_line(lookup: KeyLookup, names: Sequence[tuple[object, object]]) -> str | None:
    """What the ids of a key column are called, from ``(id, name)`` pairs read for them."""
    named = [
        (sql_literal(key) if isinstance(key, str) else str(key), sql_literal(name))
        for key, name in names
        if isinstance(name, str) and is_shown_value(name) and isinstance(key, int | str)
    ][:MAX_LOOKED_UP_KEYS]
    if not named:
        return None
    parts = {
        "column": _short(lookup.column, _MAX_NAME_CHARS),
        "referred": lookup.table.shown,
        "label": lookup.label.shown,
    }
    if len(named) == 1:
        return KEY_NAMED.format(key=named[0][0], name=named[0][1], **parts)
    return KEYS_NAMED.format(pairs=", ".join(f"{k} {n}" for k, n in named), **parts)


def found_nothing(statement: exp.Expr, rows: Sequence[Sequence[Any]]) -> bool:
    """Whether a query returned no row, or an ungrouped ``COUNT(*)`` of 0."""
    if not rows:
        return True
    return (
        isinstance(statement, exp.Select)
        and len(rows) == 1
        and bool(_zero_count(statement, rows[0]))
    )


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
            hint = _not_in_nulls(statement, dialect, catalog) or _text_hint(
                statement, dialect, catalog
            )
            if hint:
                lines.append(hint)
        if rows:
            lines += _key_column_notes(statement, catalog)
    elif not rows:
        lines.append(NO_ROWS_UNFILTERED)
    lines += [hint.text for hint in query_hints(statement, dialect, table=SILENT_HINTS)]
    return "\n".join(lines) or None
