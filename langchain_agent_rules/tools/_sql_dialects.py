"""What differs between the databases ``sql_query`` supports, in one table: `DIALECTS`.

For each database: how a connection is made read-only and time-limited (always rolled
back), how its driver reports a timeout, and how it names a table or column it does not
know (for the observation that lists what exists).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Connection

from langchain_agent_rules.errors import ToolExecutionError
from langchain_agent_rules.tools._sql_observations import NameProblem, ProblemKind

__all__ = ["DIALECTS", "Dialect"]


@dataclass(frozen=True)
class Dialect:
    """How one database is made read-only and time-limited."""

    display_name: str
    sqlglot_name: str
    drivers: frozenset[str]  # the SQLAlchemy drivers whose connections read_only() knows
    read_only: Callable[[Connection, float], AbstractContextManager[None]]
    is_timeout: Callable[[BaseException | None], bool]
    name_problem: Callable[[BaseException], NameProblem | None]


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


_SQLITE_NAME_PROBLEMS: tuple[tuple[ProblemKind, re.Pattern[str]], ...] = (
    ("table", re.compile(r"no such table: (\S+)")),
    ("column", re.compile(r"no such column: (\S+)")),
    ("ambiguous", re.compile(r"ambiguous column name: (\S+)")),
)


def _sqlite_name_problem(error: BaseException) -> NameProblem | None:
    message = str(error).strip()
    for kind, pattern in _SQLITE_NAME_PROBLEMS:
        found = pattern.fullmatch(message)
        if found is not None:
            return NameProblem(kind, found[1])
    return None


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
    return _sqlstate(error) == "57014"  # query_canceled, raised by statement_timeout


def _sqlstate(error: BaseException | None) -> str | None:
    return getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)


_POSTGRES_NAME_PROBLEMS: dict[str, tuple[ProblemKind, re.Pattern[str]]] = {
    "42P01": ("table", re.compile(r'relation "?([^"]+)"? does not exist')),  # undefined_table
    "42703": ("column", re.compile(r"column (.+?) does not exist")),  # undefined_column
    "42702": ("ambiguous", re.compile(r'column reference "?([^"]+)"? is ambiguous')),
}


def _postgres_name_problem(error: BaseException) -> NameProblem | None:
    known = _POSTGRES_NAME_PROBLEMS.get(_sqlstate(error) or "")
    if known is None:
        return None
    kind, pattern = known
    found = pattern.fullmatch(str(error).strip().split("\n", 1)[0])
    return NameProblem(kind, found[1].replace('"', "")) if found else None


DIALECTS: dict[str, Dialect] = {
    "sqlite": Dialect(
        "SQLite",
        "sqlite",
        frozenset({"pysqlite"}),
        _sqlite_read_only,
        _sqlite_is_timeout,
        _sqlite_name_problem,
    ),
    "postgresql": Dialect(
        "PostgreSQL",
        "postgres",
        frozenset({"psycopg", "psycopg2"}),
        _postgres_read_only,
        _postgres_is_timeout,
        _postgres_name_problem,
    ),
}
