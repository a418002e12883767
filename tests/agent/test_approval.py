from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import PROTOCOLS, call_step

MODES = ["sync", "async"]


def make_agent(protocol: str, steps: list[Any]) -> tuple[Any, list[str], ScriptedChatModel]:
    deleted: list[str] = []

    @tool
    def delete_rule(rule_id: str) -> str:
        """Delete a rule."""
        deleted.append(rule_id)
        return f"deleted {rule_id}"

    model = ScriptedChatModel(steps)
    agent = create_rules_agent(
        model,
        [delete_rule],
        protocol=protocol,
        require_approval=["delete_rule"],
        checkpointer=InMemorySaver(),
    )
    return agent, deleted, model


def invoke(agent: Any, payload: Any, mode: str) -> Any:
    config = {"configurable": {"thread_id": "review"}}
    if mode == "async":
        return asyncio.run(agent.ainvoke(payload, config))
    return agent.invoke(payload, config)


def start(agent: Any, mode: str) -> dict[str, Any]:
    paused = invoke(agent, {"messages": [("user", "delete old_rule")]}, mode)
    (request,) = paused["__interrupt__"]
    return request.value


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_approve_runs_the_call(protocol: str, mode: str) -> None:
    agent, deleted, _ = make_agent(
        protocol, [call_step(protocol, "delete_rule", rule_id="old_rule"), "FINAL: done"]
    )
    request = start(agent, mode)
    assert {k: request[k] for k in ("type", "tool", "args")} == {
        "type": "tool_approval",
        "tool": "delete_rule",
        "args": {"rule_id": "old_rule"},
    }
    assert deleted == []
    result = invoke(agent, Command(resume={"action": "approve"}), mode)
    assert deleted == ["old_rule"]
    assert result["answer"] == "done"
    step = result["trace"][0]
    assert (step["status"], step["approval"]) == ("ok", "approved")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_edit_runs_the_call_with_new_arguments(protocol: str, mode: str) -> None:
    agent, deleted, _ = make_agent(
        protocol, [call_step(protocol, "delete_rule", rule_id="old_rule"), "FINAL: done"]
    )
    start(agent, mode)
    result = invoke(
        agent, Command(resume={"action": "edit", "args": {"rule_id": "tmp_rule"}}), mode
    )
    assert deleted == ["tmp_rule"]
    step = result["trace"][0]
    assert (step["args"], step["observation"], step["approval"]) == (
        {"rule_id": "tmp_rule"},
        "deleted tmp_rule",
        "edited",
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_reject_tells_the_model_and_runs_nothing(protocol: str, mode: str) -> None:
    agent, deleted, model = make_agent(
        protocol, [call_step(protocol, "delete_rule", rule_id="old_rule"), "FINAL: not deleted"]
    )
    start(agent, mode)
    result = invoke(agent, Command(resume={"action": "reject", "reason": "keep it"}), mode)
    assert deleted == []
    step = result["trace"][0]
    assert (step["status"], step["approval"]) == ("rejected", "rejected")
    assert step["observation"] == (
        'ERROR: a human reviewer rejected the call to tool "delete_rule" (keep it). Do not '
        "retry it; answer with what you know or use another tool."
    )
    assert step["observation"] in model.calls[-1].messages[-1].text
    assert result["answer"] == "not deleted"


def test_plain_string_answers_work() -> None:
    agent, deleted, _ = make_agent(
        "native", [call_step("native", "delete_rule", rule_id="x_1"), "FINAL: ok"]
    )
    start(agent, "sync")
    invoke(agent, Command(resume="approve"), "sync")
    assert deleted == ["x_1"]


def test_a_bad_answer_says_what_is_allowed() -> None:
    agent, deleted, _ = make_agent("native", [call_step("native", "delete_rule", rule_id="x_1")])
    start(agent, "sync")
    with pytest.raises(AgentConfigurationError, match='must be one of "approve", "reject"'):
        invoke(agent, Command(resume={"action": "maybe"}), "sync")
    assert deleted == []


def test_approval_without_a_checkpointer_fails_at_construction() -> None:
    @tool
    def delete_rule(rule_id: str) -> str:
        """Delete a rule."""
        return rule_id

    with pytest.raises(AgentConfigurationError, match="needs a checkpointer"):
        create_rules_agent(ScriptedChatModel([]), [delete_rule], require_approval=["delete_rule"])


def test_approval_of_an_unknown_tool_fails_at_construction() -> None:
    with pytest.raises(AgentConfigurationError, match="does not have: nope"):
        create_rules_agent(
            ScriptedChatModel([]), [], require_approval=["nope"], checkpointer=InMemorySaver()
        )


def test_edited_arguments_that_cannot_be_stored_are_refused() -> None:
    agent, deleted, _ = make_agent("native", [call_step("native", "delete_rule", rule_id="x_1")])
    start(agent, "sync")
    with pytest.raises(AgentConfigurationError, match="outside the 64-bit range"):
        invoke(agent, Command(resume={"action": "edit", "args": {"rule_id": 2**70}}), "sync")
    assert deleted == []
