"""`AgentRulesMiddleware(enforce=True)`: the rules' checks around `create_agent`, sync and async."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware import (
    AgentRulesMiddleware,
    TextToolProtocolMiddleware,
    ToolGuardMiddleware,
)
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.testing import ScriptedChatModel

NO_EMAILS = Rule(
    id="no_emails",
    type="prohibition",
    target="output",
    content="Never reveal e-mail addresses.",
    priority=100,
    check={"forbid": "email"},
)
HIDE_EMAILS = NO_EMAILS.with_changes(check={"forbid": "email", "scope": "answer_and_observations"})
EUROS = Rule(
    id="amounts_in_eur",
    type="requirement",
    target="output",
    content="Write money amounts with EUR.",
    priority=50,
    check={"require": r"regex:\d ?EUR\b", "when": r"regex:\d"},
)
SHORT = Rule(
    id="short",
    type="constraint",
    target="output",
    content="Answer in at most 20 characters.",
    check={"max_chars": 20, "on_fail": "block"},
)
POLITE = Rule(
    id="polite",
    type="guideline",
    target="output",
    content="Thank the user.",
)
NO_DROPS = Rule(
    id="no_drops",
    type="prohibition",
    target="tool",
    content="Never drop tables.",
    check={"tool": "sql", "args": r"regex:(?i)\bdrop\b"},
)
ASK_BEFORE_DELETES = Rule(
    id="ask_before_deletes",
    type="constraint",
    target="tool",
    content="A human approves every delete.",
    check={"tool": "*", "args": r"regex:(?i)\bdelete\b", "on_fail": "approve"},
)

MODES = ["sync", "async"]
RAN: list[str] = []


@tool
def sql(query: str) -> str:
    """Run SQL."""
    RAN.append(query)
    return '[{"name": "Alice", "email": "alice.martin@example.com"}]'


@pytest.fixture(autouse=True)
def _forget_calls() -> None:
    RAN.clear()


def store_with(*rules: Rule) -> InMemoryRuleStore:
    store = InMemoryRuleStore()
    for rule in rules:
        store.create(rule)
    return store


def enforcing(*rules: Rule, **options: Any) -> AgentRulesMiddleware:
    return AgentRulesMiddleware(store_with(*rules), enforce=True, **options)


def call(query: str, call_id: str = "c1") -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "sql", "args": {"query": query}, "id": call_id}])


async def run(
    middleware: list[Any], model: ScriptedChatModel, mode: str, **options: Any
) -> dict[str, Any]:
    agent = create_agent(model, [sql], middleware=middleware, **options)
    task = {"messages": [("user", "Go")]}
    if mode == "async":
        return await agent.ainvoke(task)
    return agent.invoke(task)


@pytest.mark.parametrize("mode", MODES)
async def test_an_answer_is_redacted(mode: str) -> None:
    model = ScriptedChatModel(["Write to alice.martin@example.com."])

    result = await run([enforcing(NO_EMAILS)], model, mode)

    assert result["messages"][-1].content == "Write to [redacted: email]."
    assert result["rule_events"] == [
        {"rule_id": "no_emails", "status": "redacted", "detail": "redacted 1 match of email"}
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_without_enforce_the_rules_stay_in_the_prompt_only(mode: str) -> None:
    model = ScriptedChatModel(["Write to alice.martin@example.com."])

    result = await run([AgentRulesMiddleware(store_with(NO_EMAILS), enforce=False)], model, mode)

    assert result["messages"][-1].content == "Write to alice.martin@example.com."
    assert result.get("rule_events", []) == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_missing_requirement_is_revised_by_one_call_without_tools(mode: str) -> None:
    model = ScriptedChatModel(["It costs 45.", "FINAL: It costs 45 EUR."])

    result = await run([enforcing(EUROS)], model, mode, system_prompt="Be brief.")

    assert result["messages"][-1].content == "It costs 45 EUR."
    revision = model.calls[1]
    assert revision.tools == []
    assert [type(m) for m in revision.messages] == [HumanMessage]
    assert revision.messages[0].text == (
        "Task: Go\nAnswer: It costs 45.\n\nRewrite the answer so that it follows these "
        "rules, keeping its facts:\n- Write money amounts with EUR.\n\n"
        "Reply with FINAL: followed by the rewritten answer."
    )
    assert [e["status"] for e in result["rule_events"]] == ["revised", "passed"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_answer_a_rule_blocks_is_replaced(mode: str) -> None:
    model = ScriptedChatModel(["A very long answer indeed."])

    result = await run([enforcing(SHORT)], model, mode)

    assert result["messages"][-1].content == (
        "I can't give that answer: it would break rule short: Answer in at most 20 characters."
    )
    assert [e["status"] for e in result["rule_events"]] == ["blocked"]


@pytest.mark.parametrize("mode", MODES)
async def test_review_checks_the_rules_without_a_check(mode: str) -> None:
    model = ScriptedChatModel(["Here it is.", "FINAL: Here it is. Thank you!"])

    result = await run([enforcing(POLITE, review="model")], model, mode)

    assert result["messages"][-1].content == "Here it is. Thank you!"
    assert result["rule_events"][0]["status"] == "revised"
    assert model.calls[1].messages[0].text.startswith("Task: Go\nAnswer: Here it is.\n\n")


@pytest.mark.parametrize("mode", MODES)
async def test_a_denied_tool_call_never_runs(mode: str) -> None:
    model = ScriptedChatModel([call("DROP TABLE users"), "Not done."])

    result = await run([enforcing(NO_DROPS)], model, mode)

    assert RAN == []
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.status == "error"
    assert answer.content == (
        'ERROR: rule no_drops does not allow this call to tool "sql": Never drop tables.\n'
        "Do not retry it; answer with what you know or use another tool."
    )
    assert result["rule_events"] == [
        {
            "rule_id": "no_drops",
            "status": "denied",
            "detail": "the arguments of sql match the pattern",
        }
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_parallel_tool_calls_each_add_their_events(mode: str) -> None:
    calls = [call("SELECT 1", "c1").tool_calls[0], call("drop table t", "c2").tool_calls[0]]
    turn = AIMessage("", tool_calls=calls)
    model = ScriptedChatModel([turn, "Done."])

    result = await run([enforcing(NO_DROPS)], model, mode)

    assert RAN == ["SELECT 1"]
    assert sorted(e["status"] for e in result["rule_events"]) == ["denied", "passed"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_rule_that_approves_interrupts_and_runs_once_approved(mode: str) -> None:
    model = ScriptedChatModel([call("DELETE FROM t"), "Deleted."])
    agent = create_agent(
        model, [sql], middleware=[enforcing(ASK_BEFORE_DELETES)], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "m"}}
    task = {"messages": [("user", "Clean t")]}

    paused = await agent.ainvoke(task, config) if mode == "async" else agent.invoke(task, config)

    [request] = paused["__interrupt__"]
    [action] = request.value["action_requests"]
    assert action["name"] == "sql"
    assert action["description"].endswith(
        "Rule ask_before_deletes asks for it: A human approves every delete."
    )
    assert RAN == []
    resume = Command(resume={"decisions": [{"type": "approve"}]})
    done = await agent.ainvoke(resume, config) if mode == "async" else agent.invoke(resume, config)
    assert RAN == ["DELETE FROM t"]
    assert done["messages"][-1].content == "Deleted."


def test_a_rejected_approval_answers_the_call_without_running_it() -> None:
    model = ScriptedChatModel([call("DELETE FROM t"), "Kept."])
    agent = create_agent(
        model, [sql], middleware=[enforcing(ASK_BEFORE_DELETES)], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "r"}}
    agent.invoke({"messages": [("user", "Clean t")]}, config)

    result = agent.invoke(
        Command(resume={"decisions": [{"type": "reject", "message": "keep"}]}), config
    )

    assert RAN == []
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.content.startswith('ERROR: a human reviewer rejected the call to tool "sql"')


def test_edited_arguments_cannot_lift_a_denying_rule() -> None:
    model = ScriptedChatModel([call("DELETE FROM t"), "No."])
    agent = create_agent(
        model,
        [sql],
        middleware=[enforcing(ASK_BEFORE_DELETES, NO_DROPS)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "e"}}
    agent.invoke({"messages": [("user", "Clean t")]}, config)

    edited = {"type": "edit", "edited_action": {"name": "sql", "args": {"query": "DROP TABLE t"}}}
    agent.invoke(Command(resume={"decisions": [edited]}), config)

    assert RAN == []


@pytest.mark.parametrize("mode", MODES)
async def test_observations_are_redacted_before_the_model_sees_them(mode: str) -> None:
    model = ScriptedChatModel([call("SELECT *"), "Alice."])

    result = await run([enforcing(HIDE_EMAILS)], model, mode)

    [observation] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert observation.content == '[{"name": "Alice", "email": "[redacted: email]"}]'
    assert all("alice.martin@" not in m.text for m in model.calls[1].messages)
    redacted = {"rule_id": "no_emails", "status": "redacted", "detail": "redacted 1 match of email"}
    assert redacted in result["rule_events"]


def test_inside_the_tool_guard_the_whole_output_is_redacted_before_the_cut() -> None:
    @tool
    def dump() -> str:
        """Dump the customers."""
        return "x" * 100 + " " + "bob.builder@example.com and more " * 20

    dump_call = AIMessage("", tool_calls=[{"name": "dump", "args": {}, "id": "d1"}])
    model = ScriptedChatModel([dump_call, "ok"])
    guard = ToolGuardMiddleware(max_observation_bytes=160)
    agent = create_agent(model, [dump], middleware=[guard, enforcing(HIDE_EMAILS)])

    result = agent.invoke({"messages": [("user", "Go")]})

    [observation] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert "bob." not in observation.text
    assert "[truncated:" in observation.text


def test_with_the_text_protocol_the_parsed_answer_is_checked() -> None:
    model = ScriptedChatModel(["FINAL: Write to alice.martin@example.com."])
    middleware = [enforcing(NO_EMAILS), TextToolProtocolMiddleware()]

    result = create_agent(model, [sql], middleware=middleware).invoke(
        {"messages": [("user", "Go")]}
    )

    assert result["messages"][-1].content == "Write to [redacted: email]."


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"enforce": "yes"}, "enforce must be True or False, got str"),
        ({"max_revisions": -1}, "max_revisions: Input should be greater than or equal to 0"),
        ({"review": "human"}, "review: Input should be 'off' or 'model', got 'human'"),
    ],
)
def test_bad_enforcement_arguments_raise_at_construction(
    arguments: dict[str, Any], complaint: str
) -> None:
    with pytest.raises(AgentConfigurationError, match=complaint):
        AgentRulesMiddleware(InMemoryRuleStore(), **arguments)
