from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware import TextToolProtocolMiddleware, ToolGuardMiddleware
from langchain_agent_rules.middleware._step import MAX_REFUSED_TURNS
from langchain_agent_rules.middleware.prompts import PARSE_ERROR
from langchain_agent_rules.testing import ScriptedChatModel
from langchain_agent_rules.text_protocol import OBSERVATION_MESSAGE, render_tools_prompt

from .sample_tools import add, explode

ADD_2_3 = 'I will add them.\n```tool\n{"tool": "add", "args": {"a": 2, "b": 3}}\n```'
ADD_5_4 = '```json\n{"tool": "add", "args": {"a": 5, "b": 4}}\n```'


def text_agent(model: ScriptedChatModel, **options: Any) -> Any:
    return create_agent(model, [add], middleware=[TextToolProtocolMiddleware()], **options)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_model_that_only_writes_fenced_calls_drives_create_agent(use_async: bool) -> None:
    model = ScriptedChatModel([ADD_2_3, ADD_5_4, "The sum is 9.\nFINAL: 9"])
    agent = text_agent(model)
    state = {"messages": [("user", "What is (2 + 3) + 4?")]}

    result = await agent.ainvoke(state) if use_async else agent.invoke(state)

    observations = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert observations == ["5", "9"]
    assert result["messages"][-1].content == "9"
    # The model never got native tool schemas.
    assert [call.tools for call in model.calls] == [[], [], []]


def test_the_model_reads_the_tools_prompt_and_a_text_history() -> None:
    model = ScriptedChatModel([ADD_2_3, "FINAL: 5"])

    text_agent(model, system_prompt="Be brief.").invoke({"messages": [("user", "2 + 3?")]})

    second = model.calls[1]
    assert second.system_prompt == "Be brief.\n\n" + render_tools_prompt([add])
    assert [(m.type, m.text) for m in second.messages[1:]] == [
        ("human", "2 + 3?"),
        ("ai", '```tool\n{"tool": "add", "args": {"a": 2, "b": 3}}\n```'),
        ("human", OBSERVATION_MESSAGE.format(observations="5", task="2 + 3?")),
    ]


def test_without_a_system_prompt_the_tools_prompt_is_the_system_prompt() -> None:
    model = ScriptedChatModel(["FINAL: hello"])

    result = text_agent(model).invoke({"messages": [("user", "hi")]})

    assert model.calls[0].system_prompt == render_tools_prompt([add])
    assert result["messages"][-1].content == "hello"


def test_the_state_keeps_the_parsed_tool_calls_never_the_prose_around_them() -> None:
    model = ScriptedChatModel([ADD_2_3, "FINAL: 5"])

    result = text_agent(model).invoke({"messages": [("user", "2 + 3?")]})

    call_message = result["messages"][1]
    assert isinstance(call_message, AIMessage)
    assert call_message.content == ""
    assert [(c["name"], c["args"]) for c in call_message.tool_calls] == [("add", {"a": 2, "b": 3})]
    assert call_message.tool_calls[0]["id"]


def test_an_unreadable_call_is_answered_with_the_parse_error_and_the_model_asked_again() -> None:
    broken = '```tool\n{"tool": "add", "args": [2, 3]}\n```'
    model = ScriptedChatModel([broken, ADD_2_3, "FINAL: 5"])

    result = text_agent(model).invoke({"messages": [("user", "2 + 3?")]})

    retry = model.calls[1].messages
    assert retry[-2] == AIMessage(content='{"tool": "add", "args": [2, 3]}')
    problem = PARSE_ERROR.format(problem='"args" must be a JSON object, not a list')
    assert retry[-1] == HumanMessage(
        content=OBSERVATION_MESSAGE.format(observations=problem, task="2 + 3?")
    )
    assert result["messages"][-1].content == "5"
    refused = result["messages"][1]
    assert isinstance(refused, AIMessage) and refused.invalid_tool_calls
    assert [m.text for m in result["messages"] if isinstance(m, ToolMessage)] == [problem, "5"]


def test_turns_whose_calls_are_all_refused_are_bounded_without_run_limits() -> None:
    broken = '```tool\n{"tool": "add", "args": [2, 3]}\n```'
    model = ScriptedChatModel([broken] * (MAX_REFUSED_TURNS + 1))

    result = text_agent(model).invoke({"messages": [("user", "2 + 3?")]})

    assert MAX_REFUSED_TURNS == 3
    assert model.remaining == 0
    assert result["messages"][-1].text.startswith("ERROR: your tool call could not be read")


async def test_retries_work_on_the_async_path() -> None:
    model = ScriptedChatModel(['```tool\n{"tool": "add", "args": [2]}\n```', ADD_2_3, "FINAL: 5"])

    result = await text_agent(model).ainvoke({"messages": [("user", "2 + 3?")]})

    assert result["messages"][-1].content == "5"


def test_an_unknown_tool_name_reaches_the_model_as_an_observation() -> None:
    model = ScriptedChatModel(['```tool\n{"tool": "multiply", "args": {}}\n```', "FINAL: no"])

    result = text_agent(model).invoke({"messages": [("user", "2 * 3?")]})

    [observation] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert observation.status == "error"
    assert "multiply" in observation.text


def test_it_composes_with_the_tool_guard() -> None:
    model = ScriptedChatModel(['```tool\n{"tool": "explode", "args": {}}\n```', "FINAL: broken"])
    agent = create_agent(
        model, [explode], middleware=[TextToolProtocolMiddleware(), ToolGuardMiddleware()]
    )

    result = agent.invoke({"messages": [("user", "go")]})

    observation = model.calls[1].messages[-1].text
    assert observation.startswith("Observation:\nERROR: the disk is on fire")
    assert result["messages"][-1].content == "broken"


class Answer(BaseModel):
    value: int


def test_structured_output_is_refused_with_a_clear_error() -> None:
    agent = text_agent(ScriptedChatModel(["FINAL: 5"]), response_format=Answer)

    with pytest.raises(AgentConfigurationError, match="does not support response_format"):
        agent.invoke({"messages": [("user", "2 + 3?")]})
