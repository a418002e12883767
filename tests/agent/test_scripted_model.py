from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from langchain_agent_rules.testing import ScriptedChatModel, ScriptExhaustedError


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_steps_replay_in_order_with_tool_call_ids() -> None:
    model = ScriptedChatModel(
        [AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": None}]), "3"]
    )
    first = model.invoke("x")
    assert first.tool_calls == [
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "call_1_0", "type": "tool_call"}
    ]
    assert model.invoke("y").content == "3"
    assert model.remaining == 0


def test_bind_tools_records_bound_tool_names_and_messages() -> None:
    model = ScriptedChatModel(["ok", "ok"])
    model.bind_tools([add]).invoke([HumanMessage("hi")])
    model.invoke("plain")
    calls = model.calls
    assert [c.number for c in calls] == [1, 2]
    assert calls[0].tools == ["add"]
    assert calls[0].messages[0].content == "hi"
    assert calls[1].tools == []


def test_exception_step_is_raised() -> None:
    model = ScriptedChatModel([ConnectionError("model down")])
    with pytest.raises(ConnectionError, match="model down"):
        model.invoke("x")


def test_running_out_of_steps_fails_loudly_naming_the_call() -> None:
    model = ScriptedChatModel(["only"])
    model.invoke("one")
    with pytest.raises(ScriptExhaustedError, match="got call 2 but has only 1 step"):
        model.invoke("two")


async def test_async_calls_share_the_same_script() -> None:
    model = ScriptedChatModel(["a", "b"])
    assert (await model.ainvoke("x")).content == "a"
    assert model.invoke("y").content == "b"


def test_system_prompt_helper() -> None:
    model = ScriptedChatModel(["a"])
    model.invoke([("system", "be nice"), ("user", "hi")])
    assert model.calls[0].system_prompt == "be nice"


def test_a_bad_step_type_is_rejected_at_construction() -> None:
    with pytest.raises(TypeError, match="step 0 is a int"):
        ScriptedChatModel([3])  # type: ignore[list-item]
