from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from langchain_agent_rules.errors import InvalidToolCallError
from langchain_agent_rules.tools.sql_guard import (
    ALLOWED_SQL,
    NOT_ONE_STATEMENT,
    REFUSED_FUNCTION,
    check_read_only_sql,
)
from langchain_agent_rules.tools.sql_query import SqlQueryTool

from .sql_attacks import SQL_ATTACKS

READ_ONLY_QUERIES = [
    "SELECT * FROM orders",
    "select id, total from orders where total > 10 order by total desc limit 5",
    "SELECT * FROM orders WHERE note = 'please delete'",
    "SELECT * FROM orders WHERE note = 'DROP TABLE orders; --'",
    'SELECT "delete", "update" FROM "insert"',
    "SELECT customer, SUM(total) FROM orders GROUP BY customer HAVING SUM(total) > 1",
    "WITH big AS (SELECT * FROM orders WHERE total > 10) SELECT COUNT(*) FROM big",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n",
    "SELECT 1 UNION SELECT 2",
    "SELECT id FROM orders INTERSECT SELECT id FROM orders EXCEPT SELECT 3",
    "SELECT (SELECT MAX(total) FROM orders) AS top",
    "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer",
    "SELECT 1;",
    "SELECT 1 -- trailing comment",
    "/* leading comment */ SELECT 1",
]


def _checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sql") / "shop.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            """
            CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, total REAL, note TEXT);
            INSERT INTO orders VALUES (1, 'ada', 12.5, 'please delete'), (2, 'bob', 3.0, NULL);
            """
        )
    connection.close()
    return path


@pytest.fixture(scope="module")
def tool(database: Path) -> SqlQueryTool:
    return SqlQueryTool(f"sqlite:///{database}", handle_tool_error=False)


def test_the_attack_corpus_has_at_least_forty_inputs() -> None:
    assert len(SQL_ATTACKS) >= 40


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
@pytest.mark.parametrize("sql", SQL_ATTACKS)
def test_guard_refuses_every_attack(sql: str, dialect: str) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        check_read_only_sql(sql, dialect)
    assert str(caught.value).endswith(ALLOWED_SQL)


@pytest.mark.parametrize("sql", SQL_ATTACKS)
def test_tool_refuses_every_attack_and_the_database_file_is_unchanged(
    sql: str, tool: SqlQueryTool, database: Path
) -> None:
    before = _checksum(database)
    with pytest.raises(InvalidToolCallError):
        tool.invoke({"sql": sql})
    assert _checksum(database) == before


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
@pytest.mark.parametrize("sql", READ_ONLY_QUERIES)
def test_guard_admits_read_only_queries(sql: str, dialect: str) -> None:
    check_read_only_sql(sql, dialect)


def test_stacked_statements_are_refused_with_the_count() -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        check_read_only_sql("SELECT 1; SELECT 2", "sqlite")
    assert str(caught.value) == NOT_ONE_STATEMENT.format(count=2)
    assert str(caught.value) == (
        "The SQL must be exactly one statement; got 2. Allowed: exactly one read-only SELECT "
        "(WITH, JOIN, UNION, INTERSECT and EXCEPT are fine), without INTO, FOR UPDATE/SHARE or "
        "functions that sleep, read files or change settings."
    )


def test_a_refused_function_is_named_in_the_message() -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        check_read_only_sql("SELECT Pg_Sleep(1)", "postgres")
    assert str(caught.value) == REFUSED_FUNCTION.format(name="pg_sleep")


def test_a_data_modifying_cte_names_the_statement() -> None:
    with pytest.raises(InvalidToolCallError, match="it contains a DELETE statement"):
        check_read_only_sql("WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", "postgres")


def test_an_unparsable_query_names_the_dialect() -> None:
    with pytest.raises(InvalidToolCallError, match="could not be parsed as sqlite SQL"):
        check_read_only_sql("SELEC 1", "sqlite")
