"""The ``run``, ``trace`` and ``demo`` commands through the real console script.

A scripted model cannot be passed through a command line, so these tests pin the
failure paths (one line on stderr, a non-zero exit, never a traceback) and the ``trace``
plumbing: a run stored in a real SQLite checkpoint file by the agent, read back by a new
``agent-rules trace`` process. Runs with the embedded model live in tests/real_model.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from rich.console import Console

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.cli._display import print_result, print_step
from langchain_agent_rules.cli._options import flag_of
from langchain_agent_rules.options import AgentOptions
from langchain_agent_rules.testing import ScriptedChatModel
from langchain_agent_rules.tools.sql_query import SqlQueryTool

AGENT_RULES = str(Path(sys.executable).with_name("agent-rules"))


def _agent_rules(
    *args: str, cache: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "AGENT_RULES_CACHE_DIR": str(cache), **(env or {})}
    return subprocess.run(
        [AGENT_RULES, *args], capture_output=True, text=True, env=environment, timeout=120
    )


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("agent-rules: error: ")
    return lines[0].removeprefix("agent-rules: error: ")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def shop(tmp_path: Path) -> str:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, active INTEGER)")
        connection.executemany("INSERT INTO users (active) VALUES (?)", [(1,), (1,), (0,)])
    return f"sqlite:///{path}"


def test_an_unknown_model_is_one_line_listing_the_accepted_forms(tmp_path: Path) -> None:
    message = _one_error_line(
        _agent_rules("run", "Hi", "--model", "gpt4all-nonsense", cache=tmp_path)
    )
    assert message.startswith("unknown model 'gpt4all-nonsense'; use \"local\"")
    assert "ollama:<name>" in message


def test_a_missing_gguf_file_is_one_line(tmp_path: Path) -> None:
    result = _agent_rules("run", "Hi", "--model", f"local:{tmp_path}/none.gguf", cache=tmp_path)
    assert "local" in _one_error_line(result)


def test_an_unreachable_ollama_server_says_to_start_it(tmp_path: Path) -> None:
    host = f"http://127.0.0.1:{_closed_port()}"
    result = _agent_rules(
        "run", "Hi", "--model", "ollama:qwen2.5:7b", cache=tmp_path, env={"OLLAMA_HOST": host}
    )
    message = _one_error_line(result)
    assert f"cannot reach an Ollama server at {host}" in message
    assert "`ollama serve`" in message


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (
            ["--max-iterations", "0"],
            "--max-iterations: Input should be greater than or equal to 1, got 0",
        ),
        (["--tool-timeout", "-1"], "--tool-timeout: Input should be greater than 0, got -1.0"),
        (
            ["--max-total-tokens", "0"],
            "--max-total-tokens: Input should be greater than or equal to 1, got 0",
        ),
    ],
)
def test_bad_agent_options_are_one_line_before_any_model_loads(
    tmp_path: Path, flags: list[str], expected: str
) -> None:
    # --model gpt-4 would fail too, so the flag's error must come first.
    result = _agent_rules("run", "Hi", "--model", "gpt4all-nonsense", *flags, cache=tmp_path)
    assert expected in _one_error_line(result)


def _store_a_run(checkpoints: Path, shop: str, thread_id: str) -> None:
    call = (
        '```tool\n{"tool": "sql_query", "args": {"sql": '
        '"SELECT COUNT(*) AS n FROM users WHERE active = 1"}}\n```'
    )
    model = ScriptedChatModel(steps=[call, "FINAL: There are 2 active users."])
    with sqlite3.connect(checkpoints, check_same_thread=False) as connection:
        agent = create_rules_agent(
            model,
            [SqlQueryTool(shop)],
            protocol="text",
            checkpointer=SqliteSaver(connection),
        )
        config = {"configurable": {"thread_id": thread_id}}
        agent.invoke({"messages": [HumanMessage("How many active users?")]}, config)


def test_trace_reads_a_stored_run_as_json(tmp_path: Path, shop: str) -> None:
    checkpoints = tmp_path / "runs.sqlite"
    _store_a_run(checkpoints, shop, "t-1")
    result = _agent_rules(
        "trace", "t-1", "--checkpoints", str(checkpoints), "--json", cache=tmp_path
    )
    assert result.returncode == 0, result.stderr
    (step,) = json.loads(result.stdout)
    assert (step["tool"], step["status"]) == ("sql_query", "ok")
    assert step["args"] == {"sql": "SELECT COUNT(*) AS n FROM users WHERE active = 1"}
    assert json.loads(step["observation"])["rows"] == [{"n": 2}]


def _shown(print_it: Any) -> str:
    console = Console(record=True, width=200, color_system=None)
    print_it(console)
    return console.export_text()


def test_the_answer_is_followed_by_one_line_per_rule_event() -> None:
    result = RunResult(
        answer="Her address is [redacted: email].",
        stop_reason="final",
        rule_events=[
            {"rule_id": "no_emails", "status": "redacted", "detail": "redacted 1 match of email"},
            {"rule_id": "in_eur", "status": "passed", "detail": "not required"},
        ],
    )
    lines = _shown(lambda console: print_result(console, result)).splitlines()
    assert lines[:3] == [
        "Her address is [redacted: email].",
        "rule no_emails redacted: redacted 1 match of email",
        "rule in_eur passed: not required",
    ]


def test_a_step_line_names_the_rule_that_stopped_it() -> None:
    step = {
        "tool": "sql_query",
        "args": {"sql": "DELETE FROM users"},
        "status": "denied",
        "duration_ms": 0.0,
        "rule_events": [
            {"rule_id": "no_deletes", "status": "denied", "detail": "the arguments match"}
        ],
    }
    line = _shown(lambda console: print_step(console, step)).strip()
    assert line == 'sql_query {"sql": "DELETE FROM users"} denied 0 ms (rule no_deletes denied)'


def test_a_step_line_shows_control_characters_in_the_arguments_escaped() -> None:
    step = {"tool": "http_get", "args": {"url": "x\x9b2J"}, "status": "ok", "duration_ms": 1.0}
    line = _shown(lambda console: print_step(console, step)).strip()
    assert line == 'http_get {"url": "x\\x9b2J"} ok 1 ms'


def test_events_of_tool_calls_are_shown_with_the_calls_not_again_after_the_answer() -> None:
    event = {"rule_id": "no_deletes", "status": "denied", "detail": "the arguments match"}
    step: Any = {"rule_events": [event]}
    result = RunResult(answer="No.", stop_reason="final", trace=[step], rule_events=[event])
    assert "no_deletes" not in _shown(lambda console: print_result(console, result))


def test_trace_of_an_unknown_thread_is_one_line(tmp_path: Path, shop: str) -> None:
    checkpoints = tmp_path / "runs.sqlite"
    _store_a_run(checkpoints, shop, "t-3")
    result = _agent_rules("trace", "other", "--checkpoints", str(checkpoints), cache=tmp_path)
    assert _one_error_line(result) == f"no run stored for thread 'other' in {checkpoints}"


def test_demo_and_run_document_their_flags(tmp_path: Path) -> None:
    run_help = " ".join(_agent_rules("run", "--help", cache=tmp_path).stdout.split())
    for flag in ("--model", "--db", "--root", "--allow-host", "--rules", "--thread"):
        assert flag in run_help
    for flag in ("--checkpoints", "--json"):
        assert flag in run_help
    assert "--model" in _agent_rules("demo", "--help", cache=tmp_path).stdout


def test_every_agent_option_is_a_documented_flag_of_run_and_demo(tmp_path: Path) -> None:
    run_help = " ".join(_agent_rules("run", "--help", cache=tmp_path).stdout.split())
    demo_help = " ".join(_agent_rules("demo", "--help", cache=tmp_path).stdout.split())
    for name, field in AgentOptions.model_fields.items():
        flag = flag_of(name)
        assert field.description is not None
        assert f"{flag} " in run_help, flag
        assert " ".join(field.description.split()) in run_help, flag
        if name != "project_id":
            assert f"{flag} " in demo_help, flag
    assert "--project-id" not in demo_help
    assert "{auto,native,text}" in run_help
    assert "(default: 6)" in run_help


def test_the_old_project_flag_still_works_as_an_abbreviation(tmp_path: Path) -> None:
    result = _agent_rules(
        "run", "Hi", "--model", "gpt4all-nonsense", "--project", "0", cache=tmp_path
    )
    assert "--project-id: Input should be greater than or equal to 1" in _one_error_line(result)
