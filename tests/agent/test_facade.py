from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_agent_rules.agent.facade import RulesAgent
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


def test_run_returns_the_answer_and_trace_the_steps() -> None:
    model = ScriptedChatModel([call_step("native", "count_users"), "FINAL: 3 active users"])
    agent = RulesAgent(model, tools=[count_users], rules=InMemoryRuleStore())
    assert agent.run("How many active users do we have?") == "3 active users"
    assert [(s["tool"], s["observation"]) for s in agent.trace()] == [("count_users", "3")]


def test_arun_behaves_like_run() -> None:
    model = ScriptedChatModel([call_step("text", "count_users"), "FINAL: 3"])
    agent = RulesAgent(model, tools=[count_users], protocol="text")
    assert asyncio.run(agent.arun("How many?")) == "3"
    assert agent.trace()[0]["status"] == "ok"


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
    assert [e.get("tool") for e in events[:2]] == ["count_users", "delete_user"]
    assert events[-1] == {"answer": "done", "stop_reason": "final", "iterations": 2}
    assert len(agent.trace()) == 2


async def test_astream_yields_steps_then_the_answer() -> None:
    model = ScriptedChatModel([call_step("native", "count_users"), "FINAL: 3"])
    agent = RulesAgent(model, tools=[count_users])
    events = [event async for event in agent.astream("go")]
    assert events[0]["tool"] == "count_users"
    assert events[-1]["answer"] == "3"


def test_stream_ends_with_repeated_calls_when_a_turn_only_repeats() -> None:
    again = call_step("text", "count_users")
    model = ScriptedChatModel([again, again, "FINAL: 3 users"])
    agent = RulesAgent(model, tools=[count_users], protocol="text")
    events = list(agent.stream("go"))
    assert [(e["tool"], e["status"]) for e in events[:-1]] == [
        ("count_users", "ok"),
        ("count_users", "repeated"),
    ]
    assert events[-1] == {"answer": "3 users", "stop_reason": "repeated_calls", "iterations": 2}


def test_trace_of_a_thread_is_read_from_the_checkpointer() -> None:
    model = ScriptedChatModel([call_step("native", "count_users"), "FINAL: 3", "FINAL: hi"])
    agent = RulesAgent(model, tools=[count_users], checkpointer=InMemorySaver())
    agent.run("count", thread_id="first")
    agent.run("say hi", thread_id="second")
    assert agent.trace() == []
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
    assert widened.graph.config is not None
    assert widened.graph.config["recursion_limit"] == base.graph.config["recursion_limit"]


def test_approve_answers_approval_requests() -> None:
    seen: list[dict[str, Any]] = []

    def approve(request: dict[str, Any]) -> Any:
        seen.append(request)
        return {"action": "edit", "args": {"name": "carol"}}

    model = ScriptedChatModel([call_step("native", "delete_user", name="bob"), "FINAL: done"])
    agent = RulesAgent(
        model, tools=[delete_user], require_approval=["delete_user"], approve=approve
    )
    assert agent.run("delete bob") == "done"
    assert seen[0]["args"] == {"name": "bob"}
    assert agent.trace()[0]["observation"] == "deleted carol"


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
    assert events[0]["status"] == "rejected"
    assert events[-1]["answer"] == "kept"


def test_approval_without_a_handler_is_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="require_approval needs approve="):
        RulesAgent(ScriptedChatModel([]), tools=[delete_user], require_approval=["delete_user"])
