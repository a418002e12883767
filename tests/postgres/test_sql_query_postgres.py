"""`sql_query` on the real PostgreSQL server: the guard, the READ ONLY transaction, the timeout."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from tools.sql_attacks import SQL_ATTACKS

from langchain_agent_rules.errors import InvalidToolCallError, ToolExecutionError
from langchain_agent_rules.rules.sql_store import sqlalchemy_url
from langchain_agent_rules.tools.sql_query import QUERY_TIMEOUT, SqlQueryTool

pytestmark = pytest.mark.postgres

SHOP = """
CREATE TABLE customers (id SERIAL PRIMARY KEY, name TEXT);
CREATE TABLE orders (id SERIAL PRIMARY KEY, customer INTEGER, total NUMERIC(10, 2),
                     note TEXT, receipt BYTEA);
INSERT INTO customers (name) VALUES ('Ada'), ('Bob');
INSERT INTO orders (customer, total, note, receipt)
    VALUES (1, 12.50, 'please delete', '\\x00ff00'), (2, 3.00, NULL, NULL);
CREATE FUNCTION sneaky_write() RETURNS integer LANGUAGE sql
    AS 'DELETE FROM orders; SELECT 1';
CREATE FUNCTION sneaky_sleep() RETURNS integer LANGUAGE sql
    AS 'SELECT 1 FROM pg_sleep(30)';
