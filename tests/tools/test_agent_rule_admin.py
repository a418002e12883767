"""The agent_rule_admin tool: create/update/delete, strict input, content limit, async."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_tests.unit_tests import ToolsUnitTests
from langgraph.store.memory import InMemoryStore

from langchain_agent_rules.errors import (
    DuplicateRuleError,
    InvalidToolCallError,
    RuleNotFoundError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.langgraph_store import LangGraphRuleStore
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule, RuleTarget, RuleType
from langchain_agent_rules.tools.agent_rule_admin import AgentRuleAdminTool as _AgentRuleAdminTool


class AgentRuleAdminTool(_AgentRuleAdminTool):
    """The tool with ``handle_tool_error=False``: these tests read the errors it raises."""

    handle_tool_error: Any = False


CREATE = {
    "action": "create",
    "rule": {
        "id": "answer_in_french",
        "type": "REQUIREMENT",
        "target": "output",
        "content": "Always answer in French.",
        "priority": 5,
    },
    "project_id": 1,
}


def existing() -> Rule:
    return Rule(
        id="be_brief",
        type="guideline",
        target="output",
        content="Keep answers under five sentences.",
        priority=2,
        project_id=3,
    )


def invoke(tool: AgentRuleAdminTool, arguments: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(tool.invoke(arguments))
    return result


class TestAgentRuleAdminToolStandard(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[AgentRuleAdminTool]:
        return AgentRuleAdminTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"writer": InMemoryRuleStore()}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return CREATE


def test_model_facing_text_is_exact() -> None:
    tool = AgentRuleAdminTool(InMemoryRuleStore())
    assert tool.name == "agent_rule_admin"
    assert tool.description == (
        "Creates, updates or deletes one agent rule in the injected rule store. "
        "create needs rule.id, rule.type, rule.target and rule.content (rule.priority defaults "
        "to 0; project_id null or absent makes a global rule). update needs rule.id and any of "
        "type, target, content, priority, check; a project_id key moves the rule to that "
        "project, its absence keeps the scope. delete needs rule.id only. rule.check "
        '(optional) is enforced in code, for example {"forbid": "email"}; null removes it.'
    )
    assert tool.tags == ["agent:rules", "rules", "agent:admin"]
    check_schema = tool.args_schema["$defs"]["AgentRuleAdminRuleArgument"]["properties"]["check"]
    assert check_schema["description"] == (
        "A check enforced in code: exactly one of forbid (email, phone, credit_card, iban, "
        "ipv4, ipv6, secret or regex:<pattern>), require (regex:<pattern>, with an optional "
        "when), language (an ISO 639-1 code), max_chars (an integer) or tool (a tool name or "
        "*, with an optional args regex); optional on_fail and scope. null: no check."
    )


def test_create_stores_the_rule_and_returns_its_public_view() -> None:
    store = InMemoryRuleStore()
    result = invoke(AgentRuleAdminTool(store), CREATE)
    assert result == {
        "action": "create",
        "rule": {
            "id": "answer_in_french",
            "type": "REQUIREMENT",
            "target": "OUTPUT",
            "content": "Always answer in French.",
            "priority": 5,
        },
        "project_id": 1,
    }
    stored = store.get("answer_in_french")
    assert (stored.type, stored.target, stored.project_id) == (
        RuleType.REQUIREMENT,
        RuleTarget.OUTPUT,
        1,
    )


@pytest.mark.parametrize("scope", [{}, {"project_id": None}])
def test_create_without_project_makes_a_global_rule_with_priority_zero(
    scope: dict[str, Any],
) -> None:
    store = InMemoryRuleStore()
    rule = {key: value for key, value in CREATE["rule"].items() if key != "priority"}
    result = invoke(AgentRuleAdminTool(store), {"action": "create", "rule": rule, **scope})
    assert result["project_id"] is None and result["rule"]["priority"] == 0
    assert store.get("answer_in_french").is_global


def test_update_changes_only_the_given_fields_and_keeps_the_scope() -> None:
    store = InMemoryRuleStore([existing()])
    created_at = store.get("be_brief").created_at
    result = invoke(
        AgentRuleAdminTool(store),
        {"action": "update", "rule": {"id": "be_brief", "priority": 8, "type": "constraint"}},
    )
    assert result["rule"]["priority"] == 8 and result["rule"]["type"] == "CONSTRAINT"
    assert result["project_id"] == 3
    stored = store.get("be_brief")
    assert stored.content == existing().content and stored.created_at == created_at


@pytest.mark.parametrize(("project_id", "is_global"), [(None, True), (9, False)])
def test_update_with_a_project_id_key_moves_the_rule(
    project_id: int | None, is_global: bool
) -> None:
    store = InMemoryRuleStore([existing()])
    invoke(
        AgentRuleAdminTool(store),
        {"action": "update", "rule": {"id": "be_brief"}, "project_id": project_id},
    )
    assert store.get("be_brief").project_id == project_id
    assert store.get("be_brief").is_global is is_global


def test_delete_removes_the_rule_and_returns_it() -> None:
    store = InMemoryRuleStore([existing()])
    result = invoke(AgentRuleAdminTool(store), {"action": "delete", "rule": {"id": "be_brief"}})
    assert result["action"] == "delete" and result["rule"]["id"] == "be_brief"
    assert result["project_id"] == 3
    assert store.get_all_by_project(3) == []


def test_a_tool_call_gets_compact_json_content_and_the_dict_as_artifact() -> None:
    message = AgentRuleAdminTool(InMemoryRuleStore()).invoke(
        {"type": "tool_call", "id": "call_1", "name": "agent_rule_admin", "args": CREATE}
    )
    assert isinstance(message, ToolMessage)
    assert message.content == json.dumps(message.artifact, separators=(",", ":"))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"action": "rename", "rule": {"id": "be_brief"}}, 'invalid action "rename"'),
        ({"rule": {"id": "be_brief"}}, "action is required"),
        ({"action": "delete"}, "rule is required"),
        ({"action": "delete", "rule": "be_brief"}, 'invalid rule "be_brief"'),
        ({"action": "delete", "rule": {"id": "Be-Brief"}}, 'invalid rule.id "Be-Brief"'),
        ({"action": "delete", "rule": {"id": "be_brief"}, "force": True}, "unknown key 'force'"),
        (
            {"action": "update", "rule": {"id": "be_brief", "colour": 1}},
            "unknown key 'rule.colour'",
        ),
        ({"action": "update", "rule": {"id": "be_brief", "priority": "9"}}, "rule.priority"),
        ({"action": "update", "rule": {"id": "be_brief", "priority": True}}, "rule.priority"),
        ({"action": "update", "rule": {"id": "be_brief", "type": "wish"}}, 'rule.type "wish"'),
        ({"action": "update", "rule": {"id": "be_brief", "type": None}}, "may not be null"),
        ({"action": "update", "rule": {"id": "be_brief"}}, "at least one of"),
        ({"action": "update", "rule": {"id": "be_brief"}, "project_id": 0}, "project_id 0"),
        ({"action": "update", "rule": {"id": "be_brief"}, "project_id": "3"}, 'project_id "3"'),
        ({"action": "update", "rule": {"id": "be_brief", "content": "short"}}, "10 characters"),
        (
            {"action": "create", "rule": {"id": "new_rule", "type": "guideline"}},
            "needs rule.target",
        ),
        ({"action": "delete", "rule": {"id": "be_brief", "priority": 1}}, "rule.id only"),
        ({"action": "delete", "rule": {"id": "be_brief"}, "project_id": 3}, "rule.id only"),
    ],
)
def test_invalid_input_raises_and_writes_nothing(
    tmp_path: Path, arguments: dict[str, Any], message: str
) -> None:
    path = tmp_path / "rules.json"
    JsonFileRuleStore(path, create=True).create(existing())
    before = path.read_bytes()
    with pytest.raises(InvalidToolCallError, match="invalid agent_rule_admin arguments") as caught:
        AgentRuleAdminTool(JsonFileRuleStore(path)).invoke(arguments)
    assert message in str(caught.value)
    assert path.read_bytes() == before


def test_content_over_the_byte_limit_raises_and_writes_nothing() -> None:
    store = InMemoryRuleStore([existing()])
    tool = AgentRuleAdminTool(store, {"max_rule_content_bytes": 40})
    at_limit = "ż" * 20  # 40 bytes in UTF-8
    invoke(tool, {"action": "update", "rule": {"id": "be_brief", "content": at_limit}})
    assert store.get("be_brief").content == at_limit
    for arguments in (
        {"action": "update", "rule": {"id": "be_brief", "content": at_limit + "a"}},
        {**CREATE, "rule": {**CREATE["rule"], "content": at_limit + "a"}},
    ):
        with pytest.raises(ToolExecutionError) as caught:
            tool.invoke(arguments)
        assert "has 41 bytes of content; the limit is max_rule_content_bytes=40" in str(
            caught.value
        )
    assert store.get("be_brief").content == at_limit
    assert [r.id for r in store.get_all_by_project(1)] == []


def test_an_unknown_or_duplicate_id_is_a_refusal_the_model_reads() -> None:
    store = InMemoryRuleStore([existing()])
    tool = _AgentRuleAdminTool(store)  # the default: refusals are results
    duplicate = tool.invoke({**CREATE, "rule": {**CREATE["rule"], "id": "be_brief"}})
    assert duplicate == "a rule with id 'be_brief' already exists"
    for action in (
        {"action": "update", "rule": {"id": "ghost_rule", "priority": 1}},
        {"action": "delete", "rule": {"id": "ghost_rule"}},
    ):
        assert "no rule with id 'ghost_rule'" in tool.invoke(action)
    assert store.get("be_brief").content == existing().content  # not replaced by the duplicate
    assert [rule.id for rule in store.get_all_by_project(3)] == ["be_brief"]


async def test_without_error_handling_the_store_error_is_the_cause() -> None:
    tool = AgentRuleAdminTool(InMemoryRuleStore([existing()]), handle_tool_error=False)
    with pytest.raises(InvalidToolCallError) as caught:
        tool.invoke({**CREATE, "rule": {**CREATE["rule"], "id": "be_brief"}})
    assert isinstance(caught.value.__cause__, DuplicateRuleError)
    with pytest.raises(InvalidToolCallError) as caught:
        await tool.ainvoke({"action": "delete", "rule": {"id": "ghost_rule"}})
    assert isinstance(caught.value.__cause__, RuleNotFoundError)


async def test_async_actions_use_the_stores_async_twins() -> None:
    store = LangGraphRuleStore(InMemoryStore())
    tool = AgentRuleAdminTool(store)
    created = json.loads(await tool.ainvoke(CREATE))
    assert created["rule"]["id"] == "answer_in_french"
    updated = json.loads(
        await tool.ainvoke({"action": "update", "rule": {"id": "answer_in_french", "priority": 1}})
    )
    assert updated["rule"]["priority"] == 1 and updated["project_id"] == 1
    await tool.ainvoke({"action": "delete", "rule": {"id": "answer_in_french"}})
    assert store.get_all_by_project(1) == []


class SyncOnlyStore:
    """A store of a user's own: the sync methods only, each noting the thread it ran on."""

    def __init__(self, inner: JsonFileRuleStore) -> None:
        self.inner = inner
        self.threads: set[int] = set()

    def _note(self) -> None:
        self.threads.add(threading.get_ident())

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        self._note()
        return self.inner.get_all_by_project(project_id)

    def get(self, rule_id: str) -> Rule:
        self._note()
        return self.inner.get(rule_id)

    def create(self, rule: Rule) -> Rule:
        self._note()
        return self.inner.create(rule)

    def update(self, rule: Rule) -> Rule:
        self._note()
        return self.inner.update(rule)

    def delete(self, rule_id: str) -> Rule:
        self._note()
        return self.inner.delete(rule_id)


