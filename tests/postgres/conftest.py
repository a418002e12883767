"""PostgreSQL fixtures: each test works in its own schema of the database at POSTGRES_URL."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from .rule_writer import engine_for


@pytest.fixture
def postgres_url() -> str:
    """The server's URL; the `postgres` marker has already skipped the test when it is unset."""
    return os.environ["POSTGRES_URL"]


@pytest.fixture
def pg_schema(postgres_url: str) -> Iterator[str]:
    """A fresh schema, dropped with everything in it after the test."""
    import psycopg

    name = f"test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {name}")
    yield name
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA {name} CASCADE")


@pytest.fixture
def pg_engine(postgres_url: str, pg_schema: str) -> Iterator[Engine]:
    """A SQLAlchemy engine whose unqualified tables live in ``pg_schema``."""
    engine = engine_for(postgres_url, pg_schema)
    yield engine
    engine.dispose()


@pytest.fixture
def pg_search_path_url(postgres_url: str, pg_schema: str) -> str:
    """POSTGRES_URL with ``search_path`` set to ``pg_schema``, for code that takes a plain URL."""
    separator = "&" if "?" in postgres_url else "?"
    return f"{postgres_url}{separator}options=-csearch_path%3D{pg_schema}"
