"""What SqlQueryTool reads from its database when it is built: the tables, or a refusal."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from langchain_agent_rules.errors import ToolConfigurationError
from langchain_agent_rules.tools.sql_query import (
    MISSING_DATABASE_FILE,
    SQL_QUERY_DESCRIPTION,
    SqlQueryTool,
)

BASE = SQL_QUERY_DESCRIPTION.format(dialect="SQLite", max_rows=50)


def make_database(path: Path, script: str) -> Path:
    connection = sqlite3.connect(path)
    with connection:
        connection.executescript(script)
    connection.close()
    return path


def test_a_missing_sqlite_file_is_refused_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    with pytest.raises(ToolConfigurationError) as caught:
        SqlQueryTool(f"sqlite:///{missing}")
    assert str(caught.value) == MISSING_DATABASE_FILE.format(path=str(missing), cwd=os.getcwd())
    assert str(caught.value) == (
        f"The SQLite database file {str(missing)!r} does not exist; sql_query never creates "
        f"one. Check the path (a relative one starts from {os.getcwd()!r})."
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("include_schema", [True, False])
def test_an_engine_on_a_missing_file_is_refused_too(tmp_path: Path, include_schema: bool) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'missing.db'}")
    with pytest.raises(ToolConfigurationError, match="does not exist"):
        SqlQueryTool(engine, include_schema=include_schema)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_file_uri_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ToolConfigurationError, match="does not exist"):
        SqlQueryTool(f"sqlite:///file:{tmp_path / 'missing.db'}?mode=rwc&uri=true")
    assert list(tmp_path.iterdir()) == []


def test_a_file_uri_of_an_existing_database_is_read(tmp_path: Path) -> None:
    database = make_database(tmp_path / "shop.db", "CREATE TABLE t (x INTEGER);")
    tool = SqlQueryTool(f"sqlite:///file:{database}?mode=ro&uri=true")
    assert tool.description == BASE + " Tables and their columns: t(x)."


@pytest.mark.parametrize("include_schema", [True, False])
def test_a_database_without_tables_is_refused(tmp_path: Path, include_schema: bool) -> None:
    empty = make_database(tmp_path / "empty.db", "")
    with pytest.raises(ToolConfigurationError) as caught:
        SqlQueryTool(f"sqlite:///{empty}", include_schema=include_schema)
    assert str(caught.value) == (
        f"The database sqlite:///{empty} has no tables or views in its default schema to "
        "query; give a database with at least one table or view."
    )


def test_an_in_memory_database_has_no_tables_and_is_refused() -> None:
    with pytest.raises(ToolConfigurationError, match="has no tables or views"):
        SqlQueryTool("sqlite://")


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("not a database, just text " * 100)
    with pytest.raises(ToolConfigurationError) as caught:
        SqlQueryTool(f"sqlite:///{text}")
    assert str(caught.value) == (
        f"sql_query could not read the tables of sqlite:///{text}: (sqlite3.DatabaseError) "
        "file is not a database; give the URL of a database it can connect to and read."
    )


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        ("shop.db", "Could not parse SQLAlchemy URL from given URL string"),
        ("nosuchdb://x", "Can't load plugin: sqlalchemy.dialects:nosuchdb"),
    ],
)
def test_a_string_that_is_no_database_url_is_refused_naming_the_forms(
    url: str, detail: str
) -> None:
    with pytest.raises(ToolConfigurationError) as caught:
        SqlQueryTool(url)
    assert str(caught.value) == (
        "engine_or_url must be a SQLAlchemy Engine or a database URL such as "
        f"'sqlite:///shop.db' or 'postgresql://user:password@host/db'; {detail}."
    )


def test_views_are_listed_and_names_needing_quotes_are_quoted(tmp_path: Path) -> None:
    database = make_database(
        tmp_path / "shop.db",
        """
        CREATE TABLE "order" (id INTEGER, "unit price" REAL);
        CREATE TABLE items (id INTEGER);
        CREATE VIEW big_orders AS SELECT id FROM "order" WHERE "unit price" > 10;
        """,
    )
    tool = SqlQueryTool(f"sqlite:///{database}")
    assert tool.description == BASE + (
        ' Tables and their columns: big_orders(id); items(id); "order"(id, "unit price").'
    )


def _wide_database(tmp_path: Path, tables: int) -> Path:
    script = "".join(
        f"CREATE TABLE table_{i:02d} ({', '.join(f'column_{j:02d} TEXT' for j in range(20))});"
        for i in range(tables)
    )
    return make_database(tmp_path / "wide.db", script)


def test_past_max_schema_bytes_only_table_names_are_listed(tmp_path: Path) -> None:
    database = _wide_database(tmp_path, 20)  # ~4.7 KB of columns, over the 4096 default
    tool = SqlQueryTool(f"sqlite:///{database}")
    names = ", ".join(f"table_{i:02d}" for i in range(20))
    assert tool.description == BASE + (
        " Tables (columns left out to keep this short; SELECT * FROM <table> LIMIT 0 shows a "
        f"table's columns): {names}."
    )


def test_max_schema_bytes_caps_the_names_too(tmp_path: Path) -> None:
    database = _wide_database(tmp_path, 20)
    tool = SqlQueryTool(f"sqlite:///{database}", max_schema_bytes=150)
    schema = tool.description.removeprefix(BASE)
    assert len(schema.encode()) <= 150
    assert schema == (
        " Tables (columns left out to keep this short; SELECT * FROM <table> LIMIT 0 shows a "
        "table's columns): table_00, table_01, table_02, and 17 more."
    )


def test_a_tiny_max_schema_bytes_still_gives_the_count(tmp_path: Path) -> None:
    database = _wide_database(tmp_path, 3)
    tool = SqlQueryTool(f"sqlite:///{database}", max_schema_bytes=1)
    assert tool.description.endswith("a table's columns): 3 tables.")


def test_a_schema_within_the_limit_is_listed_whole(tmp_path: Path) -> None:
    database = _wide_database(tmp_path, 1)
    full = SqlQueryTool(f"sqlite:///{database}").description.removeprefix(BASE)
    exact = SqlQueryTool(f"sqlite:///{database}", max_schema_bytes=len(full.encode()))
    assert exact.description == BASE + full
    assert full.startswith(" Tables and their columns: table_00(column_00, column_01,")


def test_max_schema_bytes_must_be_positive(tmp_path: Path) -> None:
    database = _wide_database(tmp_path, 1)
    with pytest.raises(ToolConfigurationError, match="max_schema_bytes must be at least 1; got 0"):
        SqlQueryTool(f"sqlite:///{database}", max_schema_bytes=0)


@pytest.fixture
def pg_schema_url() -> Iterator[tuple[str, str]]:
    """A SQLAlchemy URL whose search_path is a fresh, empty schema, and the schema's name."""
    import psycopg

    url = os.environ["POSTGRES_URL"]
    schema = f"sql_schema_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in url else "?"
    yield f"{url}{separator}options=-csearch_path%3D{schema}", schema
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.postgres
def test_postgres_schema_without_tables_is_refused(pg_schema_url: tuple[str, str]) -> None:
    url, _schema = pg_schema_url
    with pytest.raises(ToolConfigurationError, match="has no tables or views in its default"):
        SqlQueryTool(url)


