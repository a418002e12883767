"""Dialect hints: what a query written for another database should say in this one.

`HINTS` is a small table keyed by sqlglot dialect name. Each entry finds one common
mistake in the parsed query (sqlglot's syntax tree, never the query's text) and says what
this database writes instead, with the query's own expression rewritten where that is
cheap. The tool shows them when the database rejected a query; a mistake the database
accepts without a word (``'Dr. ' + name`` is 0 in SQLite) is in `SILENT_HINTS`, shown
beside the rows. :func:`foreign_syntax_hint` covers what our dialect cannot even parse
(``SELECT TOP 5 ...``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp, parse_one
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

from langchain_agent_rules.errors import InvalidToolCallError
from langchain_agent_rules.tools.sql_guard import check_read_only_sql

__all__ = [
    "HINTS",
    "MAX_EXAMPLE_SQL_CHARS",
    "SILENT_HINTS",
    "Hint",
    "foreign_syntax_hint",
    "query_hints",
    "without_dual",
]

MAX_EXAMPLE_SQL_CHARS = 300
"""The longest rewritten query a hint shows; a longer one is replaced by a short example."""
_MAX_FOREIGN_SQL_CHARS = 2_000  # a refused query longer than this is not parsed again

NO_DUAL = "{dialect} has no dual table; a SELECT of an expression needs no FROM, as in: {example}"
NO_TOP = "{dialect} has no TOP n; put LIMIT n at the end, as in: {example}"
SQLITE_NO_NOW = (
    "SQLite has no {name}; use date('now') for today's date (text 'YYYY-MM-DD') or "
    "datetime('now') for the date and time (UTC)."
)
POSTGRES_NO_NOW = (
    "PostgreSQL has no {name}; use CURRENT_DATE for today's date or now() for the date and time."
)
SQLITE_NO_DATE_PART = (
    "SQLite has no {name}(); strftime('{format}', {argument}) gives the {part} as text, so "
    "compare it with text, as in: strftime('{format}', {argument}) = '{sample}'"
)
POSTGRES_NO_DATE_PART = (
    "PostgreSQL has no {name}(); write EXTRACT({part} FROM {argument}) (cast text to a date "
    "first: CAST({argument} AS DATE))."
)
SQLITE_NO_ILIKE = (
    "SQLite has no ILIKE; LIKE already ignores the case of ASCII letters, as in: {example}"
)
TEXT_PLUS = "{dialect} joins text with ||, not +, as in: {example}"
SQLITE_NO_CONCAT = "SQLite joins text with ||, as in: {example}"
POSTGRES_QUOTED_TEXT = (
    'PostgreSQL reads "{name}" as a column name; write text in single quotes, as in: {literal}'
)


@dataclass(frozen=True)
class Hint:
    """One sentence for the model, and the unknown name it accounts for (lower case)."""

    text: str
    explains: str | None = None


_Finder = Callable[[exp.Expr, str | None], Hint | None]
"""Looks at a parsed query (and the name the database did not know) for one mistake."""

_DISPLAY = {"sqlite": "SQLite", "postgres": "PostgreSQL"}
_NOW_FUNCTIONS = frozenset({"NOW", "CURDATE", "CURTIME", "GETDATE", "SYSDATE", "SYSDATETIME"})
_POSTGRES_NOW_FUNCTIONS = _NOW_FUNCTIONS - {"NOW"}
_DATE_PARTS: dict[type[exp.Expr], tuple[str, str, str]] = {
    exp.Year: ("%Y", "YEAR", "2026"),
    exp.Month: ("%m", "MONTH", "03"),
    exp.Day: ("%d", "DAY", "01"),
}


def _sql(node: exp.Expr, dialect: str, fallback: str) -> str:
    text = node.sql(dialect=dialect)
    return text if len(text) <= MAX_EXAMPLE_SQL_CHARS else fallback


def without_dual(statement: exp.Expr) -> exp.Select | None:
    """``SELECT <expressions> FROM dual`` without its ``FROM``; ``None`` for any other query.

    Only a plain ``FROM dual`` (no schema, alias or join) qualifies: there the rewrite
    means what Oracle and MySQL mean by it, one row of the expressions.
    """
    if not isinstance(statement, exp.Select):
        return None
    source = statement.args.get("from_") or statement.args.get("from")
    if not isinstance(source, exp.From) or not isinstance(source.this, exp.Table):
        return None
    table = source.this
    if table.name.lower() != "dual" or table.db or table.alias:
        return None
    if statement.args.get("joins"):
        return None
    without = statement.copy()
    without.set("from_" if "from_" in statement.args else "from", None)
    return without


def _dual(dialect: str) -> _Finder:
    def find(statement: exp.Expr, missing: str | None) -> Hint | None:
        if missing != "dual":
            return None
        without = without_dual(statement)
        example = "SELECT 240 * 0.15" if without is None else _sql(without, dialect, "")
        return Hint(
            NO_DUAL.format(dialect=_DISPLAY[dialect], example=example or "SELECT 240 * 0.15"),
            explains="dual",
        )

    return find


def _now_functions(names: frozenset[str], template: str) -> _Finder:
    def find(statement: exp.Expr, missing: str | None) -> Hint | None:
        for node in statement.find_all(exp.Anonymous):
            if str(node.name).upper() in names:
                return Hint(template.format(name=f"{str(node.name).upper()}()"))
        for column in statement.find_all(exp.Column):
            if not column.table and column.name.upper() in names:
                return Hint(template.format(name=column.name.upper()), column.name.lower())
        return None

    return find


def _sqlite_date_parts(statement: exp.Expr, missing: str | None) -> Hint | None:
    for node in statement.find_all(exp.Year, exp.Month, exp.Day):
        form, part, sample = _DATE_PARTS[type(node)]
        argument = _sql(node.this, "sqlite", "date_column")
        return Hint(
            SQLITE_NO_DATE_PART.format(
                name=part, format=form, part=part.lower(), argument=argument, sample=sample
            )
        )
    return None


def _postgres_date_parts(statement: exp.Expr, missing: str | None) -> Hint | None:
    for node in statement.find_all(exp.Year, exp.Month, exp.Day):
        _form, part, _sample = _DATE_PARTS[type(node)]
        argument = _sql(node.this, "postgres", "date_column")
        return Hint(POSTGRES_NO_DATE_PART.format(name=part, part=part, argument=argument))
    return None


def _sqlite_ilike(statement: exp.Expr, missing: str | None) -> Hint | None:
    node = statement.find(exp.ILike)
    if node is None:
        return None
    like = exp.Like(this=node.this.copy(), expression=node.expression.copy())
    return Hint(SQLITE_NO_ILIKE.format(example=_sql(like, "sqlite", "name LIKE '%tea%'")))


def _operands(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Add):
        return _operands(node.this) + _operands(node.expression)
    return [node]


def _piped(operands: list[exp.Expr], dialect: str, fallback: str) -> str:
    text = " || ".join(operand.sql(dialect=dialect) for operand in operands)
    return text if len(text) <= MAX_EXAMPLE_SQL_CHARS else fallback


def _text_plus(dialect: str) -> _Finder:
    def find(statement: exp.Expr, missing: str | None) -> Hint | None:
        for node in statement.find_all(exp.Add):
            if isinstance(node.parent, exp.Add):
                continue  # judged as part of the outermost sum
            operands = _operands(node)
            if any(isinstance(o, exp.Literal) and o.is_string for o in operands):
                example = _piped(operands, dialect, "first_name || ' ' || last_name")
                return Hint(TEXT_PLUS.format(dialect=_DISPLAY[dialect], example=example))
        return None

    return find


def _sqlite_concat(statement: exp.Expr, missing: str | None) -> Hint | None:
    node = statement.find(exp.Concat)
    if node is None:
        return None
    example = _piped(list(node.expressions), "sqlite", "first_name || ' ' || last_name")
    return Hint(SQLITE_NO_CONCAT.format(example=example))


def _postgres_quoted_text(statement: exp.Expr, missing: str | None) -> Hint | None:
    for column in statement.find_all(exp.Column):
        identifier = column.this
        if (
            isinstance(identifier, exp.Identifier)
            and identifier.quoted
            and not column.table
            and identifier.name.lower() == missing
        ):
            literal = "'" + identifier.name.replace("'", "''") + "'"
            return Hint(
                POSTGRES_QUOTED_TEXT.format(name=identifier.name, literal=literal),
                explains=identifier.name.lower(),
            )
    return None


HINTS: dict[str, tuple[_Finder, ...]] = {
    "sqlite": (
        _dual("sqlite"),
        _now_functions(_NOW_FUNCTIONS, SQLITE_NO_NOW),
        _sqlite_date_parts,
        _sqlite_ilike,
        _sqlite_concat,
        _text_plus("sqlite"),
    ),
    "postgres": (
        _dual("postgres"),
        _now_functions(_POSTGRES_NOW_FUNCTIONS, POSTGRES_NO_NOW),
        _postgres_date_parts,
        _text_plus("postgres"),
        _postgres_quoted_text,
    ),
}
"""The mistakes each dialect is checked for when the database rejected a query."""

SILENT_HINTS: dict[str, tuple[_Finder, ...]] = {"sqlite": (_text_plus("sqlite"),)}
"""Mistakes a dialect runs without an error, checked on every query that returned rows."""


def query_hints(
    statement: exp.Expr,
    dialect: str,
    missing: str | None = None,
    table: dict[str, tuple[_Finder, ...]] = HINTS,
) -> list[Hint]:
    """The hints of ``table`` for ``dialect`` whose mistake is in ``statement``.

    ``missing`` is the table or column the database said does not exist, if any.
    """
    lowered = missing.lower() if missing is not None else None
    found = (finder(statement, lowered) for finder in table.get(dialect, ()))
    return [hint for hint in found if hint is not None]


def foreign_syntax_hint(sql: str, dialect: str) -> Hint | None:
    """A hint for a query ``dialect`` cannot parse but T-SQL can (``SELECT TOP 5 ...``).

    The hint shows the query rewritten for ``dialect``, only when the rewrite is itself a
    query the SQL guard admits.
    """
    if len(sql) > _MAX_FOREIGN_SQL_CHARS:
        return None
    try:
        parse_one(sql, read=dialect)
        return None  # it parses here: the refusal was about something else
    except (SqlglotError, RecursionError):
        pass
    try:
        tree = parse_one(sql, read="tsql")
        if not isinstance(tree, exp.Select) or tree.args.get("limit") is None:
            return None
        # Order NULLs as ``dialect`` does by default, so the rewrite adds no NULLS FIRST/LAST.
        nulls_are_large = Dialect.get_or_raise(dialect).NULL_ORDERING == "nulls_are_large"
        for ordered in tree.find_all(exp.Ordered):
            descending = bool(ordered.args.get("desc"))
            ordered.set("nulls_first", descending if nulls_are_large else not descending)
        rewritten = tree.sql(dialect=dialect)
        check_read_only_sql(rewritten, dialect)
    except (SqlglotError, RecursionError, InvalidToolCallError):
        return None
    if len(rewritten) > MAX_EXAMPLE_SQL_CHARS:
        return None
    return Hint(NO_TOP.format(dialect=_DISPLAY[dialect], example=rewritten))