async def test_async_actions_run_a_sync_only_store_in_a_thread(tmp_path: Path) -> None:
    store = SyncOnlyStore(JsonFileRuleStore(tmp_path / "rules.json", create=True))
    tool = AgentRuleAdminTool(store)
    await tool.ainvoke(CREATE)
    await tool.ainvoke({"action": "update", "rule": {"id": "answer_in_french"}, "project_id": None})
    with pytest.raises(InvalidToolCallError):
        await tool.ainvoke({"action": "delete", "rule": {"id": "answer_in_french", "type": "x"}})
    assert store.threads and threading.get_ident() not in store.threads
    assert store.inner.get("answer_in_french").is_global


def test_a_reader_only_store_is_refused_at_construction() -> None:
    class ReadOnly:
        def get_all_by_project(self, project_id: int | None) -> list[Rule]:
            return []

        def get(self, rule_id: str) -> Rule:
            raise RuleNotFoundError(rule_id)

    with pytest.raises(ToolConfigurationError, match="rule store"):
        AgentRuleAdminTool(ReadOnly())  # type: ignore[arg-type]


def test_bad_configuration_raises_at_construction() -> None:
    with pytest.raises(ToolConfigurationError):
        AgentRuleAdminTool(InMemoryRuleStore(), {"max_rule_content_bytes": -1})