@pytest.mark.postgres
def test_postgres_tables_and_views_are_listed_quoted_where_needed(
    pg_schema_url: tuple[str, str],
) -> None:
    import psycopg

    url, schema = pg_schema_url
    with psycopg.connect(os.environ["POSTGRES_URL"], autocommit=True) as connection:
        connection.execute(f'CREATE TABLE {schema}."Orders" (id INT, "Unit Price" NUMERIC)')
        connection.execute(f"CREATE VIEW {schema}.totals AS SELECT 1 AS total")
    tool = SqlQueryTool(url)
    assert tool.description.endswith(
        ' Tables and their columns: "Orders"(id, "Unit Price"); totals(total).'
    )


# --- example values and foreign keys -------------------------------------------------------

PRIVATE_VALUES = [
    "ann.lee@example.com",  # e-mail
    "+33 6 12 34 56 78",  # phone, international
    "06 12 34 56 78",  # phone, national
    "(415) 555-0132",  # phone, North American
    "4111 1111 1111 1111",  # card (Luhn)
    "DE89370400440532013000",  # IBAN
    "192.168.10.7",  # IPv4
    "2001:db8::1",  # IPv6
    "sk-proj-abcdefghijklmnopqrstuvwx",  # API key
    "ghp_" + "a" * 36,  # GitHub token
]


def _shop(tmp_path: Path, extra: str = "") -> Path:
    return make_database(
        tmp_path / "shop.db",
        f"""
        CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, code TEXT, status TEXT,
                                note TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (id),
                             placed TEXT, total REAL);
        INSERT INTO customers VALUES (1, 'Zoe Park', 'C-17', 'active', 'pays late'),
            (2, 'Ann Lee', 'C-03', 'active', NULL), (3, 'O''Brien', 'C-03', 'closed', 'a line
        and another'), (4, 'Bo Chen', 'C-99', 'active', '{"x" * 40}');
        INSERT INTO orders VALUES (1, 1, '2026-03-02', 10.5), (2, 2, '2026-01-15', 3.0);
        {extra}
        """,
    )


def test_formats_and_categories_show_sorted_examples_and_foreign_keys_are_listed(
    tmp_path: Path,
) -> None:
    # Names and notes are free text (no digits, no repeats): no format to show.
    tool = SqlQueryTool(f"sqlite:///{_shop(tmp_path)}")
    assert tool.description == BASE + (
        " Tables and their columns [with example values]: customers(id, name, code ['C-03', "
        "'C-17'], status ['active', 'closed'], note); orders(id, customer_id, placed "
        "['2026-01-15', '2026-03-02'], total). Foreign keys: orders.customer_id -> "
        "customers.id."
    )


