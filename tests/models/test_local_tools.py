"""What ChatLocalLlama does with bound tools before the model runs: the tool choice, and the
conversation it shows the model (the text protocol's, so both protocols read the same)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.models.local import _grammar_functions, _with_tools_prompt
from langchain_agent_rules.testing import ScriptedChatModel
from langchain_agent_rules.text_protocol import render_tool_call_block, render_tools_prompt


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Repeat a text."""
    return text


TOOLS = [convert_to_openai_tool(add), convert_to_openai_tool(echo)]


@pytest.mark.parametrize(
    ("choice", "names", "answer"),
    [
        (None, ["add", "echo"], True),
        ("auto", ["add", "echo"], True),
        ("any", ["add", "echo"], False),
        ("required", ["add", "echo"], False),
        ("echo", ["echo"], False),
        ("none", [], True),
    ],
)
def test_tool_choice_decides_what_a_reply_may_be(
    choice: str | None, names: list[str], answer: bool
) -> None:
    functions, allow_answer = _grammar_functions(TOOLS, choice)
    assert [function["name"] for function in functions] == names
    assert allow_answer is answer


@pytest.mark.parametrize("choice", ["sum", "ANY", ""])
def test_a_tool_choice_that_names_no_bound_tool_is_refused(choice: str) -> None:
    with pytest.raises(AgentConfigurationError) as caught:
        _grammar_functions(TOOLS, choice)
    assert str(caught.value) == (
        f"tool_choice={choice!r} is not possible with the bound tools (add, echo); use None, "
        "'auto', 'any', 'required', 'none' or the name of a bound tool"
    )


def test_a_call_is_required_of_no_tools_is_refused() -> None:
    with pytest.raises(ValueError, match="bound tools \\(none\\)"):
        _grammar_functions([], "any")


def test_the_tools_join_the_system_message_as_the_text_protocol_writes_them() -> None:
    shown = _with_tools_prompt([SystemMessage("Be brief."), HumanMessage("1+2?")], TOOLS)
    assert shown == [
        SystemMessage("Be brief.\n\n" + render_tools_prompt([add, echo])),
        HumanMessage("1+2?"),
    ]


def test_without_a_system_message_the_tools_become_one() -> None:
    shown = _with_tools_prompt([HumanMessage("1+2?")], TOOLS)
    assert shown == [SystemMessage(render_tools_prompt([add, echo])), HumanMessage("1+2?")]


def test_tool_calls_and_results_are_shown_as_blocks_and_observations() -> None:
    history = [
        HumanMessage("What is 1+2?"),
        AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}]),
        ToolMessage("3", tool_call_id="c1", name="add"),
    ]
    shown = _with_tools_prompt(history, TOOLS)
    assert shown[2].text == '```tool\n{"tool": "add", "args": {"a": 1, "b": 2}}\n```'
    assert isinstance(shown[3], HumanMessage)
    assert shown[3].text.startswith("Observation:\n3\n\nThe task: What is 1+2?")


def test_native_and_text_protocols_show_the_model_the_same_conversation() -> None:
    call = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}])
    scripts: dict[str, list[AIMessage | str]] = {
        "native": [call, "FINAL: 3"],
        "text": [render_tool_call_block("add", {"a": 1, "b": 2}), "FINAL: 3"],
    }
    seen = {}
    for protocol, steps in scripts.items():
        model = ScriptedChatModel(steps=steps)
        agent = create_rules_agent(model, [add, echo], protocol=protocol)
        agent.invoke({"messages": [("user", "What is 1+2?")]})
        seen[protocol] = model.calls[1].messages
    native = _with_tools_prompt(seen["native"], TOOLS)
    assert [(m.type, m.text) for m in native] == [(m.type, m.text) for m in seen["text"]]
