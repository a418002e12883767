"""One place that reads database URLs for both SQL-backed parts (rule store and sql_query)."""

from __future__ import annotations

import re

from sqlalchemy import URL, make_url
from sqlalchemy.exc import ArgumentError

__all__ = [
    "POSTGRES_CONNECT_TIMEOUT_SECONDS",
    "URL_SCHEME",
    "database_url",
    "lacks_connect_timeout",
    "with_connect_timeout",
]

URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
"""The ``scheme://`` a database URL starts with (group 1: the scheme)."""

POSTGRES_CONNECT_TIMEOUT_SECONDS = 10
"""How long connecting to a PostgreSQL server may take when its URL does not say."""

# The drivers that read libpq's connect_timeout; others (pg8000) would refuse the key.
_LIBPQ_DRIVERS = ("postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2")


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


def lacks_connect_timeout(url: URL) -> bool:
    """Whether ``url``'s driver reads libpq's ``connect_timeout`` and the URL sets none."""
    return url.drivername in _LIBPQ_DRIVERS and "connect_timeout" not in url.query


def with_connect_timeout(url: URL) -> URL:
    """``url`` with `POSTGRES_CONNECT_TIMEOUT_SECONDS` as ``connect_timeout`` where it lacks one."""
    if not lacks_connect_timeout(url):
        return url
    return url.update_query_dict({"connect_timeout": str(POSTGRES_CONNECT_TIMEOUT_SECONDS)})
