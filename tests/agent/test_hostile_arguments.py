"""Whatever arguments a model sends, a run ends with an observation, never an exception.

Lone surrogates, nesting far deeper than any serializer allows, integers beyond 64 bits
and megabytes of text are refused before the call is stored (``invalid_args``), with
the real checkpointers underneath: msgpack in `InMemorySaver` and SQLite in
`SqliteSaver`, which are what such values break.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.middleware._arguments import MAX_ARGUMENT_DEPTH, argument_problem
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import call_step


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@tool
def echo(value: Any) -> str:
    """Echo a value."""
    return repr(value)[:200]


@tool
def say(text: str) -> str:
    """Say a text back."""
    return text


HOSTILE = {
    "lone surrogate": (
        "say",
        {"text": "\ud800"},
        "the arguments contain text that is not valid Unicode (a lone surrogate)",
    ),
    "surrogate key": (
        "echo",
        {"value": {"\udfff": 1}},
        "the arguments contain text that is not valid Unicode (a lone surrogate)",
    ),
    "integer over 64 bits": (
        "echo",
        {"value": 2**64},
        "the arguments contain an integer outside the 64-bit range",
    ),
    "integer under -2**63": (
        "echo",
        {"value": [-(2**63) - 1]},
        "the arguments contain an integer outside the 64-bit range",
    ),
    "100k-deep nesting": (
        "echo",
        {"value": nested(100_000)},
        f"the arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep",
    ),
    "megabyte string": (
        "say",
        {"text": "x" * 1_000_000},
        "the arguments are larger than 65536 bytes",
    ),
    "a million tiny entries": (
        "echo",
        {"value": [0] * 1_000_000},
        "the arguments are larger than 65536 bytes",
    ),
    "not JSON": (
        "echo",
        {"value": object()},
        "the arguments contain a object, which is not a JSON value",
    ),
}


@pytest.fixture(params=["none", "InMemorySaver", "SqliteSaver"])
def checkpointer(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "none":
        yield None
    elif request.param == "InMemorySaver":
        yield InMemorySaver()
    else:
        connection = sqlite3.connect(":memory:", check_same_thread=False)
        yield SqliteSaver(connection)
        connection.close()


def run_native(tool_name: str, args: dict[str, Any], saver: str, mode: str) -> Any:
    step = AIMessage("", tool_calls=[{"name": tool_name, "args": args, "id": "hostile"}])
    model = ScriptedChatModel([step, "FINAL: refused"])
    config = {"configurable": {"thread_id": "t"}} if saver != "none" else {}
    payload = {"messages": [HumanMessage("go")]}

    async def arun() -> Any:
        if saver == "SqliteSaver":
            async with AsyncSqliteSaver.from_conn_string(":memory:") as async_saver:
                agent = create_rules_agent(model, [echo, say], checkpointer=async_saver)
                state = await agent.ainvoke(payload, config)
                return state, (await agent.aget_state(config)).values
        agent = create_rules_agent(model, [echo, say], checkpointer=SAVERS[saver]())
        state = await agent.ainvoke(payload, config)
        return state, (await agent.aget_state(config)).values if config else None

    if mode == "async":
        state, stored = asyncio.run(arun())
    else:
        agent = create_rules_agent(model, [echo, say], checkpointer=SAVERS[saver]())
        state = agent.invoke(payload, config)
        stored = agent.get_state(config).values if config else None
    return state, stored, model


def _sqlite_saver() -> SqliteSaver:
    return SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))


SAVERS: dict[str, Callable[[], Any]] = {
    "none": lambda: None,
    "InMemorySaver": InMemorySaver,
    "SqliteSaver": _sqlite_saver,
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("saver", sorted(SAVERS))
def test_hostile_native_arguments_end_as_an_invalid_args_observation(
    case: str, mode: str, saver: str
) -> None:
    tool_name, args, problem = HOSTILE[case]
    state, stored, model = run_native(tool_name, args, saver, mode)
    assert state["answer"] == "refused"
    (step,) = state["trace"]
    assert (step["tool"], step["status"], step["args"]) == (tool_name, "invalid_args", {})
    assert step["observation"] == f'ERROR: invalid arguments for tool "{tool_name}": {problem}'
    assert model.calls[1].messages[-1].text == step["observation"]
    if stored is not None:
        assert stored["trace"] == state["trace"]


@pytest.mark.parametrize(
    ("case", "args", "problem"),
    [
        ("huge integer", {"text": 10**30}, "outside the 64-bit range"),
        ("deep nesting", {"text": nested(40)}, "nested more than 32 levels deep"),
        ("megabyte string", {"text": "y" * 1_000_000}, "larger than 65536 bytes"),
    ],
)
def test_hostile_text_protocol_arguments_end_as_an_observation(
    case: str, args: dict[str, Any], problem: str
) -> None:
    block = "```tool\n" + json.dumps({"tool": "say", "args": args}) + "\n```"
    model = ScriptedChatModel([block, "FINAL: refused"])
    agent = create_rules_agent(model, [say], protocol="text", checkpointer=InMemorySaver())
    state = agent.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": case}})
    (step,) = state["trace"]
    assert step["status"] == "invalid_args"
    assert problem in step["observation"]
    assert state["answer"] == "refused"


def test_an_escaped_lone_surrogate_in_a_text_protocol_call_is_a_parse_error() -> None:
    block = "```tool\n" + json.dumps({"tool": "say", "args": {"text": "\ud800"}}) + "\n```"
    model = ScriptedChatModel([block, "FINAL: refused"])
    agent = create_rules_agent(model, [say], protocol="text", checkpointer=InMemorySaver())
    state = agent.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "s"}})
    (step,) = state["trace"]
    assert step["status"] == "parse_error"
    assert "lone surrogate" in step["observation"]
    assert state["answer"] == "refused"


def test_a_surrogate_in_an_observation_or_a_reply_is_replaced_not_raised(
    checkpointer: Any,
) -> None:
    @tool
    def listing() -> str:
        """A file name read with surrogateescape."""
        return "report-\udcff.txt"

    model = ScriptedChatModel([call_step("native", "listing"), "FINAL: see \ud83d"])
    agent = create_rules_agent(model, [listing], checkpointer=checkpointer)
    config = {"configurable": {"thread_id": "t"}} if checkpointer is not None else {}
    state = agent.invoke({"messages": [("user", "list")]}, config)
    assert state["trace"][0]["observation"] == "report-\ufffd.txt"
    assert state["answer"] == "see \ufffd"
    tool_message = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    tool_message.text.encode("utf-8")


def test_a_hostile_tool_name_is_an_unknown_tool_observation() -> None:
    name = "\ud800" + "n" * 10_000
    step = AIMessage("", tool_calls=[{"name": name, "args": {}, "id": "x"}])
    model = ScriptedChatModel([step, "FINAL: no"])
    agent = create_rules_agent(model, [say], checkpointer=InMemorySaver())
    state = agent.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "t"}})
    (trace_step,) = state["trace"]
    assert trace_step["status"] == "unknown_tool"
    assert len(trace_step["tool"]) <= 200
    trace_step["tool"].encode("utf-8")


def test_max_argument_bytes_is_an_option() -> None:
    step = AIMessage("", tool_calls=[{"name": "say", "args": {"text": "x" * 300}, "id": "x"}])
    model = ScriptedChatModel([step, "FINAL: no"])
    agent = create_rules_agent(model, [say], max_argument_bytes=256)
    (trace_step,) = agent.invoke({"messages": [("user", "go")]})["trace"]
    assert trace_step["observation"].endswith("the arguments are larger than 256 bytes")


# --- properties ------------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
JSON_ISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(ANY_TEXT, children, max_size=4)
    ),
    max_leaves=20,
)
ARGUMENTS = st.one_of(
    st.dictionaries(ANY_TEXT, JSON_ISH, max_size=4),
    st.integers(1, 300).map(lambda depth: {"value": nested(depth)}),
    st.integers(0, 200_000).map(lambda size: {"value": "z" * size}),
)


@settings(max_examples=300, deadline=None)
@given(ARGUMENTS)
def test_argument_problem_answers_for_anything(args: Any) -> None:
    problem = argument_problem(args, 65536)
    if problem is None:
        # What it accepts, the checkpointer's serializer can store.
        InMemorySaver().serde.dumps_typed(args)
        json.dumps(args, ensure_ascii=False).encode("utf-8")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(args=ARGUMENTS, protocol=st.sampled_from(["native", "text"]))
def test_a_run_ends_with_an_observation_whatever_the_arguments(
    args: dict[str, Any], protocol: str
) -> None:
    if protocol == "native":
        step: AIMessage | str = AIMessage(
            "", tool_calls=[{"name": "echo", "args": args, "id": "h"}]
        )
    else:
        step = "```tool\n" + json.dumps({"tool": "echo", "args": args}) + "\n```"
    model = ScriptedChatModel([step, "FINAL: done"])
    agent = create_rules_agent(model, [echo], protocol=protocol, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "p"}}
    state = agent.invoke({"messages": [("user", "go")]}, config)
    assert state["answer"] == "done"
    assert [s["status"] for s in state["trace"]] in (["ok"], ["invalid_args"], ["parse_error"])
    # repr: a NaN argument is not equal to itself
    assert repr(agent.get_state(config).values["trace"]) == repr(state["trace"])
