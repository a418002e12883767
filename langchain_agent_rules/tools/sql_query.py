"""The ``sql_query`` tool: one read-only query, a bounded JSON result.

Two defences, either of which stops a write on its own: the SQL guard
(:mod:`langchain_agent_rules.tools.sql_guard`) refuses anything but one read-only
query before it reaches the database, and the query runs in a read-only transaction
that is always rolled back. Everything that differs between databases (how to make a
connection read-only, how to stop a slow query, how errors are reported) lives in
:data:`~langchain_agent_rules.tools._sql_dialects.DIALECTS`.

The tool reads the database's tables when it is built. A SQLite file that does not exist
is refused (connecting would create it empty), and so is a database without tables; the
tables, their columns, a few example values and the foreign keys go into the description
(``include_schema``), what a model needs to write a valid query on its first try. What
the model reads after a query steers it on: an unknown table or column is answered with
what exists, a dialect mistake with what this database writes instead, and an empty
result with the filter that matched nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from langchain_core.tools import BaseTool
from langchain_core.tools.base import ArgsSchema
from langchain_core.tools.base import ToolException as _ToolException
from pydantic import BaseModel, Field, PrivateAttr
from sqlalchemy import URL, Connection, Engine, column, create_engine, select, table
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.sql.expression import ColumnClause
from sqlglot import exp

from langchain_agent_rules._json_text import compact_json
from langchain_agent_rules._sql_url import database_url
from langchain_agent_rules.errors import (
    InvalidToolCallError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.tools._arguments import parse_arguments, tool_json_schema
from langchain_agent_rules.tools._failures import driver_failure, failure_detail
from langchain_agent_rules.tools._json_values import JsonValue, json_safe
from langchain_agent_rules.tools._sql_catalog import Catalog, read_catalog, read_examples
from langchain_agent_rules.tools._sql_dialects import DIALECTS, Dialect
from langchain_agent_rules.tools._sql_hints import foreign_syntax_hint, without_dual
from langchain_agent_rules.tools._sql_observations import (
    MAX_LOOKED_UP_KEYS,
    MAX_WITHOUT_NULLS_ROWS,
    failure_lines,
    found_nothing,
    key_lookups,
    key_name_line,
    not_in_without_nulls,
    result_note,
    without_nulls_line,
)
from langchain_agent_rules.tools._sql_schema_text import lists_columns, schema_description
from langchain_agent_rules.tools.sql_guard import check_read_only_sql

__all__ = ["SQL_QUERY_DESCRIPTION", "SqlQueryInput", "SqlQueryTool"]

SQL_QUERY_DESCRIPTION = (
    "Run one read-only SQL query on a {dialect} database. Returns JSON with the column "
    "names, at most {max_rows} rows (one object per row) and whether rows were left out. "
    "Only a single SELECT is allowed (WITH, JOIN, UNION, INTERSECT and EXCEPT are fine); "
    "anything that writes is refused."
)
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
QUERY_FAILED_WITH_HINTS = QUERY_FAILED + "\n{hints}"
RAN_WITHOUT_DUAL = (
    "{dialect} has no dual table and needs no FROM for a SELECT of expressions, so this ran "
    "as: {sql}"
)


class SqlQueryInput(BaseModel):
    """Arguments of the ``sql_query`` tool."""

    sql: str = Field(description="One read-only SQL SELECT query.")


_ALLOWED = {"sql": "a string with one read-only SQL SELECT query"}


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
    example_values: int = 2
    _engine: Engine = PrivateAttr()
    _dialect: Dialect = PrivateAttr()
    _catalog: Catalog = PrivateAttr()

    def __init__(
        self,
        engine_or_url: Engine | str,
        max_rows: int = 50,
        timeout: float = 30.0,
        include_schema: bool = True,
        max_schema_bytes: int = 4096,
        example_values: int = 2,
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
        if example_values < 0:
            raise ToolConfigurationError(f"example_values must be 0 or more; got {example_values}.")
        engine = _as_engine(engine_or_url)
        dialect = DIALECTS.get(engine.dialect.name)
        if dialect is None or engine.dialect.driver not in dialect.drivers:
            supported = ", ".join(
                f"{name}+{driver}"
                for name, d in sorted(DIALECTS.items())
                for driver in sorted(d.drivers)
            )
            raise ToolConfigurationError(
                f"sql_query supports {supported}; got "
                f"{engine.dialect.name}+{engine.dialect.driver}."
            )
        catalog = _catalog_to_query(engine)
        description = SQL_QUERY_DESCRIPTION.format(dialect=dialect.display_name, max_rows=max_rows)
        if include_schema:
            # Examples are read only when the columns alone fit: otherwise none can be shown.
            if example_values and lists_columns(catalog, max_schema_bytes):
                catalog = read_examples(engine, catalog, example_values, dialect.read_only)
            description += schema_description(catalog, max_schema_bytes, example_values)
        kwargs.setdefault("description", description)
        super().__init__(
            max_rows=max_rows,
            timeout=timeout,
            include_schema=include_schema,
            max_schema_bytes=max_schema_bytes,
            example_values=example_values,
            **kwargs,
        )
        self._engine = engine
        self._dialect = dialect
        self._catalog = catalog

    def _run(self, *args: Any, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        sql = parse_arguments(SqlQueryInput, args, kwargs, self.name, _ALLOWED).sql
        statement = self._checked(sql)
        notes = []
        rewritten = without_dual(statement) if self._catalog.table("dual") is None else None
        if rewritten is not None:
            # Oracle's and MySQL's idiom for one row of expressions: run it as this database
            # writes it, rather than spend a model call on the error.
            sql = rewritten.sql(dialect=self._dialect.sqlglot_name)
            statement = self._checked(sql)
            notes.append(RAN_WITHOUT_DUAL.format(dialect=self._dialect.display_name, sql=sql))
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
                names = self._key_names(connection, statement, fetched[: self.max_rows])
                if found_nothing(statement, fetched):
                    names += self._without_nulls(connection, statement)
        except SQLAlchemyError as error:
            raise self._failure(error, statement) from None
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
        note = result_note(statement, self._dialect.sqlglot_name, self._catalog, fetched)
        if note is not None:
            notes.append(note)
        notes += names
        if notes:
            output["note"] = "\n".join(notes)
        return compact_json(output), output

    def _key_names(
        self, connection: Connection, statement: exp.Expr, rows: Sequence[Sequence[Any]]
    ) -> list[str]:
        """What the ids of the bare key columns in ``rows`` are called.

        Measured with the embedded 1.5B model: told how to join, it still answered "the
        manager is Agent 4" from a bare manager_id; told the name, it answers with it.
        """
        lines = []
        for lookup in key_lookups(statement, self._catalog):
            keys = list(dict.fromkeys(row[lookup.index] for row in rows))
            keys = [key for key in keys if isinstance(key, int | str)]
            if not keys or len(keys) > MAX_LOOKED_UP_KEYS:
                continue
            key: ColumnClause[Any] = column(lookup.key.name)
            query = (
                select(key, column(lookup.label.name))
                .select_from(table(lookup.table.name))
                .where(key.in_(keys))
            )
            try:
                names: dict[Any, Any] = dict(connection.execute(query).fetchmany(len(keys)))
            except SQLAlchemyError:
                break  # names are a help, and a failed statement ends a PostgreSQL transaction
            line = key_name_line(lookup, [(key, names[key]) for key in keys if key in names])
            if line is not None:
                lines.append(line)
        return lines

    def _without_nulls(self, connection: Connection, statement: exp.Expr) -> list[str]:
        """For an empty ``NOT IN`` over a column with NULLs, what the query finds without them.

        Measured with the embedded 1.5B model: shown the query that leaves the NULLs out,
        it still answered "no agent" from the empty result; shown its rows, it can answer.
        """
        without = not_in_without_nulls(statement, self._catalog)
        if without is None:
            return []
        sql = without.query.sql(dialect=self._dialect.sqlglot_name)
        try:
            check_read_only_sql(sql, self._dialect.sqlglot_name)
            result = connection.execution_options(no_parameters=True).exec_driver_sql(sql)
            columns = _unique_names(list(result.keys()))
            fetched = result.fetchmany(MAX_WITHOUT_NULLS_ROWS + 1)
            result.close()
        except (SQLAlchemyError, InvalidToolCallError):
            return []  # a help, and a failed statement ends a PostgreSQL transaction
        rows = [
            {name: json_safe(value) for name, value in zip(columns, row, strict=True)}
            for row in fetched[:MAX_WITHOUT_NULLS_ROWS]
        ]
        return [without_nulls_line(rows, more=len(fetched) > MAX_WITHOUT_NULLS_ROWS)]

    def _checked(self, sql: str) -> exp.Expr:
        """The parsed query if the SQL guard admits it; its refusal, with a hint, if not."""
        try:
            return check_read_only_sql(sql, self._dialect.sqlglot_name)
        except InvalidToolCallError as refusal:
            hint = foreign_syntax_hint(sql, self._dialect.sqlglot_name)
            if hint is None:
                raise
            raise InvalidToolCallError(f"{refusal}\n{hint.text}") from None

    def _failure(self, error: SQLAlchemyError, statement: exp.Expr) -> ToolExecutionError:
        """The error for a query the database did not run, with what the model can fix."""
        cause = error.orig if isinstance(error, DBAPIError) and error.orig else error
        problem = self._dialect.name_problem(cause)
        lines = failure_lines(statement, self._dialect.sqlglot_name, self._catalog, problem)
        return driver_failure(
            cause,
            timed_out=self._dialect.is_timeout(cause),
            timeout_message=QUERY_TIMEOUT.format(timeout=self.timeout),
            template=QUERY_FAILED_WITH_HINTS if lines else QUERY_FAILED,
            hints="\n".join(lines),
        )


def _as_engine(engine_or_url: Engine | str) -> Engine:
    if isinstance(engine_or_url, Engine):
        return engine_or_url
    try:
        return create_engine(database_url(engine_or_url))
    except (ArgumentError, NoSuchModuleError, ImportError) as error:
        raise ToolConfigurationError(
            BAD_DATABASE_URL.format(detail=failure_detail(error))
        ) from None


def _catalog_to_query(engine: Engine) -> Catalog:
    """What the model may query, refusing a database it could not query at all."""
    missing = _missing_sqlite_file(engine.url)
    if missing is not None:
        raise ToolConfigurationError(MISSING_DATABASE_FILE.format(path=missing, cwd=os.getcwd()))
    url = engine.url.render_as_string(hide_password=True)
    try:
        catalog = read_catalog(engine)
    except SQLAlchemyError as error:
        raise ToolConfigurationError(
            UNREADABLE_SCHEMA.format(url=url, detail=failure_detail(error))
        ) from None
    if not catalog.tables:
        raise ToolConfigurationError(NO_TABLES.format(url=url))
    return catalog
