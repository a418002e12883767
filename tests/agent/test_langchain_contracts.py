"""LangChain's contracts hold: HITL, your own middleware, config, tasks, ToolNode's behaviour."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelFallbackMiddleware,
    PIIMiddleware,
    SummarizationMiddleware,
)
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from langchain_agent_rules import (
    AgentConfigurationError,
    InMemoryRuleStore,
    ModelUnavailableError,
    Rule,
    RulesAgent,
    create_rules_agent,
    resolve_chat_model,
)
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import calls_step, run

NO_DROPS = Rule(
    id="no_drops",
    type="prohibition",
    target="tool",
    content="Never drop tables.",
    check={"tool": "sql", "args": r"regex:(?i)\bdrop\b"},
)


def sql_tool(ran: list[str]) -> Any:
    @tool
    def sql(query: str) -> str:
        """Run a query."""
        ran.append(query)
        return "done"

    return sql


def test_a_denied_call_never_reaches_langchains_human_in_the_loop() -> None:
    ran: list[str] = []
    turn = calls_step("native", ("sql", {"query": "DROP TABLE t"}), ("sql", {"query": "SELECT 1"}))
    agent = create_rules_agent(
        ScriptedChatModel([turn, "FINAL: ok"]),
        [sql_tool(ran)],
        rules=InMemoryRuleStore([NO_DROPS]),
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"sql": True})],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}

    paused = agent.invoke({"messages": [("user", "x")]}, config)

    [request] = paused["__interrupt__"]
    assert [a["args"] for a in request.value["action_requests"]] == [{"query": "SELECT 1"}]
    done = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert ran == ["SELECT 1"]
    assert [s["status"] for s in done["trace"]] == ["denied", "ok"]


def test_an_interrupt_in_one_tool_never_runs_its_siblings_again() -> None:
    side_effects: list[str] = []

    @tool
    def write(text: str) -> str:
        """A tool with a side effect."""
        side_effects.append(text)
        return "written"

    @tool
    def ask(question: str) -> str:
        """Ask the human."""
        return str(interrupt(question))

    turn = calls_step("native", ("write", {"text": "once"}), ("ask", {"question": "ok?"}))
    graph = create_rules_agent(
        ScriptedChatModel([turn, "FINAL: done"]), [write, ask], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [("user", "x")]}, config)
    done = graph.invoke(Command(resume="yes"), config)

    assert side_effects == ["once"]
    assert sorted(s["observation"] for s in done["trace"]) == ["written", "yes"]


def test_return_direct_ends_the_run_with_the_tools_result() -> None:
    @tool(return_direct=True)
    def final_price(item: str) -> str:
        """The final price of an item."""
        return f"{item}: 12 EUR"

    model = ScriptedChatModel([calls_step("native", ("final_price", {"item": "tea"}))])
    result = run(create_rules_agent(model, [final_price]), "Price of tea?", "sync")

    assert len(model.calls) == 1
    assert result["messages"][-1].content == "tea: 12 EUR"


class Seen(BaseCallbackHandler):
    def __init__(self) -> None:
        self.model_tags: list[list[str]] = []
        self.tool_metadata: list[dict[str, Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.model_tags.append(kwargs.get("tags") or [])

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.tool_metadata.append(kwargs.get("metadata") or {})


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_config_reaches_every_model_and_tool_call(mode: str) -> None:
    ran: list[str] = []
    model = ScriptedChatModel([calls_step("native", ("sql", {"query": "SELECT 1"})), "FINAL: 1"])
    agent = RulesAgent(model, [sql_tool(ran)])
    seen = Seen()
    config: Any = {"callbacks": [seen], "tags": ["mine"], "metadata": {"user": "ada"}}

    if mode == "async":
        asyncio.run(agent.ainvoke("x", config=config))
    else:
        agent.invoke("x", config=config)

    assert len(seen.model_tags) == 2 and all("mine" in tags for tags in seen.model_tags)
    assert [m.get("user") for m in seen.tool_metadata] == ["ada"]


def test_a_recursion_limit_in_config_is_langgraphs() -> None:
    model = ScriptedChatModel([calls_step("native", ("sql", {"query": f"S{n}"})) for n in range(9)])
    agent = RulesAgent(model, [sql_tool([])])
    with pytest.raises(Exception, match="Recursion limit of 4 reached"):
        agent.invoke("x", config={"recursion_limit": 4})


def test_a_task_may_be_a_list_of_messages() -> None:
    model = ScriptedChatModel(["FINAL: 4"])
    agent = RulesAgent(model)

    answer = agent.run([SystemMessage("Be terse."), ("user", "2 + 2?")])

    assert answer == "4"
    assert [m.type for m in model.calls[0].messages] == ["system", "system", "human"]
    with pytest.raises(AgentConfigurationError, match="non-empty list of messages"):
        agent.run([])


def test_a_provider_string_goes_to_init_chat_model_and_names_a_missing_package() -> None:
    with pytest.raises(ModelUnavailableError, match="pip install langchain-openai"):
        resolve_chat_model("openai:gpt-4o-mini")
    with pytest.raises(ModelUnavailableError, match="pip install langchain-anthropic"):
        RulesAgent("anthropic:claude-sonnet-4-5")


class CountingReader(InMemoryRuleStore):
    reads = 0

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        CountingReader.reads += 1
        return super().get_all_by_project(project_id)


def test_one_turn_reads_the_rules_once_and_its_tool_step_judges_by_that_reading() -> None:
    ran: list[str] = []
    store = CountingReader([NO_DROPS])
    CountingReader.reads = 0

    @tool
    def sql(query: str) -> str:
        """Run a query; the rules change while it runs."""
        ran.append(query)
        store.delete("no_drops")
        return "done"

    turn = calls_step("native", ("sql", {"query": "SELECT 1"}), ("sql", {"query": "drop t"}))
    result = run(
        create_rules_agent(ScriptedChatModel([turn, "FINAL: ok"]), [sql], rules=store), "x", "sync"
    )

    assert ran == ["SELECT 1"]
    assert CountingReader.reads == 2  # one per model turn
    assert [s["status"] for s in result["trace"]] == ["denied", "ok"]


def test_your_own_middleware_composes_with_ours() -> None:
    broken = ScriptedChatModel([RuntimeError("provider down")])
    backup = ScriptedChatModel(["FINAL: Write to alice@example.com."])
    agent = RulesAgent(
        broken,
        rules=InMemoryRuleStore(
            [
                Rule(
                    id="no_emails",
                    type="prohibition",
                    target="output",
                    content="Never reveal e-mail addresses.",
                    check={"forbid": "email"},
                )
            ]
        ),
        middleware=[
            ModelFallbackMiddleware(backup),
            SummarizationMiddleware(model=backup, trigger=("messages", 50)),
            PIIMiddleware("url", strategy="redact"),
        ],
    )

    result = agent.invoke("Who?")

    assert result.answer == "Write to [redacted: email]."
    assert [e["status"] for e in result.rule_events] == ["redacted"]
    assert len(backup.calls) == 1


def test_repeating_our_own_middleware_is_refused() -> None:
    from langchain_agent_rules.middleware import ToolGuardMiddleware

    with pytest.raises(AgentConfigurationError, match="must not repeat"):
        create_rules_agent(ScriptedChatModel([]), middleware=[ToolGuardMiddleware()])


def test_a_humans_message_keeps_its_place_before_the_rules_prompt() -> None:
    model = ScriptedChatModel(["FINAL: ok"])
    RulesAgent(model, rules=InMemoryRuleStore([NO_DROPS])).run([HumanMessage("Hi")])
    assert model.calls[0].system_prompt.startswith("You are a helpful assistant.\n\nFollow")
