from __future__ import annotations

import asyncio
import threading

import pytest
from langchain_core.tools import StructuredTool, ToolException, tool

from langchain_agent_rules.agent.tool_runner import (
    arun_tool_call,
    arun_tool_calls,
    run_tool_call,
    run_tool_calls,
    truncate_observation,
)
from langchain_agent_rules.errors import InvalidToolCallError


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


@tool
def huge() -> str:
    """Return one megabyte."""
    return "x" * 1_000_000


def call(name: str, **args: object) -> dict[str, object]:
    return {"name": name, "args": args, "id": f"id_{name}"}


def run_both(tools, calls, timeout=5.0, max_bytes=8192):
    by_name = {t.name: t for t in tools}
    sync = run_tool_calls(by_name, calls, timeout, max_bytes)
    async_ = asyncio.run(arun_tool_calls(by_name, calls, timeout, max_bytes))
    return sync, async_


def test_ok_result_becomes_an_ok_observation() -> None:
    for outcomes in run_both([add], [call("add", a=2, b=3)]):
        (outcome,) = outcomes
        assert (outcome.status, outcome.observation, outcome.truncated) == ("ok", "5", False)
        assert outcome.call_id == "id_add"
        assert outcome.args == {"a": 2, "b": 3}
        assert outcome.duration_ms >= 0


def test_async_tool_runs_in_both_paths() -> None:
    for outcomes in run_both([async_add], [call("async_add", a=2, b=3)]):
        assert outcomes[0].observation == "5"


def test_exception_becomes_an_error_observation() -> None:
    for outcomes in run_both([explode], [call("explode", reason="it")]):
        assert outcomes[0].status == "error"
        assert outcomes[0].observation == "ERROR: cannot do it"
        assert outcomes[0].error == "cannot do it"


def test_invalid_arguments_give_the_validation_message() -> None:
    for outcomes in run_both([add], [call("add", a="two", b=3)]):
        assert outcomes[0].status == "invalid_args"
        assert outcomes[0].observation == (
            'ERROR: invalid arguments for tool "add": a: Input should be a valid integer, '
            "unable to parse string as an integer"
        )


def test_missing_argument_is_invalid_args() -> None:
    for outcomes in run_both([add], [call("add", a=1)]):
        assert outcomes[0].observation == (
            'ERROR: invalid arguments for tool "add": b: Field required'
        )


def test_invalid_tool_call_error_is_invalid_args() -> None:
    for outcomes in run_both([refuse], [call("refuse", path="/etc")]):
        assert outcomes[0].status == "invalid_args"
        assert outcomes[0].observation == "ERROR: path '/etc' is outside the root"


def test_tool_with_handle_tool_error_reports_error_status() -> None:
    def fail() -> str:
        raise ToolException("disk full")

    handled = StructuredTool.from_function(
        fail, name="fail", description="d", handle_tool_error=True
    )
    for outcomes in run_both([handled], [call("fail")]):
        assert (outcomes[0].status, outcomes[0].observation) == ("error", "disk full")


def test_unknown_tool_lists_the_available_ones() -> None:
    for outcomes in run_both([add, explode], [call("delete_all")]):
        assert outcomes[0].status == "unknown_tool"
        assert (
            outcomes[0].observation == 'ERROR: no tool named "delete_all". Available: add, explode'
        )


def test_hanging_sync_tool_times_out_and_later_calls_still_run() -> None:
    release = threading.Event()

    @tool
    def hang() -> str:
        """Waits until released."""
        release.wait(30)
        return "late"

    try:
        outcome = run_tool_call(hang, call("hang"), 0.2, 8192)
        assert outcome.status == "timeout"
        assert outcome.observation == 'ERROR: tool "hang" timed out after 0.2 s'
        assert run_tool_call(add, call("add", a=1, b=1), 5.0, 8192).observation == "2"
    finally:
        release.set()


async def test_hanging_async_tool_times_out() -> None:
    @tool
    async def sleepy() -> str:
        """Sleeps far too long."""
        await asyncio.sleep(30)
        return "late"

    outcome = await arun_tool_call(sleepy, call("sleepy"), 0.1, 8192)
    assert (outcome.status, outcome.observation) == (
        "timeout",
        'ERROR: tool "sleepy" timed out after 0.1 s',
    )


