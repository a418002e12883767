"""The agent_rule tool: its model-facing text, strict input, payload, limits, async."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_tests.unit_tests import ToolsUnitTests
from langgraph.store.memory import InMemoryStore

from langchain_agent_rules.errors import (
    InvalidToolCallError,
    RuleStoreError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.langgraph_store import LangGraphRuleStore
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.tools.agent_rule import AgentRuleTool as _AgentRuleTool


class AgentRuleTool(_AgentRuleTool):
    """The tool with ``handle_tool_error=False``: these tests read the errors it raises."""

    handle_tool_error: Any = False


def rule(rule_id: str, project_id: int | None = None, priority: int = 0, **extra: Any) -> Rule:
    return Rule(
        id=rule_id,
        type=extra.pop("type", "requirement"),
        target=extra.pop("target", "agent"),
        content=extra.pop("content", f"Follow rule {rule_id} carefully."),
        priority=priority,
        project_id=project_id,
        **extra,
    )


class RecordingReader(InMemoryRuleStore):
    """A real in-memory store that records which projects were read."""

    def __init__(self, rules: list[Rule]) -> None:
        super().__init__(rules)
        self.reads: list[int | None] = []

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        self.reads.append(project_id)
        return super().get_all_by_project(project_id)


RULES = [
    rule("global_low", priority=1),
    rule("project_one", project_id=1, priority=5, type="PROHIBITION", target="output"),
    rule("project_two", project_id=2, priority=9),
    rule("global_high", priority=7, metadata={"secret": "never shown"}),
]


class TestAgentRuleToolStandard(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[AgentRuleTool]:
        return AgentRuleTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"reader": InMemoryRuleStore(RULES)}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"project_id": 1}


def test_model_facing_text_is_exact() -> None:
    tool = AgentRuleTool(InMemoryRuleStore())
    assert tool.name == "agent_rule"
    assert tool.description == "Returns effective agent rules resolved by the injected rule reader."
    assert tool.tags == ["agent:rules", "rules", "agent:general"]
    assert convert_to_openai_tool(tool)["function"]["parameters"] == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "project_id": {
                "anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}],
                "default": None,
                "description": "Project whose rules apply in addition to the global ones; "
                "null or absent for the global rules only.",
            }
        },
    }


def test_project_rules_come_with_the_global_ones_highest_priority_first() -> None:
    result = json.loads(AgentRuleTool(InMemoryRuleStore(RULES)).invoke({"project_id": 1}))
    assert result == {
        "project_id": 1,
        "count": 3,
        "rules": [
            {
                "id": "global_high",
                "type": "REQUIREMENT",
                "target": "AGENT",
                "content": "Follow rule global_high carefully.",
                "priority": 7,
            },
            {
                "id": "project_one",
                "type": "PROHIBITION",
                "target": "OUTPUT",
                "content": "Follow rule project_one carefully.",
                "priority": 5,
            },
            {
                "id": "global_low",
                "type": "REQUIREMENT",
                "target": "AGENT",
                "content": "Follow rule global_low carefully.",
                "priority": 1,
            },
        ],
    }


@pytest.mark.parametrize("arguments", [{}, {"project_id": None}])
def test_null_or_absent_project_gives_the_global_rules_only(arguments: dict[str, Any]) -> None:
    result = json.loads(AgentRuleTool(InMemoryRuleStore(RULES)).invoke(arguments))
    assert result["project_id"] is None
    assert [r["id"] for r in result["rules"]] == ["global_high", "global_low"]


def test_a_tool_call_gets_compact_json_content_and_the_dict_as_artifact() -> None:
    message = AgentRuleTool(InMemoryRuleStore(RULES)).invoke(
        {"type": "tool_call", "id": "call_1", "name": "agent_rule", "args": {"project_id": 2}}
    )
    assert isinstance(message, ToolMessage)
    assert message.content == json.dumps(message.artifact, separators=(",", ":"))
    assert message.artifact["count"] == 3
    assert ": " not in message.content and ", " not in message.content.replace("rule ", "")


def test_equal_priorities_keep_the_store_order() -> None:
    ids = ["zeta_rule", "alpha_rule", "mid_rule", "beta_rule"]
    rules = [rule(i, priority=3) for i in ids] + [rule("top_rule", priority=4)]
    result = json.loads(AgentRuleTool(InMemoryRuleStore(rules)).invoke({}))
    assert [r["id"] for r in result["rules"]] == ["top_rule", *ids]


@pytest.mark.parametrize(
    "arguments",
    [
        {"project_id": "1"},
        {"project_id": 1.0},
        {"project_id": True},
        {"project_id": [1]},
        {"project_id": {"id": 1}},
        {"project_id": 0},
        {"project_id": -1},
        {"project": 1},
        {"project_id": 1, "verbose": True},
    ],
)
def test_invalid_arguments_raise_without_reading_the_store(arguments: dict[str, Any]) -> None:
    reader = RecordingReader(RULES)
    with pytest.raises(InvalidToolCallError, match="agent_rule arguments"):
        AgentRuleTool(reader).invoke(arguments)
    assert reader.reads == []


def test_invalid_argument_messages_say_what_is_allowed() -> None:
    tool = AgentRuleTool(InMemoryRuleStore())
    with pytest.raises(InvalidToolCallError) as wrong_type:
        tool.invoke({"project_id": "1"})
    assert str(wrong_type.value) == (
        'invalid agent_rule arguments: invalid project_id "1": '
        "null (the global rules only) or a positive integer"
    )
    with pytest.raises(InvalidToolCallError) as unknown:
        tool.invoke({"project": 1})
    assert str(unknown.value) == (
        "invalid agent_rule arguments: unknown key 'project'; allowed keys: project_id"
    )


def test_more_rules_than_max_rules_raise() -> None:
    tool = AgentRuleTool(InMemoryRuleStore(RULES), config={"max_rules": 2})
    assert json.loads(tool.invoke({}))["count"] == 2
    with pytest.raises(ToolExecutionError, match="3 effective rules; the limit is max_rules=2"):
        tool.invoke({"project_id": 1})


def test_multi_byte_content_at_the_byte_limit_passes_and_one_byte_more_fails() -> None:
    config = AgentRuleToolConfig(max_rule_content_bytes=500)
    at_limit = AgentRuleTool(InMemoryRuleStore([rule("polish", content="ż" * 250)]), config)
    assert json.loads(at_limit.invoke({}))["rules"][0]["content"] == "ż" * 250
    # Stored by a writer with a higher limit: the tool still names its own limit.
    written = InMemoryRuleStore(
        [rule("polish", content="ż" * 250 + "a")], limits={"max_rule_content_bytes": 501}
    )
    over = AgentRuleTool(written, config)
    with pytest.raises(ToolExecutionError) as caught:
        over.invoke({})
    assert str(caught.value) == (
        "rule 'polish' has 501 bytes of content; the limit is max_rule_content_bytes=500"
    )


def test_a_payload_over_max_payload_bytes_raises() -> None:
    reader = InMemoryRuleStore(RULES)
    size = len(AgentRuleTool(reader).invoke({}).encode())
    assert json.loads(AgentRuleTool(reader, {"max_payload_bytes": size}).invoke({}))
    with pytest.raises(ToolExecutionError, match=f"{size} bytes; the limit is max_payload_bytes"):
        AgentRuleTool(reader, {"max_payload_bytes": size - 1}).invoke({})


def test_reader_errors_propagate_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text("[oops", encoding="utf-8")
    with pytest.raises(RuleStoreError, match="corrupt JSON"):
        AgentRuleTool(JsonFileRuleStore(path)).invoke({})


def test_a_json_file_store_serves_the_tool(tmp_path: Path) -> None:
    store = JsonFileRuleStore(tmp_path / "rules.json", create=True)
    for item in RULES:
        store.create(item)
    assert json.loads(AgentRuleTool(store).invoke({"project_id": 2}))["count"] == 3


async def test_ainvoke_uses_the_readers_async_twin() -> None:
    store = LangGraphRuleStore(InMemoryStore())
    for item in RULES:
        await store.acreate(item)
    tool = AgentRuleTool(store)
    assert await tool.ainvoke({"project_id": 1}) == tool.invoke({"project_id": 1})


async def test_ainvoke_runs_a_sync_reader_and_checks_arguments_first() -> None:
    reader = RecordingReader(RULES)
    tool = AgentRuleTool(reader)
    assert json.loads(await tool.ainvoke({"project_id": 2}))["count"] == 3
    with pytest.raises(InvalidToolCallError):
        await tool.ainvoke({"project_id": True})
    assert reader.reads == [2]


@pytest.mark.parametrize(
    "config", [{"max_rules": 0}, {"max_rules": True}, {"max_rules": "5"}, {"limit": 5}]
)
def test_bad_configuration_raises_at_construction(config: dict[str, Any]) -> None:
    with pytest.raises(ToolConfigurationError):
        AgentRuleTool(InMemoryRuleStore(), config)


def test_something_that_is_not_a_reader_is_refused() -> None:
    with pytest.raises(ToolConfigurationError, match="rule reader"):
        AgentRuleTool(object())  # type: ignore[arg-type]


def test_handle_tool_error_turns_a_refusal_into_an_observation() -> None:
    tool = AgentRuleTool(InMemoryRuleStore(RULES), handle_tool_error=True)
    message = tool.invoke(
        {"type": "tool_call", "id": "call_2", "name": "agent_rule", "args": {"project_id": 0}}
    )
    assert message.status == "error"
    assert "invalid agent_rule arguments: invalid project_id 0" in message.content


async def test_the_check_comes_with_the_rule_only_when_it_has_one() -> None:
    checked = Rule(
        id="no_email",
        type="prohibition",
        target="output",
        content="Never reveal e-mail addresses.",
        priority=9,
        check={"forbid": "email", "scope": "answer_and_observations"},
    )
    tool = AgentRuleTool(InMemoryRuleStore([checked, rule("plain_rule")]))
    for payload in (json.loads(tool.invoke({})), json.loads(await tool.ainvoke({}))):
        assert payload["rules"][0] == {
            "id": "no_email",
            "type": "PROHIBITION",
            "target": "OUTPUT",
            "content": "Never reveal e-mail addresses.",
            "priority": 9,
            "check": {"forbid": "email", "scope": "answer_and_observations"},
        }
        assert "check" not in payload["rules"][1]


def test_by_default_a_refused_call_is_a_result_the_model_reads() -> None:
    message = _AgentRuleTool(InMemoryRuleStore()).invoke(
        {"type": "tool_call", "id": "call_1", "name": "agent_rule", "args": {"project_id": "1"}}
    )
    assert message.status == "error"
    assert message.content.startswith("invalid agent_rule arguments")
