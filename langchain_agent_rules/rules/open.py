"""`open_rule_store`: turn a ``--store`` value into a rule store.

A store spec is a path to a JSON rules file, or a database URL (``postgresql://...``,
``sqlite:///rules.db``) for a `SqlRuleStore`. Other backends plug in here by their URL
scheme, so every command line and configuration that takes a store spec gains them at
once. A URL of any other scheme is refused before anything is created, and a
PostgreSQL URL without ``connect_timeout`` gets `POSTGRES_CONNECT_TIMEOUT_SECONDS`, so
an unreachable server is an error in bounded time instead of a wait for ever.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import URL, make_url
from sqlalchemy.exc import ArgumentError

from langchain_agent_rules._sql_url import (
    POSTGRES_CONNECT_TIMEOUT_SECONDS,
    URL_SCHEME,
    with_connect_timeout,
)
from langchain_agent_rules.errors import RuleStoreError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.sql_store import SqlRuleStore

__all__ = [
    "POSTGRES_CONNECT_TIMEOUT_SECONDS",
    "SQL_STORE_SCHEMES",
    "open_rule_store",
    "shown_store",
]

SQL_STORE_SCHEMES = ("postgresql", "postgres", "sqlite")

EMPTY_SPEC_MESSAGE = (
    "empty rule store; give a path to a JSON rules file or a database URL "
    "(postgresql://... or sqlite:///...)"
)
UNSUPPORTED_SCHEME_TEMPLATE = (
    "unsupported rule store URL scheme {scheme!r}; give a postgresql://, postgres:// or "
    "sqlite:/// URL, or the path of a JSON rules file"
)
FOLDER_TEMPLATE = "{path} is a folder; give the path of a rules file such as {example}"
MALFORMED_URL_TEMPLATE = (
    "malformed {scheme}:// URL: {detail}; give a URL such as "
    "'postgresql://user:password@127.0.0.1:5432/db' or 'sqlite:///rules.db'"
)
MISSING_FILE_TEMPLATE = (
    "no rules file at {path}; give the path of an existing rules file or a database URL "
    "(adding a rule creates the file)"
)
MISSING_DATABASE_TEMPLATE = (
    "no SQLite database file at {path}; give the path of an existing database or a rules "
    "file (adding a rule creates the database)"
)


def open_rule_store(
    spec: str,
    *,
    limits: AgentRuleToolConfig | Mapping[str, Any] | None = None,
    must_exist: bool = False,
) -> JsonFileRuleStore | SqlRuleStore:
    """Open the rule store named by ``spec``: a JSON rules file path or a database URL.

    ``limits`` are the ones the store checks on every write (the defaults when omitted).
    With ``must_exist``, a missing rules file or SQLite database file raises
    `RuleStoreError` instead of being created by the first write: what a reader wants,
    so a mistyped path is not read as an empty store. Nothing is created on disk here.
    """
    if not spec.strip():
        raise RuleStoreError(EMPTY_SPEC_MESSAGE)
    url = URL_SCHEME.match(spec)
    if url is None:
        return _json_file_store(Path(spec), limits, must_exist=must_exist)
    scheme = url.group(1)
    backend = scheme.split("+", 1)[0].lower()
    if backend not in SQL_STORE_SCHEMES:
        raise RuleStoreError(UNSUPPORTED_SCHEME_TEMPLATE.format(scheme=scheme))
    parsed = _database_url(spec, scheme)
    if backend == "sqlite":
        if must_exist:
            _check_sqlite_file(parsed)
        return SqlRuleStore(spec, limits=limits)
    timed = with_connect_timeout(parsed)
    if timed is not parsed:
        spec = timed.render_as_string(hide_password=False)
    return SqlRuleStore(spec, limits=limits)


def shown_store(spec: str) -> str:
    """``spec`` fit for a message: a path as given, a database URL without its password."""
    url = URL_SCHEME.match(spec)
    if url is None:
        return spec
    try:
        return make_url(spec).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return f"a malformed {url.group(1)}:// URL"


def _json_file_store(
    path: Path, limits: AgentRuleToolConfig | Mapping[str, Any] | None, *, must_exist: bool
) -> JsonFileRuleStore:
    if path.is_dir():
        raise RuleStoreError(FOLDER_TEMPLATE.format(path=path, example=path / "rules.json"))
    if must_exist and not path.exists():
        raise RuleStoreError(MISSING_FILE_TEMPLATE.format(path=path))
    return JsonFileRuleStore(path, limits=limits)


def _database_url(spec: str, scheme: str) -> URL:
    # The URL is not echoed: a malformed one cannot be shown without its password.
    try:
        return make_url(spec)
    except ArgumentError:
        detail = "not a SQLAlchemy URL"
    except ValueError:
        detail = "the port is not a number"
    raise RuleStoreError(MALFORMED_URL_TEMPLATE.format(scheme=scheme, detail=detail))


def _check_sqlite_file(url: URL) -> None:
    database = url.database or ":memory:"
    in_memory_or_uri = database == ":memory:" or "uri" in url.query
    if not in_memory_or_uri and not Path(database).is_file():
        raise RuleStoreError(MISSING_DATABASE_TEMPLATE.format(path=database))
