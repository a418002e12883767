"""Every model call and tool call of a run is timed: when it started, how long it took.

The times are wall-clock seconds (``time.time()``); tests assert order and
non-overlap, and durations only against generous bounds.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_agent_rules import ModelCall, RulesAgent, RunResult, TraceStep
from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import PROTOCOLS, call_step, calls_step, run

MODES = ["sync", "async"]
NAP_S = 0.05
# Model call ends and tool call starts come from two clocks (monotonic durations added to
# wall-clock starts); they agree far better than this.
CLOCKS_AGREE_S = 0.002


@tool
def nap(label: str) -> str:
    """Sleep a moment, then answer with the label."""
    time.sleep(NAP_S)
    return f"rested {label}"


@tool
async def async_nap(label: str) -> str:
    """Sleep a moment without blocking the event loop, then answer with the label."""
    await asyncio.sleep(NAP_S)
    return f"rested {label}"


@tool
def fail(label: str) -> str:
    """Sleep a moment, then fail."""
    time.sleep(NAP_S)
    raise ValueError(f"no {label}")


EUROS = Rule(
    id="amounts_in_eur",
    type="requirement",
    target="output",
    content="Write money amounts with EUR.",
    check={"require": r"regex:\d EUR\b", "when": r"regex:\d"},
)
POLITE = Rule(id="polite", type="guideline", target="output", content="Thank the user at the end.")


def end(span: Mapping[str, Any]) -> float:
    return float(span["started_at"]) + float(span["duration_ms"]) / 1000


def spans_in_order(result: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The run's model calls and tool calls, by start time."""
    spans: list[tuple[str, Mapping[str, Any]]] = [
        *((f"model:{c['purpose']}", c) for c in result["model_calls"]),
        *((f"tool:{s['tool']}", s) for s in result["trace"]),
    ]
    return sorted(spans, key=lambda pair: pair[1]["started_at"])


def assert_one_after_another(spans: list[tuple[str, Mapping[str, Any]]]) -> None:
    for (_, before), (name, after) in itertools.pairwise(spans):
        assert after["started_at"] >= end(before) - CLOCKS_AGREE_S, name


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mode", MODES)
def test_model_calls_and_tool_calls_are_timed_one_after_another(protocol: str, mode: str) -> None:
    model = ScriptedChatModel(
        [call_step(protocol, "nap", label="a"), call_step(protocol, "nap", label="b"), "FINAL: ok"]
    )
    before = time.time()
    result = run(create_rules_agent(model, [nap], protocol=protocol), "x", mode)
    after = time.time()

    spans = spans_in_order(result)
    assert [name for name, _ in spans] == [
        "model:turn",
        "tool:nap",
        "model:turn",
        "tool:nap",
        "model:turn",
    ]
    assert_one_after_another(spans)
    assert before <= spans[0][1]["started_at"] and end(spans[-1][1]) <= after + CLOCKS_AGREE_S
    for step in result["trace"]:
        assert NAP_S * 1000 <= step["duration_ms"] < 60_000
    assert len(result["model_calls"]) == result["usage"]["model_calls"] == 3


@pytest.mark.parametrize("mode", MODES)
def test_a_failed_or_async_tool_call_is_timed_from_its_start(mode: str) -> None:
    model = ScriptedChatModel(
        [calls_step("native", ("fail", {"label": "a"}), ("async_nap", {"label": "b"})), "FINAL: x"]
    )
    # LangGraph's ToolNode runs an async-only tool only in an async run.
    napper = async_nap if mode == "async" else nap.model_copy(update={"name": "async_nap"})
    tools = [fail, napper]
    result = run(create_rules_agent(model, tools), "x", mode)

    failed, napped = result["trace"]
    assert (failed["status"], napped["status"]) == ("error", "ok")
    for step in (failed, napped):
        assert NAP_S * 1000 <= step["duration_ms"] < 60_000
        assert step["started_at"] >= end(result["model_calls"][0]) - CLOCKS_AGREE_S
        assert end(step) <= result["model_calls"][1]["started_at"] + CLOCKS_AGREE_S


def test_calls_that_never_ran_are_placed_where_they_were_settled() -> None:
    model = ScriptedChatModel(
        [
            calls_step("native", ("nap", {"label": "a"}), ("missing", {})),
            call_step("native", "nap", label="a"),
            "FINAL: ok",
        ]
    )
    result = run(create_rules_agent(model, [nap]), "x", "sync")

    assert [s["status"] for s in result["trace"]] == ["ok", "unknown_tool", "repeated"]
    first_turn, second_turn, summary = result["model_calls"]
    for step in result["trace"][:2]:
        assert end(first_turn) - CLOCKS_AGREE_S <= step["started_at"] <= second_turn["started_at"]
    repeated = result["trace"][2]
    assert repeated["duration_ms"] == 0.0
    assert repeated["started_at"] >= end(second_turn) - CLOCKS_AGREE_S
    assert repeated["started_at"] <= summary["started_at"]