"""
LONG_QUERY = (
    "SELECT count(*) FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b"
)
FILES_THE_CORPUS_AIMS_AT = ["/tmp/out.csv", "/tmp/evil.db", "/tmp/copy.db", "/tmp/x"]


@pytest.fixture
def shop(postgres_url: str, pg_schema: str) -> Iterator[Engine]:
    """An engine whose search_path is a fresh schema holding a small shop."""
    engine = create_engine(
        sqlalchemy_url(postgres_url), connect_args={"options": f"-csearch_path={pg_schema}"}
    )
    with engine.begin() as connection:
        connection.exec_driver_sql(SHOP)
    yield engine
    engine.dispose()


def contents(engine: Engine, schema: str) -> dict[str, Any]:
    """Everything a write could change: rows, relations, functions, sequences, settings."""
    with engine.connect() as connection:

        def rows(sql: str) -> list[tuple[Any, ...]]:
            return [tuple(row) for row in connection.execute(text(sql))]

        return {
            "orders": rows("SELECT * FROM orders ORDER BY id"),
            "customers": rows("SELECT * FROM customers ORDER BY id"),
            "relations": rows(
                "SELECT relname, relkind FROM pg_class JOIN pg_namespace n "
                f"ON n.oid = relnamespace WHERE nspname = '{schema}' ORDER BY relname"
            ),
            "functions": rows(
                "SELECT proname FROM pg_proc JOIN pg_namespace n ON n.oid = pronamespace "
                f"WHERE nspname = '{schema}' ORDER BY proname"
            ),
            "sequence": rows("SELECT last_value, is_called FROM orders_id_seq"),
            "schemas": rows("SELECT nspname FROM pg_namespace ORDER BY nspname"),
            "grants": rows(
                "SELECT grantee, privilege_type FROM information_schema.role_table_grants "
                f"WHERE table_schema = '{schema}' ORDER BY 1, 2"
            ),
            "database_settings": rows("SELECT setdatabase, setconfig FROM pg_db_role_setting"),
        }


@pytest.fixture
def tool(shop: Engine) -> SqlQueryTool:
    return SqlQueryTool(shop, timeout=5.0, handle_tool_error=False)


def query(tool: SqlQueryTool, sql: str) -> dict[str, Any]:
    """Run ``sql`` through the tool and decode the JSON text the model would see."""
    result: dict[str, Any] = json.loads(tool.invoke({"sql": sql}))
    return result


def test_a_select_returns_json_rows(tool: SqlQueryTool) -> None:
    result = query(
        tool,
        "SELECT o.id, c.name, o.note FROM orders o JOIN customers c ON c.id = o.customer",
    )

    assert result["columns"] == ["id", "name", "note"]
    assert result["rows"] == [
        {"id": 1, "name": "Ada", "note": "please delete"},
        {"id": 2, "name": "Bob", "note": None},
    ]
    assert tool.description.startswith("Run one read-only SQL query on a PostgreSQL database.")


def test_every_attack_in_the_corpus_is_refused_and_nothing_changes(
    tool: SqlQueryTool, shop: Engine, pg_schema: str
) -> None:
    files_before = {path: os.path.exists(path) for path in FILES_THE_CORPUS_AIMS_AT}
    before = contents(shop, pg_schema)
    admitted = []
    for sql in SQL_ATTACKS:
        try:
            tool.invoke({"sql": sql})
        except InvalidToolCallError:
            continue
        admitted.append(sql)

    assert admitted == []
    assert contents(shop, pg_schema) == before
    assert {path: os.path.exists(path) for path in FILES_THE_CORPUS_AIMS_AT} == files_before


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("WITH gone AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM gone", "DELETE"),
        (
            "WITH changed AS (UPDATE orders SET total = 0 RETURNING id) SELECT * FROM changed",
            "UPDATE",
        ),
        ("COPY orders TO PROGRAM 'touch /tmp/agent_rules_pwned'", "COPY"),
        ("COPY (SELECT 1) TO PROGRAM 'touch /tmp/agent_rules_pwned'", "COPY"),
        ("SELECT pg_read_file('/etc/passwd')", "pg_read_file()"),
        ("SELECT pg_read_file('postgresql.conf', 0, 100)", "pg_read_file()"),
        ("SELECT pg_sleep(30)", "pg_sleep()"),
        ("SELECT id FROM orders WHERE pg_sleep(30) IS NOT NULL", "pg_sleep()"),
        ("SELECT set_config('default_transaction_read_only', 'off', false)", "set_config()"),
        ("SELECT set_config('statement_timeout', '0', true)", "set_config()"),
    ],
)
def test_postgresql_specific_attacks_are_refused_by_the_guard(
    tool: SqlQueryTool, shop: Engine, pg_schema: str, sql: str, reason: str
) -> None:
    before = contents(shop, pg_schema)

    with pytest.raises(InvalidToolCallError, match=f"The SQL is refused: .*{reason}"):
        tool.invoke({"sql": sql})

    assert contents(shop, pg_schema) == before
    assert not os.path.exists("/tmp/agent_rules_pwned")


def test_the_read_only_transaction_stops_a_write_the_guard_cannot_see(
    tool: SqlQueryTool, shop: Engine, pg_schema: str
) -> None:
    before = contents(shop, pg_schema)

    with pytest.raises(ToolExecutionError) as caught:
        tool.invoke({"sql": "SELECT sneaky_write()"})

    assert str(caught.value) == (
        "The database rejected the query: cannot execute DELETE in a read-only transaction"
    )
    assert contents(shop, pg_schema) == before


@pytest.mark.parametrize("sql", [LONG_QUERY, "SELECT sneaky_sleep()"])
def test_a_long_query_is_cancelled_by_the_server_at_the_timeout(
    shop: Engine, pg_schema: str, sql: str
) -> None:
    tool = SqlQueryTool(shop, timeout=0.5, handle_tool_error=False)

    with pytest.raises(ToolExecutionError) as caught:
        tool.invoke({"sql": sql})

    assert str(caught.value) == QUERY_TIMEOUT.format(timeout=0.5)
    with shop.connect() as connection:
        still_running = connection.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                "AND query = :sql AND pid <> pg_backend_pid()"
            ),
            {"sql": sql},
        ).scalar()
    assert still_running == 0
    assert query(tool, "SELECT count(*) AS n FROM orders")["rows"] == [{"n": 2}]


def test_the_pooled_connection_is_writable_again_after_a_query(
    tool: SqlQueryTool, shop: Engine
) -> None:
    tool.invoke({"sql": "SELECT 1"})

    with shop.begin() as connection:
        assert connection.exec_driver_sql("SHOW transaction_read_only").scalar() == "off"
        assert connection.exec_driver_sql("SHOW statement_timeout").scalar() == "0"
        connection.exec_driver_sql("DELETE FROM orders WHERE id = 2")
    assert query(tool, "SELECT count(*) AS n FROM orders")["rows"] == [{"n": 1}]


async def test_ainvoke_runs_a_query_and_refuses_a_write(tool: SqlQueryTool) -> None:
    result = json.loads(await tool.ainvoke({"sql": "SELECT name FROM customers ORDER BY id"}))
    assert result["rows"] == [{"name": "Ada"}, {"name": "Bob"}]

    with pytest.raises(InvalidToolCallError):
        await tool.ainvoke({"sql": "DELETE FROM customers"})
