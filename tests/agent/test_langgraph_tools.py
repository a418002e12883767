"""LangGraph's tool contracts hold inside our tools node, as they do in ``ToolNode``.

A LangGraph user's tools must work unchanged: ``interrupt()`` pauses the run and
``Command(resume=...)`` continues it, a returned ``Command`` updates the state, injected
arguments are filled in and hidden from the model, and artifacts stay on the message.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, interrupt

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import PROTOCOLS, call_step

MODES = ["sync", "async"]
CONFIG = {"configurable": {"thread_id": "t1"}}


def invoke(agent: Any, payload: Any, mode: str, config: Any = CONFIG) -> Any:
    if mode == "async":
        return asyncio.run(agent.ainvoke(payload, config))
    return agent.invoke(payload, config)


def ask(task: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(task)]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_interrupt_in_a_tool_pauses_the_run_and_resume_answers_it(
    protocol: str, mode: str
) -> None:
    runs: list[str] = []

    @tool
    def book_room(room: str) -> str:
        """Book a room after the user confirms."""
        runs.append(room)
        answer = interrupt({"question": f"Book {room}?"})
        return f"booked {room}" if answer == "yes" else f"not booked ({answer})"

    model = ScriptedChatModel([call_step(protocol, "book_room", room="B2"), "FINAL: done"])
    agent = create_rules_agent(model, [book_room], protocol=protocol, checkpointer=InMemorySaver())

    paused = invoke(agent, ask("Book B2"), mode)
    (request,) = paused["__interrupt__"]
    assert request.value == {"question": "Book B2?"}
    assert paused.get("trace") == []

    result = invoke(agent, Command(resume="yes"), mode)
    assert result["answer"] == "done"
    (step,) = result["trace"]
    assert (step["status"], step["observation"]) == ("ok", "booked B2")
    assert runs == ["B2", "B2"]  # LangGraph re-runs the tool on resume, as in ToolNode


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_command_returned_by_a_tool_updates_the_state(protocol: str, mode: str) -> None:
    @tool
    def remember(fact: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Remember a fact."""
        return Command(
            update={
                "messages": [ToolMessage(f"remembered {fact}", tool_call_id=tool_call_id)],
                "rule_events": [{"rule_id": "memo", "status": "noted", "detail": fact}],
            }
        )

    model = ScriptedChatModel([call_step(protocol, "remember", fact="blue"), "FINAL: ok"])
    result = invoke(create_rules_agent(model, [remember], protocol=protocol), ask("x"), mode, {})
    (step,) = result["trace"]
    assert (step["status"], step["observation"]) == ("ok", "remembered blue")
    assert result["rule_events"] == [{"rule_id": "memo", "status": "noted", "detail": "blue"}]
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [(m.text, m.name) for m in answers] == [("remembered blue", "remember")]


