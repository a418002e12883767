"""The Studio graph factory alone, with the SDK's real runtime objects and an in-memory store."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import Pregel
from langgraph.store.memory import InMemoryStore
from langgraph_sdk.runtime import _ExecutionRuntime, _ReadRuntime

from langchain_agent_rules.errors import (
    AgentConfigurationError,
    RuleStoreError,
    ToolConfigurationError,
)
from langchain_agent_rules.models.resolve import MODEL_SPEC_FORMS

GRAPH_FILE = Path(__file__).resolve().parents[2] / "graphs" / "agent.py"


@pytest.fixture(scope="module")
def studio() -> ModuleType:
    spec = importlib.util.spec_from_file_location("studio_graph", GRAPH_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered first, as the import system does, so pydantic can resolve the annotations.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def execution(context: dict[str, Any]) -> _ExecutionRuntime[Any]:
    return _ExecutionRuntime(
        access_context="threads.create_run", store=InMemoryStore(), context=context
    )


def on_platform(graph: Pregel[Any, Any]) -> Pregel[Any, Any]:
    """The graph as the platform runs it: with its own checkpointer and store."""
    return graph.copy(update={"checkpointer": InMemorySaver(), "store": InMemoryStore()})


THREAD = {"configurable": {"thread_id": "studio"}}


def test_langgraph_json_points_at_the_factory(studio: ModuleType) -> None:
    config = json.loads((GRAPH_FILE.parents[1] / "langgraph.json").read_text())

    assert config["dependencies"] == ["."]
    assert config["graphs"] == {"agent": "./graphs/agent.py:make_graph"}
    assert callable(studio.make_graph)


async def test_the_graph_brings_no_checkpointer_or_store_of_its_own(studio: ModuleType) -> None:
    graph = await studio.make_graph(execution({"scripted_replies": ["FINAL: hi"]}))

    assert graph.checkpointer is True  # the platform's is used
    assert graph.store is None


async def test_reads_get_the_same_topology_as_runs(studio: ModuleType) -> None:
    run_graph = await studio.make_graph(execution({"scripted_replies": []}))
    read_graph = await studio.make_graph(
        _ReadRuntime(access_context="assistants.read", store=InMemoryStore())
    )

    assert read_graph.get_graph().draw_mermaid() == run_graph.get_graph().draw_mermaid()
    assert read_graph.context_schema is studio.AgentContext


async def test_a_scripted_run_uses_the_demo_data_by_default(studio: ModuleType) -> None:
    fenced = '```tool\n{"tool": "file_read", "args": {"path": "docs/notes.md"}}\n```'
    context = {"protocol": "text", "scripted_replies": [fenced, "FINAL: 14 March 2026"]}
    graph = on_platform(await studio.make_graph(execution(context)))

    state = await graph.ainvoke({"messages": [("user", "When does 2.4 ship?")]}, THREAD)

    assert state["answer"] == "14 March 2026"
    [step] = state["trace"]
    assert (step["tool"], step["status"]) == ("file_read", "ok")
    assert "Ships on 14 March 2026" in step["observation"]


def test_no_context_means_every_default(studio: ModuleType) -> None:
    context = studio.parse_context(None)

    assert context.model == "local"
    assert (context.rules, context.database_url, context.file_root) == (None, None, None)
    assert context.allowed_hosts == []
    assert context.scripted_replies is None


@pytest.mark.parametrize(
    ("raw", "complaint"),
    [
        ({"modle": "local"}, "modle: unknown option"),
        ({"project_id": 0}, "project_id: Input should be greater than or equal to 1, got 0"),
        ({"protocol": "smoke"}, "protocol: Input should be 'auto', 'native' or 'text'"),
        ({"max_iterations": "many"}, "max_iterations: Input should be a valid integer"),
        ({"max_total_tokens": -5}, "max_total_tokens: Input should be greater than or equal to 1"),
        (["local"], "the run context must be an object, got list"),
    ],
)
def test_a_bad_context_names_the_problem(studio: ModuleType, raw: Any, complaint: str) -> None:
    with pytest.raises(AgentConfigurationError) as caught:
        studio.parse_context(raw)

    assert complaint in str(caught.value)


def test_a_bad_context_value_is_one_plain_sentence_not_a_nested_one(studio: ModuleType) -> None:
    with pytest.raises(AgentConfigurationError) as caught:
        studio.parse_context({"max_iterations": "many"})

    assert str(caught.value) == (
        "invalid run context (max_iterations: Input should be a valid integer, got 'many')"
    )


def test_the_context_carries_every_agent_option(studio: ModuleType) -> None:
    from langchain_agent_rules.options import AgentOptions

    fields = studio.AgentContext.model_fields
    assert set(AgentOptions.model_fields) <= set(fields)
    context = studio.parse_context({"max_model_calls": 4, "on_limit": "end"})
    assert context.options() == AgentOptions(max_model_calls=4, on_limit="end")


async def test_the_graph_publishes_input_and_output_schemas(studio: ModuleType) -> None:
    graph = await studio.make_graph(
        _ReadRuntime(access_context="assistants.read", store=InMemoryStore())
    )

    assert set(graph.get_input_jsonschema()["properties"]) == {"messages"}
    assert {"answer", "trace", "usage", "rule_events"} <= set(
        graph.get_output_jsonschema()["properties"]
    )


async def test_the_demo_rules_redact_an_address_in_the_answer(studio: ModuleType) -> None:
    context = {"protocol": "text", "scripted_replies": ["FINAL: alice.martin@example.com"]}
    graph = on_platform(await studio.make_graph(execution(context)))

    state = await graph.ainvoke({"messages": [("user", "Alice's address?")]}, THREAD)

    assert state["answer"] == "[redacted: email]"
    assert state["rule_events"] == [
        {
            "rule_id": "no_email_addresses",
            "status": "redacted",
            "detail": "redacted 1 match of email",
        }
    ]


async def test_a_rule_that_asks_for_approval_pauses_the_run(
    studio: ModuleType, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.json"
    rule = {
        "id": "ask_first",
        "type": "constraint",
        "projectId": None,
        "target": "tool",
        "content": "Ask before any query.",
        "priority": 1,
        "createdAt": "2026-03-01T09:00:00+00:00",
        "updatedAt": "2026-03-01T09:00:00+00:00",
        "metadata": None,
        "check": {"tool": "sql_query", "on_fail": "approve"},
    }
    rules.write_text(json.dumps([rule]))
    fenced = '```tool\n{"tool": "sql_query", "args": {"sql": "SELECT 1 AS one"}}\n```'
    context = {"protocol": "text", "scripted_replies": [fenced], "rules": str(rules)}
    graph = on_platform(await studio.make_graph(execution(context)))

    paused = await graph.ainvoke({"messages": [("user", "One?")]}, THREAD)

    [request] = paused["__interrupt__"]
    [action] = request.value["action_requests"]
    assert action["description"].endswith("Rule ask_first asks for it: Ask before any query.")


@pytest.mark.parametrize(
    ("context", "error", "message"),
    [
        (
            {"rules": "/missing/rules.json"},
            RuleStoreError,
            "invalid run context: rules: no rules file at /missing/rules.json; give the path of "
            "an existing rules file or a database URL, or start an empty one with: "
            "agent-rules rules init --store /missing/rules.json",
        ),
        (
            {"file_root": "/missing"},
            ToolConfigurationError,
            "invalid run context: file_root '/missing' is not an existing folder; give the "
            "folder whose files the tool may read.",
        ),
        (
            {"database_url": "shop.db"},
            ToolConfigurationError,
            "invalid run context: database_url must be a SQLAlchemy Engine or a database URL "
            "such as 'sqlite:///shop.db' or 'postgresql://user:password@host/db'; Could not "
            "parse SQLAlchemy URL from given URL string.",
        ),
        (
            {"database_url": "sqlite:////missing/shop.db"},
            ToolConfigurationError,
            "invalid run context: database_url: The SQLite database file '/missing/shop.db' "
            "does not exist; sql_query never creates one. Check the path (a relative one starts "
            "from '{cwd}').",
        ),
        (
            {"allowed_hosts": ["api.example.com", "*"]},
            ToolConfigurationError,
            "invalid run context: allowed_hosts entry '*' would allow every host; give host "
            "names such as api.example.com, *.example.com for every subdomain of example.com, "
            "or IP addresses.",
        ),
    ],
)
async def test_a_context_value_that_cannot_be_used_names_its_field_and_what_it_takes(
    studio: ModuleType, context: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        await studio.make_graph(execution({"scripted_replies": [], **context}))

    assert str(caught.value) == message.format(cwd=os.getcwd())


async def test_an_unknown_model_names_the_model_field(studio: ModuleType) -> None:
    with pytest.raises(AgentConfigurationError) as caught:
        await studio.make_graph(execution({"model": "gpt4all-nonsense"}))

    assert (
        str(caught.value)
        == f"invalid run context: model: unknown model 'gpt4all-nonsense'; use {MODEL_SPEC_FORMS}"
    )
