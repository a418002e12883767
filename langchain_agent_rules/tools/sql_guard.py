"""The one SQL guard: admit exactly one read-only query, refuse everything else.

The query is parsed with sqlglot and the syntax tree is inspected, so keywords inside
string literals and identifiers (``WHERE note = 'please delete'``) are never refusals,
while a write hidden anywhere in the tree (a data-modifying CTE, ``SELECT ... INTO``,
a locking clause) is. A query that does not parse is refused: what cannot be read
cannot be judged. The guard is the first of two defences; the tool also runs the query
in a read-only transaction that is always rolled back.

sqlglot parses by recursive descent, so deep nesting exhausts Python's stack: the guard
counts the nesting of the tokens (parentheses and CASE ... END) and refuses more than
`MAX_SQL_NESTING` levels, and more than `MAX_SQL_CHARS` characters, before it parses.
"""

from __future__ import annotations

from typing import Any

from sqlglot import Token, TokenType, exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

from langchain_agent_rules.errors import InvalidToolCallError

__all__ = ["MAX_SQL_CHARS", "MAX_SQL_NESTING", "REFUSED_FUNCTIONS", "check_read_only_sql"]

MAX_SQL_CHARS = 20_000
"""The longest query judged; parsing is linear, and a model's queries are far shorter."""
MAX_SQL_NESTING = 32
"""The deepest nesting of parentheses and CASE expressions judged."""

REFUSED_FUNCTIONS: frozenset[str] = frozenset(
    {
        # SQLite: extensions, file access, internals.
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "zipfile",
        # PostgreSQL: files, sleeping, settings, server control, SQL run from a string.
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "pg_stat_file",
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "lo_import",
        "lo_export",
        "lo_from_bytea",
        "lo_put",
        "lo_unlink",
        "set_config",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_advisory_lock",
        "pg_advisory_xact_lock",
        "pg_logical_emit_message",
        "nextval",
        "setval",
        "dblink",
        "dblink_exec",
        "query_to_xml",
        "query_to_xml_and_xmlschema",
        "query_to_xmlschema",
        "cursor_to_xml",
        # MySQL and others.
        "sleep",
        "benchmark",
        "load_file",
        "get_lock",
        "release_lock",
        "master_pos_wait",
    }
)

# Node types that change data, schema, settings, locks or session state wherever they appear.
# (typed loosely: sqlglot 30 moved these classes under a new base class, `exp.Expr`)
_WRITE_NODES: tuple[type, ...] = (
    exp.DML,
    exp.DDL,
    exp.Command,
    exp.Pragma,
    exp.Set,
    exp.Copy,
    exp.Attach,
    exp.Detach,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Use,
    exp.LoadData,
    exp.Grant,
    exp.Into,
    exp.Lock,
)
_READ_ROOTS: tuple[type, ...] = (exp.Select, exp.SetOperation, exp.Subquery)

ALLOWED_SQL = (
    "Allowed: exactly one read-only SELECT (WITH, JOIN, UNION, INTERSECT and EXCEPT are "
    "fine), without INTO, FOR UPDATE/SHARE or functions that sleep, read files or change "
    "settings."
)
NOT_ONE_STATEMENT = "The SQL must be exactly one statement; got {count}. " + ALLOWED_SQL
NOT_PARSABLE = "The SQL could not be parsed as {dialect} SQL ({detail}). " + ALLOWED_SQL
NOT_READ_ONLY = "The SQL is refused: {what} is not a read-only query. " + ALLOWED_SQL
REFUSED_CLAUSE = "The SQL is refused: it contains {what}. " + ALLOWED_SQL
REFUSED_FUNCTION = "The SQL is refused: the function {name}() is not allowed. " + ALLOWED_SQL
TOO_LONG = (
    "The SQL is refused: it is {length} characters long, more than {limit}. Write a shorter "
    "query. " + ALLOWED_SQL
)
TOO_DEEP = (
    "The SQL is refused: it nests too deeply (at most {limit} levels of parentheses and CASE "
    "expressions). Write a flatter query; WITH can name each step. " + ALLOWED_SQL
)
EXECUTABLE_COMMENT = (
    "The SQL is refused: it contains an executable /*! ... */ comment. " + ALLOWED_SQL
)


def _describe(node: Any) -> str:
    if isinstance(node, exp.Into):
        return "SELECT ... INTO"
    if isinstance(node, exp.Lock):
        return "a locking clause (FOR UPDATE / FOR SHARE)"
    if isinstance(node, exp.Command):
        return _with_article(f"{str(node.this).upper()} command")
    return _with_article(f"{node.key.upper()} statement")


def _with_article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'AEIOU' else 'a'} {noun}"


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


_OPENERS = {TokenType.L_PAREN, TokenType.CASE}
_CLOSERS = {TokenType.R_PAREN, TokenType.END}


def _nesting(tokens: list[Token]) -> int:
    """The deepest nesting of parentheses and CASE ... END among ``tokens``."""
    depth = deepest = 0
    for token in tokens:
        if token.token_type in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif token.token_type in _CLOSERS:
            depth -= 1
    return deepest


def check_read_only_sql(sql: str, dialect: str | None) -> exp.Expr:
    """Refuse ``sql`` unless it is exactly one read-only query; return its syntax tree.

    Args:
        sql: the query text from the model.
        dialect: the sqlglot dialect name (``"sqlite"``, ``"postgres"``), or ``None``
            for sqlglot's generic dialect.

    Returns:
        The parsed statement (sqlglot's tree), which the caller may read but not change.

    Raises:
        InvalidToolCallError: the query is not one parsable read-only statement; the
            message names what was refused and what is allowed.
    """
    dialect_name = dialect or "generic"
    if len(sql) > MAX_SQL_CHARS:
        raise InvalidToolCallError(TOO_LONG.format(length=len(sql), limit=MAX_SQL_CHARS))
    try:
        parser_dialect = Dialect.get_or_raise(dialect)
        tokens = parser_dialect.tokenize(sql)  # tokenised once, for comments and the parser
        if _nesting(tokens) > MAX_SQL_NESTING:
            raise InvalidToolCallError(TOO_DEEP.format(limit=MAX_SQL_NESTING))
        statements = [s for s in parser_dialect.parser().parse(tokens, sql) if s is not None]
    except SqlglotError as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InvalidToolCallError(
            NOT_PARSABLE.format(dialect=dialect_name, detail=detail)
        ) from None
    except RecursionError:
        # Nesting the token count does not see (NOT NOT NOT ..., long unary chains).
        raise InvalidToolCallError(TOO_DEEP.format(limit=MAX_SQL_NESTING)) from None
    # MySQL runs the body of /*! ... */ comments; sqlglot treats it as a comment.
    if any(comment.lstrip().startswith("!") for t in tokens for comment in t.comments):
        raise InvalidToolCallError(EXECUTABLE_COMMENT)
    if len(statements) != 1:
        raise InvalidToolCallError(NOT_ONE_STATEMENT.format(count=len(statements)))
    (statement,) = statements
    if not isinstance(statement, _READ_ROOTS):
        raise InvalidToolCallError(NOT_READ_ONLY.format(what=_describe(statement)))
    for node in statement.walk():
        if isinstance(node, _WRITE_NODES):
            raise InvalidToolCallError(REFUSED_CLAUSE.format(what=_describe(node)))
        if isinstance(node, exp.Func) and _function_name(node) in REFUSED_FUNCTIONS:
            raise InvalidToolCallError(REFUSED_FUNCTION.format(name=_function_name(node)))
    return statement
