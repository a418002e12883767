"""Approvals speak LangChain's HITL format, and no resume value can wedge a thread."""

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
APPROVE = {"decisions": [{"type": "approve"}]}


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


def edit(**args: Any) -> dict[str, Any]:
    return {"decisions": [{"type": "edit", "edited_action": {"name": "delete_rule", "args": args}}]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_approve_runs_the_call(protocol: str, mode: str) -> None:
    agent, deleted, _ = make_agent(
        protocol, [call_step(protocol, "delete_rule", rule_id="old_rule"), "FINAL: done"]
    )
    request = start(agent, mode)
    assert request == {
        "action_requests": [
            {
                "name": "delete_rule",
                "args": {"rule_id": "old_rule"},
                "description": 'Tool "delete_rule" needs a human\'s approval before it runs.',
            }
        ],
        "review_configs": [
            {"action_name": "delete_rule", "allowed_decisions": ["approve", "edit", "reject"]}
        ],
    }
    assert deleted == []
    result = invoke(agent, Command(resume=APPROVE), mode)
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
    result = invoke(agent, Command(resume=edit(rule_id="tmp_rule")), mode)
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
    rejected = {"decisions": [{"type": "reject", "message": "keep it"}]}
    result = invoke(agent, Command(resume=rejected), mode)
    assert deleted == []
    step = result["trace"][0]
    assert (step["status"], step["approval"]) == ("rejected", "rejected")
    assert step["observation"] == (
        'ERROR: a human reviewer rejected the call to tool "delete_rule" (keep it). Do not '
        "retry it; answer with what you know or use another tool."
    )
    assert step["observation"] in model.calls[-1].messages[-1].text
    assert result["answer"] == "not deleted"


BAD_ANSWERS = [
    pytest.param("approve", id="a-string"),
    pytest.param({"action": "approve"}, id="the-old-format"),
    pytest.param({"decisions": []}, id="no-decision"),
    pytest.param({"decisions": [{"type": "approve"}, {"type": "approve"}]}, id="two-decisions"),
    pytest.param({"decisions": [{"type": "maybe"}]}, id="unknown-type"),
    pytest.param({"decisions": [{"type": "respond", "message": "x"}]}, id="not-allowed"),
    pytest.param(
        {"decisions": [{"type": "edit", "edited_action": {"name": "other", "args": {}}}]},
        id="another-tool",
    ),
    pytest.param(edit(rule_id=2**70), id="huge-integer"),
    pytest.param(edit(rule_id="x" * 100_000), id="too-large"),
    pytest.param(edit(rule_id="\ud800"), id="lone-surrogate"),
    pytest.param("x" * 1_000_000, id="a-megabyte"),
    pytest.param({"decisions": [{"type": "reject", "message": 7}]}, id="bad-message"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer", BAD_ANSWERS)
def test_a_bad_answer_is_a_clear_error_and_the_run_still_waits(answer: Any, mode: str) -> None:
    agent, deleted, _ = make_agent(
        "native", [call_step("native", "delete_rule", rule_id="x_1"), "FINAL: ok"]
    )
    start(agent, mode)
    with pytest.raises(AgentConfigurationError, match="is not a valid decision") as raised:
        invoke(agent, Command(resume=answer), mode)
    assert '{"decisions": [{"type": "approve"}]}' in str(raised.value)
    assert deleted == []
    result = invoke(agent, Command(resume=APPROVE), mode)
    assert deleted == ["x_1"]
    assert result["answer"] == "ok"


def test_several_bad_answers_in_a_row_never_wedge_the_thread() -> None:
    agent, deleted, _ = make_agent(
        "native", [call_step("native", "delete_rule", rule_id="x_1"), "FINAL: ok"]
    )
    start(agent, "sync")
    for answer in ("no", {"decisions": None}, 3):
        with pytest.raises(AgentConfigurationError):
            invoke(agent, Command(resume=answer), "sync")
    invoke(agent, Command(resume=APPROVE), "sync")
    assert deleted == ["x_1"]


def test_after_langgraph_refuses_a_none_resume_the_thread_still_resumes() -> None:
    agent, deleted, _ = make_agent(
        "native", [call_step("native", "delete_rule", rule_id="x_1"), "FINAL: ok"]
    )
    start(agent, "sync")
    # LangGraph itself fails on Command(resume=None) (langgraph 1.2: an UnboundLocalError
    # in its loop), before any node runs; RulesAgent refuses a None answer itself.
    with pytest.raises(Exception):  # noqa: B017
        invoke(agent, Command(resume=None), "sync")
    invoke(agent, Command(resume=APPROVE), "sync")
    assert deleted == ["x_1"]


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
