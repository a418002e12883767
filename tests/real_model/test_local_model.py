"""The embedded model itself: exact prefix reuse, constrained replies, tool binding, streaming,
async and usage. Replies are kept short (``max_tokens``) where a short one is expected.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_agent_rules.testing import ScriptedChatModel
from langchain_agent_rules.text_protocol import parse_tool_reply

from .conftest import RunTask, embedded_model, numbers_in

pytestmark = pytest.mark.local_model

ONE_QUERY_TASK = "How many active customers do we have?"


def _forget_evaluated_prefixes(model: BaseChatModel) -> None:
    """Drop the saved prefixes, in RAM and in this session's folder on disk."""
    from langchain_agent_rules.models.local import ChatLocalLlama, _shared_model

    assert isinstance(model, ChatLocalLlama)
    assert model.model_path is not None
    _shared_model(model.model_path, model.n_ctx, model.n_threads, model.seed).forget()
    assert model.prefix_cache_dir is not None
    for entry in Path(model.prefix_cache_dir).glob("*"):
        entry.unlink()


def _model_turns(state: dict[str, Any]) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    return [
        (message.text, [(call["name"], call["args"]) for call in message.tool_calls])
        for message in state["messages"]
        if isinstance(message, AIMessage)
    ]


def _usages(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        dict(message.usage_metadata)
        for message in state["messages"]
        if isinstance(message, AIMessage) and message.usage_metadata
    ]


def test_a_task_replies_the_same_fresh_restored_and_after_other_tasks(
    run_task: RunTask, local_model: BaseChatModel
) -> None:
    _forget_evaluated_prefixes(local_model)
    fresh = run_task(ONE_QUERY_TASK, project_id=1)
    restored = run_task(ONE_QUERY_TASK, project_id=1)
    run_task("What does SQL stand for?")  # another system prompt in between
    after_other = run_task(ONE_QUERY_TASK, project_id=1)

    assert _model_turns(restored) == _model_turns(fresh)
    assert _model_turns(after_other) == _model_turns(fresh)
    assert 9 in numbers_in(fresh["answer"])
    assert [(step["tool"], step["status"]) for step in fresh["trace"]] == [("sql_query", "ok")]
    first_calls = [
        _usages(state)[0]["input_token_details"] for state in (fresh, restored, after_other)
    ]
    assert first_calls[0]["cache_read"] == 0
    # After another system prompt, the prefix comes back from the saved states.
    prefix = first_calls[2]["cache_read"]
    assert prefix > 200  # the system message: prompt, rules, tools and schema
    assert first_calls[1]["cache_read"] >= prefix  # right after: the prefix and more, in place
    # The aim for a one-query task: two calls, at most 250 prompt tokens beyond the prefix.
    usages = _usages(after_other)
    assert len(usages) == 2
    assert sum(u["input_tokens"] - u["input_token_details"]["cache_read"] for u in usages) <= 250


def test_a_new_process_restores_the_prefix_from_disk_and_replies_the_same(
    demo_database: Path, tmp_path: Path
) -> None:
    from langchain_agent_rules.demo import demo_project_root, demo_rules_path
    from langchain_agent_rules.models.local import PREFIX_CACHE_DIR_ENV

    def run_in_a_new_process() -> dict[str, Any]:
        run = subprocess.run(
            [
                str(Path(sys.executable).with_name("agent-rules")),
                "run",
                ONE_QUERY_TASK,
                "--db",
                f"sqlite:///{demo_database}",
                "--root",
                str(demo_project_root()),
                "--store",
                str(demo_rules_path()),
                "--checkpoints",
                str(tmp_path / "runs.sqlite"),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, PREFIX_CACHE_DIR_ENV: str(tmp_path / "prefix")},
        )
        assert run.returncode == 0, run.stderr
        result: dict[str, Any] = json.loads(run.stdout)
        return result

    cold = run_in_a_new_process()
    warm = run_in_a_new_process()
    assert 9 in numbers_in(cold["answer"])
    assert warm["answer"] == cold["answer"]
    assert [(tool, status) for tool, _, status in _calls(cold["trace"])] == [("sql_query", "ok")]
    assert _calls(warm["trace"]) == _calls(cold["trace"])
    usage = {name: result["usage"] for name, result in (("cold", cold), ("warm", warm))}
    evaluated = {name: u["input_tokens"] - u["cached_input_tokens"] for name, u in usage.items()}
    assert evaluated["warm"] <= 200 < evaluated["cold"]
    assert usage["warm"]["output_tokens"] == usage["cold"]["output_tokens"]


def _calls(trace: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    return [(step["tool"], step["args"], step["status"]) for step in trace]


def _demo_system_prompt(tools: list[BaseTool], project_id: int | None = 1) -> Any:
    """The system message the rules agent sends with these tools (text protocol)."""
    from langchain_agent_rules.agent.builder import create_rules_agent
    from langchain_agent_rules.demo import demo_rules_path
    from langchain_agent_rules.rules.json_file import JsonFileRuleStore

    scripted = ScriptedChatModel(steps=["FINAL: -"])
    agent = create_rules_agent(
        scripted,
        tools,
        rules=JsonFileRuleStore(demo_rules_path()),
        project_id=project_id,
        protocol="text",
    )
    agent.invoke({"messages": [("user", "-")]})
    return scripted.calls[0].messages[0]


FIFTY_QUESTIONS = [
    "How many customers do we have?",
    "How many customers are inactive?",
    "Which customers live in Lyon?",
    "What is the email of Alice Martin?",
    "List every product with its price.",
    "What is the cheapest product?",
    "What is the most expensive product?",
    "How many orders were placed in January 2026?",
    "What was the largest order amount?",
    "Which customer placed order 3?",
    "How many teapots were ordered in total?",
    "What is the average order amount?",
    "Who ordered the Gift box?",
    "Which city is Bruno Keller in?",
    "How many products cost more than 30?",
    "What did Elena Rossi order?",
    "When was the last order placed?",
    "How many orders has customer 2 placed?",
    "Which customers have never ordered?",
    "What is the total quantity of Green tea sold?",
    "What does docs/notes.md say about version 2.3?",
    "Read README.md and tell me what the project is.",
    "What is in config.toml?",
    "Who owns the next release?",
    "When was version 2.3 released?",
    "What does the next release add?",
    "Show me the first lines of docs/notes.md.",
    "Is there a file called docs/notes.md?",
    "What settings does config.toml define?",
    "Summarise the project README.",
    "What does SQL stand for?",
    "What is 2 plus 2?",
    "Say hello.",
    "What is the capital of Italy?",
    "Spell the word tea backwards.",
    "Is a teapot a product we sell?",
    "Name one tea we sell.",
    "How many tables does the shop database have?",
    "What columns does the orders table have?",
    "Which customer has id 7?",
    "How much did Hugo Silva spend?",
    "What is the price of Black tea?",
    "How many customers live in Zurich?",
    "Which orders have a quantity above 2?",
    "What products did Luca Bianchi buy?",
    "What is the sum of all order quantities?",
    "How many distinct customers ordered?",
    "Which day had the most orders?",
    "Thank you!",
    "Who are you?",
]


def test_fifty_constrained_replies_all_parse_and_call_only_real_tools(
    demo_tools: list[BaseTool],
) -> None:
    assert len(set(FIFTY_QUESTIONS)) == 50
    model = embedded_model(max_tokens=128).bind_text_protocol(demo_tools)
    system = _demo_system_prompt(demo_tools)
    schemas = {t.name: convert_to_openai_tool(t)["function"]["parameters"] for t in demo_tools}
    shapes = {"answer": 0, "call": 0}
    for question in FIFTY_QUESTIONS:
        reply = model.invoke([system, HumanMessage(question)])
        parsed = parse_tool_reply(reply.text)
        assert parsed.errors == (), (question, reply.text)
        if parsed.final_answer is not None:
            assert reply.text.startswith("FINAL:"), (question, reply.text)
            shapes["answer"] += 1
            continue
        assert len(parsed.tool_calls) == 1, (question, reply.text)
        call = parsed.tool_calls[0]
        assert call.name in schemas, (question, reply.text)
        _assert_matches_schema(call.args, schemas[call.name])
        shapes["call"] += 1
    assert shapes["call"] > 0
    assert shapes["answer"] > 0


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _assert_matches_schema(args: dict[str, Any], schema: dict[str, Any]) -> None:
    properties = schema.get("properties", {})
    assert set(args) <= set(properties), args
    assert set(schema.get("required", ())) <= set(args), args
    for name, value in args.items():
        expected = properties[name].get("type")
        if expected is not None:
            assert isinstance(value, _JSON_TYPES[expected]), (name, value)


def test_bind_tools_drives_langchain_create_agent(demo_tools: list[BaseTool]) -> None:
    from langchain.agents import create_agent

    agent = create_agent(embedded_model(max_tokens=128), demo_tools)
    state = agent.invoke({"messages": [("user", ONE_QUERY_TASK)]})
    tool_results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in tool_results] == ["sql_query"]
    assert 9 in numbers_in(state["messages"][-1].text)
    assert not state["messages"][-1].tool_calls


