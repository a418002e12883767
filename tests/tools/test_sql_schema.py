"""What SqlQueryTool reads from its database when it is built: the tables, or a refusal."""

from __future__ import annotations

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
