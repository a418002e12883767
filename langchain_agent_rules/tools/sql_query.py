"""The ``sql_query`` tool: one read-only query, a bounded JSON result.

Two defences, either of which stops a write on its own: the SQL guard
(:mod:`langchain_agent_rules.tools.sql_guard`) refuses anything but one read-only
query before it reaches the database, and the query runs in a read-only transaction
that is always rolled back. Everything that differs between databases (how to make a
connection read-only, how to stop a slow query, how a timeout is reported) lives in
:data:`_DIALECTS`.

The tool reads the database's tables when it is built. A SQLite file that does not exist
is refused (connecting would create it empty), and so is a database without tables; the
tables and their columns go into the description (``include_schema``), the one thing a
model needs to write a valid query on its first try.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import unquote, urlsplit

from langchain_core.tools import BaseTool
from langchain_core.tools.base import ArgsSchema
from langchain_core.tools.base import ToolException as _ToolException
from pydantic import BaseModel, Field, PrivateAttr
from sqlalchemy import URL, Connection, Engine, create_engine, inspect
from sqlalchemy.engine.reflection import ObjectKind
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from langchain_agent_rules._json_text import compact_json
from langchain_agent_rules._sql_url import database_url
from langchain_agent_rules.errors import ToolConfigurationError, ToolExecutionError
from langchain_agent_rules.tools._arguments import parse_arguments, tool_json_schema
from langchain_agent_rules.tools._failures import driver_failure, failure_detail
from langchain_agent_rules.tools._json_values import JsonValue, json_safe
from langchain_agent_rules.tools.sql_guard import check_read_only_sql

__all__ = ["SQL_QUERY_DESCRIPTION", "SqlQueryInput", "SqlQueryTool"]

SQL_QUERY_DESCRIPTION = (
    "Run one read-only SQL query on a {dialect} database. Returns JSON with the column "
    "names, at most {max_rows} rows (one object per row) and whether rows were left out. "
    "Only a single SELECT is allowed (WITH, JOIN, UNION, INTERSECT and EXCEPT are fine); "
    "anything that writes is refused."
)
SCHEMA_DESCRIPTION = " Tables and their columns: {tables}."
SCHEMA_NAMES_ONLY = (
    " Tables (columns left out to keep this short; SELECT * FROM <table> LIMIT 0 shows "
    "a table's columns): {tables}."
)
MORE_TABLES = "{tables}, and {more} more"
TABLE_COUNT = "{count} tables"
MISSING_DATABASE_FILE = (
    "The SQLite database file {path!r} does not exist; sql_query never creates one. Check "
    "the path (a relative one starts from {cwd!r})."
)
NO_TABLES = (
    "The database {url} has no tables or views in its default schema to query; give a "
    "database with at least one table or view."
)
UNREADABLE_SCHEMA = (
    "sql_query could not read the tables of {url}: {detail}; give the URL of a database "
    "it can connect to and read."
)
BAD_DATABASE_URL = (
    "engine_or_url must be a SQLAlchemy Engine or a database URL such as "
    "'sqlite:///shop.db' or 'postgresql://user:password@host/db'; {detail}."
)
QUERY_TIMEOUT = (
    "The query was stopped after the {timeout:g} s limit. Make it cheaper: filter with "
    "WHERE, add LIMIT, or avoid large joins."
)
NO_RESULT_SET = "The query returned no rows and no columns; send a SELECT."
QUERY_FAILED = "The database rejected the query: {detail}"


class SqlQueryInput(BaseModel):
    """Arguments of the ``sql_query`` tool."""

    sql: str = Field(description="One read-only SQL SELECT query.")


_ALLOWED = {"sql": "a string with one read-only SQL SELECT query"}


@dataclass(frozen=True)
class _Dialect:
    """How one database is made read-only and time-limited."""

    display_name: str
    sqlglot_name: str
    drivers: frozenset[str]  # the SQLAlchemy drivers whose connections read_only() knows
    read_only: Callable[[Connection, float], AbstractContextManager[None]]
    is_timeout: Callable[[BaseException | None], bool]


@contextmanager
def _sqlite_read_only(connection: Connection, timeout: float) -> Iterator[None]:
    raw = cast(sqlite3.Connection, connection.connection.driver_connection)
    previous = raw.execute("PRAGMA query_only").fetchone()[0]
    raw.execute("PRAGMA query_only = ON")
    deadline = time.monotonic() + timeout
    # A non-zero return from the progress handler interrupts the running statement.
    raw.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
    try:
        yield
    finally:
        raw.set_progress_handler(None, 0)
        connection.rollback()
        raw.execute(f"PRAGMA query_only = {int(previous)}")


def _sqlite_is_timeout(error: BaseException | None) -> bool:
    return isinstance(error, sqlite3.OperationalError) and "interrupted" in str(error)


@contextmanager
def _postgres_read_only(connection: Connection, timeout: float) -> Iterator[None]:
    try:
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")
        connection.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(timeout * 1000))}")
        read_only = connection.exec_driver_sql("SHOW transaction_read_only").scalar()
        if read_only != "on":
            # An engine in AUTOCOMMIT mode ignores SET TRANSACTION; never run unprotected.
            raise ToolExecutionError(
                "The database connection cannot be made read-only (is the engine in "
                "AUTOCOMMIT mode?); the query was not run."
            )
        yield
    finally:
        connection.rollback()


def _postgres_is_timeout(error: BaseException | None) -> bool:
    code = getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)
    return code == "57014"  # query_canceled, raised by statement_timeout


_DIALECTS: dict[str, _Dialect] = {
    "sqlite": _Dialect(
        "SQLite", "sqlite", frozenset({"pysqlite"}), _sqlite_read_only, _sqlite_is_timeout
    ),
    "postgresql": _Dialect(
        "PostgreSQL",
        "postgres",
        frozenset({"psycopg", "psycopg2"}),
        _postgres_read_only,
        _postgres_is_timeout,
    ),
}


def _unique_names(names: list[str]) -> list[str]:
    """Keep every column when a query returns two with the same name (``id``, ``id_2``)."""
    seen: dict[str, int] = {}
    unique: list[str] = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return unique


def _missing_sqlite_file(url: URL) -> str | None:
    """The path of a SQLite database file that does not exist (connecting would create it)."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    path = url.database
    if str(url.query.get("uri", "")).lower() in ("true", "1"):  # sqlite:///file:x.db?uri=true
        if url.query.get("mode") == "memory":
            return None
        path = unquote(urlsplit(path).path)
    return None if os.path.exists(path) else path


