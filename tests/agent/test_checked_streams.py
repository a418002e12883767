"""Only checked answers leave: no stream mode, event stream or checkpoint shows a draft."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_agent_rules import InMemoryRuleStore, Rule, create_rules_agent
from langchain_agent_rules.middleware import AgentRulesMiddleware
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import PROTOCOLS, call_step

SECRET = "alice.martin@example.com"
HIDE_EMAILS = Rule(
    id="no_emails",
    type="prohibition",
    target="output",
    content="Never reveal e-mail addresses.",
    check={"forbid": "email"},
)
IN_EUROS = Rule(
    id="euros",
    type="requirement",
    target="output",
    content="Write money amounts with EUR.",
    check={"require": "regex:EUR", "when": r"regex:\d", "on_fail": "revise"},
)
BLOCK_EMAILS = Rule(
    id="no_emails",
    type="prohibition",
    target="output",
    content="Never reveal e-mail addresses.",
    check={"forbid": "email", "on_fail": "block"},
)
STREAM_MODES = ["values", "updates", "messages", "debug", "tasks", "checkpoints", "custom"]


@tool
def lookup(name: str) -> str:
    """Look a customer up."""
    return f"{name} is a customer"


def scripted(protocol: str, answer: str) -> ScriptedChatModel:
    final = f"FINAL: {answer}" if protocol == "text" else answer
    return ScriptedChatModel([call_step(protocol, "lookup", name="Alice"), final])


def everything_streamed(graph: Any, config: dict[str, Any]) -> str:
    parts = graph.stream({"messages": [("user", "Who?")]}, config, stream_mode=STREAM_MODES)
    return "\n".join(repr(part) for part in parts)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_stream_mode_and_no_checkpoint_shows_a_redacted_address(protocol: str) -> None:
    saver = InMemorySaver()
    graph = create_rules_agent(
        scripted(protocol, f"Write to {SECRET}."),
        [lookup],
        rules=InMemoryRuleStore([HIDE_EMAILS]),
        protocol=protocol,
        checkpointer=saver,
    )
    config = {"configurable": {"thread_id": "t"}}

    shown = everything_streamed(graph, config)

    assert "Write to [redacted: email]." in shown
    assert SECRET not in shown
    assert SECRET not in repr(list(saver.list(config)))
    assert SECRET not in repr(saver.storage) + repr(saver.writes)


def test_a_draft_that_failed_its_check_is_in_no_stream_and_no_checkpoint() -> None:
    model = ScriptedChatModel(
        [call_step("native", "lookup", name="Alice"), "It costs 12.", "12 EUR"]
    )
    saver = InMemorySaver()
    graph = create_rules_agent(
        model,
        [lookup],
        rules=InMemoryRuleStore([IN_EUROS]),
        checkpointer=saver,
        grounded_answers=False,
    )
    config = {"configurable": {"thread_id": "t"}}

    shown = everything_streamed(graph, config)

    assert "It costs 12." not in shown
    assert "12 EUR" in shown
    assert "It costs 12." not in repr(saver.storage) + repr(saver.writes)
    assert graph.get_state(config).values["answer"] == "12 EUR"


def test_a_blocked_answer_never_reaches_a_sqlite_checkpoint_file(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    graph = create_rules_agent(
        scripted("native", f"Write to {SECRET}."),
        [lookup],
        rules=InMemoryRuleStore([BLOCK_EMAILS]),
        checkpointer=saver,
    )
    state = graph.invoke({"messages": [("user", "Who?")]}, {"configurable": {"thread_id": "t"}})

    assert state["answer"] == (
        "I can't give that answer: it would break rule no_emails: Never reveal e-mail addresses."
    )
    assert SECRET.encode() not in path.read_bytes()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_astream_events_shows_only_the_checked_answer(protocol: str) -> None:
    graph = create_rules_agent(
        scripted(protocol, f"Write to {SECRET}."),
        [lookup],
        rules=InMemoryRuleStore([HIDE_EMAILS]),
        protocol=protocol,
    )

    async def events() -> list[Any]:
        stream = graph.astream_events({"messages": [("user", "Who?")]}, version="v2")
        return [event async for event in stream]

    shown = repr(asyncio.run(events()))
    assert "[redacted: email]" in shown
    assert SECRET not in shown


def test_the_messages_stream_shows_the_checked_answer_once_whole() -> None:
    graph = create_rules_agent(
        scripted("native", f"Write to {SECRET}."), [lookup], rules=InMemoryRuleStore([HIDE_EMAILS])
    )

    answers = [
        message.text
        for message, metadata in graph.stream(
            {"messages": [("user", "Who?")]}, stream_mode="messages"
        )
        if metadata["langgraph_node"] == "model" and message.text
    ]

    assert answers == ["Write to [redacted: email]."]


def test_the_same_holds_with_the_middleware_on_your_own_create_agent() -> None:
    model = ScriptedChatModel(
        [AIMessage("", tool_calls=[{"name": "lookup", "args": {"name": "A"}, "id": "1"}]), SECRET]
    )
    saver = InMemorySaver()
    agent = create_agent(
        model,
        [lookup],
        middleware=[AgentRulesMiddleware(InMemoryRuleStore([HIDE_EMAILS]))],
        checkpointer=saver,
    )
    config = {"configurable": {"thread_id": "t"}}

    shown = everything_streamed(agent, config)

    assert "[redacted: email]" in shown
    assert SECRET not in shown + repr(saver.storage) + repr(saver.writes)


def test_an_answer_no_check_can_change_streams_token_by_token() -> None:
    graph = create_rules_agent(
        ScriptedChatModel(["We have three customers."]),
        rules=InMemoryRuleStore([HIDE_EMAILS.model_copy(update={"check": None})]),
    )

    tokens = [
        message.text
        for message, metadata in graph.stream(
            {"messages": [("user", "How many?")]}, stream_mode="messages"
        )
        if metadata["langgraph_node"] == "model" and message.text
    ]

    assert len(tokens) > 2
    assert "".join(tokens) == "We have three customers."
