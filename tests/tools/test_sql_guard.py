from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from langchain_agent_rules.errors import InvalidToolCallError
from langchain_agent_rules.tools.sql_guard import (
    ALLOWED_SQL,
    MAX_SQL_CHARS,
    MAX_SQL_NESTING,
    NOT_ONE_STATEMENT,
    REFUSED_FUNCTION,
    TOO_DEEP,
    TOO_LONG,
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


def parenthesised(depth: int) -> str:
    return "SELECT " + "(" * depth + "1" + ")" * depth


@pytest.mark.parametrize("dialect", ["sqlite", "postgres", None])
def test_nesting_up_to_the_bound_is_judged(dialect: str | None) -> None:
    check_read_only_sql(parenthesised(MAX_SQL_NESTING), dialect)
    check_read_only_sql(
        "SELECT " + "CASE WHEN 1 THEN " * MAX_SQL_NESTING + "1" + " END" * MAX_SQL_NESTING,
        dialect,
    )


@pytest.mark.parametrize(
    "sql",
    [
        parenthesised(MAX_SQL_NESTING + 1),
        parenthesised(9_000),
        "SELECT * FROM " + "(SELECT * FROM " * 40 + "t" + ")" * 40,
        "SELECT " + "CASE WHEN 1 THEN " * 40 + "1" + " END" * 40,
        "SELECT " + "abs(" * 40 + "1" + ")" * 40,
        "SELECT (((((" + "CASE WHEN 1 THEN " * 30 + "1" + " END" * 30 + ")))))",
    ],
)
def test_deeper_nesting_is_refused_before_parsing(sql: str) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        check_read_only_sql(sql, "sqlite")
    assert str(caught.value) == TOO_DEEP.format(limit=MAX_SQL_NESTING)
    assert str(caught.value) == (
        "The SQL is refused: it nests too deeply (at most 32 levels of parentheses and CASE "
        "expressions). Write a flatter query; WITH can name each step. " + ALLOWED_SQL
    )


@pytest.mark.parametrize("sql", ["SELECT " + "NOT " * 2000 + "1", "SELECT " + "- " * 5000 + "1"])
def test_nesting_without_parentheses_is_refused_too(sql: str) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        check_read_only_sql(sql, "sqlite")
    assert str(caught.value) == TOO_DEEP.format(limit=MAX_SQL_NESTING)


def test_parentheses_inside_strings_and_identifiers_do_not_count() -> None:
    check_read_only_sql("SELECT '" + "(" * 100 + "' AS \"" + "(" * 100 + '"', "sqlite")


def test_a_query_up_to_the_length_bound_is_judged() -> None:
    sql = "SELECT 1 " + " " * (MAX_SQL_CHARS - len("SELECT 1 ") - len("-- end")) + "-- end"
    assert len(sql) == MAX_SQL_CHARS
    check_read_only_sql(sql, "sqlite")


def test_a_longer_query_is_refused_before_parsing() -> None:
    sql = "SELECT " + "+".join(["1"] * 100_000)
    with pytest.raises(InvalidToolCallError) as caught:
        check_read_only_sql(sql, "sqlite")
    assert str(caught.value) == TOO_LONG.format(length=len(sql), limit=MAX_SQL_CHARS)
    assert str(caught.value) == (
        "The SQL is refused: it is 200006 characters long, more than 20000. Write a shorter "
        "query. " + ALLOWED_SQL
    )


@pytest.mark.parametrize(
    ("sql", "described"),
    [
        ("INSERT INTO t VALUES (1)", "an INSERT statement"),
        ("ATTACH DATABASE 'x.db' AS x", "an ATTACH statement"),
        ("DELETE FROM t", "a DELETE statement"),
    ],
)
def test_a_refusal_names_the_statement_with_its_article(sql: str, described: str) -> None:
    with pytest.raises(InvalidToolCallError, match=f"refused: {described} is not a read-only"):
        check_read_only_sql(sql, "sqlite")
