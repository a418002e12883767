"""What the model reads after a query: what exists when a name is wrong, why nothing matched."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from langchain_agent_rules.errors import InvalidToolCallError, ToolExecutionError
from langchain_agent_rules.rules.sql_store import sqlalchemy_url
from langchain_agent_rules.tools._sql_observations import MAX_FILTER_CHARS, MAX_LISTING_BYTES
from langchain_agent_rules.tools.sql_guard import ALLOWED_SQL
from langchain_agent_rules.tools.sql_query import SqlQueryTool

OFFICE = """
CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                          manager_id INTEGER REFERENCES employees (id));
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT,
                        dept_id INTEGER REFERENCES departments (id), hired TEXT, salary REAL);
CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT, priority TEXT, opened TEXT,
                      closed_at TEXT);
INSERT INTO departments VALUES (1, 'Sales', 2), (2, 'Research', 1);
INSERT INTO employees VALUES
    (1, 'Ann Lee', 'ann.lee@example.com', 2, '2021-04-12', 5200.0),
    (2, 'Bo Chen', 'bo.chen@example.com', 1, '2019-09-01', 6100.0),
    (3, 'Cy Diaz', NULL, 1, '2023-01-16', 4300.0);
INSERT INTO tickets VALUES
    (1, 'Printer jam', 'P2', '2026-02-27', '2026-02-28 09:15:00'),
    (2, 'VPN down', 'P1', '2026-03-02', '2026-03-02 17:40:00'),
    (3, 'New laptop', 'P2', '2026-03-18', NULL);
