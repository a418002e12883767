"""Every tool call passes the TOOL checks before it runs; observations are redacted first."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.facade import RulesAgent
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import PROTOCOLS, call_step, run

MODES = ["sync", "async"]

NO_DROPS = Rule(
    id="no_drops",
    type="prohibition",
    target="tool",
    content="Never drop tables.",
    priority=90,
    check={"tool": "sql", "args": r"regex:(?i)\bdrop\b"},
)
ASK_BEFORE_DELETES = Rule(
    id="ask_before_deletes",
    type="constraint",
    target="tool",
    content="A human approves every delete.",
    priority=80,
    check={"tool": "*", "args": r"regex:(?i)\bdelete\b", "on_fail": "approve"},
)
NO_MAIL_TOOL = Rule(
    id="no_mail",
    type="prohibition",
    target="tool",
    content="Never send mail.",
    check={"tool": "send_mail"},
)
HIDE_EMAILS = Rule(
    id="hide_emails",
    type="prohibition",
    target="output",
    content="Never reveal e-mail addresses.",
    priority=100,
    check={"forbid": "email", "scope": "answer_and_observations"},
)
ANSWER_ONLY_EMAILS = Rule(
    id="answer_emails",
    type="prohibition",
    target="output",
    content="Never reveal e-mail addresses.",
    check={"forbid": "email"},
)


def store_with(*rules: Rule) -> InMemoryRuleStore:
    store = InMemoryRuleStore()
    for rule in rules:
        store.create(rule)
    return store


class Database:
    """A tool that records what ran, so a test can see a denied call never did."""

    def __init__(self, rows: str = "3 rows") -> None:
        self.ran: list[str] = []
        self.rows = rows

        @tool
        def sql(query: str) -> str:
            """Run SQL."""
            self.ran.append(query)
            return self.rows

        @tool
        def send_mail(to: str) -> str:
            """Send a mail."""
            self.ran.append(f"mail {to}")
            return "sent"

        self.tools = [sql, send_mail]


def invoke(agent: Any, payload: Any, mode: str, config: dict[str, Any]) -> Any:
    if mode == "async":
        return asyncio.run(agent.ainvoke(payload, config))
    return agent.invoke(payload, config)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_denied_call_never_runs_and_the_model_is_told_which_rule(
    protocol: str, mode: str
) -> None:
    db = Database()
    model = ScriptedChatModel([call_step(protocol, "sql", query="DROP TABLE users"), "FINAL: no"])
    agent = create_rules_agent(model, db.tools, rules=store_with(NO_DROPS), protocol=protocol)

    result = run(agent, "Drop users", mode)

    assert db.ran == []
    [step] = result["trace"]
    assert step["status"] == "denied"
    assert step["observation"] == (
        'ERROR: rule no_drops does not allow this call to tool "sql": Never drop tables.\n'
        "Do not retry it; answer with what you know or use another tool."
    )
    assert step["observation"] in model.calls[1].messages[-1].text
    event = {
        "rule_id": "no_drops",
        "status": "denied",
        "detail": "the arguments of sql match the pattern",
    }
    assert step["rule_events"] == [event]
    assert result["rule_events"] == [event]


@pytest.mark.parametrize("mode", MODES)
def test_a_call_that_does_not_match_runs_and_is_recorded_as_passed(mode: str) -> None:
    db = Database()
    model = ScriptedChatModel([call_step("native", "sql", query="SELECT 1"), "FINAL: 3"])
    agent = create_rules_agent(model, db.tools, rules=store_with(NO_DROPS))

    result = run(agent, "Count", mode)

    assert db.ran == ["SELECT 1"]
    assert result["trace"][0]["status"] == "ok"
    assert result["trace"][0]["rule_events"] == [
        {
            "rule_id": "no_drops",
            "status": "passed",
            "detail": "the arguments of sql do not match the pattern",
        }
    ]


def test_a_check_without_args_denies_every_call_of_its_tool() -> None:
    db = Database()
    model = ScriptedChatModel([call_step("native", "send_mail", to="x"), "FINAL: not sent"])
    agent = create_rules_agent(model, db.tools, rules=store_with(NO_MAIL_TOOL))

    result = run(agent, "Mail x", "sync")

    assert db.ran == []
    assert result["trace"][0]["status"] == "denied"


def test_only_the_denied_call_of_a_turn_is_stopped() -> None:
    db = Database()
    turn = call_step("native", "sql", query="SELECT 1")
    turn.tool_calls.append({"name": "sql", "args": {"query": "drop table t"}, "id": "c2"})
    model = ScriptedChatModel([turn, "FINAL: done"])
    agent = create_rules_agent(model, db.tools, rules=store_with(NO_DROPS))

    result = run(agent, "x", "sync")

    assert db.ran == ["SELECT 1"]
    # The denied call is settled in the model step, before the other one runs.
    assert [s["status"] for s in result["trace"]] == ["denied", "ok"]


def approving_agent(
    steps: list[Any], *rules: Rule, **options: Any
) -> tuple[Any, Database, ScriptedChatModel]:
    db = Database()
    model = ScriptedChatModel(steps)
    agent = create_rules_agent(
        model, db.tools, rules=store_with(*rules), checkpointer=InMemorySaver(), **options
    )
    return agent, db, model


@pytest.mark.parametrize("mode", MODES)
def test_a_rule_that_approves_asks_a_human_even_for_a_tool_not_in_require_approval(
    mode: str,
) -> None:
    delete = call_step("native", "sql", query="DELETE FROM t")
    agent, db, _ = approving_agent([delete, "FINAL: deleted"], ASK_BEFORE_DELETES)
    config = {"configurable": {"thread_id": "a"}}

    paused = invoke(agent, {"messages": [("user", "Clean t")]}, mode, config)

    [request] = paused["__interrupt__"]
    assert request.value == {
        "action_requests": [
            {
                "name": "sql",
                "args": {"query": "DELETE FROM t"},
                "description": 'Tool "sql" needs a human\'s approval before it runs.\n'
                "Rule ask_before_deletes asks for it: A human approves every delete.",
            }
        ],
        "review_configs": [
            {"action_name": "sql", "allowed_decisions": ["approve", "edit", "reject"]}
        ],
    }
    assert db.ran == []
    result = invoke(agent, Command(resume={"decisions": [{"type": "approve"}]}), mode, config)
    assert db.ran == ["DELETE FROM t"]
    step = result["trace"][0]
    assert (step["status"], step["approval"]) == ("ok", "approved")
    assert [e["status"] for e in step["rule_events"]] == ["approval"]


@pytest.mark.parametrize("mode", MODES)
def test_a_rejected_approval_runs_nothing(mode: str) -> None:
    delete = call_step("native", "sql", query="DELETE FROM t")
    agent, db, _ = approving_agent([delete, "FINAL: kept"], ASK_BEFORE_DELETES)
    config = {"configurable": {"thread_id": "a"}}
    invoke(agent, {"messages": [("user", "Clean t")]}, mode, config)

    result = invoke(agent, Command(resume={"decisions": [{"type": "reject"}]}), mode, config)

    assert db.ran == []
    assert result["trace"][0]["status"] == "rejected"


def test_a_denial_wins_over_an_approval_and_asks_nobody() -> None:
    drop = call_step("native", "sql", query="DELETE FROM t; DROP TABLE t")
    agent, db, _ = approving_agent([drop, "FINAL: no"], ASK_BEFORE_DELETES, NO_DROPS)

    result = agent.invoke({"messages": [("user", "x")]}, {"configurable": {"thread_id": "d"}})

    assert "__interrupt__" not in result
    assert db.ran == []
    assert result["trace"][0]["status"] == "denied"


def test_edited_arguments_cannot_lift_a_denying_rule() -> None:
    delete = call_step("native", "sql", query="DELETE FROM t")
    agent, db, _ = approving_agent([delete, "FINAL: no"], ASK_BEFORE_DELETES, NO_DROPS)
    config = {"configurable": {"thread_id": "e"}}
    agent.invoke({"messages": [("user", "x")]}, config)

    edited = {
        "decisions": [
            {"type": "edit", "edited_action": {"name": "sql", "args": {"query": "DROP TABLE t"}}}
        ]
    }
    result = agent.invoke(Command(resume=edited), config)

    assert db.ran == []
    step = result["trace"][0]
    assert (step["status"], step["approval"], step["args"]) == (
        "denied",
        "edited",
        {"query": "DROP TABLE t"},
    )


def test_a_tool_in_require_approval_is_asked_once_when_a_rule_asks_too() -> None:
    delete = call_step("native", "sql", query="DELETE FROM t")
    agent, db, _ = approving_agent(
        [delete, "FINAL: ok"], ASK_BEFORE_DELETES, require_approval=["sql"]
    )
    config = {"configurable": {"thread_id": "o"}}
    paused = agent.invoke({"messages": [("user", "x")]}, config)
    assert len(paused["__interrupt__"]) == 1

    result = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)

    assert "__interrupt__" not in result
    assert db.ran == ["DELETE FROM t"]


@pytest.mark.parametrize("mode", MODES)
def test_without_a_checkpointer_a_call_that_needs_approval_is_not_run(mode: str) -> None:
    db = Database()
    model = ScriptedChatModel([call_step("native", "sql", query="delete from t"), "FINAL: no"])
    agent = create_rules_agent(model, db.tools, rules=store_with(ASK_BEFORE_DELETES))

    result = run(agent, "x", mode)

    assert db.ran == []
    step = result["trace"][0]
    assert step["status"] == "denied"
    assert step["observation"] == (
        "ERROR: rule ask_before_deletes requires a human's approval for this call to tool "
        '"sql": A human approves every delete.\nThis agent cannot ask for one, so the call '
        "was not run; answer with what you know or use another tool."
    )
    assert step["rule_events"] == [
        {
            "rule_id": "ask_before_deletes",
            "status": "denied",
            "detail": "no human can be asked: the agent has no checkpointer",
        }
    ]


def test_rules_agent_with_an_approve_function_can_ask_for_rule_approvals() -> None:
    db = Database()
    model = ScriptedChatModel([call_step("native", "sql", query="DELETE FROM t"), "FINAL: ok"])
    asked: list[Any] = []

    def approve(request: Any) -> str:
        asked.append(request)
        return "approve"

    agent = RulesAgent(model, db.tools, rules=store_with(ASK_BEFORE_DELETES), approve=approve)
    result = agent.invoke("Clean t")

    assert [request["action_requests"][0]["name"] for request in asked] == ["sql"]
    assert db.ran == ["DELETE FROM t"]
    assert result.trace[0]["approval"] == "approved"


def test_rules_agent_without_an_approve_function_says_so_when_a_rule_asks() -> None:
    db = Database()
    model = ScriptedChatModel([call_step("native", "sql", query="DELETE FROM t")])
    agent = RulesAgent(
        model, db.tools, rules=store_with(ASK_BEFORE_DELETES), checkpointer=InMemorySaver()
    )
    with pytest.raises(AgentConfigurationError, match="has no approve= function"):
        agent.invoke("Clean t")
    assert db.ran == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_observations_are_redacted_before_the_model_or_the_checkpoint_sees_them(
    protocol: str, mode: str
) -> None:
    db = Database(rows='[{"name": "Alice", "email": "alice.martin@example.com"}]')
    model = ScriptedChatModel([call_step(protocol, "sql", query="SELECT *"), "FINAL: Alice"])
    saver = InMemorySaver()
    agent = create_rules_agent(
        model, db.tools, rules=store_with(HIDE_EMAILS), protocol=protocol, checkpointer=saver
    )
    config = {"configurable": {"thread_id": "r"}}

    result = invoke(agent, {"messages": [("user", "Who?")]}, mode, config)

    step = result["trace"][0]
    assert step["observation"] == '[{"name": "Alice", "email": "[redacted: email]"}]'
    assert "alice.martin@" not in model.calls[1].messages[-1].text
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert tool_messages[0].content == step["observation"]
    assert step["rule_events"] == [
        {"rule_id": "hide_emails", "status": "redacted", "detail": "redacted 1 match of email"}
    ]
    for stored in saver.list(config):
        assert "alice.martin@" not in repr(stored.checkpoint)
        assert "alice.martin@" not in repr(stored.pending_writes)


def test_an_answer_only_forbid_leaves_observations_alone() -> None:
    db = Database(rows="alice.martin@example.com")
    model = ScriptedChatModel([call_step("native", "sql", query="SELECT *"), "FINAL: ok"])
    agent = create_rules_agent(model, db.tools, rules=store_with(ANSWER_ONLY_EMAILS))

    result = run(agent, "Who?", "sync")

    assert result["trace"][0]["observation"] == "alice.martin@example.com"


def test_redaction_runs_before_the_cut_so_no_half_address_survives() -> None:
    # The cap falls inside the address: cut first, it would leave "bob.builder@exam".
    prefix = "x" * 100 + " "
    db = Database(rows=prefix + "bob.builder@example.com and more text " * 20)
    model = ScriptedChatModel([call_step("native", "sql", query="SELECT *"), "FINAL: ok"])
    agent = create_rules_agent(
        model, db.tools, rules=store_with(HIDE_EMAILS), max_observation_bytes=160
    )

    result = run(agent, "Who?", "sync")

    observation = result["trace"][0]["observation"]
    assert observation.startswith(prefix + "[redacted: email]")
    assert "bob." not in observation
    assert result["trace"][0]["truncated"] is True


def test_a_tool_error_message_is_redacted_too() -> None:
    @tool
    def lookup(name: str) -> str:
        """Look a customer up."""
        raise ValueError(f"duplicate key {name}@example.com")

    model = ScriptedChatModel([call_step("native", "lookup", name="ann"), "FINAL: ok"])
    agent = create_rules_agent(model, [lookup], rules=store_with(HIDE_EMAILS))

    step = run(agent, "x", "sync")["trace"][0]

    assert step["observation"] == "ERROR: duplicate key [redacted: email]"
    assert step["error"] == "duplicate key [redacted: email]"
