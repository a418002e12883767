from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.unit_tests import ToolsUnitTests
from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

from langchain_agent_rules.errors import (
    InvalidToolCallError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.tools._json_values import json_safe
from langchain_agent_rules.tools._sql_dialects import DIALECTS
from langchain_agent_rules.tools.sql_query import (
    QUERY_FAILED,
    QUERY_TIMEOUT,
    SQL_QUERY_DESCRIPTION,
    SqlQueryTool,
)

from .sql_attacks import SQL_ATTACKS

ENDLESS_QUERY = (
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"
)


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sql") / "shop.db"
    connection = sqlite3.connect(path)
    with connection:
        connection.executescript(
            """
            CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER, total REAL,
                                 note TEXT, receipt BLOB);
            INSERT INTO customers VALUES (1, 'Ada'), (2, 'Bob');
            INSERT INTO orders VALUES (1, 1, 12.5, 'please delete', x'00ff00'),
                                      (2, 2, 3.0, NULL, NULL);
            CREATE TABLE numbers (n INTEGER);
            WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 200)
            INSERT INTO numbers SELECT n FROM s;
            """
        )
    connection.close()
    return path


@pytest.fixture
def tool(database: Path) -> SqlQueryTool:
    return SqlQueryTool(f"sqlite:///{database}", handle_tool_error=False)


def test_name_is_sql_query(tool: SqlQueryTool) -> None:
    assert tool.name == "sql_query"


def test_a_select_returns_columns_rows_and_count(tool: SqlQueryTool) -> None:
    result = json.loads(tool.invoke({"sql": "SELECT id, note FROM orders ORDER BY id"}))
    assert result == {
        "columns": ["id", "note"],
        "rows": [{"id": 1, "note": "please delete"}, {"id": 2, "note": None}],
        "row_count": 2,
        "truncated": False,
    }


def test_keywords_inside_strings_are_not_refusals(tool: SqlQueryTool) -> None:
    result = json.loads(tool.invoke({"sql": "SELECT id FROM orders WHERE note = 'please delete'"}))
    assert result["rows"] == [{"id": 1}]


def test_rows_are_capped_at_max_rows_and_marked_truncated(database: Path) -> None:
    tool = SqlQueryTool(f"sqlite:///{database}", max_rows=50)
    result = json.loads(tool.invoke({"sql": "SELECT n FROM numbers ORDER BY n"}))
    assert result["row_count"] == 50
    assert result["rows"][-1] == {"n": 50}
    assert result["truncated"] is True


def test_exactly_max_rows_is_not_truncated(database: Path) -> None:
    tool = SqlQueryTool(f"sqlite:///{database}", max_rows=2)
    assert json.loads(tool.invoke({"sql": "SELECT id FROM orders"}))["truncated"] is False


def test_blobs_are_summarised(tool: SqlQueryTool) -> None:
    result = json.loads(tool.invoke({"sql": "SELECT receipt FROM orders WHERE id = 1"}))
    assert result["rows"] == [{"receipt": "<binary, 3 bytes>"}]


def test_duplicate_column_names_keep_every_column(tool: SqlQueryTool) -> None:
    result = json.loads(
        tool.invoke(
            {"sql": "SELECT o.id, c.id FROM orders o JOIN customers c ON c.id = o.customer"}
        )
    )
    assert result["columns"] == ["id", "id_2"]
    assert result["rows"][0] == {"id": 1, "id_2": 1}


def test_percent_signs_and_colons_reach_the_database_untouched(tool: SqlQueryTool) -> None:
    result = json.loads(
        tool.invoke({"sql": "SELECT name FROM customers WHERE name LIKE 'A%' AND ':x' = ':x'"})
    )
    assert result["rows"] == [{"name": "Ada"}]


def test_result_is_json_serialisable(tool: SqlQueryTool) -> None:
    result = json.loads(tool.invoke({"sql": "SELECT * FROM orders"}))
    assert json.loads(json.dumps(result)) == result


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (dt.date(2024, 1, 2), "2024-01-02"),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
        (dt.time(3, 4), "03:04:00"),
        (Decimal("12.50"), "12.50"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (b"\x00\x01", "<binary, 2 bytes>"),
        (memoryview(b"abc"), "<binary, 3 bytes>"),
        (1.5, 1.5),
        (True, True),
        (None, None),
    ],
)
def test_values_become_json_safe(value: object, expected: object) -> None:
    assert json_safe(value) == expected