"""


def make_database(path: Path, script: str) -> Path:
    connection = sqlite3.connect(path)
    with connection:
        connection.executescript(script)
    connection.close()
    return path


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_database(tmp_path_factory.mktemp("office") / "office.db", OFFICE)


@pytest.fixture(scope="module")
def tool(office: Path) -> SqlQueryTool:
    return SqlQueryTool(f"sqlite:///{office}", handle_tool_error=False)


def failure(tool: SqlQueryTool, sql: str) -> str:
    with pytest.raises(ToolExecutionError) as caught:
        tool.invoke({"sql": sql})
    return str(caught.value)


def result(tool: SqlQueryTool, sql: str) -> dict[str, object]:
    output = json.loads(tool.invoke({"sql": sql}))
    assert isinstance(output, dict)
    return output


# --- unknown and ambiguous names -----------------------------------------------------------


def test_an_unknown_table_gets_the_close_name_and_every_table(tool: SqlQueryTool) -> None:
    assert failure(tool, "SELECT * FROM employee") == (
        "The database rejected the query: no such table: employee\n"
        "Did you mean employees?\n"
        "The tables are: departments(id, name, manager_id); employees(id, name, email, "
        "dept_id, hired, salary); tickets(id, title, priority, opened, closed_at)."
    )


def test_an_unknown_column_gets_the_columns_of_the_query_tables(tool: SqlQueryTool) -> None:
    assert failure(tool, "SELECT wage FROM employees") == (
        "The database rejected the query: no such column: wage\n"
        "Columns of the query's tables: employees(id, name, email, dept_id, hired, salary)."
    )


def test_a_qualified_unknown_column_lists_its_table_and_the_close_name(
    tool: SqlQueryTool,
) -> None:
    sql = "SELECT e.nme, d.name FROM employees e JOIN departments d ON d.id = e.dept_id"
    assert failure(tool, sql) == (
        "The database rejected the query: no such column: e.nme\n"
        "Did you mean name?\n"
        "Columns of the query's tables: employees(id, name, email, dept_id, hired, salary)."
    )


def test_a_column_of_a_table_the_query_does_not_read_says_to_join_it(
    tool: SqlQueryTool,
) -> None:
    assert failure(tool, "SELECT name FROM employees WHERE manager_id = 1") == (
        "The database rejected the query: no such column: manager_id\n"
        "manager_id is a column of departments, which the query does not read; join it.\n"
        "Columns of the query's tables: employees(id, name, email, dept_id, hired, salary)."
    )


def test_the_tables_behind_a_cte_are_the_query_tables(tool: SqlQueryTool) -> None:
    sql = "WITH staff AS (SELECT id FROM employees) SELECT nope FROM staff"
    assert failure(tool, sql).endswith(
        "\nColumns of the query's tables: employees(id, name, email, dept_id, hired, salary)."
    )


def test_a_column_of_another_table_of_the_query_names_its_table_not_a_close_name(
    tool: SqlQueryTool,
) -> None:
    sql = "SELECT e.name FROM employees e JOIN departments d ON d.id = e.manager_id"
    assert failure(tool, sql) == (
        "The database rejected the query: no such column: e.manager_id\n"
        "manager_id is a column of departments (d), not of employees (e).\n"
        "departments.manager_id holds the id of employees rows: here, write e.id.\n"
        "Columns of the query's tables: employees(id, name, email, dept_id, hired, salary)."
    )


@pytest.mark.parametrize(
    ("sql", "line"),
    [
        (
            "SELECT d.name FROM departments d WHERE d.dept_id = 1",
            "employees.dept_id holds the id of departments rows: here, write d.id.",
        ),
        (
            "SELECT departments.name FROM departments WHERE departments.dept_id = 1",
            "employees.dept_id holds the id of departments rows: here, write departments.id.",
        ),
    ],
)
def test_a_key_column_asked_of_the_table_it_refers_to_points_at_that_tables_id(
    tool: SqlQueryTool, sql: str, line: str
) -> None:
    lines = failure(tool, sql).splitlines()
    assert line in lines
    assert lines[-1].startswith("Columns of the query's tables: departments(")


def test_a_column_of_a_table_read_in_a_subquery_is_named_with_that_table(
    tool: SqlQueryTool,
) -> None:
    sql = (
        "SELECT employees.name FROM employees "
        "WHERE employees.priority = (SELECT priority FROM tickets WHERE id = 2)"
    )
    assert failure(tool, sql).splitlines()[1] == (
        "priority is a column of tickets, not of employees."
    )


def test_an_ambiguous_column_names_the_tables_to_choose_from(tool: SqlQueryTool) -> None:
    sql = "SELECT name FROM employees e JOIN departments d ON d.manager_id = e.id"
    assert failure(tool, sql) == (
        "The database rejected the query: ambiguous column name: name\n"
        "name is a column of more than one table of the query; write it with its table: "
        "e.name or d.name."
    )


def test_an_error_about_no_name_is_the_database_words_alone(tool: SqlQueryTool) -> None:
    assert failure(tool, "SELECT abs(-9223372036854775808) FROM employees") == (
        "The database rejected the query: integer overflow"
    )


def _wide_database(path: Path, tables: int, columns: int) -> Path:
    script = "".join(
        f"CREATE TABLE table_{i:03d} "
        f"({', '.join(f'a_rather_long_column_name_{j:03d} TEXT' for j in range(columns))});"
        for i in range(tables)
    )
    return make_database(path, f"BEGIN; {script} COMMIT;")


def test_a_big_schema_is_listed_within_the_bound(tmp_path: Path) -> None:
    tool = SqlQueryTool(
        f"sqlite:///{_wide_database(tmp_path / 'wide.db', 300, 40)}", handle_tool_error=False
    )
    message = failure(tool, "SELECT * FROM nowhere")
    listing = message.split("\n")[-1]
    assert listing.startswith("The tables are: table_000, table_001, ")
    assert listing.endswith(" more.")
    assert len(listing.encode()) <= MAX_LISTING_BYTES + len("The tables are: .")
    message = failure(tool, "SELECT nope FROM table_000")
    assert message == (
        "The database rejected the query: no such column: nope\n"
        "Columns of the query's tables: table_000."
    )


# --- dialect hints -------------------------------------------------------------------------


def test_select_from_dual_runs_without_from_and_says_so(tool: SqlQueryTool) -> None:
    assert result(tool, "SELECT (240 * 0.15) AS result FROM DUAL;") == {
        "columns": ["result"],
        "rows": [{"result": 36.0}],
        "row_count": 1,
        "truncated": False,
        "note": "SQLite has no dual table and needs no FROM for a SELECT of expressions, so "
        "this ran as: SELECT (240 * 0.15) AS result",
    }


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1 FROM dual d",  # an alias: the query may name dual's columns
        "SELECT 1 FROM main.dual",
        "SELECT d.id FROM dual JOIN departments d ON 1 = 1",
    ],
)
def test_a_dual_query_that_is_more_than_expressions_fails_with_the_hint_only(
    tool: SqlQueryTool, sql: str
) -> None:
    assert failure(tool, sql).endswith(
        "dual\nSQLite has no dual table; a SELECT of an expression needs no FROM, as in: "
        "SELECT 240 * 0.15"
    )


def test_a_real_dual_table_is_queried_as_it_is(tmp_path: Path) -> None:
    database = make_database(
        tmp_path / "dual.db", "CREATE TABLE dual (x TEXT); INSERT INTO dual VALUES ('real');"
    )
    own = SqlQueryTool(f"sqlite:///{database}", handle_tool_error=False)
    assert result(own, "SELECT x FROM dual")["rows"] == [{"x": "real"}]


def test_the_rewritten_dual_query_is_still_guarded(tool: SqlQueryTool) -> None:
    with pytest.raises(InvalidToolCallError):
        tool.invoke({"sql": "SELECT 1 FROM dual; DELETE FROM employees"})
    assert result(tool, "SELECT COUNT(*) AS n FROM employees")["rows"] == [{"n": 3}]


def test_top_n_is_refused_with_the_query_rewritten_with_limit(tool: SqlQueryTool) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        tool.invoke({"sql": "SELECT TOP 2 name FROM employees ORDER BY salary DESC"})
    assert str(caught.value) == (
        "The SQL could not be parsed as sqlite SQL (Invalid expression / Unexpected token. "
        f"Line 1, Col: 12.). {ALLOWED_SQL}\n"
        "SQLite has no TOP n; put LIMIT n at the end, as in: "
        "SELECT name FROM employees ORDER BY salary DESC LIMIT 2"
    )


@pytest.mark.parametrize(
    ("sql", "hint"),
    [
        (
            "SELECT NOW()",
            "SQLite has no NOW(); use date('now') for today's date (text 'YYYY-MM-DD') or "
            "datetime('now') for the date and time (UTC).",
        ),
        (
            "SELECT name FROM employees WHERE hired > CURDATE()",
            "SQLite has no CURDATE(); use date('now') for today's date (text 'YYYY-MM-DD') or "
            "datetime('now') for the date and time (UTC).",
        ),
        (
            "SELECT SYSDATE",
            "SQLite has no SYSDATE; use date('now') for today's date (text 'YYYY-MM-DD') or "
            "datetime('now') for the date and time (UTC).",
        ),
        (
            "SELECT COUNT(*) FROM tickets WHERE MONTH(opened) = 3",
            "SQLite has no MONTH(); strftime('%m', opened) gives the month as text, so compare "
            "it with text, as in: strftime('%m', opened) = '03'",
        ),
        (
            "SELECT name FROM employees WHERE name ILIKE '%lee%'",
            "SQLite has no ILIKE; LIKE already ignores the case of ASCII letters, as in: "
            "name LIKE '%lee%'",
        ),
        (
            "SELECT CONCAT(name, ' <', email, '>') FROM employees",
            "SQLite joins text with ||, as in: name || ' <' || email || '>'",
        ),
    ],
)
def test_a_rejected_dialect_mistake_gets_what_sqlite_writes_instead(
    tool: SqlQueryTool, sql: str, hint: str
) -> None:
    lines = failure(tool, sql).split("\n")
    assert lines[0].startswith("The database rejected the query: ")
    assert lines[1:] == [hint]


def test_text_joined_with_plus_is_flagged_beside_the_rows_sqlite_returns(
    tool: SqlQueryTool,
) -> None:
    output = result(tool, "SELECT 'Dr. ' + name AS title FROM employees WHERE id = 1")
    assert output["rows"] == [{"title": 0}]
    assert output["note"] == "SQLite joins text with ||, not +, as in: 'Dr. ' || name"


# --- empty results -------------------------------------------------------------------------


def test_an_absent_person_is_zero_rows_with_the_filter_and_a_like_query(
    tool: SqlQueryTool,
) -> None:
    assert tool.invoke({"sql": "SELECT salary FROM employees WHERE name = 'Zoe Park'"}) == (
        '{"columns":["salary"],"rows":[],"row_count":0,"truncated":false,"note":"0 rows: no '
        "row matched WHERE name = 'Zoe Park'.\\nname is text; = needs the exact text. To find "
        "part of it in any case, try: SELECT salary FROM employees WHERE name LIKE "
        "'%Zoe Park%'\"}"
    )


def test_a_code_in_the_wrong_case_gets_the_code_format(tool: SqlQueryTool) -> None:
    assert result(tool, "SELECT title FROM tickets WHERE priority = 'p1'")["note"] == (
        "0 rows: no row matched WHERE priority = 'p1'.\n"
        "priority holds text such as 'P1', 'P2'; = needs the exact text. To find part of it "
        "in any case, try: SELECT title FROM tickets WHERE priority LIKE '%p1%'"
    )


def test_text_dates_compared_with_equals_get_the_month_forms(tool: SqlQueryTool) -> None:
    sql = "SELECT COUNT(*) AS n FROM tickets WHERE opened = '2026-03-01' AND opened = '2026-03-31'"
    output = result(tool, sql)
    assert output["rows"] == [{"n": 0}]
    assert output["note"] == (
        "COUNT(*) is 0: no row matched WHERE opened = '2026-03-01' AND opened = '2026-03-31'.\n"
        "opened holds dates as text such as '2026-02-27', so = matches one day only; for a "
        "month write opened LIKE '2026-03-%' or opened BETWEEN '2026-03-01' AND '2026-03-31'."
    )


def test_a_month_written_alone_keeps_its_month(tool: SqlQueryTool) -> None:
    output = result(tool, "SELECT title FROM tickets t WHERE t.opened = '2026-03'")
    assert output["note"] == (
        "0 rows: no row matched WHERE t.opened = '2026-03'.\n"
        "opened holds dates as text such as '2026-02-27', so = matches one day only; for a "
        "month write opened LIKE '2026-03-%' or opened BETWEEN '2026-03-01' AND '2026-03-31'."
    )


def test_text_date_times_compared_with_a_day_get_the_day_form(tool: SqlQueryTool) -> None:
    output = result(tool, "SELECT title FROM tickets WHERE closed_at = '2026-03-02'")
    assert output["note"] == (
        "0 rows: no row matched WHERE closed_at = '2026-03-02'.\n"
        "closed_at holds dates and times as text such as '2026-02-28 09:15:00', so = needs "
        "the exact time. For the whole day, try: SELECT title FROM tickets WHERE closed_at "
        "LIKE '2026-03-02%'"
    )


def test_a_private_column_is_described_without_its_values(tool: SqlQueryTool) -> None:
    output = result(tool, "SELECT id FROM employees WHERE email = 'zoe@example.com'")
    assert output["note"] == (
        "0 rows: no row matched WHERE email = 'zoe@example.com'.\n"
        "email is text; = needs the exact text. To find part of it in any case, try: SELECT "
        "id FROM employees WHERE email LIKE '%zoe@example.com%'"
    )
    assert "example.com'" not in str(output["note"]).replace("zoe@example.com", "")


@pytest.mark.parametrize(
    ("sql", "note"),
    [
        (
            "SELECT name FROM employees WHERE salary > 10000",
            "0 rows: no row matched WHERE salary > 10000.",
        ),
        (
            "SELECT dept_id, COUNT(*) FROM employees GROUP BY dept_id HAVING COUNT(*) > 5",
            "0 rows: no group matched HAVING COUNT(*) > 5.",
        ),
        (
            "SELECT e.name FROM employees e JOIN departments d ON d.id = e.dept_id AND d.id = 9",
            "0 rows: the query matched no row.",
        ),
        (
            "SELECT id FROM employees WHERE id > 9 UNION SELECT id FROM tickets WHERE id > 9",
            "0 rows: the query matched no row.",
        ),
        (
            "SELECT COUNT(1) FROM employees WHERE hired > '2030'",
            "COUNT(1) is 0: no row matched WHERE hired > '2030'.",
        ),
    ],
)
def test_an_empty_result_says_so_with_what_matched_nothing(
    tool: SqlQueryTool, sql: str, note: str
) -> None:
    assert result(tool, sql)["note"] == note


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name FROM employees WHERE name = 'Ann Lee'",
        "SELECT COUNT(*) FROM employees WHERE dept_id = 1",
        "SELECT COUNT(*) FROM employees GROUP BY dept_id",
        "SELECT SUM(salary) FROM employees WHERE salary > 99999",
        "SELECT 'a' || name FROM employees",
    ],
)
def test_a_result_with_rows_has_no_note(tool: SqlQueryTool, sql: str) -> None:
    assert "note" not in result(tool, sql)


def test_the_repeated_filter_is_bounded(tool: SqlQueryTool) -> None:
    values = ", ".join(f"'{i}'" for i in range(2000))
    output = result(tool, f"SELECT id FROM employees WHERE name IN ({values})")
    note = str(output["note"])
    assert note.startswith("0 rows: no row matched WHERE name IN ('0', '1', ")
    assert len(note) <= MAX_FILTER_CHARS + len("0 rows: no row matched .")
    assert note.endswith("....")


def test_a_long_compared_text_gets_no_like_hint(tool: SqlQueryTool) -> None:
    output = result(tool, f"SELECT id FROM employees WHERE name = '{'x' * 500}'")
    assert str(output["note"]).count("\n") == 0


def test_a_long_query_shows_only_the_like_predicate(tool: SqlQueryTool) -> None:
    ids = ", ".join(str(i) for i in range(200))
    output = result(tool, f"SELECT id FROM employees WHERE name = 'Zoe' AND id IN ({ids})")
    assert str(output["note"]).endswith("To find part of it in any case, try: name LIKE '%Zoe%'")


def test_without_the_schema_in_the_description_the_text_hint_has_no_examples(
    office: Path,
) -> None:
    tool = SqlQueryTool(f"sqlite:///{office}", include_schema=False, handle_tool_error=False)
    assert result(tool, "SELECT id FROM employees WHERE name = 'zoe'")["note"] == (
        "0 rows: no row matched WHERE name = 'zoe'.\n"
        "name is text; = needs the exact text. To find part of it in any case, try: SELECT "
        "id FROM employees WHERE name LIKE '%zoe%'"
    )


# --- PostgreSQL ------------------------------------------------------------------------------

PG_OFFICE = """
CREATE TABLE departments (id INT PRIMARY KEY, name TEXT NOT NULL, manager_id INT);
CREATE TABLE employees (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, phone TEXT,
                        dept_id INT REFERENCES departments (id), hired TEXT, salary NUMERIC);
