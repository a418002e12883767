"""Run the Studio graph the way LangGraph Studio does: `langgraph dev` plus the SDK client."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from .conftest import REPO_ROOT, DevServer, langgraph_command, server_env

RUN_TIMEOUT_S = 60.0
COUNT_ACTIVE = "SELECT COUNT(*) AS active_customers FROM customers WHERE active = 1"


def fenced(tool: str, **args: Any) -> str:
    return "```tool\n" + json.dumps({"tool": tool, "args": args}) + "\n```"


def scripted(*replies: str, **context: Any) -> dict[str, Any]:
    return {"protocol": "text", "scripted_replies": list(replies), **context}


@pytest.fixture(scope="module")
def client(dev_server: DevServer) -> SyncLangGraphClient:
    return get_sync_client(url=dev_server.url, timeout=RUN_TIMEOUT_S)


def run(client: SyncLangGraphClient, question: str, context: dict[str, Any]) -> dict[str, Any]:
    thread = client.threads.create()
    result = client.runs.wait(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": question}]},
        context=context,
        raise_error=False,
    )
    assert isinstance(result, dict)
    return result


def test_langgraph_validate_accepts_the_config() -> None:
    completed = subprocess.run(
        langgraph_command("validate"),
        cwd=REPO_ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "is valid. (1 graph found)" in completed.stdout
    assert "warning" not in completed.stdout.lower()


def test_a_scripted_run_on_the_demo_data_returns_the_answer_and_the_trace(
    client: SyncLangGraphClient, dev_server: DevServer
) -> None:
    context = scripted(
        fenced("sql_query", sql=COUNT_ACTIVE),
        fenced("file_read", path="docs/notes.md"),
        "We have 9 active customers.\nFINAL: 9 active customers",
        project_id=1,
    )

    state = run(client, "How many active customers do we have?", context)

    assert "__error__" not in state, dev_server.log()
    assert state["answer"] == "9 active customers"
    assert state["stop_reason"] == "final"
    assert [(step["tool"], step["status"]) for step in state["trace"]] == [
        ("sql_query", "ok"),
        ("file_read", "ok"),
    ]
    sql_step, file_step = state["trace"]
    assert sql_step["args"] == {"sql": COUNT_ACTIVE}
    assert "9" in sql_step["observation"]
    assert "release" in file_step["observation"].lower()
    assert state["messages"][-1]["content"].endswith("9 active customers")


def test_the_file_tool_refuses_to_leave_its_root_through_studio(
    client: SyncLangGraphClient,
) -> None:
    context = scripted(fenced("file_read", path="../../../../etc/passwd"), "FINAL: refused")

    state = run(client, "Read /etc/passwd", context)

    [step] = state["trace"]
    assert step["status"] == "error"
    assert "is refused" in step["observation"]
    assert "root:" not in step["observation"]


def test_a_wrong_context_key_fails_the_run_with_the_allowed_keys(
    client: SyncLangGraphClient,
) -> None:
    state = run(client, "hi", {"modle": "local"})

    error = json.dumps(state.get("__error__"))
    assert "modle: unknown option" in error
    assert "the options are: protocol, project_id, max_iterations" in error
    assert "model, rules, database_url" in error


def test_rules_can_live_in_the_platform_store(client: SyncLangGraphClient) -> None:
    rule = {
        "id": "studio_rule",
        "type": "requirement",
        "projectId": None,
        "target": "output",
        "content": "Answer in one short sentence.",
        "priority": 1,
        "createdAt": "2026-03-01T09:00:00+00:00",
        "updatedAt": "2026-03-01T09:00:00+00:00",
        "metadata": None,
    }
    client.store.put_item(["agent_rules"], "studio_rule", rule)
    try:
        ok = run(client, "hi", scripted("FINAL: hello", rules="store"))
        client.store.put_item(["agent_rules"], "studio_rule", {**rule, "type": "wish"})
        broken = run(client, "hi", scripted("FINAL: hello", rules="store"))
    finally:
        client.store.delete_item(["agent_rules"], "studio_rule")

    assert ok["answer"] == "hello"
    # The second run read the platform store and met the record we broke; the client
    # gets our error's message, not the server's "An internal error occurred".
    assert broken["__error__"]["error"] == "RuleStoreError"
    assert "studio_rule" in broken["__error__"]["message"]
    assert "internal error" not in broken["__error__"]["message"]


def test_a_budget_error_reaches_the_client_with_its_message(client: SyncLangGraphClient) -> None:
    context = scripted(
        fenced("file_read", path="docs/notes.md"), max_iterations=1, on_limit="raise"
    )

    state = run(client, "When does 2.4 ship?", context)

    assert state["__error__"]["error"] == "IterationLimitError"
    assert "used all max_iterations=1 tool iterations" in state["__error__"]["message"]


def test_the_final_state_holds_usage_and_rule_events(client: SyncLangGraphClient) -> None:
    rule = {
        "id": "long_studio_rule",
        "type": "guideline",
        "projectId": None,
        "target": "output",
        "content": "Be thorough. " * 60,
        "priority": 1,
        "createdAt": "2026-03-01T09:00:00+00:00",
        "updatedAt": "2026-03-01T09:00:00+00:00",
        "metadata": None,
    }
    client.store.put_item(["agent_rules"], "long_studio_rule", rule)
    try:
        state = run(client, "hi", scripted("FINAL: hello", rules="store"))
    finally:
        client.store.delete_item(["agent_rules"], "long_studio_rule")

    assert state["answer"] == "hello"
    assert state["usage"]["model_calls"] == 1
    assert state["rule_events"] == [
        {
            "rule_id": "long_studio_rule",
            "status": "omitted",
            "detail": "max_rule_content_bytes=500 (its content has 780 bytes)",
        }
    ]


def test_require_approval_pauses_and_resumes_on_the_platforms_checkpointer(
    client: SyncLangGraphClient,
) -> None:
    thread = client.threads.create()
    first = scripted(fenced("sql_query", sql=COUNT_ACTIVE), require_approval=["sql_query"])

    paused = client.runs.wait(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": "How many active customers?"}]},
        context=first,
        raise_error=False,
    )
    assert isinstance(paused, dict)
    [request] = paused["__interrupt__"]
    [action] = request["value"]["action_requests"]
    assert (action["name"], action["args"]) == ("sql_query", {"sql": COUNT_ACTIVE})

    # The resumed run continues the same script: the model's next reply is the answer.
    rest = scripted("FINAL: 9 active customers", require_approval=["sql_query"])
    done = client.runs.wait(
        thread["thread_id"],
        "agent",
        command={"resume": {"decisions": [{"type": "approve"}]}},
        context=rest,
        raise_error=False,
    )

    assert isinstance(done, dict)
    assert "__error__" not in done, done
    assert done["answer"] == "9 active customers"
    [step] = done["trace"]
    assert (step["tool"], step["status"], step["approval"]) == ("sql_query", "ok", "approved")
    assert "9" in step["observation"]


def test_studio_gets_the_context_form_and_the_graph_without_loading_a_model(
    client: SyncLangGraphClient,
) -> None:
    [assistant] = client.assistants.search(graph_id="agent")

    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    drawing = client.assistants.get_graph(assistant["assistant_id"])

    properties = schemas["context_schema"]["properties"]
    assert properties["model"]["default"] == "local"
    assert set(properties) >= {"rules", "project_id", "database_url", "file_root"}
    assert {node["id"] for node in drawing["nodes"]} >= {"model", "tools"}


def test_studio_streams_the_models_tokens(client: SyncLangGraphClient) -> None:
    # Rules from the (empty) platform store: no answer check, so the answer streams.
    thread = client.threads.create()
    parts = client.runs.stream(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": "Capital of France?"}]},
        context=scripted("Easy one.\nFINAL: Paris is the capital of France.", rules="store"),
        stream_mode="messages-tuple",
    )
    tokens = [
        part.data[0]["content"]
        for part in parts
        if part.event == "messages" and part.data[1].get("langgraph_node") == "model"
    ]

    assert len(tokens) > 3
    assert "".join(tokens).endswith("FINAL: Paris is the capital of France.")


def test_an_answer_the_rules_redact_is_never_streamed_unredacted(
    client: SyncLangGraphClient,
) -> None:
    # The demo rules forbid e-mail addresses in answers.
    thread = client.threads.create()
    parts = list(
        client.runs.stream(
            thread["thread_id"],
            "agent",
            input={"messages": [{"role": "user", "content": "Alice's address?"}]},
            context=scripted("FINAL: Write to alice.martin@example.com."),
            stream_mode=["messages-tuple", "updates", "values"],
        )
    )

    assert parts, "the run streamed nothing"
    assert "alice.martin@" not in json.dumps([part.data for part in parts])
    final = [part.data for part in parts if part.event == "values"][-1]
    assert final["answer"] == "Write to [redacted: email]."
    assert final["rule_events"][-1]["status"] == "redacted"