@pytest.mark.parametrize("mode", MODES)
def test_revisions_are_model_calls_of_their_own(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: It costs 12.", "It costs 12 EUR."])
    result = run(create_rules_agent(model, [nap], rules=InMemoryRuleStore([EUROS])), "x", mode)

    assert result["answer"] == "It costs 12 EUR."
    assert [c["purpose"] for c in result["model_calls"]] == ["turn", "revision"]
    assert_one_after_another(spans_in_order(result))


@pytest.mark.parametrize("mode", MODES)
def test_a_review_comes_first_then_revisions(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: It costs 12.", "FINAL: It costs 12. Thanks!", "12 EUR."])
    rules = InMemoryRuleStore([EUROS, POLITE])
    result = run(create_rules_agent(model, [nap], rules=rules, review="model"), "x", mode)

    assert [c["purpose"] for c in result["model_calls"]] == ["turn", "review", "revision"]
    assert len(result["model_calls"]) == result["usage"]["model_calls"]


@pytest.mark.parametrize("mode", MODES)
def test_the_answer_after_a_spent_budget_or_repeated_calls_is_a_summary(mode: str) -> None:
    budget = ScriptedChatModel([call_step("native", "nap", label="a"), "FINAL: best guess"])
    spent = run(create_rules_agent(budget, [nap], max_iterations=1), "x", mode)
    repeat = ScriptedChatModel(
        [call_step("native", "nap", label="a"), call_step("native", "nap", label="a"), "done"]
    )
    repeated = run(create_rules_agent(repeat, [nap]), "x", mode)

    assert spent["stop_reason"] == "max_iterations"
    assert [c["purpose"] for c in spent["model_calls"]] == ["turn", "summary"]
    assert repeated["stop_reason"] == "repeated_calls"
    assert [c["purpose"] for c in repeated["model_calls"]] == ["turn", "turn", "summary"]


def test_each_run_on_a_thread_has_only_its_own_model_calls() -> None:
    model = ScriptedChatModel([call_step("native", "nap", label="a"), "FINAL: one", "FINAL: two"])
    agent = RulesAgent(model, tools=[nap], checkpointer=InMemorySaver())

    first = agent.invoke("first", thread_id="t")
    second = agent.invoke("second", thread_id="t")

    assert [c["purpose"] for c in first.model_calls] == ["turn", "turn"]
    assert len(second.model_calls) == 1
    assert second.model_calls[0]["started_at"] >= end(first.model_calls[-1]) - CLOCKS_AGREE_S
    assert second.trace == []


def test_an_approval_wait_lies_between_the_model_call_and_the_tool_call() -> None:
    def approve(request: Any) -> str:
        time.sleep(NAP_S)
        return "approve"

    model = ScriptedChatModel([call_step("native", "nap", label="a"), "FINAL: ok"])
    agent = RulesAgent(model, tools=[nap], require_approval=["nap"], approve=approve)

    result = agent.invoke("x")

    turn, answer = result.model_calls
    [step] = result.trace
    assert step["approval"] == "approved"
    assert step["started_at"] - end(turn) >= NAP_S - CLOCKS_AGREE_S
    assert answer["started_at"] >= end(step) - CLOCKS_AGREE_S


def test_the_times_survive_an_interrupt_in_the_checkpointer() -> None:
    model = ScriptedChatModel([call_step("native", "nap", label="a"), "FINAL: ok"])
    graph = create_rules_agent(model, [nap], checkpointer=InMemorySaver(), require_approval=["nap"])
    config: Any = {"configurable": {"thread_id": "t"}}

    paused = graph.invoke({"messages": [("user", "x")]}, config)
    finished = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)

    assert "__interrupt__" in paused
    assert finished["model_calls"][0] == paused["model_calls"][0]
    assert [c["purpose"] for c in finished["model_calls"]] == ["turn", "turn"]
    assert finished["trace"][0]["started_at"] >= end(paused["model_calls"][0]) - CLOCKS_AGREE_S


def test_a_result_read_from_an_older_state_has_no_model_calls() -> None:
    older: dict[str, Any] = {"answer": "a", "stop_reason": "final", "trace": []}

    assert RunResult.from_state(older).model_calls == []


def test_model_calls_and_trace_steps_are_plain_data() -> None:
    model = ScriptedChatModel([call_step("native", "nap", label="a"), AIMessage("FINAL: ok")])
    result = RulesAgent(model, tools=[nap]).invoke("x")

    call: ModelCall = result.model_calls[0]
    step: TraceStep = result.trace[0]
    assert set(call) == {"started_at", "duration_ms", "purpose"}
    assert isinstance(step["started_at"], float) and isinstance(call["started_at"], float)
