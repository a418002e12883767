from __future__ import annotations

import threading
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware import ToolGuardMiddleware
from langchain_agent_rules.middleware.prompts import TOOL_ERROR, TOOL_TIMEOUT, TRUNCATION_MARKER
from langchain_agent_rules.options import AgentOptions
from langchain_agent_rules.testing import ScriptedChatModel

from .sample_tools import ONE_MB, add, explode, huge


def calling(*names: str, args: dict[str, Any] | None = None) -> AIMessage:
    calls = [{"name": n, "args": args or {}, "id": f"call_{n}"} for n in names]
    return AIMessage("", tool_calls=calls)


def tool_messages(result: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.name: m for m in result["messages"] if isinstance(m, ToolMessage)}


def guarded_agent(tools: list[BaseTool], steps: list[Any], **guard: Any) -> Any:
    model = ScriptedChatModel(steps)
    return create_agent(model, tools, middleware=[ToolGuardMiddleware(**guard)])


def test_a_hanging_tool_is_answered_with_a_timeout_error(wait_forever: BaseTool) -> None:
    agent = guarded_agent([wait_forever], [calling("wait_forever"), "gave up"], timeout=0.2)

    result = agent.invoke({"messages": [("user", "wait")]})

    message = tool_messages(result)["wait_forever"]
    assert message.content == TOOL_TIMEOUT.format(tool="wait_forever", seconds=0.2)
    assert message.content == 'ERROR: tool "wait_forever" timed out after 0.2 s'
    assert message.status == "error"
    assert message.tool_call_id == "call_wait_forever"
    assert result["messages"][-1].content == "gave up"


async def test_a_hanging_tool_times_out_on_the_async_path(
    wait_forever: BaseTool, release: threading.Event
) -> None:
    agent = guarded_agent([wait_forever], [calling("wait_forever"), "gave up"], timeout=0.2)

    try:
        result = await agent.ainvoke({"messages": [("user", "wait")]})
    finally:
        # The event loop waits for its executor's threads when it closes; free the tool first.
        release.set()

    message = tool_messages(result)["wait_forever"]
    assert message.content == 'ERROR: tool "wait_forever" timed out after 0.2 s'
    assert message.status == "error"


def test_without_the_guard_a_tool_exception_crashes_create_agent() -> None:
    agent = create_agent(ScriptedChatModel([calling("explode"), "never"]), [explode])

    with pytest.raises(RuntimeError, match="the disk is on fire"):
        agent.invoke({"messages": [("user", "go")]})


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_tool_exception_becomes_an_error_observation(use_async: bool) -> None:
    agent = guarded_agent([explode], [calling("explode"), "it failed"])
    state = {"messages": [("user", "go")]}

    result = await agent.ainvoke(state) if use_async else agent.invoke(state)

    message = tool_messages(result)["explode"]
    assert message.content == TOOL_ERROR.format(message="the disk is on fire")
    assert message.status == "error"
    assert result["messages"][-1].content == "it failed"


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_one_megabyte_observation_is_cut_to_the_cap(use_async: bool) -> None:
    agent = guarded_agent([huge], [calling("huge"), "done"], max_observation_bytes=1000)
    state = {"messages": [("user", "go")]}

    result = await agent.ainvoke(state) if use_async else agent.invoke(state)

    content = tool_messages(result)["huge"].text
    assert len(content.encode()) <= 1000
    marker = TRUNCATION_MARKER.format(shown=content.count("x"), total=ONE_MB)
    assert content.endswith(marker)
    assert content.startswith("x" * 900)
    # The megabyte never reaches the state, so it never reaches a checkpoint either.
    assert sum(len(m.text) for m in result["messages"]) < 2000


def test_the_default_cap_is_8192_bytes() -> None:
    result = guarded_agent([huge], [calling("huge"), "done"]).invoke({"messages": [("user", "go")]})

    assert len(tool_messages(result)["huge"].text.encode()) == 8192


def test_a_normal_result_passes_unchanged() -> None:
    agent = guarded_agent([add], [calling("add", args={"a": 2, "b": 3}), "5"])

    message = tool_messages(agent.invoke({"messages": [("user", "2+3")]}))["add"]

    assert (message.content, message.status, message.tool_call_id) == ("5", "success", "call_add")


