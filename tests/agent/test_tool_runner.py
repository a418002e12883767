"""Every tool call ends as one observation: through the agent, sync and async."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException, tool

from langchain_agent_rules import create_rules_agent
from langchain_agent_rules.errors import InvalidToolCallError
from langchain_agent_rules.middleware._tool_runner import (
    CallTimedOut,
    call_with_timeout,
    truncate_observation,
)
from langchain_agent_rules.testing import ScriptedChatModel

MODES = ["sync", "async"]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"cannot do {reason}")


@tool
def refuse(path: str) -> str:
    """Refuses bad arguments the way our tools do."""
    raise InvalidToolCallError(f"path {path!r} is outside the root")


@tool
async def async_add(a: int, b: int) -> int:
    """Add two numbers, asynchronously."""
    return a + b


def run_calls(
    tools: list[BaseTool], calls: list[tuple[str, dict[str, Any]]], mode: str, **options: Any
) -> tuple[list[dict[str, Any]], list[ToolMessage]]:
    """The trace steps and tool messages of one turn that makes ``calls``."""
    turn = AIMessage(
        "", tool_calls=[{"name": n, "args": a, "id": f"id_{i}"} for i, (n, a) in enumerate(calls)]
    )
    agent = create_rules_agent(ScriptedChatModel([turn, "FINAL: done"]), tools, **options)
    payload = {"messages": [("user", "go")]}
    state = asyncio.run(agent.ainvoke(payload)) if mode == "async" else agent.invoke(payload)
    messages = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    return state["trace"], messages


@pytest.mark.parametrize("mode", MODES)
def test_outcomes_of_every_kind_are_observations(mode: str) -> None:
    @tool
    def handled(x: int) -> str:
        """Reports its own failure."""
        raise ToolException("no such row")

    handled.handle_tool_error = True
    tools = [add, explode, refuse, async_add, handled]
    if mode == "sync":
        tools[3] = add.model_copy(update={"name": "async_add"})
    calls = [
        ("add", {"a": 1, "b": 2}),
        ("explode", {"reason": "x"}),
        ("add", {"a": "one", "b": 2}),
        ("add", {"a": 1}),
        ("refuse", {"path": "/etc"}),
        ("async_add", {"a": 2, "b": 2}),
        ("handled", {"x": 1}),
        ("nope", {}),
    ]
    steps, messages = run_calls(tools, calls, mode)
    assert [(s["status"], s["observation"]) for s in steps] == [
        ("ok", "3"),
        ("error", "ERROR: cannot do x"),
        (
            "invalid_args",
            'ERROR: invalid arguments for tool "add": a: Input should be a valid integer, '
            "unable to parse string as an integer",
        ),
        ("invalid_args", 'ERROR: invalid arguments for tool "add": b: Field required'),
        ("invalid_args", "ERROR: path '/etc' is outside the root"),
        ("ok", "4"),
        ("error", "no such row"),
        (
            "unknown_tool",
            'ERROR: no tool named "nope". Available: add, explode, refuse, async_add, handled',
        ),
    ]
    assert [m.status for m in messages] == ["success"] + ["error"] * 4 + ["success"] + ["error"] * 2
    assert [m.tool_call_id for m in messages] == [f"id_{i}" for i in range(8)]


@pytest.mark.parametrize("mode", MODES)
def test_a_hanging_tool_times_out_and_later_calls_still_run(mode: str) -> None:
    release = threading.Event()

    @tool
    def hang() -> str:
        """Never answers in time."""
        release.wait(30)
        return "late"

    try:
        steps, _ = run_calls(
            [hang, add], [("hang", {}), ("add", {"a": 1, "b": 1})], mode, tool_timeout=0.2
        )
    finally:
        release.set()
    assert [(s["status"], s["observation"]) for s in steps] == [
        ("timeout", 'ERROR: tool "hang" timed out after 0.2 s'),
        ("ok", "2"),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_raising_timeout_error_itself_is_an_error_not_a_timeout(mode: str) -> None:
    @tool
    def flaky() -> str:
        """Its own backend timed out."""
        raise TimeoutError("backend did not answer")

    @tool
    async def aflaky() -> str:
        """Its own backend timed out."""
        raise TimeoutError("backend did not answer")

    tools = [flaky, aflaky] if mode == "async" else [flaky]
    steps, _ = run_calls(tools, [(t.name, {}) for t in tools], mode)
    assert {(s["status"], s["observation"]) for s in steps} == {
        ("error", "ERROR: backend did not answer")
    }


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_an_async_only_tool_in_a_sync_run_is_an_error_observation(timeout: float | None) -> None:
    async def only_async(a: int) -> int:
        return a * 2

    doubled = StructuredTool.from_function(coroutine=only_async, name="double", description="d")
    steps, _ = run_calls([doubled], [("double", {"a": 4})], "sync", tool_timeout=timeout)
    assert (steps[0]["status"], steps[0]["observation"]) == (
        "error",
        "ERROR: StructuredTool does not support sync invocation.",
    )
    steps, _ = run_calls([doubled], [("double", {"a": 4})], "async", tool_timeout=timeout)
    assert (steps[0]["status"], steps[0]["observation"]) == ("ok", "8")


def test_one_megabyte_observation_is_cut_to_the_limit() -> None:
    @tool
    def huge() -> str:
        """Return one megabyte."""
        return "x" * 1_000_000

    steps, messages = run_calls([huge], [("huge", {})], "sync")
    assert steps[0]["truncated"]
    assert messages[0].text == steps[0]["observation"]
    assert steps[0]["observation"].endswith("\n[truncated: showed 8150 of 1000000 bytes]")
    assert len(steps[0]["observation"].encode()) <= 8192


def test_truncation_never_splits_a_character() -> None:
    text, cut = truncate_observation("ż" * 1000, 300)
    assert cut
    assert len(text.encode()) <= 300
    shown = text.split("\n[truncated")[0]
    assert set(shown) == {"ż"}
    assert text.endswith("of 2000 bytes]")
    assert f"showed {len(shown.encode())} of" in text


def test_short_text_is_not_cut_and_lone_surrogates_are_replaced() -> None:
    assert truncate_observation("short", 10) == ("short", False)
    assert truncate_observation("a\ud800b", 10) == ("a\ufffdb", False)


def test_our_own_wait_expiring_is_the_only_timeout() -> None:
    with pytest.raises(CallTimedOut):
        call_with_timeout(lambda: threading.Event().wait(5), 0.05)
    with pytest.raises(TimeoutError):
        call_with_timeout(_raise_timeout, 5.0)
    assert call_with_timeout(lambda: 3, None) == 3


def _raise_timeout() -> None:
    raise TimeoutError("the tool's own")


def test_timed_calls_run_in_a_forked_child_process() -> None:
    # Warm the parent's pool so the child inherits an idle count with no threads behind it.
    assert call_with_timeout(lambda: 1, 5.0) == 1
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        assert pool.apply(_timed_call_in_child) == 3


def _timed_call_in_child() -> int:
    return call_with_timeout(lambda: 1 + 2, 2.0)