def test_a_commands_tool_message_is_capped_like_any_observation() -> None:
    @tool
    def shout(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Shout."""
        return Command(update={"messages": [ToolMessage("A" * 5000, tool_call_id=tool_call_id)]})

    model = ScriptedChatModel([call_step("native", "shout"), "FINAL: ok"])
    agent = create_rules_agent(model, [shout], max_observation_bytes=256)
    result = agent.invoke(ask("x"))
    (message,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert message.text.startswith("AAAA")
    assert len(message.text.encode()) <= 256
    assert message.text.endswith("of 5000 bytes]")
    assert result["trace"][0]["truncated"] is True


def test_a_command_without_an_answer_for_the_call_is_an_error_observation() -> None:
    @tool
    def sloppy() -> Command[Any]:
        """Forgets the ToolMessage."""
        return Command(update={"rule_events": []})

    model = ScriptedChatModel([call_step("native", "sloppy"), "FINAL: ok"])
    result = create_rules_agent(model, [sloppy]).invoke(ask("x"))
    (step,) = result["trace"]
    assert step["status"] == "error"
    assert step["observation"].startswith(
        "ERROR: Expected to have a matching ToolMessage in Command.update for tool 'sloppy'"
    )


def make_injected_tools(seen: dict[str, Any]) -> list[Any]:
    @tool
    def whole_state(query: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
        """Sees the whole state."""
        seen["state"] = state
        return f"{query}: {len(state['messages'])} messages"

    @tool
    def one_field(iterations: Annotated[int, InjectedState("iterations")]) -> str:
        """Sees one field of the state."""
        seen["iterations"] = iterations
        return str(iterations)

    @tool
    def with_store(key: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
        """Sees the store."""
        item = store.get(("notes",), key)
        seen["store"] = store
        return str(item.value if item else None)

    @tool
    def with_runtime(runtime: ToolRuntime) -> str:
        """Sees the runtime."""
        seen["runtime"] = runtime
        return str(runtime.tool_call_id)

    @tool
    def with_call_id(tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Sees its call id."""
        return tool_call_id

    return [whole_state, one_field, with_store, with_runtime, with_call_id]


HIDDEN = {"state", "iterations", "store", "runtime", "tool_call_id"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_injected_arguments_are_filled_in_by_the_graph(protocol: str, mode: str) -> None:
    seen: dict[str, Any] = {}
    store = InMemoryStore()
    store.put(("notes",), "color", {"v": "green"})
    model = ScriptedChatModel(
        [
            # The model tries to forge hidden arguments; the graph's values win.
            call_step(protocol, "whole_state", query="q", state={"messages": []}),
            call_step(protocol, "one_field", iterations=99),
            call_step(protocol, "with_store", key="color"),
            call_step(protocol, "with_runtime"),
            call_step(protocol, "with_call_id", tool_call_id="forged"),
            "FINAL: done",
        ]
    )
    agent = create_rules_agent(
        model, make_injected_tools(seen), protocol=protocol, store=store, max_iterations=6
    )
    result = invoke(agent, ask("inject"), mode, {})
    observations = [(s["tool"], s["status"], s["observation"]) for s in result["trace"]]
    assert [status for _, status, _ in observations] == ["ok"] * 5, observations
    assert observations[0][2] == "q: 2 messages"
    assert seen["state"]["messages"][0].content == "inject"
    assert seen["iterations"] == 2
    assert observations[2][2] == "{'v': 'green'}"
    assert seen["store"] is store
    runtime = seen["runtime"]
    assert runtime.store is store
    assert runtime.state["iterations"] == 4
    assert observations[3][2] == runtime.tool_call_id
    ai_calls = [c for m in result["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
    assert observations[4][2] == ai_calls[4]["id"] != "forged"
    # The trace keeps what the model sent, never the injected values.
    assert result["trace"][0]["args"] == {"query": "q", "state": {"messages": []}}


def test_injected_arguments_are_hidden_from_the_model_in_both_protocols() -> None:
    tools = make_injected_tools({})
    native = ScriptedChatModel(["FINAL: x"])
    create_rules_agent(native, tools, protocol="native", store=InMemoryStore()).invoke(ask("x"))
    shown = {
        schema["function"]["name"]: set(schema["function"]["parameters"].get("properties", {}))
        for schema in native.calls[0].tool_schemas
    }
    assert shown == {
        "whole_state": {"query"},
        "one_field": set(),
        "with_store": {"key"},
        "with_runtime": set(),
        "with_call_id": set(),
    }

    text = ScriptedChatModel(["FINAL: x"])
    create_rules_agent(text, tools, protocol="text", store=InMemoryStore()).invoke(ask("x"))
    prompt = text.calls[0].system_prompt
    assert "    query (string, required)" in prompt
    assert "    key (string, required)" in prompt
    for hidden in HIDDEN:
        assert f"    {hidden} (" not in prompt


def test_a_tool_that_needs_a_store_in_a_graph_without_one_gets_an_error_observation() -> None:
    tools = make_injected_tools({})
    model = ScriptedChatModel([call_step("native", "with_store", key="color"), "FINAL: no"])
    result = create_rules_agent(model, tools).invoke(ask("x"))
    (step,) = result["trace"]
    assert step["status"] == "error"
    assert step["observation"] == (
        "ERROR: Cannot inject store into tools with InjectedStore annotations - please "
        "compile your graph with a store."
    )


@pytest.mark.parametrize("mode", MODES)
def test_artifacts_stay_on_the_tool_message(mode: str) -> None:
    @tool(response_format="content_and_artifact")
    def fetch_rows(limit: int) -> tuple[str, list[dict[str, int]]]:
        """Fetch rows."""
        rows = [{"id": i} for i in range(limit)]
        return f"{limit} rows", rows

    model = ScriptedChatModel([call_step("native", "fetch_rows", limit=3), "FINAL: three"])
    result = invoke(create_rules_agent(model, [fetch_rows]), ask("x"), mode, {})
    (message,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert message.text == "3 rows"
    assert message.artifact == [{"id": 0}, {"id": 1}, {"id": 2}]
    assert json.dumps(result["trace"][0]["observation"]) == '"3 rows"'
