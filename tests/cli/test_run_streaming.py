"""What ``agent-rules run`` shows while a run streams, driven by the scripted model.

The command's display loop (`_ask`) takes the agent, so these tests hand it one built
on `ScriptedChatModel` and read what a real rich console printed.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from rich.console import Console

from langchain_agent_rules.agent.facade import RulesAgent
from langchain_agent_rules.cli.run import _ask, _TerminalApproval
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.testing import ScriptedChatModel


@tool
def count_users() -> int:
    """Count active users."""
    return 3


def show(model: ScriptedChatModel, **options: Any) -> tuple[str, Any]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, highlight=False, force_terminal=False)
    agent = RulesAgent(model, [count_users], checkpointer=InMemorySaver(), **options)
    result = _ask(agent, "How many?", "thread-1", console, _TerminalApproval(), live=True)
    return buffer.getvalue(), result


BLOCK = '```tool\n{"tool": "count_users", "args": {}}\n```'


@pytest.mark.parametrize("protocol", ["text", "native"])
def test_run_prints_the_answer_once_as_it_streams_then_usage(protocol: str) -> None:
    tokens = {"input_tokens": 30, "output_tokens": 4, "total_tokens": 34}
    first: Any = (
        AIMessage(f"Let me count.\n{BLOCK}", usage_metadata=tokens)
        if protocol == "text"
        else AIMessage(
            "", tool_calls=[{"name": "count_users", "args": {}, "id": "c"}], usage_metadata=tokens
        )
    )
    answer = "We have 3 active users." if protocol == "native" else "FINAL: 3 active users"
    model = ScriptedChatModel([first, AIMessage(answer, usage_metadata=tokens)])
    output, result = show(model, protocol=protocol)
    lines = output.splitlines()
    assert lines[0].startswith("  count_users {} ok")
    expected = "3 active users" if protocol == "text" else "We have 3 active users."
    assert lines[1] == expected
    assert output.count(expected) == 1
    assert "```" not in output and "FINAL" not in output and "Let me count" not in output
    assert lines[2] == (
        "stop: final · 2 model call(s), 68 tokens · thread: thread-1 (agent-rules trace thread-1)"
    )
    assert result.answer == expected
    assert [s["tool"] for s in result.trace] == ["count_users"]


def test_an_answer_that_did_not_stream_is_printed_at_the_end() -> None:
    model = ScriptedChatModel(["3 users, no marker"])
    output, _ = show(model, protocol="text")
    assert output.splitlines()[0] == "3 users, no marker"


def test_rule_events_are_shown(tmp_path: Path) -> None:
    record = {
        "id": "long_rule",
        "type": "guideline",
        "projectId": None,
        "target": "output",
        "content": "x" * 600,
        "priority": 1,
        "createdAt": "2026-02-16T14:59:00+00:00",
        "updatedAt": "2026-02-16T14:59:00+00:00",
        "metadata": None,
    }
    (tmp_path / "rules.json").write_text(json.dumps([record]), encoding="utf-8")
    store = JsonFileRuleStore(tmp_path / "rules.json", create=True)
    output, result = show(ScriptedChatModel(["FINAL: ok"]), rules=store)
    assert result.rule_events[0]["rule_id"] == "long_rule"
    assert (
        "rule long_rule omitted: max_rule_content_bytes=500 (its content has 600 bytes)" in output
    )


def test_json_output_is_the_run_result() -> None:
    agent = RulesAgent(ScriptedChatModel(["FINAL: ok"]), checkpointer=InMemorySaver())
    console = Console(file=io.StringIO())
    result = _ask(agent, "x", "t", console, _TerminalApproval(), live=False)
    assert json.loads(json.dumps(result.__dict__))["answer"] == "ok"
    assert result.thread_id == "t"


def test_without_a_terminal_an_approval_request_is_refused() -> None:
    request = {
        "action_requests": [{"name": "count_users", "args": {}, "description": "Approve?"}],
        "review_configs": [{"action_name": "count_users", "allowed_decisions": ["approve"]}],
    }
    answer = _TerminalApproval()(request)
    assert answer == {"type": "reject", "message": "refused on the command line"}
