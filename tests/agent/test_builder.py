from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.errors import AgentConfigurationError
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


def test_the_graph_binds_its_own_recursion_limit() -> None:
    agent = create_rules_agent(ScriptedChatModel([]), [add], max_iterations=6)
    assert agent.config is not None
    assert agent.config["recursion_limit"] == 17


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_iterations": 0}, "max_iterations must be an int >= 1, got 0"),
        ({"max_iterations": True}, "max_iterations must be an int >= 1"),
        ({"max_observation_bytes": 100}, "max_observation_bytes must be an int >= 128, got 100"),
        ({"tool_timeout": 0}, "tool_timeout must be a number of seconds > 0, got 0"),
        ({"tool_timeout": "5"}, "tool_timeout must be a number of seconds > 0"),
        (
            {"on_limit": "stop"},
            "on_limit='stop' is not supported; use one of: summarize, end, raise",
        ),
        ({"protocol": "json"}, "protocol='json' is not supported; use one of: auto, native, text"),
        ({"project_id": -1}, "project_id must be an int >= 1"),
        ({"rules": object()}, "rules must be a RuleReader"),
        ({"require_approval": "add"}, "require_approval must be a list of tool names"),
    ],
)
def test_bad_options_raise_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(
        AgentConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        create_rules_agent(ScriptedChatModel([]), [add], **options)


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="repeated: add"):
        create_rules_agent(ScriptedChatModel([]), [add, add])


def test_non_tools_are_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="got int"):
        create_rules_agent(ScriptedChatModel([]), [3])  # type: ignore[list-item]


def test_non_models_are_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="model must be a BaseChatModel"):
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
