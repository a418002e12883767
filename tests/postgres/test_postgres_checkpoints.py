"""`open_postgres_checkpointer`: a PostgresSaver from a URL, or one clear error line."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.postgres_checkpoints import (
    is_postgres_url,
    open_postgres_checkpointer,
    redacted,
)
from langchain_agent_rules.testing import ScriptedChatModel

from .processes import run_together


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("postgresql://u:p@127.0.0.1:5432/db", True),
        ("postgres://127.0.0.1/db", True),
        ("runs.sqlite", False),
        ("sqlite:///runs.sqlite", False),
        ("/tmp/postgresql://odd", False),
    ],
)
def test_postgres_urls_are_told_apart_from_paths(spec: str, expected: bool) -> None:
    assert is_postgres_url(spec) is expected


def test_an_error_never_shows_the_password() -> None:
    assert redacted("postgresql://agent:s3cret@127.0.0.1:5432/db") == (
        "postgresql://agent:***@127.0.0.1:5432/db"
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_server_that_does_not_answer_is_one_configuration_error() -> None:
    port = closed_port()
    url = f"postgresql://agent:s3cret@127.0.0.1:{port}/db"

    with pytest.raises(AgentConfigurationError) as caught, open_postgres_checkpointer(url):
        pass

    message = str(caught.value)
    assert message.startswith(
        f"cannot use postgresql://agent:***@127.0.0.1:{port}/db as a PostgreSQL checkpointer: "
    )
    assert "Connection refused" in message
    assert message.endswith(
        "; give the URL of a running server's database that this user may write to "
        "(postgresql://user:password@host:port/db)"
    )
    assert "s3cret" not in message


def test_a_malformed_url_is_refused_without_echoing_its_password() -> None:
    with (
        pytest.raises(AgentConfigurationError) as caught,
        open_postgres_checkpointer("postgresql://agent:s3cret@[::1/db"),
    ):
        pass

    assert str(caught.value) == (
        "cannot use the given URL as a PostgreSQL checkpointer: not a valid "
        "PostgreSQL URL; give the URL of a running server's database that this user may write "
        "to (postgresql://user:password@host:port/db)"
    )


@pytest.mark.postgres
def test_a_thread_saved_through_one_checkpointer_is_read_through_another(
    pg_search_path_url: str,
) -> None:
    config = {"configurable": {"thread_id": "shared"}}
    with open_postgres_checkpointer(pg_search_path_url) as saver:
        agent = create_rules_agent(ScriptedChatModel(["FINAL: 42"]), checkpointer=saver)
        agent.invoke({"messages": [("user", "The answer?")]}, config)

    with open_postgres_checkpointer(pg_search_path_url) as saver:
        state = create_rules_agent(ScriptedChatModel([]), checkpointer=saver).get_state(config)

    assert state.values["answer"] == "42"


@pytest.mark.postgres
def test_bad_credentials_are_one_configuration_error(postgres_url: str) -> None:
    from sqlalchemy.engine import make_url

    wrong = make_url(postgres_url).set(password="wrong-password")
    url = wrong.render_as_string(hide_password=False)

    with (
        pytest.raises(AgentConfigurationError, match="password authentication failed"),
        open_postgres_checkpointer(url),
    ):
        pass


def open_and_run(url: str, thread_id: str, *, ready: Callable[[], object]) -> str:
    """Open a checkpointer on a database nobody has set up yet and finish one run."""
    ready()
    with open_postgres_checkpointer(url) as saver:
        agent = create_rules_agent(ScriptedChatModel([f"FINAL: {thread_id}"]), checkpointer=saver)
        result = agent.invoke(
            {"messages": [("user", "Who?")]}, {"configurable": {"thread_id": thread_id}}
        )
    return str(result["answer"])


@pytest.mark.postgres
def test_workers_starting_together_on_a_fresh_database_all_get_a_checkpointer(
    pg_search_path_url: str,
) -> None:
    names = [f"worker{n}" for n in range(4)]

    answers = run_together(open_and_run, [(pg_search_path_url, name) for name in names])

    assert answers == names