def _read_tables(engine: Engine, with_columns: bool) -> dict[str, list[str]]:
    """Table and view names of the default schema (quoted where SQL needs it) -> columns."""
    inspector = inspect(engine)
    quote = engine.dialect.identifier_preparer.quote
    if not with_columns:
        names = inspector.get_table_names() + inspector.get_view_names()
        return {quote(name): [] for name in sorted(names)}
    columns = inspector.get_multi_columns(kind=ObjectKind.ANY)
    return {
        quote(table): [quote(column["name"]) for column in table_columns]
        for (_schema, table), table_columns in sorted(columns.items())
    }


def _schema_description(tables: dict[str, list[str]], max_bytes: int) -> str:
    """The tables and their columns; past ``max_bytes`` the names only, as many as fit."""
    full = SCHEMA_DESCRIPTION.format(
        tables="; ".join(f"{table}({', '.join(columns)})" for table, columns in tables.items())
    )
    if len(full.encode()) <= max_bytes:
        return full
    names = list(tables)
    every = SCHEMA_NAMES_ONLY.format(tables=", ".join(names))
    if len(every.encode()) <= max_bytes:
        return every
    longest_tail = MORE_TABLES.format(tables="", more=len(names))
    room = max_bytes - len(SCHEMA_NAMES_ONLY.format(tables=longest_tail).encode())
    shown, used = 0, 0
    for name in names:
        used += len(name.encode()) + (2 if shown else 0)
        if used > room:
            break
        shown += 1
    if shown == 0:
        return SCHEMA_NAMES_ONLY.format(tables=TABLE_COUNT.format(count=len(names)))
    listed = MORE_TABLES.format(tables=", ".join(names[:shown]), more=len(names) - shown)
    return SCHEMA_NAMES_ONLY.format(tables=listed)


