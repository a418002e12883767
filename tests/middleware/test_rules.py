from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import wrap_model_call
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware import AgentRulesMiddleware, TextToolProtocolMiddleware
from langchain_agent_rules.rules.langgraph_store import LangGraphRuleStore
from langchain_agent_rules.rules.limits import AgentRuleToolConfig, effective_rules_payload
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.prompt import render_rules_prompt
from langchain_agent_rules.testing import ScriptedChatModel

from .sample_tools import add

EUROS = Rule(
    id="amounts_in_euros",
    type="requirement",
    target="output",
    content="Write every amount with EUR.",
    priority=10,
)
NO_DELETES = Rule(
    id="no_deletes",
    type="prohibition",
    target="tool",
    content="Never delete rows from a table.",
    priority=5,
    project_id=7,
)
OTHER_PROJECT = Rule(
    id="french_only",
    type="requirement",
    target="output",
    content="Answer in French, always.",
    project_id=8,
)
EXPECTED_PROJECT_7 = """Follow these rules; a rule listed earlier in a group takes precedence.

Requirements (always do this):
- [output] Write every amount with EUR.

Prohibitions (never do this):
- [tool] Never delete rows from a table."""


def store_with(*rules: Rule) -> InMemoryRuleStore:
    store = InMemoryRuleStore()
    for rule in rules:
        store.create(rule)
    return store


def run(middleware: list[Any], steps: list[Any], **options: Any) -> ScriptedChatModel:
    model = ScriptedChatModel(steps)
    create_agent(model, [add], middleware=middleware, **options).invoke(
        {"messages": [("user", "2 + 3?")]}
    )
    return model


def test_the_project_rules_follow_the_system_prompt() -> None:
    rules = AgentRulesMiddleware(store_with(EUROS, NO_DELETES, OTHER_PROJECT), project_id=7)

    model = run([rules], ["5 EUR"], system_prompt="Be brief.")

    assert model.calls[0].system_prompt == "Be brief.\n\n" + EXPECTED_PROJECT_7


def test_without_a_project_only_global_rules_apply() -> None:
    rules = AgentRulesMiddleware(store_with(EUROS, NO_DELETES, OTHER_PROJECT))

    model = run([rules], ["5 EUR"])

    assert model.calls[0].system_prompt == (
        "Follow these rules; a rule listed earlier in a group takes precedence.\n\n"
        "Requirements (always do this):\n- [output] Write every amount with EUR."
    )


def test_no_rules_leave_the_prompt_unchanged() -> None:
    model = run([AgentRulesMiddleware(InMemoryRuleStore())], ["5"], system_prompt="Be brief.")

    assert model.calls[0].system_prompt == "Be brief."


def test_the_rules_are_read_again_at_every_model_call() -> None:
    store = store_with(EUROS)
    call = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}])
    model = ScriptedChatModel([call, "5 EUR"])

    def add_rule_between_calls(request: Any, handler: Any) -> Any:
        if len(model.calls) == 1:
            store.create(NO_DELETES.with_changes(project_id=None))
        return handler(request)

    agent = create_agent(
        model,
        [add],
        middleware=[wrap_model_call(add_rule_between_calls), AgentRulesMiddleware(store)],
    )
    agent.invoke({"messages": [("user", "2 + 3?")]})

    assert "Never delete rows" not in model.calls[0].system_prompt
    assert "Never delete rows" in model.calls[1].system_prompt


def test_the_rendering_is_the_agent_rendering() -> None:
    store = store_with(EUROS, NO_DELETES)
    config = AgentRuleToolConfig()

    model = run([AgentRulesMiddleware(store, project_id=7)], ["ok"])

    expected = render_rules_prompt(effective_rules_payload(store, 7, config))
    assert model.calls[0].system_prompt == expected


async def test_the_async_path_reads_a_langgraph_store() -> None:
    store = LangGraphRuleStore(InMemoryStore())
    await store.acreate(EUROS)
    await store.acreate(NO_DELETES)
    model = ScriptedChatModel(["5 EUR"])
    agent = create_agent(model, [add], middleware=[AgentRulesMiddleware(store, project_id=7)])

    await agent.ainvoke({"messages": [("user", "2 + 3?")]})

    assert model.calls[0].system_prompt == EXPECTED_PROJECT_7


def test_include_tool_gives_the_model_the_agent_rule_tool() -> None:
    call = AIMessage("", tool_calls=[{"name": "agent_rule", "args": {"project_id": 7}, "id": "r1"}])
    model = ScriptedChatModel([call, "ok"])
    rules = AgentRulesMiddleware(store_with(EUROS, NO_DELETES), project_id=7, include_tool=True)
    agent = create_agent(model, [add], middleware=[rules])

    result = agent.invoke({"messages": [("user", "which rules?")]})

    assert sorted(model.calls[0].tools) == ["add", "agent_rule"]
    [observation] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert '"count":2' in observation.text
    assert '"id":"amounts_in_euros"' in observation.text


def test_the_tool_is_left_out_by_default() -> None:
    model = run([AgentRulesMiddleware(store_with(EUROS))], ["ok"])

    assert model.calls[0].tools == ["add"]


def test_rules_and_the_text_protocol_share_the_system_prompt() -> None:
    rules = AgentRulesMiddleware(store_with(EUROS))

    model = run([rules, TextToolProtocolMiddleware()], ["FINAL: 5 EUR"], system_prompt="Hi.")

    prompt = model.calls[0].system_prompt
    assert prompt.startswith("Hi.\n\nFollow these rules;")
    assert prompt.index("Write every amount with EUR.") < prompt.index("You can call these tools:")


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_rules_over_a_limit_are_left_out_and_reported_in_the_state(
    use_async: bool,
) -> None:
    rules = AgentRulesMiddleware(
        store_with(EUROS, NO_DELETES), project_id=7, config={"max_rules": 1}
    )
    model = ScriptedChatModel(["5 EUR", "6 EUR"])
    agent = create_agent(model, [add], middleware=[rules], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "limits"}}
    task = {"messages": [("user", "2 + 3?")]}

    first = await agent.ainvoke(task, config) if use_async else agent.invoke(task, config)
    second = await agent.ainvoke(task, config) if use_async else agent.invoke(task, config)

    prompt = model.calls[0].system_prompt
    assert "Write every amount with EUR." in prompt
    assert "Never delete rows" not in prompt
    omitted = {"rule_id": "no_deletes", "status": "omitted", "detail": "max_rules=1"}
    assert first["rule_events"] == [omitted]
    assert second["rule_events"] == [omitted]


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"reader": object()}, "needs a rule reader"),
        (
            {"reader": InMemoryRuleStore(), "project_id": "7"},
            "project_id: Input should be a valid integer, got '7'",
        ),
        (
            {"reader": InMemoryRuleStore(), "project_id": True},
            "project_id: Input should be a valid integer, got True",
        ),
        (
            {"reader": InMemoryRuleStore(), "project_id": 0},
            "project_id: Input should be greater than or equal to 1, got 0",
        ),
        ({"reader": InMemoryRuleStore(), "include_tool": "yes"}, "include_tool must be True"),
    ],
)
def test_bad_arguments_raise_at_construction(arguments: dict[str, Any], complaint: str) -> None:
    with pytest.raises(AgentConfigurationError, match=complaint):
        AgentRulesMiddleware(**arguments)
