"""Open LangGraph's `PostgresSaver` from a ``postgresql://`` URL, with a one-line error.

Several agent workers that share one PostgreSQL database share their threads: a run
paused for approval by one worker can be resumed, and its trace read, by any other.
A URL without ``connect_timeout`` gets `POSTGRES_CONNECT_TIMEOUT_SECONDS` (as a rule
store's does), so an unreachable server is an error in bounded time. Needs the
``postgres`` extra (``langgraph-checkpoint-postgres`` and psycopg 3).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any, TypeGuard

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from langchain_agent_rules._sql_url import POSTGRES_CONNECT_TIMEOUT_SECONDS
from langchain_agent_rules.errors import AgentConfigurationError

if TYPE_CHECKING:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

__all__ = [
    "POSTGRES_URL_SCHEMES",
    "UNUSABLE_SERVER_TEMPLATE",
    "is_postgres_url",
    "open_postgres_checkpointer",
    "redacted",
]

POSTGRES_URL_SCHEMES = ("postgresql://", "postgres://")
UNUSABLE_SERVER_TEMPLATE = (
    "cannot use {url} as a PostgreSQL checkpointer: {detail}; give the URL of a running "
    "server's database that this user may write to (postgresql://user:password@host:port/db)"
)
_SETUP_LOCK_KEY = 0x61676E745F636B70  # any fixed 64-bit number shared by every worker
_SETUP_LOCK_POLL_SECONDS = 0.05


def is_postgres_url(spec: object) -> TypeGuard[str]:
    """Whether ``spec`` is a ``postgresql://`` (or ``postgres://``) URL."""
    return isinstance(spec, str) and spec.startswith(POSTGRES_URL_SCHEMES)


def redacted(url: str) -> str:
    """``url`` with its password replaced by ``***``, fit for an error message."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        return "the given URL"


@contextmanager
def open_postgres_checkpointer(url: str) -> Iterator[PostgresSaver]:
    """Connect a `PostgresSaver` to ``url``, create its tables if needed, close it afterwards.

    Raises `AgentConfigurationError` naming the URL (without its password) when the
    extra is missing or the server cannot be used.
    """
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
    except ImportError:
        raise AgentConfigurationError(
            "PostgreSQL checkpoints need the postgres extra: "
            'pip install "langchain-agent-rules[postgres]"'
        ) from None
    shown = redacted(url)
    try:
        options = conninfo_to_dict(url)
    except psycopg.Error:
        # libpq's own message quotes the whole URL, password included.
        detail = "not a valid PostgreSQL URL"
        raise AgentConfigurationError(
            UNUSABLE_SERVER_TEMPLATE.format(url=shown, detail=detail)
        ) from None
    if "connect_timeout" not in options:
        url = make_conninfo(url, connect_timeout=POSTGRES_CONNECT_TIMEOUT_SECONDS)
    with ExitStack() as stack:
        try:
            saver = stack.enter_context(PostgresSaver.from_conn_string(url))
            with psycopg.connect(url, autocommit=True) as lock:
                _wait_for_setup_lock(lock)
                saver.setup()
        except psycopg.Error as error:
            detail = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            raise AgentConfigurationError(
                UNUSABLE_SERVER_TEMPLATE.format(url=shown, detail=detail)
            ) from None
        yield saver


def _wait_for_setup_lock(connection: psycopg.Connection[Any]) -> None:
    """Take the session lock that lets one worker at a time run ``setup()``.

    ``setup()`` migrates without a lock, so two workers starting at once on a fresh
    database insert the same migration row. Waiting inside ``pg_advisory_lock`` would
    deadlock with the ``CREATE INDEX CONCURRENTLY`` of the worker holding the lock (it
    waits for every running statement), so poll between statements instead.
    """
    query = "SELECT pg_try_advisory_lock(%s)"
    while connection.execute(query, (_SETUP_LOCK_KEY,)).fetchone() != (True,):
        time.sleep(_SETUP_LOCK_POLL_SECONDS)
