from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_agent_rules.agent.facade import RulesAgent
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import call_step


@tool
def count_users() -> int:
    """Count active users."""
    return 3


@tool
def delete_user(name: str) -> str:
    """Delete a user."""
    return f"deleted {name}"


def test_invoke_returns_the_whole_result_of_the_run() -> None:
    tokens = {"input_tokens": 40, "output_tokens": 5, "total_tokens": 45}
    model = ScriptedChatModel(
        [
            AIMessage(
                "",
                tool_calls=[{"name": "count_users", "args": {}, "id": "c1"}],
                usage_metadata=tokens,
            ),
            AIMessage("FINAL: 3 active users", usage_metadata=tokens),
        ]
    )
    agent = RulesAgent(model, tools=[count_users], rules=InMemoryRuleStore())
    result = agent.invoke("How many active users do we have?")
    assert isinstance(result, RunResult)
    assert (result.answer, result.stop_reason, result.iterations) == ("3 active users", "final", 1)
    assert [(s["tool"], s["observation"]) for s in result.trace] == [("count_users", "3")]
    assert result.usage == {
        "model_calls": 2,
        "input_tokens": 80,
        "output_tokens": 10,
        "cached_input_tokens": 0,
    }
    assert (result.rule_events, result.thread_id) == ([], None)


def test_run_returns_the_answer() -> None:
    model = ScriptedChatModel([call_step("native", "count_users"), "FINAL: 3 active users"])
    agent = RulesAgent(model, tools=[count_users])
    assert agent.run("How many active users do we have?") == "3 active users"


def test_ainvoke_and_arun_behave_like_their_sync_twins() -> None:
    model = ScriptedChatModel([call_step("text", "count_users"), "FINAL: 3", "FINAL: 4"])
    agent = RulesAgent(model, tools=[count_users], protocol="text")
    result = asyncio.run(agent.ainvoke("How many?"))
    assert (result.answer, result.trace[0]["status"]) == ("3", "ok")
    assert asyncio.run(agent.arun("And now?")) == "4"


def test_a_run_on_a_checkpointer_names_its_thread() -> None:
    model = ScriptedChatModel(["FINAL: a", "FINAL: b"])
    agent = RulesAgent(model, checkpointer=InMemorySaver())
    generated = agent.invoke("x")
    chosen = agent.invoke("y", thread_id="mine")
    assert generated.thread_id is not None and len(generated.thread_id) == 32
    assert chosen.thread_id == "mine"


def test_stream_yields_steps_then_the_answer() -> None:
    model = ScriptedChatModel(
        [
            call_step("native", "count_users"),
            call_step("native", "delete_user", name="x"),
            "FINAL: done",
        ]
    )
    agent = RulesAgent(model, tools=[count_users, delete_user])
    events = list(agent.stream("go"))
    assert [e["type"] for e in events] == ["step", "step", "end"]
    assert [e["step"]["tool"] for e in events[:2]] == ["count_users", "delete_user"]
    assert [e["step"]["step"] for e in events[:2]] == [1, 2]
    assert events[-1] == {
        "type": "end",
        "answer": "done",
        "stop_reason": "final",
        "iterations": 2,
        "usage": {
            "model_calls": 3,
            "input_tokens": 0,
            "output_tokens": 0,
            "cached_input_tokens": 0,
        },
        "rule_events": [],
        "thread_id": None,
    }


async def test_astream_yields_steps_then_the_answer() -> None:
    model = ScriptedChatModel([call_step("native", "count_users"), "FINAL: 3"])
    agent = RulesAgent(model, tools=[count_users])
    events = [event async for event in agent.astream("go")]
    assert events[0]["step"]["tool"] == "count_users"  # type: ignore[typeddict-item]
    assert events[-1]["answer"] == "3"  # type: ignore[typeddict-item]


def test_stream_ends_with_repeated_calls_when_a_turn_only_repeats() -> None:
    again = call_step("text", "count_users")
    model = ScriptedChatModel([again, again, "FINAL: 3 users"])
    agent = RulesAgent(model, tools=[count_users], protocol="text")
    events = list(agent.stream("go"))
    assert [(e["step"]["tool"], e["step"]["status"]) for e in events[:-1]] == [
        ("count_users", "ok"),
        ("count_users", "repeated"),
    ]
    summary = events[-1]
    assert (summary["answer"], summary["stop_reason"], summary["iterations"]) == (
        "3 users",
        "repeated_calls",
        2,
    )


def test_trace_of_a_thread_is_read_from_the_checkpointer() -> None:
    model = ScriptedChatModel([call_step("native", "count_users"), "FINAL: 3", "FINAL: hi"])
    agent = RulesAgent(model, tools=[count_users], checkpointer=InMemorySaver())
    agent.run("count", thread_id="first")
    agent.run("say hi", thread_id="second")
    assert agent.trace("second") == []
    assert agent.trace("first")[0]["tool"] == "count_users"


def test_thread_id_without_checkpointer_is_refused() -> None:
    agent = RulesAgent(ScriptedChatModel(["FINAL: x"]), tools=[count_users])
    with pytest.raises(AgentConfigurationError, match="thread_id needs a checkpointer"):
        agent.run("x", thread_id="t")


def test_with_tools_builds_a_new_agent_with_the_same_options() -> None:
    model = ScriptedChatModel([call_step("native", "delete_user", name="bob"), "FINAL: gone"])
    base = RulesAgent(model, tools=[count_users], max_iterations=3)
    widened = base.with_tools([count_users, delete_user])
    assert widened is not base
    assert widened.run("delete bob") == "gone"
    assert widened.options == base.options


def test_approve_answers_approval_requests() -> None:
    seen: list[dict[str, Any]] = []

    def approve(request: dict[str, Any]) -> Any:
        seen.append(request)
        return {"type": "edit", "edited_action": {"name": "delete_user", "args": {"name": "carol"}}}

    model = ScriptedChatModel([call_step("native", "delete_user", name="bob"), "FINAL: done"])
    agent = RulesAgent(
        model, tools=[delete_user], require_approval=["delete_user"], approve=approve
    )
    result = agent.invoke("delete bob")
    assert result.answer == "done"
    assert seen[0]["action_requests"][0]["args"] == {"name": "bob"}
    assert result.trace[0]["observation"] == "deleted carol"


def test_stream_with_approval_yields_the_step_after_the_decision() -> None:
    model = ScriptedChatModel([call_step("text", "delete_user", name="bob"), "FINAL: kept"])
    agent = RulesAgent(
        model,
        tools=[delete_user],
        protocol="text",
        require_approval=["delete_user"],
        approve=lambda request: "reject",
    )
    events = list(agent.stream("delete bob"))
    assert events[0]["step"]["status"] == "rejected"  # type: ignore[typeddict-item]
    assert events[-1]["answer"] == "kept"  # type: ignore[typeddict-item]


def test_approval_without_a_handler_is_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="require_approval needs approve="):
        RulesAgent(ScriptedChatModel([]), tools=[delete_user], require_approval=["delete_user"])
