from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from pydantic import ValidationError

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.options import AgentOptions
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import run

SNAPSHOT = Path(__file__).with_name("graph.mermaid")


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_graph_shape_matches_the_snapshot() -> None:
    mermaid = create_rules_agent(ScriptedChatModel([]), [add]).get_graph().draw_mermaid()
    assert mermaid == SNAPSHOT.read_text()


def test_budgets_end_a_run_long_before_langgraphs_recursion_limit() -> None:
    calls = [
        AIMessage("", tool_calls=[{"name": "add", "args": {"a": n, "b": 1}, "id": f"c{n}"}])
        for n in range(3)
    ]
    agent = create_rules_agent(ScriptedChatModel([*calls, "FINAL: 2"]), [add], max_iterations=3)
    result = run(agent, "1+1?", "sync", {"recursion_limit": 12})
    assert (result["answer"], result["stop_reason"]) == ("2", "max_iterations")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"max_iterations": 0},
            "max_iterations: Input should be greater than or equal to 1, got 0",
        ),
        ({"max_iterations": True}, "max_iterations: Input should be a valid integer, got True"),
        (
            {"max_observation_bytes": 100},
            "max_observation_bytes: Input should be greater than or equal to 128, got 100",
        ),
        ({"tool_timeout": 0}, "tool_timeout: Input should be greater than 0, got 0"),
        ({"tool_timeout": "5"}, "tool_timeout: Input should be a valid number, got '5'"),
        ({"tool_timeout": float("inf")}, "tool_timeout: Input should be a finite number"),
        (
            {"on_limit": "stop"},
            "on_limit: Input should be 'summarize', 'end' or 'raise', got 'stop'",
        ),
        (
            {"protocol": "json"},
            "protocol: Input should be 'auto', 'native' or 'text', got 'json'",
        ),
        ({"project_id": -1}, "project_id: Input should be greater than or equal to 1, got -1"),
        ({"max_model_calls": 0}, "max_model_calls: Input should be greater than or equal to 1"),
        ({"max_total_tokens": 2.5}, "max_total_tokens: Input should be a valid integer"),
        ({"rules": object()}, "rules must be a RuleReader"),
        ({"require_approval": "add"}, "require_approval: Input should be a valid tuple, got 'add'"),
        ({"max_revisions": -1}, "max_revisions: Input should be greater than or equal to 0"),
        ({"review": "human"}, "review: Input should be 'off' or 'model', got 'human'"),
        (
            {"max_iteration": 3},
            "max_iteration: unknown option); the options are: protocol, project_id, "
            "max_iterations, max_model_calls",
        ),
    ],
)
def test_bad_options_raise_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(AgentConfigurationError) as raised:
        create_rules_agent(ScriptedChatModel([]), [add], **options)
    assert message in str(raised.value)


def test_options_are_checked_before_a_model_string_loads_anything() -> None:
    with pytest.raises(AgentConfigurationError, match="max_iterations"):
        create_rules_agent("local:/no/such/model.gguf", [add], max_iterations=0)


def test_an_options_object_and_keywords_combine() -> None:
    options = AgentOptions(max_iterations=2, on_limit="end")
    model = ScriptedChatModel(
        [
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": n, "b": 1}, "id": f"c{n}"}])
            for n in range(4)
        ]
    )
    agent = create_rules_agent(model, [add], options=options, max_iterations=4)
    result = run(agent, "1+1?", "sync")
    assert result["stop_reason"] == "max_iterations"
    assert result["answer"] == "I stopped after 4 tool iterations without reaching an answer."
    with pytest.raises(AgentConfigurationError, match="options must be an AgentOptions"):
        create_rules_agent(ScriptedChatModel([]), [add], options={"max_iterations": 2})  # type: ignore[arg-type]


def test_agent_options_are_frozen_and_name_every_default() -> None:
    options = AgentOptions()
    assert options.model_dump() == {
        "protocol": "auto",
        "project_id": None,
        "max_iterations": 6,
        "max_model_calls": None,
        "max_total_tokens": None,
        "tool_timeout": 30.0,
        "max_observation_bytes": 8192,
        "max_argument_bytes": 65536,
        "on_limit": "summarize",
        "system_prompt": None,
        "require_approval": (),
        "max_revisions": 2,
        "grounded_answers": False,
        "review": "off",
    }
    with pytest.raises(ValidationError):
        options.max_iterations = 3  # type: ignore[misc]
    assert all(field.description for field in AgentOptions.model_fields.values())


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="repeated: add"):
        create_rules_agent(ScriptedChatModel([]), [add, add])


def test_non_tools_are_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="got int"):
        create_rules_agent(ScriptedChatModel([]), [3])  # type: ignore[list-item]


def test_non_models_are_refused() -> None:
    with pytest.raises(
        AgentConfigurationError, match=r"model must be .* or a chat model object, not object"
    ):
        create_rules_agent(object(), [add])  # type: ignore[arg-type]


def test_auto_uses_text_when_bind_tools_is_not_implemented() -> None:
    model = GenericFakeChatModel(
        messages=iter(['```tool\n{"tool": "add", "args": {"a": 1, "b": 2}}\n```', "FINAL: 3"])
    )
    result = run(create_rules_agent(model, [add]), "1+2?", "sync")
    assert result["answer"] == "3"
    assert result["trace"][0]["observation"] == "3"


def test_native_without_bind_tools_fails_at_construction() -> None:
    model = GenericFakeChatModel(messages=iter([]))
    with pytest.raises(AgentConfigurationError, match="bind_tools is not implemented"):
        create_rules_agent(model, [add], protocol="native")


def test_auto_uses_native_when_the_model_binds_tools() -> None:
    model = ScriptedChatModel(
        [AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c"}]), "3"]
    )
    run(create_rules_agent(model, [add]), "1+2?", "sync")
    assert model.calls[0].tools == ["add"]
    assert "```tool" not in model.calls[0].system_prompt


def test_the_graph_publishes_its_input_and_output_schemas() -> None:
    agent = create_rules_agent(ScriptedChatModel([]), [add])
    assert set(agent.get_input_jsonschema()["properties"]) == {"messages"}
    output = agent.get_output_jsonschema()
    assert set(output["properties"]) == {
        "messages",
        "structured_response",
        "answer",
        "stop_reason",
        "iterations",
        "trace",
        "usage",
        "model_calls",
        "rule_events",
    }
    definitions = output["$defs"]
    assert set(definitions["Usage"]["properties"]) == {
        "model_calls",
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
    }
    assert set(definitions["RuleEvent"]["properties"]) == {"rule_id", "status", "detail"}
    assert set(definitions["ModelCall"]["properties"]) == {"started_at", "duration_ms", "purpose"}
    assert "started_at" in definitions["TraceStep"]["required"]
    assert "max_total_tokens" in str(output["properties"]["stop_reason"])
