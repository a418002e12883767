"""The ``sql_query`` tool: one read-only query, a bounded JSON result.

Two defences, either of which stops a write on its own: the SQL guard
(:mod:`langchain_agent_rules.tools.sql_guard`) refuses anything but one read-only
query before it reaches the database, and the query runs in a read-only transaction
that is always rolled back. Everything that differs between databases (how to make a
connection read-only, how to stop a slow query, how a timeout is reported) lives in
:data:`_DIALECTS`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.callbacks import CallbackManagerForToolRun
from langchain_core.tools import BaseTool
from langchain_core.tools.base import ArgsSchema
from langchain_core.tools.base import ToolException as _ToolException
from pydantic import BaseModel, Field, PrivateAttr
from sqlalchemy import Connection, Engine, create_engine, inspect
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from langchain_agent_rules._sql_url import database_url
from langchain_agent_rules.errors import ToolConfigurationError, ToolExecutionError
from langchain_agent_rules.rules.limits import compact_json
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
QUERY_TIMEOUT = (
    "The query was stopped after the {timeout:g} s limit. Make it cheaper: filter with "
    "WHERE, add LIMIT, or avoid large joins."
)
NO_RESULT_SET = "The query returned no rows and no columns; send a SELECT."
QUERY_FAILED = "The database rejected the query: {detail}"


class SqlQueryInput(BaseModel):
    """Arguments of the ``sql_query`` tool."""

    sql: str = Field(description="One read-only SQL SELECT query.")


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


def _schema_text(engine: Engine) -> str:
    inspector = inspect(engine)
    tables = sorted(inspector.get_table_names()) + sorted(inspector.get_view_names())
    return "; ".join(
        f"{table}({', '.join(col['name'] for col in inspector.get_columns(table))})"
        for table in tables
    )


class SqlQueryTool(BaseTool):
    """Run one read-only SQL query and return at most ``max_rows`` rows as JSON.

    Setup:
        Needs SQLAlchemy and, for PostgreSQL, ``psycopg`` (the ``postgres`` extra).
        Supported databases: SQLite and PostgreSQL.

    Instantiate:
        .. code-block:: python

            from langchain_agent_rules.tools.sql_query import SqlQueryTool

            tool = SqlQueryTool("sqlite:///shop.db", max_rows=50, timeout=30.0,
                                include_schema=True)

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
        A refused or failed query raises ``InvalidToolCallError`` (the SQL is not allowed)
        or ``ToolExecutionError`` (timeout, database error) inside the tool. Like all of
        this package's tools, ``handle_tool_error`` defaults to ``True``: ``invoke``
        returns the message as the result (an error ``ToolMessage`` when called with a
        tool call), so a LangChain agent shows it to the model, which can correct its
        query. Pass ``handle_tool_error=False`` to have ``invoke`` raise instead.

    Args:
        engine_or_url: a SQLAlchemy ``Engine`` or a database URL.
        max_rows: the most rows returned; more are fetched only to tell that there are.
        timeout: seconds after which a query is stopped.
        include_schema: put the table and column names in the description so the model
            writes valid SQL on its first try (read once, at construction).
        **kwargs: other ``BaseTool`` fields (``name``, ``handle_tool_error``, ...).
    """

    name: str = "sql_query"
    description: str = ""
    args_schema: ArgsSchema | None = SqlQueryInput
    handle_tool_error: bool | str | Callable[[_ToolException], str] | None = True
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    max_rows: int = 50
    timeout: float = 30.0
    include_schema: bool = False
    _engine: Engine = PrivateAttr()
    _dialect: _Dialect = PrivateAttr()

    def __init__(
        self,
        engine_or_url: Engine | str,
        max_rows: int = 50,
        timeout: float = 30.0,
        include_schema: bool = False,
        **kwargs: Any,
    ) -> None:
        if max_rows < 1:
            raise ToolConfigurationError(f"max_rows must be at least 1; got {max_rows}.")
        if not timeout > 0:
            raise ToolConfigurationError(f"timeout must be a positive number; got {timeout}.")
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
        description = SQL_QUERY_DESCRIPTION.format(dialect=dialect.display_name, max_rows=max_rows)
        if include_schema:
            description += SCHEMA_DESCRIPTION.format(tables=_schema_text(engine))
        kwargs.setdefault("description", description)
        super().__init__(
            max_rows=max_rows, timeout=timeout, include_schema=include_schema, **kwargs
        )
        self._engine = engine
        self._dialect = dialect

    def _run(
        self, sql: str, run_manager: CallbackManagerForToolRun | None = None
    ) -> tuple[str, dict[str, Any]]:
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
        except DBAPIError as error:
            if self._dialect.is_timeout(error.orig):
                raise ToolExecutionError(QUERY_TIMEOUT.format(timeout=self.timeout)) from None
            detail = str(error.orig).strip().splitlines()[0] if str(error.orig) else "error"
            raise ToolExecutionError(QUERY_FAILED.format(detail=detail)) from None
        except SQLAlchemyError as error:
            raise ToolExecutionError(QUERY_FAILED.format(detail=str(error))) from None
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
            f"engine_or_url must be a SQLAlchemy Engine or database URL; {error}"
        ) from None
