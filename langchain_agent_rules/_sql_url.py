"""One place that reads database URLs for both SQL-backed parts (rule store and sql_query)."""

from __future__ import annotations

from sqlalchemy import URL, make_url
from sqlalchemy.exc import ArgumentError

__all__ = ["database_url"]


def database_url(url: str) -> URL:
    """Parse a SQLAlchemy URL, pointing a plain ``postgresql://`` at psycopg 3.

    SQLAlchemy before 2.1 reads ``postgresql://`` as psycopg2, which the ``postgres``
    extra does not install. Raises SQLAlchemy's ``ArgumentError`` for a malformed URL.
    """
    try:
        parsed = make_url(url)
    except ValueError as error:  # a port that is not a number
        raise ArgumentError(f"invalid port: {error}") from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed
