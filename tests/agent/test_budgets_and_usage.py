"""Budgets besides max_iterations, the run's token usage, and rules over the limits."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.facade import RulesAgent
from langchain_agent_rules.errors import IterationLimitError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import run

MODES = ["sync", "async"]


@tool
def lookup(n: int) -> str:
    """Look a number up."""
    return f"value {n}"


def calling(n: int, tokens: int = 0, cached: int = 0) -> AIMessage:
    usage: Any = {"input_tokens": tokens, "output_tokens": 0, "total_tokens": tokens}
    if cached:
        usage["input_token_details"] = {"cache_read": cached}
    return AIMessage(
        "", tool_calls=[{"name": "lookup", "args": {"n": n}, "id": f"c{n}"}], usage_metadata=usage
    )


@pytest.mark.parametrize("mode", MODES)
def test_max_model_calls_keeps_the_summary_within_the_budget(mode: str) -> None:
    model = ScriptedChatModel([calling(1), calling(2), "FINAL: best guess"])
    agent = create_rules_agent(model, [lookup], max_model_calls=3)
    result = run(agent, "x", mode)
    assert (result["answer"], result["stop_reason"]) == ("best guess", "max_model_calls")
    assert result["usage"]["model_calls"] == 3 == len(model.calls)
    assert model.calls[2].tools == []
    assert model.calls[2].messages[-1].text == (
        "Task: x\n\nWhat the tools returned:\n[lookup]\nvalue 1\n\n[lookup]\nvalue 2\n\n"
        "No more tools can be used: this is the last of 3 model calls. Using only what the "
        "tools returned, reply with FINAL: followed by your best answer to the task."
    )


def test_max_model_calls_with_on_limit_end_gives_the_fixed_answer() -> None:
    model = ScriptedChatModel([calling(1), calling(2)])
    agent = create_rules_agent(model, [lookup], max_model_calls=2, on_limit="end")
    result = run(agent, "x", "sync")
    assert result["answer"] == "I stopped after 2 model calls without reaching an answer."
    assert (result["stop_reason"], result["usage"]["model_calls"]) == ("max_model_calls", 2)


def test_a_budget_of_one_model_call_leaves_no_room_for_a_summary() -> None:
    model = ScriptedChatModel([calling(1)])
    result = run(create_rules_agent(model, [lookup], max_model_calls=1), "x", "sync")
    assert result["answer"] == "I stopped after 1 model calls without reaching an answer."
    assert len(model.calls) == 1


def test_max_model_calls_with_on_limit_raise_names_the_budget() -> None:
    model = ScriptedChatModel([calling(1), calling(2)])
    agent = create_rules_agent(model, [lookup], max_model_calls=2, on_limit="raise")
    with pytest.raises(IterationLimitError, match="made max_model_calls=2 model calls"):
        run(agent, "x", "sync")


@pytest.mark.parametrize("mode", MODES)
def test_max_total_tokens_ends_the_run_once_the_model_reports_them(mode: str) -> None:
    model = ScriptedChatModel([calling(1, tokens=60), calling(2, tokens=60), "FINAL: enough"])
    agent = create_rules_agent(model, [lookup], max_total_tokens=100)
    result = run(agent, "x", mode)
    assert (result["answer"], result["stop_reason"]) == ("enough", "max_total_tokens")
    assert result["iterations"] == 2
    assert "No more tools can be used: the 100-token budget is spent." in (
        model.calls[2].messages[-1].text
    )


def test_max_total_tokens_with_on_limit_end() -> None:
    model = ScriptedChatModel([calling(1, tokens=150)])
    agent = create_rules_agent(model, [lookup], max_total_tokens=100, on_limit="end")
    result = run(agent, "x", "sync")
    assert result["answer"] == (
        "I stopped after using the 100-token budget without reaching an answer."
    )
    assert result["stop_reason"] == "max_total_tokens"


def test_an_answer_within_the_budgets_is_final() -> None:
    model = ScriptedChatModel([calling(1, tokens=10), "FINAL: 1"])
    agent = create_rules_agent(model, [lookup], max_model_calls=3, max_total_tokens=1000)
    assert run(agent, "x", "sync")["stop_reason"] == "final"


@pytest.mark.parametrize("mode", MODES)
def test_usage_sums_the_runs_model_calls_and_resets_for_the_next_run(mode: str) -> None:
    model = ScriptedChatModel(
        [
            calling(1, tokens=100, cached=80),
            AIMessage(
                "FINAL: one",
                usage_metadata={"input_tokens": 120, "output_tokens": 7, "total_tokens": 127},
            ),
            "FINAL: two",
        ]
    )
    agent = create_rules_agent(model, [lookup], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "u"}}
    first = run(agent, "x", mode, config)
    assert first["usage"] == {
        "model_calls": 2,
        "input_tokens": 220,
        "output_tokens": 7,
        "cached_input_tokens": 80,
    }
    second = run(agent, "y", mode, config)
    assert second["usage"] == {
        "model_calls": 1,
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_input_tokens": 0,
    }


def test_usage_counts_the_text_protocol_and_the_summary_call() -> None:
    tokens = {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6}
    block = '```tool\n{"tool": "lookup", "args": {"n": 1}}\n```'
    model = ScriptedChatModel(
        [AIMessage(block, usage_metadata=tokens), AIMessage("FINAL: s", usage_metadata=tokens)]
    )
    agent = create_rules_agent(model, [lookup], protocol="text", max_iterations=1)
    result = run(agent, "x", "sync")
    assert result["stop_reason"] == "max_iterations"
    assert result["usage"]["model_calls"] == 2
    assert (result["usage"]["input_tokens"], result["usage"]["output_tokens"]) == (10, 2)


def rules_file(tmp_path: Path) -> Path:
    """A rules file written by hand (or by an older writer) with one rule over the limit."""
    record = {
        "type": "requirement",
        "projectId": None,
        "target": "output",
        "priority": 5,
        "createdAt": "2026-02-16T14:59:00+00:00",
        "updatedAt": "2026-02-16T14:59:00+00:00",
        "metadata": None,
    }
    rules = [
        {**record, "id": "huge_rule", "content": "Always " + "x" * 600, "priority": 9},
        {**record, "id": "eur_rule", "content": "Write amounts with EUR."},
    ]
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules), encoding="utf-8")
    return path


OMITTED = {
    "rule_id": "huge_rule",
    "status": "omitted",
    "detail": "max_rule_content_bytes=500 (its content has 607 bytes)",
}


@pytest.mark.parametrize("mode", MODES)
def test_a_stored_rule_over_the_limit_is_left_out_and_reported_not_raised(
    tmp_path: Path, mode: str
) -> None:
    store = JsonFileRuleStore(rules_file(tmp_path))
    model = ScriptedChatModel([calling(1), "FINAL: 5 EUR", "FINAL: again"])
    agent = create_rules_agent(model, [lookup], rules=store, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "r"}}
    result = run(agent, "x", mode, config)
    assert result["answer"] == "5 EUR"
    assert result["rule_events"] == [OMITTED]
    prompt = model.calls[0].system_prompt
    assert "- [output] Write amounts with EUR." in prompt
    assert "xxxx" not in prompt
    # The next run on the thread starts its own events.
    assert run(agent, "y", mode, config)["rule_events"] == [OMITTED]


def test_run_results_carry_the_rule_events(tmp_path: Path) -> None:
    store = JsonFileRuleStore(rules_file(tmp_path))
    agent = RulesAgent(ScriptedChatModel(["FINAL: ok"]), rules=store)
    assert agent.invoke("x").rule_events == [OMITTED]
    again = RulesAgent(ScriptedChatModel(["FINAL: ok"]), rules=store)
    assert asyncio.run(again.ainvoke("x")).rule_events == [OMITTED]
