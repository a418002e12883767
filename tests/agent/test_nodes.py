"""The nodes take a plain state dict and return an update, so they can be tested alone."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from langchain_agent_rules.agent.nodes import AgentNodes
from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.protocol import ProtocolChoice
from langchain_agent_rules.agent.tools_node import ToolsNode
from langchain_agent_rules.testing import ScriptedChatModel


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


OPTIONS = AgentOptions(max_iterations=3, tool_timeout=5.0, max_observation_bytes=1024)


def make_nodes(model: ScriptedChatModel, protocol: str = "native") -> AgentNodes:
    return AgentNodes(model, [add], ProtocolChoice(model, [add], protocol), OPTIONS)


def test_tools_node_answers_each_call_and_extends_the_trace() -> None:
    nodes = ToolsNode([add], OPTIONS)
    state = {
        "messages": [
            HumanMessage("1+2 and 2+2?"),
            AIMessage(
                "",
                tool_calls=[
                    {"name": "add", "args": {"a": 1, "b": 2}, "id": "one"},
                    {"name": "add", "args": {"a": 2, "b": 2}, "id": "two"},
                ],
            ),
        ],
        "iterations": 1,
        "trace": [],
    }
    update = nodes.tools(state)  # type: ignore[arg-type]
    assert [m.content for m in update["messages"]] == ["3", "4"]
    assert [(s["step"], s["iteration"], s["observation"]) for s in update["trace"]] == [
        (1, 1, "3"),
        (2, 1, "4"),
    ]


def test_agent_node_in_text_mode_stores_only_the_parsed_call() -> None:
    model = ScriptedChatModel(['Sure.\n```tool\n{"tool": "add", "args": {"a": 1, "b": 2}}\n```'])
    nodes = make_nodes(model, "text")
    update = nodes.agent({"messages": [HumanMessage("1+2?")], "iterations": 0}, {})  # type: ignore[typeddict-item]
    (message,) = update["messages"]
    assert message.content == ""
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [("add", {"a": 1, "b": 2})]
    assert update["iterations"] == 1


def test_routers_follow_the_state() -> None:
    nodes = make_nodes(ScriptedChatModel([]))
    asked = {"messages": [AIMessage("", tool_calls=[{"name": "add", "args": {}, "id": "x"}])]}
    draft = {"answer": "done", "stop_reason": "final", "message": {}}
    answered = {"messages": [AIMessage("done")], "draft": draft}
    assert nodes.route_after_agent(asked) == "tools"  # type: ignore[arg-type]
    assert nodes.route_after_agent(answered) == "check_answer"  # type: ignore[arg-type]
    assert nodes.route_after_tools({"messages": [], "iterations": 2}) == "agent"
    assert nodes.route_after_tools({"messages": [], "iterations": 3}) == "limit"


def step(iteration: int, status: str) -> dict[str, object]:
    return {"iteration": iteration, "status": status}


def test_after_a_turn_of_only_repeated_calls_the_router_asks_for_the_answer() -> None:
    nodes = make_nodes(ScriptedChatModel([]))
    repeated_only = [step(1, "ok"), step(2, "repeated"), step(2, "repeated")]
    mixed = [step(1, "ok"), step(2, "repeated"), step(2, "ok")]
    earlier = [step(1, "repeated"), step(2, "ok")]
    for trace, route in [(repeated_only, "repeated_calls"), (mixed, "agent"), (earlier, "agent")]:
        state = {"messages": [], "iterations": 2, "trace": trace}
        assert nodes.route_after_tools(state) == route  # type: ignore[arg-type]
    at_limit = {"messages": [], "iterations": 3, "trace": [step(1, "ok"), step(3, "repeated")]}
    assert nodes.route_after_tools(at_limit) == "limit"  # type: ignore[arg-type]