def test_streaming_yields_tokens_and_ends_with_the_usage() -> None:
    chunks = list(embedded_model(max_tokens=8).stream("Count from one to ten, in words."))
    text_chunks = [chunk for chunk in chunks if chunk.text]
    assert len(text_chunks) > 1
    merged = sum(chunks[1:], chunks[0])
    assert isinstance(merged, AIMessageChunk)
    usage = merged.usage_metadata
    assert usage is not None
    assert usage["output_tokens"] == 8
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert 0 <= usage["input_token_details"]["cache_read"] < usage["input_tokens"]
    assert merged.response_metadata["finish_reason"] == "length"


def test_a_streamed_tool_call_of_the_chosen_tool_arrives_as_one_chunk(
    demo_tools: list[BaseTool],
) -> None:
    model = embedded_model(max_tokens=48).bind_tools(demo_tools, tool_choice="file_read")
    chunks = list(model.stream("What does docs/notes.md say?"))
    assert [c["name"] for chunk in chunks for c in chunk.tool_call_chunks] == ["file_read"]
    merged = sum(chunks[1:], chunks[0])
    assert isinstance(merged, AIMessageChunk)
    assert merged.tool_calls[0]["args"]["path"].endswith("notes.md")
    assert merged.usage_metadata is not None


def test_without_the_schema_the_model_still_calls_only_a_real_tool(demo_database: Path) -> None:
    # Without table and column names this model once called a tool named "sql" (which
    # does not exist) in 5 tasks of 10; the grammar lets it name only real tools.
    from langchain_agent_rules.tools.sql_query import SqlQueryTool

    tools: list[BaseTool] = [SqlQueryTool(f"sqlite:///{demo_database}", include_schema=False)]
    model = embedded_model(max_tokens=128).bind_text_protocol(tools)
    reply = model.invoke(
        [_demo_system_prompt(tools), HumanMessage("What is the total amount of all orders?")]
    )
    parsed = parse_tool_reply(reply.text)
    assert [call.name for call in parsed.tool_calls] == ["sql_query"]


async def test_an_async_generation_leaves_the_event_loop_free() -> None:
    model = embedded_model(max_tokens=8)
    generation = asyncio.ensure_future(model.ainvoke("Count from one to ten, in words."))
    ticks = 0
    while not generation.done():
        await asyncio.sleep(0.005)
        ticks += 1
    reply = await generation
    assert ticks > 1  # a blocked loop would have run the generation to its end at once
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["output_tokens"] == 8
    streamed = [chunk async for chunk in model.astream("Say hello.")]
    assert streamed[-1].usage_metadata is not None


def test_a_prompt_longer_than_the_context_is_refused_before_any_work() -> None:
    from langchain_agent_rules.errors import ContextWindowError

    model = embedded_model(max_tokens=4)
    with pytest.raises(ContextWindowError, match="more than the model's context window of 4,096"):
        model.invoke("tea " * 5000)
    assert model.invoke("Say OK.").usage_metadata is not None  # the model is still usable
