"""`open_rule_store`: turn a ``--store`` value into a rule store.

A store spec is a path to a JSON rules file, or a database URL (``postgresql://...``,
``sqlite:///rules.db``) for a `SqlRuleStore`. Other backends plug in here by their URL
scheme, so every command line and configuration that takes a store spec gains them at
once. A URL of any other scheme is refused before anything is created, and a
PostgreSQL URL without ``connect_timeout`` gets `POSTGRES_CONNECT_TIMEOUT_SECONDS`, so
an unreachable server is an error in bounded time instead of a wait for ever.

A rules file or a SQLite database file that does not exist is an error naming it, so
a mistyped path never becomes a store without rules; ``create=True`` (the CLI's
``agent-rules rules init``) starts an empty one.
"""

from __future__ import annotations

import shlex
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
    "store_exists",
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
MALFORMED_URL_TEMPLATE = (
    "malformed {scheme}:// URL: {detail}; give a URL such as "
    "'postgresql://user:password@127.0.0.1:5432/db' or 'sqlite:///rules.db'"
)
MISSING_FILE_TEMPLATE = (
    "no rules file at {path}; give the path of an existing rules file or a database URL, "
    "or start an empty one with: agent-rules rules init --store {spec}"
)
MISSING_DATABASE_TEMPLATE = (
    "no SQLite database file at {path}; give the path of an existing database or a rules "
    "file, or start an empty one with: agent-rules rules init --store {spec}"
)


def open_rule_store(
    spec: str,
    *,
    limits: AgentRuleToolConfig | Mapping[str, Any] | None = None,
    create: bool = False,
) -> JsonFileRuleStore | SqlRuleStore:
    """Open the rule store named by ``spec``: a JSON rules file path or a database URL.

    ``limits`` are the ones the store checks on every write (the defaults when omitted).
    A missing rules file or SQLite database file raises `RuleStoreError` naming it,
    unless ``create``: then a missing rules file is created empty now, a missing SQLite
    database on first use. A database server is not contacted here.
    """
    target = _target(spec)
    if not create:
        missing = _missing_message(target)
        if missing is not None:
            raise RuleStoreError(missing)
    if isinstance(target, Path):
        return JsonFileRuleStore(target, limits=limits, create=create)
    if target.get_backend_name() == "sqlite":
        return SqlRuleStore(spec, limits=limits)
    timed = with_connect_timeout(target)
    if timed is not target:
        spec = timed.render_as_string(hide_password=False)
    return SqlRuleStore(spec, limits=limits)


def store_exists(spec: str) -> bool:
    """Whether the store ``spec`` names is there: its rules file or SQLite database file.

    A database server's store counts as there (its table is made on first use). A spec
    `open_rule_store` would refuse raises the same `RuleStoreError`.
    """
    return _missing_message(_target(spec)) is None


def shown_store(spec: str) -> str:
    """``spec`` fit for a message: a path as given, a database URL without its password."""
    url = URL_SCHEME.match(spec)
    if url is None:
        return spec
    try:
        return make_url(spec).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return f"a malformed {url.group(1)}:// URL"


def _target(spec: str) -> Path | URL:
    """The rules file ``spec`` names, or its database URL; a bad spec raises."""
    if not spec.strip():
        raise RuleStoreError(EMPTY_SPEC_MESSAGE)
    url = URL_SCHEME.match(spec)
    if url is None:
        return Path(spec)
    scheme = url.group(1)
    if scheme.split("+", 1)[0].lower() not in SQL_STORE_SCHEMES:
        raise RuleStoreError(UNSUPPORTED_SCHEME_TEMPLATE.format(scheme=scheme))
    # The URL is not echoed: a malformed one cannot be shown without its password.
    try:
        return make_url(spec)
    except ArgumentError:
        detail = "not a SQLAlchemy URL"
    except ValueError:
        detail = "the port is not a number"
    raise RuleStoreError(MALFORMED_URL_TEMPLATE.format(scheme=scheme, detail=detail))


def _missing_message(target: Path | URL) -> str | None:
    """What is missing for ``target`` to be an existing store, or None."""
    if isinstance(target, Path):
        if target.exists():
            return None
        return MISSING_FILE_TEMPLATE.format(path=target, spec=shlex.quote(str(target)))
    database = target.database or ":memory:"
    if target.get_backend_name() != "sqlite" or database == ":memory:" or "uri" in target.query:
        return None
    if Path(database).is_file():
        return None
    spec = target.render_as_string(hide_password=False)
    return MISSING_DATABASE_TEMPLATE.format(path=database, spec=shlex.quote(spec))
