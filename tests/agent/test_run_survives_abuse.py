"""A run survives cancellation, abandoned approvals and any number a provider sends."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_agent_rules import RulesAgent, create_rules_agent
from langchain_agent_rules.middleware.prompts import NOT_RUN
from langchain_agent_rules.middleware.state import MAX_COUNT
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import call_step

NOT_RUN_SLOW = NOT_RUN.format(tool="slow")


def unanswered_calls(messages: list[Any]) -> list[str]:
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return [
        call["id"]
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["id"] not in answered
    ]


def test_a_run_cancelled_during_a_tool_is_repaired_by_the_next_run_of_its_thread() -> None:
    started = threading.Event()

    @tool
    async def slow(text: str) -> str:
        """Takes its time."""
        started.set()
        await asyncio.sleep(30)
        return text

    model = ScriptedChatModel([call_step("native", "slow", text="x"), "FINAL: next answer"])
    graph = create_rules_agent(model, [slow], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    async def cancel_midway() -> None:
        task = asyncio.create_task(graph.ainvoke({"messages": [("user", "first")]}, config))
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    assert unanswered_calls(graph.get_state(config).values["messages"])

    state = graph.invoke({"messages": [("user", "second")]}, config)

    assert unanswered_calls(state["messages"]) == []
    assert state["answer"] == "next answer"
    sent = model.calls[-1].messages
    repaired = next(m for m in sent if isinstance(m, ToolMessage))
    assert (repaired.text, repaired.status) == (NOT_RUN_SLOW, "error")
    assert sent.index(repaired) == 3  # right after the call it answers: system, human, ai, tool


def test_a_new_task_on_a_thread_waiting_for_approval_answers_the_waiting_call() -> None:
    @tool
    def slow(text: str) -> str:
        """Needs approval."""
        return text

    model = ScriptedChatModel([call_step("native", "slow", text="x"), "FINAL: moved on"])
    agent = RulesAgent(
        model,
        [slow],
        require_approval=["slow"],
        approve=lambda _: "approve",
        checkpointer=InMemorySaver(),
    )
    paused = agent.graph.invoke(
        {"messages": [("user", "first")]}, {"configurable": {"thread_id": "t"}}
    )
    assert paused["__interrupt__"]

    result = agent.invoke("something else", thread_id="t")

    assert result.answer == "moved on"
    messages = agent.graph.get_state({"configurable": {"thread_id": "t"}}).values["messages"]
    assert unanswered_calls(messages) == []
    assert NOT_RUN_SLOW in [m.text for m in messages if isinstance(m, ToolMessage)]


def reporting(usage: Any) -> AIMessage:
    return AIMessage("FINAL: done", usage_metadata=usage)


HOSTILE_USAGE = [
    pytest.param({"input_tokens": 2**70, "output_tokens": 2**64, "total_tokens": 2**71}, id="huge"),
    pytest.param({"input_tokens": -5, "output_tokens": -1, "total_tokens": -6}, id="negative"),
    pytest.param(
        {
            "input_tokens": 1,
            "output_tokens": 1,
            "total_tokens": 2,
            "input_token_details": {"cache_read": 2**80},
        },
        id="huge-cache",
    ),
]


@pytest.mark.parametrize("usage", HOSTILE_USAGE)
def test_any_usage_a_provider_reports_is_stored_saturated(usage: Any, tmp_path: Path) -> None:
    model = ScriptedChatModel([reporting(usage)])
    saver = SqliteSaver(sqlite3.connect(tmp_path / "c.sqlite", check_same_thread=False))
    graph = create_rules_agent(model, checkpointer=saver)

    state = graph.invoke({"messages": [("user", "x")]}, {"configurable": {"thread_id": "t"}})

    assert state["answer"] == "done"
    assert all(0 <= value <= MAX_COUNT for value in state["usage"].values())


def test_totals_saturate_and_budgets_still_hold() -> None:
    huge = {"input_tokens": MAX_COUNT, "output_tokens": MAX_COUNT, "total_tokens": MAX_COUNT}
    call = AIMessage(
        "", tool_calls=[{"name": "echo", "args": {"n": 1}, "id": "c1"}], usage_metadata=huge
    )

    @tool
    def echo(n: int) -> int:
        """Echo."""
        return n

    model = ScriptedChatModel([call, reporting(huge)])
    state = create_rules_agent(model, [echo], max_total_tokens=1000).invoke(
        {"messages": [("user", "x")]}
    )

    assert state["usage"]["input_tokens"] == MAX_COUNT
    assert (state["stop_reason"], state["answer"]) == ("max_total_tokens", "done")
    assert len(model.calls) == 2
