"""Open LangGraph's `PostgresSaver` from a ``postgresql://`` URL, with a one-line error.

Several agent workers that share one PostgreSQL database share their threads: a run
paused for approval by one worker can be resumed, and its trace read, by any other.
Needs the ``postgres`` extra (``langgraph-checkpoint-postgres`` and psycopg 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from langchain_agent_rules.errors import AgentConfigurationError

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver

__all__ = [
    "POSTGRES_URL_SCHEMES",
    "is_postgres_url",
    "open_postgres_checkpointer",
    "redacted",
]

POSTGRES_URL_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(spec: object) -> bool:
    """Whether ``spec`` is a ``postgresql://`` (or ``postgres://``) URL."""
    return isinstance(spec, str) and spec.startswith(POSTGRES_URL_SCHEMES)


def redacted(url: str) -> str:
    """``url`` with its password replaced by ``***``, fit for an error message."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
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
    except ImportError:
        raise AgentConfigurationError(
            "PostgreSQL checkpoints need the postgres extra: "
            'pip install "langchain-agent-rules[postgres]"'
        ) from None
    with ExitStack() as stack:
        try:
            saver = stack.enter_context(PostgresSaver.from_conn_string(url))
            saver.setup()
        except psycopg.Error as error:
            detail = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            raise AgentConfigurationError(
                f"cannot use {redacted(url)} as a PostgreSQL checkpointer: {detail}"
            ) from None
        yield saver