def test_invalid_arguments_stay_an_error_observation_the_model_can_fix() -> None:
    agent = guarded_agent([add], [calling("add", args={"a": "two"}), "sorry"])

    message = tool_messages(agent.invoke({"messages": [("user", "2+3")]}))["add"]

    assert message.status == "error"
    assert "a" in message.text and "b" in message.text


def test_hanging_raising_and_huge_tools_in_one_turn(wait_forever: BaseTool) -> None:
    agent = guarded_agent(
        [wait_forever, explode, huge],
        [calling("wait_forever", "explode", "huge"), "survived"],
        timeout=0.3,
        max_observation_bytes=200,
    )

    result = agent.invoke({"messages": [("user", "everything")]})

    messages = tool_messages(result)
    assert messages["wait_forever"].text.startswith('ERROR: tool "wait_forever" timed out')
    assert messages["explode"].text == "ERROR: the disk is on fire"
    assert len(messages["huge"].text.encode()) <= 200
    assert result["messages"][-1].content == "survived"


@tool
def needs_approval() -> str:
    """Ask a human first."""
    answer = interrupt("may I?")
    return f"human said {answer}"


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_an_interrupt_inside_a_tool_passes_through_and_resumes(use_async: bool) -> None:
    model = ScriptedChatModel([calling("needs_approval"), "thanks"])
    agent = create_agent(
        model, [needs_approval], middleware=[ToolGuardMiddleware()], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t1"}}
    start = {"messages": [("user", "go")]}
    resume = Command(resume="yes")

    paused = await agent.ainvoke(start, config) if use_async else agent.invoke(start, config)
    assert [i.value for i in paused["__interrupt__"]] == ["may I?"]
    done = await agent.ainvoke(resume, config) if use_async else agent.invoke(resume, config)

    assert tool_messages(done)["needs_approval"].content == "human said yes"


@tool
def remember(note: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Store a note in the state."""
    return Command(update={"messages": [ToolMessage(f"noted {note}", tool_call_id=tool_call_id)]})


def test_a_command_from_a_tool_passes_through() -> None:
    agent = guarded_agent([remember], [calling("remember", args={"note": "milk"}), "ok"])

    result = agent.invoke({"messages": [("user", "remember milk")]})

    assert tool_messages(result)["remember"].content == "noted milk"


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"timeout": 0}, "tool_timeout: Input should be greater than 0, got 0"),
        ({"timeout": -1.5}, "tool_timeout: Input should be greater than 0"),
        ({"timeout": float("nan")}, "tool_timeout: Input should be a finite number"),
        ({"timeout": True}, "tool_timeout: Input should be a valid number, got True"),
        ({"timeout": "30"}, "tool_timeout: Input should be a valid number, got '30'"),
        (
            {"max_observation_bytes": 0},
            "max_observation_bytes: Input should be greater than or equal to 128, got 0",
        ),
        ({"max_observation_bytes": 10.5}, "max_observation_bytes: Input should be a valid int"),
        ({"max_observation_bytes": False}, "max_observation_bytes: Input should be a valid int"),
    ],
)
def test_bad_options_raise_at_construction(options: dict[str, Any], complaint: str) -> None:
    with pytest.raises(AgentConfigurationError) as raised:
        ToolGuardMiddleware(**options)
    assert complaint in str(raised.value)


def test_the_defaults_are_the_agents() -> None:
    guard = ToolGuardMiddleware()
    defaults = AgentOptions()
    assert (guard.timeout, guard.max_observation_bytes) == (
        defaults.tool_timeout,
        defaults.max_observation_bytes,
    )


@tool(response_format="content_and_artifact")
def rows() -> tuple[str, list[int]]:
    """Rows with an artifact."""
    return "3 rows", [1, 2, 3]


def test_an_artifact_stays_on_the_guarded_message() -> None:
    agent = guarded_agent([rows], [calling("rows"), "ok"])
    message = tool_messages(agent.invoke({"messages": [("user", "rows")]}))["rows"]
    assert (message.text, message.artifact) == ("3 rows", [1, 2, 3])


def test_no_timeout_is_allowed() -> None:
    agent = guarded_agent([add], [calling("add", args={"a": 1, "b": 1}), "2"], timeout=None)

    assert tool_messages(agent.invoke({"messages": [("user", "1+1")]}))["add"].content == "2"