# -- checks ---------------------------------------------------------------------------

CHECKED = {
    "action": "create",
    "rule": {
        "id": "no_email",
        "type": "PROHIBITION",
        "target": "OUTPUT",
        "content": "Never reveal e-mail addresses.",
        "check": {"forbid": "email"},
    },
}


def test_create_accepts_a_check_and_returns_it_with_the_rule() -> None:
    store = InMemoryRuleStore()
    result = invoke(AgentRuleAdminTool(store), CHECKED)
    assert result["rule"]["check"] == {"forbid": "email"}
    stored = store.get("no_email")
    assert stored.check is not None and stored.check.action == "redact"


def test_update_changes_or_removes_the_check() -> None:
    store = InMemoryRuleStore()
    tool = AgentRuleAdminTool(store)
    invoke(tool, CHECKED)
    changed = invoke(
        tool, {"action": "update", "rule": {"id": "no_email", "check": {"forbid": "phone"}}}
    )
    assert changed["rule"]["check"] == {"forbid": "phone"}
    removed = invoke(tool, {"action": "update", "rule": {"id": "no_email", "check": None}})
    assert "check" not in removed["rule"] and store.get("no_email").check is None


@pytest.mark.parametrize(
    ("check", "target", "message"),
    [
        (
            {"forbid": "mail"},
            "OUTPUT",
            "invalid agent_rule_admin arguments: invalid rule: invalid check: unknown detector "
            "'mail' in forbid; allowed: email, phone, phone:<REGION>, credit_card, iban, ipv4, "
            "ipv6, secret or regex:<pattern>",
        ),
        (
            {"tool": "sql_query"},
            "OUTPUT",
            "invalid agent_rule_admin arguments: invalid rule: a tool check needs target TOOL, "
            "got OUTPUT",
        ),
    ],
)
def test_an_invalid_check_is_refused_before_anything_is_written(
    check: dict[str, Any], target: str, message: str
) -> None:
    store = InMemoryRuleStore()
    arguments = {**CHECKED, "rule": {**CHECKED["rule"], "check": check, "target": target}}
    with pytest.raises(InvalidToolCallError) as caught:
        AgentRuleAdminTool(store).invoke(arguments)
    assert str(caught.value) == message
    assert store.get_all_by_project(None) == []