def test_a_runaway_query_is_stopped_at_the_timeout(database: Path) -> None:
    tool = SqlQueryTool(f"sqlite:///{database}", timeout=0.2, handle_tool_error=False)
    with pytest.raises(ToolExecutionError) as caught:
        tool.invoke({"sql": ENDLESS_QUERY})
    assert str(caught.value) == QUERY_TIMEOUT.format(timeout=0.2)
    assert str(caught.value) == (
        "The query was stopped after the 0.2 s limit. Make it cheaper: filter with WHERE, "
        "add LIMIT, or avoid large joins."
    )


def test_a_database_error_is_reported_to_the_model_in_its_own_words(tool: SqlQueryTool) -> None:
    with pytest.raises(ToolExecutionError) as caught:
        tool.invoke({"sql": "SELECT abs(-9223372036854775808)"})
    assert str(caught.value) == QUERY_FAILED.format(detail="integer overflow")
    assert str(caught.value) == "The database rejected the query: integer overflow"


def test_the_connection_is_writable_again_after_a_query(database: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    shutil.copyfile(database, copy)
    engine = create_engine(f"sqlite:///{copy}")
    tool = SqlQueryTool(engine)
    tool.invoke({"sql": "SELECT 1"})
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA query_only").scalar() == 0
        connection.exec_driver_sql("DELETE FROM orders WHERE id = 2")
        connection.commit()
    assert json.loads(tool.invoke({"sql": "SELECT COUNT(*) AS n FROM orders"}))["rows"] == [
        {"n": 1}
    ]


def test_the_read_only_transaction_blocks_writes_the_guard_never_sees(database: Path) -> None:
    # Defence in depth: even SQL that bypassed the guard cannot write inside the session.
    engine = create_engine(f"sqlite:///{database}")
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    with (
        engine.connect() as connection,
        DIALECTS["sqlite"].read_only(connection, 5.0),
        pytest.raises(Exception, match="readonly"),
    ):
        connection.exec_driver_sql("DELETE FROM orders")
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before


def test_description_names_the_dialect_and_limit(database: Path) -> None:
    tool = SqlQueryTool(f"sqlite:///{database}", include_schema=False)
    assert tool.description == SQL_QUERY_DESCRIPTION.format(dialect="SQLite", max_rows=50)
    assert tool.description == (
        "Run one read-only SQL query on a SQLite database. Returns JSON with the column names, "
        "at most 50 rows (one object per row) and whether rows were left out. Only a single "
        "SELECT is allowed (WITH, JOIN, UNION, INTERSECT and EXCEPT are fine); anything that "
        "writes is refused."
    )


def test_the_description_lists_tables_and_columns_by_default(tool: SqlQueryTool) -> None:
    assert tool.include_schema is True
    assert tool.description == SQL_QUERY_DESCRIPTION.format(dialect="SQLite", max_rows=50) + (
        " Tables and their columns: customers(id, name); numbers(n); "
        "orders(id, customer, total, note, receipt)."
    )


def test_a_refusal_is_an_error_tool_message_by_default(database: Path) -> None:
    tool = SqlQueryTool(f"sqlite:///{database}")
    message = tool.invoke(
        {"type": "tool_call", "id": "c1", "name": "sql_query", "args": {"sql": "DROP TABLE x"}}
    )
    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    assert message.content.startswith("The SQL is refused: a DROP statement")


def test_a_result_tool_message_carries_compact_json_and_the_dict(database: Path) -> None:
    tool = SqlQueryTool(f"sqlite:///{database}")
    message = tool.invoke(
        {"type": "tool_call", "id": "c1", "name": "sql_query", "args": {"sql": "SELECT 1 AS x"}}
    )
    assert isinstance(message, ToolMessage)
    assert message.text == '{"columns":["x"],"rows":[{"x":1}],"row_count":1,"truncated":false}'
    assert message.artifact == json.loads(message.text)


async def test_ainvoke_runs_the_query(tool: SqlQueryTool) -> None:
    result = json.loads(await tool.ainvoke({"sql": "SELECT name FROM customers ORDER BY id"}))
    assert result["rows"] == [{"name": "Ada"}, {"name": "Bob"}]


async def test_ainvoke_refuses_writes(tool: SqlQueryTool) -> None:
    with pytest.raises(InvalidToolCallError):
        await tool.ainvoke({"sql": "DELETE FROM orders"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_rows": 0}, "max_rows must be at least 1"),
        ({"timeout": 0}, "timeout must be a positive number"),
    ],
)
def test_bad_limits_are_configuration_errors(
    database: Path, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolConfigurationError, match=message):
        SqlQueryTool(f"sqlite:///{database}", **kwargs)


def test_an_unsupported_driver_is_a_configuration_error() -> None:
    pytest.importorskip("aiosqlite")
    with pytest.raises(ToolConfigurationError) as caught:
        SqlQueryTool("sqlite+aiosqlite://")
    assert str(caught.value) == (
        "sql_query supports postgresql+psycopg, postgresql+psycopg2, sqlite+pysqlite; "
        "got sqlite+aiosqlite."
    )


def test_a_bad_url_is_a_configuration_error() -> None:
    with pytest.raises(ToolConfigurationError, match="SQLAlchemy Engine or a database URL"):
        SqlQueryTool("not a url")


class TestSqlQueryToolStandard(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return SqlQueryTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        # One in-memory database shared by every connection, with a table to query.
        engine = create_engine("sqlite://", poolclass=StaticPool)
        with engine.begin() as connection:
            connection.exec_driver_sql("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        return {"engine_or_url": engine}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"sql": "SELECT 1"}


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A SQLAlchemy URL whose search_path is a fresh schema with a small orders table."""
    import psycopg

    url = os.environ["POSTGRES_URL"]
    schema = f"sql_tool_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
        connection.execute(
            f"CREATE TABLE {schema}.orders (id INT PRIMARY KEY, total NUMERIC(10, 2), "
            f"placed DATE, note TEXT)"
        )
        connection.execute(
            f"INSERT INTO {schema}.orders "
            "SELECT n, n * 1.5, DATE '2024-01-01' + n, 'please delete' "
            "FROM generate_series(1, 80) n"
        )
    separator = "&" if "?" in url else "?"
    sqlalchemy_url = url.replace("postgresql://", "postgresql+psycopg://", 1).replace(
        "postgres://", "postgresql+psycopg://", 1
    )
    yield f"{sqlalchemy_url}{separator}options=-csearch_path%3D{schema}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA {schema} CASCADE")


def _pg_order_count(url: str) -> int:
    engine = create_engine(url)
    with engine.connect() as connection:
        count = connection.exec_driver_sql("SELECT COUNT(*) FROM orders").scalar()
    engine.dispose()
    assert isinstance(count, int)
    return count


@pytest.mark.postgres
def test_postgres_rows_are_json_safe_and_capped(pg_url: str) -> None:
    tool = SqlQueryTool(pg_url, max_rows=50, include_schema=True, handle_tool_error=False)
    result = json.loads(tool.invoke({"sql": "SELECT id, total, placed FROM orders ORDER BY id"}))
    assert result["rows"][0] == {"id": 1, "total": "1.50", "placed": "2024-01-02"}
    assert (result["row_count"], result["truncated"]) == (50, True)
    assert tool.description.startswith("Run one read-only SQL query on a PostgreSQL database.")
    assert tool.description.endswith(
        " Tables and their columns [with example values]: orders(id, total, placed, note "
        "['please delete'])."
    )


@pytest.mark.postgres
@pytest.mark.parametrize("sql", SQL_ATTACKS)
def test_postgres_refuses_every_attack_and_keeps_the_rows(pg_url: str, sql: str) -> None:
    tool = SqlQueryTool(pg_url, handle_tool_error=False)
    with pytest.raises(InvalidToolCallError):
        tool.invoke({"sql": sql})
    assert _pg_order_count(pg_url) == 80


@pytest.mark.postgres
def test_postgres_read_only_transaction_blocks_writes_the_guard_never_sees(pg_url: str) -> None:
    engine = create_engine(pg_url)
    with (
        engine.connect() as connection,
        DIALECTS["postgresql"].read_only(connection, 5.0),
        pytest.raises(Exception, match="read-only transaction"),
    ):
        connection.exec_driver_sql("DELETE FROM orders")
    engine.dispose()
    assert _pg_order_count(pg_url) == 80


@pytest.mark.postgres
def test_postgres_slow_query_is_stopped_and_the_timeout_does_not_leak(pg_url: str) -> None:
    engine = create_engine(pg_url, pool_size=1)
    tool = SqlQueryTool(engine, timeout=0.2, handle_tool_error=False)
    with pytest.raises(ToolExecutionError) as caught:
        tool.invoke({"sql": "SELECT COUNT(*) FROM generate_series(1, 1000000000)"})
    assert str(caught.value) == QUERY_TIMEOUT.format(timeout=0.2)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SHOW statement_timeout").scalar() == "0"
        assert connection.exec_driver_sql("SHOW transaction_read_only").scalar() == "off"
    engine.dispose()


@pytest.mark.postgres
def test_postgres_autocommit_engine_is_never_run_unprotected(pg_url: str) -> None:
    engine = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    tool = SqlQueryTool(engine, handle_tool_error=False)
    with pytest.raises(ToolExecutionError, match="cannot be made read-only"):
        tool.invoke({"sql": "SELECT 1"})
    engine.dispose()