INSERT INTO departments VALUES (1, 'Sales', 2), (2, 'Research', 1);
INSERT INTO employees VALUES (1, 'Ann Lee', '+33 6 12 34 56 78', 2, '2021-04-12', 5200),
    (2, 'Bo Chen', '044 668 18 00', 1, '2019-09-01', 6100);
"""


@pytest.fixture
def pg_office() -> Iterator[str]:
    """A SQLAlchemy URL whose search_path is a fresh schema holding the office tables."""
    import psycopg

    url = os.environ["POSTGRES_URL"]
    schema = f"sql_hints_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
        connection.execute(f"SET search_path = {schema}")
        connection.execute(PG_OFFICE)
    yield f"{sqlalchemy_url(url)}?options=-csearch_path%3D{schema}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.postgres
def test_postgres_description_has_examples_and_foreign_keys(pg_office: str) -> None:
    tool = SqlQueryTool(pg_office)
    assert tool.description.endswith(
        " Tables and their columns [with example values]: departments(id, name, manager_id); "
        "employees(id, name, phone, dept_id, hired ['2019-09-01', '2021-04-12'], salary). "
        "Foreign keys: employees.dept_id -> departments.id."
    )


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "SELECT 240 * 0.15 FROM dual d",
            'The database rejected the query: relation "dual" does not exist\n'
            "PostgreSQL has no dual table; a SELECT of an expression needs no FROM, as in: "
            "SELECT 240 * 0.15",
        ),
        (
            "SELECT * FROM employee",
            'The database rejected the query: relation "employee" does not exist\n'
            "Did you mean employees?\n"
            "The tables are: departments(id, name, manager_id); employees(id, name, phone, "
            "dept_id, hired, salary).",
        ),
        (
            "SELECT e.nme FROM employees e",
            "The database rejected the query: column e.nme does not exist\n"
            "Did you mean name?\n"
            "Columns of the query's tables: employees(id, name, phone, dept_id, hired, salary).",
        ),
        (
            "SELECT name FROM employees WHERE manager_id = 1",
            'The database rejected the query: column "manager_id" does not exist\n'
            "manager_id is a column of departments, which the query does not read; join it.\n"
            "Columns of the query's tables: employees(id, name, phone, dept_id, hired, salary).",
        ),
        (
            "SELECT name FROM employees e JOIN departments d ON d.id = e.dept_id",
            'The database rejected the query: column reference "name" is ambiguous\n'
            "name is a column of more than one table of the query; write it with its table: "
            "e.name or d.name.",
        ),
        (
            'SELECT salary FROM employees WHERE name = "Zoe Park"',
            'The database rejected the query: column "Zoe Park" does not exist\n'
            'PostgreSQL reads "Zoe Park" as a column name; write text in single quotes, as '
            "in: 'Zoe Park'",
        ),
        (
            "SELECT name FROM employees WHERE hired < CURDATE()",
            "The database rejected the query: function curdate() does not exist\n"
            "PostgreSQL has no CURDATE(); use CURRENT_DATE for today's date or now() for the "
            "date and time.",
        ),
        (
            "SELECT name + ' (' + hired + ')' FROM employees",
            "The database rejected the query: operator does not exist: character varying + "
            "unknown\n"
            "PostgreSQL joins text with ||, not +, as in: name || ' (' || hired || ')'",
        ),
    ],
)
def test_postgres_errors_name_what_exists_and_what_to_write(
    pg_office: str, sql: str, message: str
) -> None:
    tool = SqlQueryTool(pg_office, handle_tool_error=False)
    assert failure(tool, sql) == message


@pytest.mark.postgres
def test_postgres_runs_select_from_dual_without_from_and_names_bare_ids(pg_office: str) -> None:
    tool = SqlQueryTool(pg_office, handle_tool_error=False)
    assert result(tool, "SELECT 240 * 0.15 AS tip FROM dual")["rows"] == [{"tip": "36.00"}]
    note = result(tool, "SELECT dept_id FROM employees WHERE name = 'Ann Lee'")["note"]
    assert (
        str(note).splitlines()[-1] == "dept_id 2 is the departments row whose name is 'Research'."
    )


@pytest.mark.postgres
def test_postgres_empty_result_suggests_ilike(pg_office: str) -> None:
    tool = SqlQueryTool(pg_office, handle_tool_error=False)
    assert result(tool, "SELECT salary FROM employees WHERE name = 'ann lee'")["note"] == (
        "0 rows: no row matched WHERE name = 'ann lee'.\n"
        "name is text; = needs the exact text. To find part of it in any case, try: SELECT "
        "salary FROM employees WHERE name ILIKE '%ann lee%'"
    )


@pytest.mark.postgres
def test_postgres_autocommit_engine_is_never_sampled(pg_office: str) -> None:
    engine = create_engine(pg_office, isolation_level="AUTOCOMMIT")
    tool = SqlQueryTool(engine)
    assert tool.description.endswith(
        " Tables and their columns: departments(id, name, manager_id); employees(id, name, "
        "phone, dept_id, hired, salary). Foreign keys: employees.dept_id -> departments.id."
    )
    engine.dispose()


def _keyed_database(tmp_path: Path) -> str:
    path = tmp_path / "keys.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            """
            CREATE TABLE agents (id INTEGER PRIMARY KEY, name TEXT,
                                 manager_id INTEGER REFERENCES agents(id));
            CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT,
                                      manager_id INTEGER REFERENCES agents(id));
            INSERT INTO agents VALUES (1, 'Ann', NULL), (2, 'Bob', 1);
            INSERT INTO departments VALUES (1, 'Research', 1);
            """
        )
    return f"sqlite:///{path}"


@pytest.mark.parametrize(
    ("query", "note"),
    [
        (
            "SELECT manager_id FROM departments WHERE name = 'Research'",
            "manager_id holds ids of agents rows: to show who or what they are, join agents "
            "ON departments.manager_id = agents.id.\n"
            "manager_id 1 is the agents row whose name is 'Ann'.",
        ),
        (
            "SELECT manager_id FROM agents WHERE name = 'Bob'",
            "manager_id holds ids of other agents rows: to show who or what they are, join "
            "agents a second time under another name ON agents.manager_id = agents.id.\n"
            "manager_id 1 is the agents row whose name is 'Ann'.",
        ),
        ("SELECT m.name FROM agents a JOIN agents m ON a.manager_id = m.id", None),
        (
            "SELECT d.manager_id, a.name FROM departments d JOIN agents a ON d.manager_id = a.id",
            None,
        ),
    ],
)
def test_a_bare_key_column_says_which_rows_it_refers_to(
    tmp_path: Path, query: str, note: str | None
) -> None:
    tool = SqlQueryTool(_keyed_database(tmp_path))
    assert json.loads(tool.invoke({"sql": query})).get("note") == note


def _looked_up_database(tmp_path: Path, agents: int) -> tuple[SqlQueryTool, Path]:
    path = tmp_path / "lookups.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            """
            CREATE TABLE agents (id INTEGER PRIMARY KEY, name TEXT, email TEXT);
            CREATE TABLE tickets (id INTEGER PRIMARY KEY, agent_id INTEGER REFERENCES agents(id),
                                  reporter TEXT REFERENCES people(email));
            CREATE TABLE people (email TEXT PRIMARY KEY, phone TEXT);
            """
        )
        connection.executemany(
            "INSERT INTO agents VALUES (?, ?, ?)",
            [(n, f"Agent Nr {n}", f"a{n}@example.com") for n in range(1, agents + 1)]
            + [(99, "call +41 44 668 18 00", "x@example.com")],
        )
        connection.executemany(
            "INSERT INTO tickets VALUES (?, ?, ?)",
            [(n, n, "x@example.com") for n in range(1, agents + 1)] + [(99, None, None)],
        )
    return SqlQueryTool(f"sqlite:///{path}", handle_tool_error=False), path


def test_the_names_of_several_ids_follow_the_order_of_the_rows(tmp_path: Path) -> None:
    tool, _path = _looked_up_database(tmp_path, agents=6)
    sql = "SELECT agent_id FROM tickets WHERE agent_id IN (3, 1, 2) ORDER BY agent_id DESC"
    assert str(result(tool, sql)["note"]).splitlines()[1] == (
        "agent_id values are agents rows whose name is: 3 'Agent Nr 3', 2 'Agent Nr 2', "
        "1 'Agent Nr 1'."
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT agent_id FROM tickets WHERE agent_id <= 6",  # more ids than are looked up
        "SELECT agent_id FROM tickets WHERE id = 99",  # NULL refers to no row
        "SELECT agent_id FROM tickets WHERE agent_id = 99",  # a name a detector would catch
        "SELECT reporter FROM tickets WHERE id = 1",  # people have no column that names them
        "SELECT * FROM tickets WHERE id = 1",
    ],
)
def test_ids_are_not_named_when_they_cannot_be_named_safely(tmp_path: Path, sql: str) -> None:
    tool, path = _looked_up_database(tmp_path, agents=6)
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("INSERT INTO tickets VALUES (100, 99, NULL)")
    connection.close()
    note = result(tool, sql).get("note")
    assert note is None or "whose name is" not in str(note)
    assert "+41" not in json.dumps(result(tool, sql))


def test_a_failing_lookup_leaves_the_rows_as_they_were(tmp_path: Path) -> None:
    tool, path = _looked_up_database(tmp_path, agents=2)
    connection = sqlite3.connect(path)
    with connection:  # the table the key refers to is gone after the tool was built
        connection.executescript(
            "PRAGMA foreign_keys = OFF; ALTER TABLE agents RENAME TO former_agents;"
        )
    connection.close()
    output = result(tool, "SELECT agent_id FROM tickets WHERE id = 1")
    assert output["rows"] == [{"agent_id": 1}]
    assert "whose name is" not in str(output["note"])


# --- NOT IN with NULLs, and text that another column holds ---------------------------------

DESK = """
CREATE TABLE departments (id INTEGER PRIMARY KEY, code TEXT NOT NULL, name TEXT NOT NULL,
                          contact TEXT);
