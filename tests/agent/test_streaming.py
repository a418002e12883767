"""Token streaming: chunks from the agent node, and only the answer's text for a reader."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.tools import tool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.facade import RulesAgent
from langchain_agent_rules.agent.streaming import AnswerStream
from langchain_agent_rules.middleware.protocol import TEXT_REPLY_TAG
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import call_step


@tool
def count_users() -> int:
    """Count active users."""
    return 3


def test_the_agent_node_streams_token_chunks() -> None:
    model = ScriptedChatModel(["There are three active users."])
    agent = create_rules_agent(model, [count_users], protocol="native")
    chunks = [
        (chunk, metadata)
        for chunk, metadata in agent.stream(
            {"messages": [("user", "How many?")]}, stream_mode="messages"
        )
        if metadata["langgraph_node"] == "model" and chunk.text
    ]
    assert len(chunks) > 2
    assert "".join(chunk.text for chunk, _ in chunks) == "There are three active users."


@pytest.mark.parametrize("protocol", ["native", "text"])
def test_stream_yields_the_answer_as_it_is_written_never_a_tool_block(protocol: str) -> None:
    model = ScriptedChatModel(
        [
            call_step(protocol, "count_users"),
            "We have 3 active users.\nFINAL: 3 active users"
            if protocol == "text"
            else "3 active users",
        ]
    )
    # The answer states a number: grounding is off, so no check can change it.
    agent = RulesAgent(model, tools=[count_users], protocol=protocol, grounded_answers=False)
    events = list(agent.stream("How many?", answer_deltas=True))
    deltas = [e["text"] for e in events if e["type"] == "answer_delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "3 active users"
    assert not any("```" in d or "tool" in d for d in deltas)
    assert [e["step"]["tool"] for e in events if e["type"] == "step"] == ["count_users"]
    assert events[-1] == {**events[-1], "type": "end", "answer": "3 active users"}


async def test_astream_yields_answer_deltas_too() -> None:
    model = ScriptedChatModel(["Thinking it over.\nFINAL: Paris is the capital"])
    agent = RulesAgent(model, protocol="text")
    events = [e async for e in agent.astream("Capital?", answer_deltas=True)]
    assert "".join(e["text"] for e in events if e["type"] == "answer_delta") == (
        "Paris is the capital"
    )


def test_stream_without_answer_deltas_yields_steps_and_summary_only() -> None:
    agent = RulesAgent(ScriptedChatModel(["FINAL: Paris"]), protocol="text")
    events = list(agent.stream("Capital?"))
    assert [set(e) for e in events] == [
        {"type", "answer", "stop_reason", "iterations", "usage", "rule_events", "thread_id"}
    ]


def feed(stream: AnswerStream, pieces: list[str], *, text: bool, node: str = "model") -> str:
    metadata: dict[str, Any] = {"langgraph_node": node, "tags": [TEXT_REPLY_TAG] if text else []}
    return "".join(stream.feed(AIMessageChunk(content=p, id="r1"), metadata) for p in pieces)


@pytest.mark.parametrize(
    ("pieces", "shown"),
    [
        (["I will look.\n", "```to", 'ol\n{"tool": "x"}', "\n```"], ""),
        (["FIN", "AL", ":", " Par", "is"], "Paris"),
        (["**Final answer:** ", "42"], "42"),
        (["FINAL: 5 rows", "\n``", "`tool\n{}```"], "5 rows\n"),
        (["FINAL: a <tool", "_call>{}</tool_call>"], "a "),
        (["FINAL: a <to", "p>"], "a <top>"),
        (["no marker at all"], ""),
    ],
)
def test_the_text_protocol_shows_only_the_text_after_final(pieces: list[str], shown: str) -> None:
    assert feed(AnswerStream(), pieces, text=True) == shown


@pytest.mark.parametrize(
    ("pieces", "shown"),
    [
        (["Par", "is"], "Paris"),
        (["FIN", "AL: ", "Paris"], "Paris"),
        (["  Fi", "ne ", "weather"], "Fine weather"),
    ],
)
def test_a_native_reply_shows_its_text(pieces: list[str], shown: str) -> None:
    assert feed(AnswerStream(), pieces, text=False) == shown


def test_a_native_reply_stops_at_its_first_tool_call() -> None:
    stream = AnswerStream()
    metadata = {"langgraph_node": "model", "tags": []}
    shown = stream.feed(AIMessageChunk(content="Let me check", id="r"), metadata)
    call = AIMessageChunk(
        content="", id="r", tool_call_chunks=[{"name": "x", "args": "{}", "id": "1", "index": 0}]
    )
    assert stream.feed(call, metadata) == ""
    assert stream.feed(AIMessageChunk(content=" more", id="r"), metadata) == ""
    assert shown == "Let me check"


def test_chunks_from_other_nodes_are_ignored() -> None:
    stream = AnswerStream()
    assert feed(stream, ["FINAL: x"], text=True, node="tools") == ""
    assert stream.feed(AIMessage("y", id="a"), {"langgraph_node": "tools"}) == ""


def test_a_whole_answer_from_the_model_node_is_shown_once_and_tool_calls_never() -> None:
    stream = AnswerStream()
    model = {"langgraph_node": "model"}
    calls = AIMessage("", id="c", tool_calls=[{"name": "x", "args": {}, "id": "1"}])
    assert stream.feed(calls, model) == ""
    assert stream.feed(AIMessage("checked", id="a"), model) == "checked"
    assert stream.feed(AIMessage("checked", id="a"), model) == ""
    assert feed(stream, ["Par", "is"], text=False) == "Paris"
    assert stream.feed(AIMessage("Paris", id="r1"), model) == ""


def test_the_limit_nodes_summary_streams_too() -> None:
    model = ScriptedChatModel([call_step("native", "count_users"), "FINAL: about 3"])
    agent = RulesAgent(model, tools=[count_users], max_iterations=1)
    events = list(agent.stream("How many?", answer_deltas=True))
    assert "".join(e["text"] for e in events if e["type"] == "answer_delta") == "about 3"
    assert events[-1]["stop_reason"] == "max_iterations"  # type: ignore[typeddict-item]


def test_streaming_a_run_is_safe_with_asyncio_too() -> None:
    async def main() -> list[Any]:
        agent = RulesAgent(ScriptedChatModel(["FINAL: a b c"]), protocol="text")
        return [e async for e in agent.astream("x", answer_deltas=True)]

    events = asyncio.run(main())
    assert "".join(e["text"] for e in events if e["type"] == "answer_delta") == "a b c"