def test_a_check_that_makes_the_rule_too_large_breaks_the_payload_limit() -> None:
    store = InMemoryRuleStore()
    big = {"require": "regex:" + "(?:EUR)" * 200}
    arguments = {**CHECKED, "rule": {**CHECKED["rule"], "check": big}}
    with pytest.raises(ToolExecutionError, match=r"the limit is max_payload_bytes=1000$"):
        AgentRuleAdminTool(store, {"max_payload_bytes": 1000}).invoke(arguments)
    assert store.get_all_by_project(None) == []


async def test_the_store_s_own_limit_reaches_the_model_as_a_tool_error() -> None:
    store = InMemoryRuleStore(limits={"max_rule_content_bytes": 20})
    tool = AgentRuleAdminTool(store, {"max_rule_content_bytes": 500})
    with pytest.raises(ToolExecutionError) as caught:
        await tool.ainvoke(CHECKED)
    assert str(caught.value) == (
        "rule 'no_email' has 30 bytes of content; the limit is max_rule_content_bytes=20"
    )


def test_deeply_nested_arguments_end_as_an_invalid_call() -> None:
    # As deep as json.loads lets a model's arguments be (LangChain's BaseTool.run calls
    # str() on the input, which no tool can guard against deeper than that).
    nested: Any = "x"
    for _ in range(900):
        nested = [nested]
    arguments = {**CHECKED, "rule": {**CHECKED["rule"], "content": nested}}
    with pytest.raises(InvalidToolCallError, match=r"rule nests deeper than 32 levels"):
        AgentRuleAdminTool(InMemoryRuleStore()).invoke(arguments)


def test_by_default_a_refused_call_is_a_result_the_model_reads() -> None:
    message = _AgentRuleAdminTool(InMemoryRuleStore()).invoke(
        {"type": "tool_call", "id": "call_1", "name": "agent_rule_admin", "args": {"action": "x"}}
    )
    assert message.status == "error"
    assert message.content.startswith("invalid agent_rule_admin arguments")