class SqlQueryTool(BaseTool):
    """Run one read-only SQL query and return at most ``max_rows`` rows as JSON.

    Setup:
        Needs SQLAlchemy and, for PostgreSQL, ``psycopg`` (the ``postgres`` extra).
        Supported databases: SQLite and PostgreSQL.

    Instantiate:
        .. code-block:: python

            from langchain_agent_rules.tools.sql_query import SqlQueryTool

            tool = SqlQueryTool("sqlite:///shop.db", max_rows=50, timeout=30.0)
            tool.description
            # '... Tables and their columns: customers(id, name); orders(id, customer, total).'

    Invoke:
        .. code-block:: python

            tool.invoke({"sql": "SELECT name, total FROM orders ORDER BY total DESC"})
            # '{"columns":["name","total"],"rows":[{"name":"Ada","total":12.5},...],
            #   "row_count":2,"truncated":false}'

    Output:
        Compact JSON text (what a ``ToolMessage`` carries to the model), with the same
        result as a dict in the message's ``artifact`` (``response_format=
        "content_and_artifact"``, as for every tool of this package).

    Errors:
        Building the tool raises ``ToolConfigurationError`` for a SQLite file that does
        not exist (it is never created), a database without tables or views, or one
        whose tables cannot be read. A refused or failed query raises
        ``InvalidToolCallError`` (the arguments or the SQL are not allowed) or
        ``ToolExecutionError`` (timeout, database error) inside the tool. Like all of
        this package's tools, ``handle_tool_error`` defaults to ``True``: ``invoke``
        returns the message as the result (an error ``ToolMessage`` when called with a
        tool call), so a LangChain agent shows it to the model, which can correct its
        query. Pass ``handle_tool_error=False`` to have ``invoke`` raise instead.

    Args:
        engine_or_url: a SQLAlchemy ``Engine`` or a database URL.
        max_rows: the most rows returned; more are fetched only to tell that there are.
        timeout: seconds after which a query is stopped.
        include_schema: put the tables and columns of the default schema in the
            description (read once, at construction), so the model writes valid SQL on
            its first try.
        max_schema_bytes: the most UTF-8 bytes the schema may add to the description;
            past it, only table names are listed (as many as fit), with a note on how to
            see a table's columns.
        **kwargs: other ``BaseTool`` fields (``name``, ``handle_tool_error``, ...).
    """

    name: str = "sql_query"
    description: str = ""
    args_schema: ArgsSchema | None = tool_json_schema(SqlQueryInput)
    handle_tool_error: bool | str | Callable[[_ToolException], str] | None = True
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    max_rows: int = 50
    timeout: float = 30.0
    include_schema: bool = True
    max_schema_bytes: int = 4096
    _engine: Engine = PrivateAttr()
    _dialect: _Dialect = PrivateAttr()

    def __init__(
        self,
        engine_or_url: Engine | str,
        max_rows: int = 50,
        timeout: float = 30.0,
        include_schema: bool = True,
        max_schema_bytes: int = 4096,
        **kwargs: Any,
    ) -> None:
        if max_rows < 1:
            raise ToolConfigurationError(f"max_rows must be at least 1; got {max_rows}.")
        if not timeout > 0:
            raise ToolConfigurationError(f"timeout must be a positive number; got {timeout}.")
        if max_schema_bytes < 1:
            raise ToolConfigurationError(
                f"max_schema_bytes must be at least 1; got {max_schema_bytes}."
            )
        engine = _as_engine(engine_or_url)
        dialect = _DIALECTS.get(engine.dialect.name)
        if dialect is None or engine.dialect.driver not in dialect.drivers:
            supported = ", ".join(
                f"{name}+{driver}"
                for name, d in sorted(_DIALECTS.items())
                for driver in sorted(d.drivers)
            )
            raise ToolConfigurationError(
                f"sql_query supports {supported}; got "
                f"{engine.dialect.name}+{engine.dialect.driver}."
            )
        tables = _tables_to_query(engine, with_columns=include_schema)
        description = SQL_QUERY_DESCRIPTION.format(dialect=dialect.display_name, max_rows=max_rows)
        if include_schema:
            description += _schema_description(tables, max_schema_bytes)
        kwargs.setdefault("description", description)
        super().__init__(
            max_rows=max_rows,
            timeout=timeout,
            include_schema=include_schema,
            max_schema_bytes=max_schema_bytes,
            **kwargs,
        )
        self._engine = engine
        self._dialect = dialect

    def _run(self, *args: Any, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        sql = parse_arguments(SqlQueryInput, args, kwargs, self.name, _ALLOWED).sql
        check_read_only_sql(sql, self._dialect.sqlglot_name)
        try:
            with (
                self._engine.connect() as connection,
                self._dialect.read_only(connection, self.timeout),
            ):
                result = connection.execution_options(no_parameters=True).exec_driver_sql(sql)
                if not result.returns_rows:
                    raise ToolExecutionError(NO_RESULT_SET)
                columns = _unique_names(list(result.keys()))
                fetched = result.fetchmany(self.max_rows + 1)
                result.close()
        except SQLAlchemyError as error:
            cause = error.orig if isinstance(error, DBAPIError) and error.orig else error
            raise driver_failure(
                cause,
                timed_out=self._dialect.is_timeout(cause),
                timeout_message=QUERY_TIMEOUT.format(timeout=self.timeout),
                template=QUERY_FAILED,
            ) from None
        rows: list[dict[str, JsonValue]] = [
            {column: json_safe(value) for column, value in zip(columns, row, strict=True)}
            for row in fetched[: self.max_rows]
        ]
        output: dict[str, Any] = {
            "columns": columns,
            "rows": rows,
            "row_count": len(rows),
            "truncated": len(fetched) > self.max_rows,
        }
        return compact_json(output), output


def _as_engine(engine_or_url: Engine | str) -> Engine:
    if isinstance(engine_or_url, Engine):
        return engine_or_url
    try:
        return create_engine(database_url(engine_or_url))
    except (ArgumentError, NoSuchModuleError, ImportError) as error:
        raise ToolConfigurationError(
            BAD_DATABASE_URL.format(detail=failure_detail(error))
        ) from None


def _tables_to_query(engine: Engine, with_columns: bool) -> dict[str, list[str]]:
    """The tables the model may query, refusing a database it could not query at all."""
    missing = _missing_sqlite_file(engine.url)
    if missing is not None:
        raise ToolConfigurationError(MISSING_DATABASE_FILE.format(path=missing, cwd=os.getcwd()))
    url = engine.url.render_as_string(hide_password=True)
    try:
        tables = _read_tables(engine, with_columns)
    except SQLAlchemyError as error:
        raise ToolConfigurationError(
            UNREADABLE_SCHEMA.format(url=url, detail=failure_detail(error))
        ) from None
    if not tables:
        raise ToolConfigurationError(NO_TABLES.format(url=url))
    return tables