def test_example_values_sets_how_many_per_column(tmp_path: Path) -> None:
    database = _shop(tmp_path)
    one = SqlQueryTool(f"sqlite:///{database}", example_values=1).description
    assert one.endswith(
        "customers(id, name, code ['C-03'], status ['active'], note); orders(id, customer_id, "
        "placed ['2026-01-15'], total). Foreign keys: orders.customer_id -> customers.id."
    )
    none = SqlQueryTool(f"sqlite:///{database}", example_values=0).description
    assert none == BASE + (
        " Tables and their columns: customers(id, name, code, status, note); orders(id, "
        "customer_id, placed, total). Foreign keys: orders.customer_id -> customers.id."
    )


def test_example_values_must_not_be_negative(tmp_path: Path) -> None:
    with pytest.raises(ToolConfigurationError, match="example_values must be 0 or more; got -1"):
        SqlQueryTool(f"sqlite:///{_shop(tmp_path)}", example_values=-1)


def test_detail_is_dropped_examples_first_then_foreign_keys_then_columns(tmp_path: Path) -> None:
    database = _shop(tmp_path)
    full = SqlQueryTool(f"sqlite:///{database}").description.removeprefix(BASE)
    sizes = [len(full.encode()) - 1, 200, 140, 60]
    shown = [
        SqlQueryTool(f"sqlite:///{database}", max_schema_bytes=size).description.removeprefix(BASE)
        for size in sizes
    ]
    assert shown[0] == (
        " Tables and their columns [with example values]: customers(id, name, code ['C-03'], "
        "status ['active'], note); orders(id, customer_id, placed ['2026-01-15'], total). "
        "Foreign keys: orders.customer_id -> customers.id."
    )
    assert shown[1] == (
        " Tables and their columns: customers(id, name, code, status, note); orders(id, "
        "customer_id, placed, total). Foreign keys: orders.customer_id -> customers.id."
    )
    assert shown[2] == (
        " Tables and their columns: customers(id, name, code, status, note); orders(id, "
        "customer_id, placed, total)."
    )
    assert all(len(text.encode()) <= size for text, size in zip(shown, sizes[:3], strict=False))
    # Shorter than the names-only note itself: only the count is left (as before examples).
    assert shown[3].endswith("a table's columns): 2 tables.")


@pytest.mark.parametrize("value", PRIVATE_VALUES)
def test_a_value_a_forbid_check_would_redact_is_never_an_example(
    tmp_path: Path, value: str
) -> None:
    database = make_database(
        tmp_path / "people.db",
        f"""
        CREATE TABLE people (id INTEGER PRIMARY KEY, label TEXT);
        INSERT INTO people VALUES (1, '{value}'), (2, 'plain text'), (3, '{value}'),
            (4, 'plain text');
        """,
    )
    description = SqlQueryTool(f"sqlite:///{database}").description
    assert value not in description
    assert description.endswith("people(id, label ['plain text']).")


@pytest.mark.parametrize(
    "column", ["email", "contact_email", "phone", "mobileNumber", "password", "api_key",
               "token", "client_secret", "card_number", "iban", "ip", "ssn"]
)  # fmt: skip
def test_a_column_named_for_private_data_is_never_sampled(tmp_path: Path, column: str) -> None:
    database = make_database(
        tmp_path / "people.db",
        f"""
        CREATE TABLE people (id INTEGER PRIMARY KEY, {column} TEXT);
        INSERT INTO people VALUES (1, 'harmless 1'), (2, 'harmless 2');
        """,
    )
    description = SqlQueryTool(f"sqlite:///{database}").description
    assert description.startswith(BASE + " Tables and their columns: people(id, ")
    assert "harmless" not in description


def test_only_the_first_rows_in_key_order_are_sampled(tmp_path: Path) -> None:
    database = make_database(
        tmp_path / "many.db",
        """
        CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
        INSERT INTO events SELECT 1001 - i, CASE WHEN i = 1 THEN 'aaa-last' ELSE 'mmm' END
        FROM n;
        """,
    )
    # 'aaa-last' sorts first but has the highest id: outside the first 100 rows by id.
    assert SqlQueryTool(f"sqlite:///{database}").description.endswith("events(id, kind ['mmm']).")


def test_views_are_not_sampled(tmp_path: Path) -> None:
    database = _shop(tmp_path, "CREATE VIEW codes AS SELECT code FROM customers;")
    description = SqlQueryTool(f"sqlite:///{database}").description
    assert "codes(code); customers(id, name, code ['C-03', 'C-17']," in description


def test_sampling_reads_only_and_leaves_the_connection_writable(tmp_path: Path) -> None:
    database = _shop(tmp_path)
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    engine = create_engine(f"sqlite:///{database}")
    SqlQueryTool(engine)
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA query_only").scalar() == 0


def test_no_examples_when_even_the_columns_do_not_fit(tmp_path: Path) -> None:
    database = _wide_database(tmp_path, 20)
    make_database(database, "INSERT INTO table_00 (column_00) VALUES ('v1'), ('v2');")
    assert "'v1'" not in SqlQueryTool(f"sqlite:///{database}").description
    assert "'v1'" in SqlQueryTool(f"sqlite:///{database}", max_schema_bytes=8192).description