CREATE TABLE agents (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                     department_id INTEGER NOT NULL REFERENCES departments (id));
CREATE TABLE tickets (id INTEGER PRIMARY KEY, agent_id INTEGER REFERENCES agents (id),
                      department_id INTEGER NOT NULL REFERENCES departments (id));
CREATE TABLE log (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL);
INSERT INTO departments VALUES (1, 'NET', 'Network', 'net@example.com'),
                               (2, 'SEC', 'Security', 'sec@example.com');
INSERT INTO agents VALUES (1, 'Ann', 1), (2, 'Bo', 2), (3, 'Cy', 2);
INSERT INTO tickets VALUES (1, 1, 1), (2, NULL, 2), (3, 2, 2);
"""


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> SqlQueryTool:
    path = make_database(tmp_path_factory.mktemp("desk") / "desk.db", DESK)
    connection = sqlite3.connect(path)
    with connection:  # a table too big to be read whole when the tool is built
        connection.executemany(
            "INSERT INTO log (kind, source) VALUES (?, ?)",
            [("login", f"host {n % 7}") for n in range(150)] + [("Audit", "Security")],
        )
    connection.close()
    return SqlQueryTool(f"sqlite:///{path}", handle_tool_error=False)


def test_not_in_over_a_column_that_can_be_null_says_how_to_leave_nulls_out(
    desk: SqlQueryTool,
) -> None:
    sql = "SELECT name FROM agents WHERE id NOT IN (SELECT agent_id FROM tickets)"
    output = result(desk, sql)
    assert output["rows"] == []
    assert output["note"] == (
        "0 rows: no row matched WHERE NOT id IN (SELECT agent_id FROM tickets).\n"
        "NOT IN matches no row when its list holds a NULL, and tickets.agent_id can be NULL; "
        "leave the NULLs out, as in: SELECT name FROM agents WHERE NOT id IN "
        "(SELECT agent_id FROM tickets WHERE NOT agent_id IS NULL)\n"
        'Without the NULLs, that query returns 1 row: [{"name":"Cy"}]'
    )
    rewritten = str(output["note"]).splitlines()[1].rsplit("as in: ", 1)[1]
    assert result(desk, rewritten)["rows"] == [{"name": "Cy"}]


def test_a_zero_count_with_not_in_gets_the_hint_and_the_count_without_nulls(
    desk: SqlQueryTool,
) -> None:
    sql = (
        "SELECT COUNT(*) AS n FROM agents a WHERE a.id NOT IN "
        "(SELECT t.agent_id FROM tickets t WHERE t.department_id = 2)"
    )
    note = str(result(desk, sql)["note"]).splitlines()
    assert note[1].startswith("NOT IN matches no row when its list holds a NULL")
    assert note[1].endswith("WHERE t.department_id = 2 AND NOT t.agent_id IS NULL)")
    assert note[2:] == ['Without the NULLs, that query returns 1 row: [{"n":2}]']


def test_not_in_that_finds_nothing_without_nulls_either_says_so(desk: SqlQueryTool) -> None:
    sql = "SELECT name FROM agents WHERE id NOT IN (SELECT agent_id FROM tickets) AND id > 3"
    assert str(result(desk, sql)["note"]).splitlines()[-1] == (
        "Without the NULLs, that query returns no row either: []"
    )


def test_the_rows_found_without_nulls_are_bounded(tmp_path: Path) -> None:
    database = make_database(
        tmp_path / "wide.db",
        "CREATE TABLE a (id INTEGER PRIMARY KEY, note TEXT); CREATE TABLE b (a_id INTEGER);"
        "INSERT INTO b VALUES (NULL);",
    )
    connection = sqlite3.connect(database)
    with connection:
        connection.executemany(
            "INSERT INTO a (note) VALUES (?)", [(f"note {n} " + "x" * 80,) for n in range(40)]
        )
    connection.close()
    tool = SqlQueryTool(f"sqlite:///{database}", handle_tool_error=False)
    line = str(result(tool, "SELECT * FROM a WHERE id NOT IN (SELECT a_id FROM b)")["note"])
    last = line.splitlines()[-1]
    assert last.startswith("Without the NULLs, that query returns more rows than shown here")
    shown = json.loads(last.split(": ", 1)[1])
    assert 1 <= len(shown) < 10
    assert shown[0] == {"id": 1, "note": "note 0 " + "x" * 80}
    assert len(last) < 800


def test_not_in_over_a_column_that_cannot_be_null_gets_no_null_hint(desk: SqlQueryTool) -> None:
    sql = "SELECT code FROM departments WHERE id NOT IN (SELECT department_id FROM agents)"
    assert result(desk, sql)["note"] == (
        "0 rows: no row matched WHERE NOT id IN (SELECT department_id FROM agents)."
    )


@pytest.mark.parametrize(
    ("sql", "hint"),
    [
        (
            "SELECT a.name FROM agents a JOIN departments d ON d.id = a.department_id "
            "WHERE d.code = 'SECURITY'",
            "code holds no 'SECURITY', but name holds 'Security'; try: SELECT a.name FROM "
            "agents AS a JOIN departments AS d ON d.id = a.department_id WHERE d.name = "
            "'Security'",
        ),
        (
            "SELECT id FROM departments WHERE name = 'sec'",
            "name holds no 'sec', but code holds 'SEC'; try: SELECT id FROM departments "
            "WHERE code = 'SEC'",
        ),
    ],
)
def test_text_another_column_of_a_small_table_holds_is_named_with_the_query(
    desk: SqlQueryTool, sql: str, hint: str
) -> None:
    note = str(result(desk, sql)["note"]).splitlines()
    assert note[1] == hint
    rewritten = hint.rsplit("try: ", 1)[1]
    assert result(desk, rewritten)["row_count"] == (2 if "a.name" in rewritten else 1)


def test_text_in_the_wrong_case_of_its_own_column_gets_the_like_hint(desk: SqlQueryTool) -> None:
    note = str(result(desk, "SELECT id FROM departments WHERE code = 'sec'")["note"])
    assert note.splitlines()[1] == (
        "code is text; = needs the exact text. To find part of it in any case, try: "
        "SELECT id FROM departments WHERE code LIKE '%sec%'"
    )


def test_values_of_a_table_too_big_to_read_whole_are_not_searched(desk: SqlQueryTool) -> None:
    note = str(result(desk, "SELECT id FROM log WHERE kind = 'security'")["note"])
    assert "source" not in note
    assert "LIKE '%security%'" in note


def test_a_value_a_forbid_check_would_catch_is_never_named_or_described(
    desk: SqlQueryTool,
) -> None:
    note = str(result(desk, "SELECT id FROM departments WHERE name = 'sec@example.com'")["note"])
    assert "contact" not in note
    assert "example.com" not in desk.description
    assert "Security" not in desk.description
