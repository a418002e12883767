"""What ``run``, ``demo`` and ``trace`` are given, checked before any model loads.

Each value is checked and, where that writes nothing, opened: the database's tables are
read, the rule store is read once, a PostgreSQL checkpointer is connected. So a typo or
an unreachable server is one ``--flag: ...`` error naming what was wrong and what the
flag takes, before a model load costs time and before any file is created. A SQLite
checkpoint file is created only when the run starts (`open_checkpointer`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from sqlalchemy import Engine, create_engine
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from langchain_agent_rules._sql_url import (
    POSTGRES_CONNECT_TIMEOUT_SECONDS,
    URL_SCHEME,
    database_url,
    lacks_connect_timeout,
)
from langchain_agent_rules.errors import AgentConfigurationError, AgentRulesError
from langchain_agent_rules.models.weights import cache_dir
from langchain_agent_rules.postgres_checkpoints import (
    is_postgres_url,
    open_postgres_checkpointer,
)
from langchain_agent_rules.rules.open import open_rule_store
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.http_get import HttpGetTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool
from langchain_agent_rules.tools.url_guard import HOST_PATTERN_FORMS, host_pattern_problem

__all__ = [
    "checkpoint_target",
    "default_checkpoints_path",
    "open_checkpointer",
    "rule_store",
    "run_tools",
    "stored_checkpoints",
]

DATABASE_FORMS = "sqlite:///PATH for a SQLite file, or postgresql://user:password@host/db"
NOT_A_DATABASE_URL_TEMPLATE = "--db: {db!r} is not a database URL; give " + DATABASE_FORMS
MALFORMED_DATABASE_URL_TEMPLATE = "--db: malformed {scheme}:// URL ({detail}); give " + (
    DATABASE_FORMS
)
UNSUPPORTED_DATABASE_TEMPLATE = "--db: sql_query cannot query {scheme}:// databases; give " + (
    DATABASE_FORMS
)
POSTGRES_EXTRA_MESSAGE = (
    '--db: PostgreSQL needs the postgres extra: pip install "langchain-agent-rules[postgres]"'
)
NO_FOLDER_TEMPLATE = "--root: no folder at {root}; give the folder whose files the agent may read"
BAD_HOST_TEMPLATE = "--allow-host: {entry!r} {problem}; {forms}"
CHECKPOINT_FORMS = "give the path of a SQLite file or a postgresql:// URL"
CHECKPOINT_SCHEME_TEMPLATE = "--checkpoints: unsupported URL scheme {scheme!r}; " + CHECKPOINT_FORMS
CHECKPOINT_FOLDER_TEMPLATE = (
    "--checkpoints: {path} is a folder; give the path of a SQLite file such as {example}"
)
NOT_A_CHECKPOINT_FILE_TEMPLATE = (
    "--checkpoints: {path} is not a SQLite database ({detail}); give the path of a new file "
    "or of a checkpoint file agent-rules wrote"
)
CHECKPOINT_PARENT_TEMPLATE = (
    "--checkpoints: cannot create {path}: {parent} is not a folder; " + CHECKPOINT_FORMS
)
NO_CHECKPOINT_FILE_TEMPLATE = (
    "no checkpoint file at {path}; runs are stored there by agent-rules run (give "
    "--checkpoints the file or URL that run used)"
)

_SQL_QUERY_BACKENDS = ("sqlite", "postgresql", "postgres")


@contextmanager
def _named(flag: str) -> Iterator[None]:
    """Our errors raised inside start with the flag whose value caused them."""
    try:
        yield
    except AgentRulesError as error:
        raise type(error)(f"{flag}: {error}") from None


def run_tools(db: str | None, root: str | None, allowed_hosts: Sequence[str]) -> list[BaseTool]:
    """The tools the flags ask for, each built (so checked) now."""
    tools: list[BaseTool] = []
    if db is not None:
        engine = _database_engine(db)
        with _named("--db"):
            tools.append(SqlQueryTool(engine, include_schema=True))
    if root is not None:
        if not Path(root).is_dir():
            raise AgentConfigurationError(NO_FOLDER_TEMPLATE.format(root=root))
        tools.append(FileReadTool(root))
    if allowed_hosts:
        for entry in allowed_hosts:
            problem = host_pattern_problem(entry)
            if problem is not None:
                raise AgentConfigurationError(
                    BAD_HOST_TEMPLATE.format(entry=entry, problem=problem, forms=HOST_PATTERN_FORMS)
                )
        tools.append(HttpGetTool(allowed_hosts=list(allowed_hosts)))
    return tools


def _database_engine(db: str) -> Engine:
    """An engine for ``--db``; a PostgreSQL server gets a bounded connect time."""
    scheme = URL_SCHEME.match(db)
    if scheme is None:
        raise AgentConfigurationError(NOT_A_DATABASE_URL_TEMPLATE.format(db=db))
    backend = scheme.group(1).split("+", 1)[0].lower()
    if backend not in _SQL_QUERY_BACKENDS:
        raise AgentConfigurationError(UNSUPPORTED_DATABASE_TEMPLATE.format(scheme=scheme.group(1)))
    try:
        url = database_url(db)
    except ArgumentError as error:
        # The URL is not echoed: a malformed one cannot be shown without its password.
        detail = "an invalid port" if "port" in str(error) else "not a SQLAlchemy URL"
        raise AgentConfigurationError(
            MALFORMED_DATABASE_URL_TEMPLATE.format(scheme=scheme.group(1), detail=detail)
        ) from None
    # As connect arguments, not in the URL, so messages show the URL as it was given.
    connect_args: dict[str, Any] = {}
    if lacks_connect_timeout(url):
        connect_args["connect_timeout"] = POSTGRES_CONNECT_TIMEOUT_SECONDS
    try:
        return create_engine(url, connect_args=connect_args)
    except NoSuchModuleError:
        raise AgentConfigurationError(
            UNSUPPORTED_DATABASE_TEMPLATE.format(scheme=scheme.group(1))
        ) from None
    except ImportError:
        raise AgentConfigurationError(POSTGRES_EXTRA_MESSAGE) from None


def rule_store(spec: str, project_id: int | None) -> RuleReader:
    """The rule store ``--store`` names, read once: a missing or unreadable one is an error."""
    with _named("--store"):
        store = open_rule_store(spec)
        store.get_all_by_project(project_id)
    return store


def default_checkpoints_path() -> Path:
    """Where runs are stored when ``--checkpoints`` is not given: the cache folder."""
    return cache_dir() / "runs.sqlite"


def checkpoint_target(spec: str | None) -> Path | str:
    """The SQLite file or PostgreSQL URL runs are stored in, checked without writing a file.

    A PostgreSQL URL is connected to (its tables are created if missing); a SQLite path
    must be a new file in a folder that can hold it, or an existing SQLite database.
    """
    if is_postgres_url(spec):
        with _named("--checkpoints"), open_postgres_checkpointer(spec):
            return spec
    path = _checkpoint_path(spec)
    if path.is_dir():
        raise AgentConfigurationError(
            CHECKPOINT_FOLDER_TEMPLATE.format(path=path, example=path / "runs.sqlite")
        )
    if path.exists():
        _check_sqlite_database(path)
        return path
    parent = next(folder for folder in path.parents if folder.exists())
    if not parent.is_dir():
        raise AgentConfigurationError(CHECKPOINT_PARENT_TEMPLATE.format(path=path, parent=parent))
    return path


def stored_checkpoints(spec: str | None) -> Path | str:
    """Where ``trace`` reads runs: a PostgreSQL URL, or a SQLite database that exists."""
    if is_postgres_url(spec):
        return spec
    path = _checkpoint_path(spec)
    if not path.is_file():
        raise AgentConfigurationError(NO_CHECKPOINT_FILE_TEMPLATE.format(path=path))
    _check_sqlite_database(path)
    return path


def _checkpoint_path(spec: str | None) -> Path:
    if spec is not None and (scheme := URL_SCHEME.match(spec)) is not None:
        raise AgentConfigurationError(CHECKPOINT_SCHEME_TEMPLATE.format(scheme=scheme.group(1)))
    return Path(spec) if spec else default_checkpoints_path()


def _check_sqlite_database(path: Path) -> None:
    try:
        with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as connection:
            connection.execute("PRAGMA schema_version").fetchone()
    except sqlite3.Error as error:
        raise AgentConfigurationError(
            NOT_A_CHECKPOINT_FILE_TEMPLATE.format(path=path, detail=error)
        ) from None


@contextmanager
def open_checkpointer(target: Path | str) -> Iterator[BaseCheckpointSaver[Any]]:
    """The checkpointer for ``target`` (from `checkpoint_target`), closed afterwards."""
    if isinstance(target, str):
        with ExitStack() as stack:
            with _named("--checkpoints"):
                postgres_saver = stack.enter_context(open_postgres_checkpointer(target))
            yield postgres_saver
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(target, check_same_thread=False)
        saver = SqliteSaver(connection)
        saver.setup()
    except (OSError, sqlite3.Error) as error:
        raise AgentConfigurationError(
            f"--checkpoints: cannot use {target} as a SQLite checkpoint file: {error}"
        ) from None
    try:
        yield saver
    finally:
        connection.close()
