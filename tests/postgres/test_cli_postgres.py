"""`agent-rules run/trace --checkpoints postgresql://...`: runs shared through PostgreSQL."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.cli import main
from langchain_agent_rules.postgres_checkpoints import open_postgres_checkpointer
from langchain_agent_rules.testing import ScriptedChatModel

from .processes import run_alone


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def store_a_run(url: str, thread_id: str, *, ready: Callable[[], object]) -> str:
    """In another process: one run with one tool call, checkpointed in PostgreSQL."""
    ready()
    model = ScriptedChatModel(
        [
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}]),
            "FINAL: 5",
        ]
    )
    with open_postgres_checkpointer(url) as saver:
        agent = create_rules_agent(model, [add], protocol="native", checkpointer=saver)
        result = agent.invoke(
            {"messages": [("user", "2 + 3?")]}, {"configurable": {"thread_id": thread_id}}
        )
    return str(result["answer"])


@pytest.mark.postgres
def test_trace_reads_a_run_another_process_stored_in_postgresql(
    pg_search_path_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_alone(store_a_run, pg_search_path_url, "shared-1") == "5"

    assert main(["trace", "shared-1", "--checkpoints", pg_search_path_url, "--json"]) == 0

    [step] = json.loads(capsys.readouterr().out)
    assert (step["tool"], step["args"], step["observation"]) == ("add", {"a": 2, "b": 3}, "5")


@pytest.mark.postgres
def test_trace_of_an_unknown_thread_names_the_url_without_its_password(
    pg_search_path_url: str, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from sqlalchemy.engine import make_url

    assert main(["trace", "nobody", "--checkpoints", pg_search_path_url]) == 1

    error = capsys.readouterr().err
    password = make_url(postgres_url).password
    assert error.startswith(
        "agent-rules: error: no run stored for thread 'nobody' in postgresql://"
    )
    assert password is not None and password not in error


def test_run_with_an_unreachable_postgresql_is_one_error_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://agent:s3cret@127.0.0.1:{port}/runs"

    assert main(["run", "Hi", "--model", "local", "--checkpoints", url]) == 1

    error = capsys.readouterr().err
    assert error.startswith(
        "agent-rules: error: --checkpoints: cannot use "
        f"postgresql://agent:***@127.0.0.1:{port}/runs as a PostgreSQL checkpointer: "
        "connection failed"
    )
    assert error.count("\n") == 1 and "s3cret" not in error