def test_parallel_calls_run_concurrently_and_keep_their_order() -> None:
    barrier = threading.Barrier(3, timeout=5)

    @tool
    def meet(label: str) -> str:
        """Returns only when three calls are running at once."""
        barrier.wait()
        return label

    calls = [call("meet", label=x) | {"id": x} for x in ("a", "b", "c")]
    outcomes = run_tool_calls({"meet": meet}, calls, 10.0, 8192)
    assert [o.observation for o in outcomes] == ["a", "b", "c"]
    assert [o.call_id for o in outcomes] == ["a", "b", "c"]


async def test_parallel_async_calls_run_concurrently() -> None:
    started: list[str] = []
    gate = asyncio.Event()

    @tool
    async def wait_all(label: str) -> str:
        """Returns once both calls have started."""
        started.append(label)
        if len(started) == 2:
            gate.set()
        await asyncio.wait_for(gate.wait(), 5)
        return label

    calls = [call("wait_all", label=x) | {"id": x} for x in ("a", "b")]
    outcomes = await arun_tool_calls({"wait_all": wait_all}, calls, 10.0, 8192)
    assert [o.observation for o in outcomes] == ["a", "b"]


def test_one_megabyte_observation_is_cut_to_the_limit() -> None:
    for outcomes in run_both([huge], [call("huge")], max_bytes=8192):
        outcome = outcomes[0]
        assert outcome.truncated
        assert len(outcome.observation.encode()) <= 8192
        assert outcome.observation.endswith("\n[truncated: showed 8150 of 1000000 bytes]")


def test_truncation_never_splits_a_character() -> None:
    text, cut = truncate_observation("ż" * 1000, 300)
    assert cut
    assert len(text.encode()) <= 300
    shown = text.split("\n[truncated")[0]
    assert set(shown) == {"ż"}
    assert text.endswith("of 2000 bytes]")
    assert f"showed {len(shown.encode())} of" in text


def test_short_text_is_not_cut() -> None:
    assert truncate_observation("short", 10) == ("short", False)


def test_tool_message_status_follows_the_outcome() -> None:
    ok = run_tool_call(add, call("add", a=1, b=2), 5.0, 100).to_message()
    bad = run_tool_call(explode, call("explode", reason="x"), 5.0, 100).to_message()
    assert (ok.status, ok.content, ok.tool_call_id, ok.name) == ("success", "3", "id_add", "add")
    assert bad.status == "error"


def test_async_only_tool_runs_in_the_sync_path() -> None:
    async def only_async(a: int) -> int:
        return a * 2

    doubled = StructuredTool.from_function(coroutine=only_async, name="double", description="d")
    assert run_tool_call(doubled, call("double", a=4), 5.0, 100).observation == "8"


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_no_timeout_still_runs(timeout: float | None) -> None:
    assert run_tool_call(add, call("add", a=1, b=2), timeout, 100).observation == "3"


def test_a_tool_raising_timeout_error_itself_is_an_error_not_a_timeout() -> None:
    @tool
    def flaky() -> str:
        """Its own backend timed out."""
        raise TimeoutError("backend did not answer")

    @tool
    async def aflaky() -> str:
        """Its own backend timed out."""
        raise TimeoutError("backend did not answer")

    for outcomes in run_both([flaky, aflaky], [call("flaky"), call("aflaky")]):
        assert [(o.status, o.observation) for o in outcomes] == [
            ("error", "ERROR: backend did not answer"),
            ("error", "ERROR: backend did not answer"),
        ]


def test_sync_tools_run_in_a_forked_child_process() -> None:
    import multiprocessing

    from langchain_core.tools import tool

    from langchain_agent_rules.agent.tool_runner import run_tool_calls

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}
    # Warm the parent's pool so the child inherits an idle count with no threads behind it.
    assert run_tool_calls({"add": add}, [call], 5.0, 8192)[0].status == "ok"

    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        status, observation = pool.apply(_run_add_in_child)
    assert (status, observation) == ("ok", "3")


def _run_add_in_child() -> tuple[str, str]:
    from langchain_core.tools import tool

    from langchain_agent_rules.agent.tool_runner import run_tool_calls

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}
    outcome = run_tool_calls({"add": add}, [call], 2.0, 8192)[0]
    return outcome.status, outcome.observation
