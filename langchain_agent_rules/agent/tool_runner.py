"""Run tool calls with a timeout and a size cap, turning every outcome into one observation.

`run_tool_call` / `arun_tool_call` run one call; `run_tool_calls` / `arun_tool_calls` run
the calls of one model turn concurrently, in order, and answer unknown tool names. None
of them raises for a tool's failure: an exception, invalid arguments, a timeout or an
unknown name all become a `ToolOutcome` with a status and an ``ERROR: ...`` observation
the model can act on. The observation is capped at ``max_observation_bytes`` (UTF-8);
the full output is dropped, so it never reaches the model or the graph state (an
artifact from a ``response_format="content_and_artifact"`` tool stays on the message).
``redact`` (the forbid checks that cover observations) runs on the full text first, so
the cut can never leave half of something it must hide.

LangGraph's tool contracts hold: an ``interrupt()`` in a tool (`GraphBubbleUp`) is
raised once every call of the turn has finished, so the run pauses and resumes with
``Command(resume=...)``; a tool that returns a `Command` gets an outcome carrying it (its
`ToolMessage` for the call capped like any observation), so the graph applies its
update. ``prepare`` puts in what the graph injects (state, store, runtime) just before a
call runs; the outcome keeps the model's arguments.

Sync tools run on a shared pool of daemon worker threads. Python cannot stop a thread,
so a call that times out keeps its worker busy until the tool returns; its result is
then dropped. Daemon threads (unlike ``ThreadPoolExecutor``'s, which are joined at
exit) let the process exit even while a tool hangs.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

from langchain_core.messages import ToolCall, ToolMessage, convert_to_messages
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from pydantic import ValidationError
from pydantic.v1 import ValidationError as ValidationErrorV1

from langchain_agent_rules.agent.arguments import clean_text
from langchain_agent_rules.agent.prompts import (
    COMMAND_WITHOUT_TOOL_MESSAGE,
    INVALID_ARGS,
    TOOL_ERROR,
    TOOL_TIMEOUT,
    TRUNCATION_MARKER,
    UNKNOWN_TOOL,
)
from langchain_agent_rules.agent.usage import Stopwatch
from langchain_agent_rules.errors import InvalidToolCallError
from langchain_agent_rules.rules.engine import Redaction, RuleEvent

__all__ = [
    "ObservationFilter",
    "PrepareCall",
    "ToolOutcome",
    "ToolStatus",
    "arun_tool_call",
    "arun_tool_calls",
    "run_tool_call",
    "run_tool_calls",
    "truncate_observation",
]

ToolStatus = Literal[
    "ok",
    "error",
    "timeout",
    "unknown_tool",
    "invalid_args",
    "parse_error",
    "rejected",
    "repeated",
    "denied",
]
PrepareCall = Callable[[ToolCall], ToolCall]
"""Turns a model's call into the call the tool gets (for example with injected arguments)."""
ObservationFilter = Callable[[str], Redaction]
"""Redacts a tool's full output before it is capped (`redact_observation` with the rules)."""


@dataclass(frozen=True)
class _Shaping:
    """How an output becomes an observation: redacted, then capped."""

    max_bytes: int
    redact: ObservationFilter | None = None


@dataclass(frozen=True)
class ToolOutcome:
    """The result of one tool call as the model sees it.

    ``started_at`` is when the call started (``time.time()``); for an outcome settled
    without running the tool, when it was made.
    """

    call_id: str
    tool: str
    args: dict[str, Any]
    observation: str
    status: ToolStatus
    duration_ms: float
    truncated: bool = False
    error: str | None = None
    artifact: Any = None
    command: Command[Any] | None = None
    rule_events: tuple[RuleEvent, ...] = ()
    started_at: float = field(default_factory=time.time)

    def with_command(self, command: Command[Any]) -> ToolOutcome:
        """The same outcome, answered through ``command`` (which holds its `ToolMessage`)."""
        return replace(self, command=command)

    def to_message(self) -> ToolMessage:
        """The `ToolMessage` that answers the call (status ``error`` unless it ran fine).

        For an outcome with a `command`, that command's update carries this message.
        """
        return ToolMessage(
            content=self.observation,
            tool_call_id=self.call_id,
            name=self.tool,
            status="success" if self.status in ("ok", "repeated") else "error",
            artifact=self.artifact,
        )


def truncate_observation(text: str, max_bytes: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes, marker included.

    Returns the text and whether it was cut. The marker says how many bytes were shown
    out of how many; the cut never splits a character. Unpaired surrogates become
    U+FFFD, so the text can always be encoded and stored.
    """
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        text = clean_text(text)
        encoded = text.encode("utf-8")
    total = len(encoded)
    if total <= max_bytes:
        return text, False
    budget = max_bytes - len(TRUNCATION_MARKER.format(shown=max_bytes, total=total).encode())
    shown = encoded[: max(budget, 0)].decode("utf-8", errors="ignore")
    shown_bytes = len(shown.encode("utf-8"))
    return shown + TRUNCATION_MARKER.format(shown=shown_bytes, total=total), True


class _DaemonWorkers:
    """A pool of daemon threads that grows when every worker is busy (or stuck)."""

    def __init__(self) -> None:
        self._tasks: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, work: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        context = contextvars.copy_context()
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                threading.Thread(target=self._work, name="agent-tool", daemon=True).start()
        self._tasks.put((future, lambda: context.run(work)))
        return future

    def _work(self) -> None:
        while True:
            future, work = self._tasks.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work())
                except BaseException as error:
                    future.set_exception(error)
            with self._lock:
                self._idle += 1


_WORKERS = _DaemonWorkers()


def _new_workers_after_fork() -> None:
    # A forked child inherits the pool's idle count but none of its threads; without a
    # fresh pool every sync tool call in a pre-fork worker (gunicorn --preload, Celery
    # prefork) would wait for a thread that does not exist and time out.
    global _WORKERS
    _WORKERS = _DaemonWorkers()


os.register_at_fork(after_in_child=_new_workers_after_fork)


def _call_dict(call: Mapping[str, Any]) -> ToolCall:
    return {
        "name": call["name"],
        "args": dict(call.get("args") or {}),
        "id": call.get("id") or "",
        "type": "tool_call",
    }


def _is_async_only(tool: BaseTool) -> bool:
    return isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None


def _has_native_async(tool: BaseTool) -> bool:
    if isinstance(tool, StructuredTool):
        return tool.coroutine is not None
    return type(tool)._arun is not BaseTool._arun


def _invoke_sync(tool: BaseTool, call: ToolCall, prepare: PrepareCall | None) -> tuple[Any, float]:
    started = time.perf_counter()
    if prepare is not None:
        call = prepare(call)
    result = asyncio.run(tool.ainvoke(call)) if _is_async_only(tool) else tool.invoke(call)
    return result, (time.perf_counter() - started) * 1000


def _validation_message(error: ValidationError | ValidationErrorV1) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in problem['loc']) or 'arguments'}: {problem['msg']}"
        for problem in error.errors()
    )


@dataclass(frozen=True)
class _Timing:
    """When a call started (wall clock) and how long it ran (monotonic), in milliseconds."""

    started_at: float
    duration_ms: float


def _outcome(
    call: ToolCall,
    shaping: _Shaping,
    status: ToolStatus,
    observation: str,
    timing: _Timing,
    error: str | None = None,
    artifact: Any = None,
) -> ToolOutcome:
    events: tuple[RuleEvent, ...] = ()
    if shaping.redact is not None:
        redaction = shaping.redact(observation)
        observation, events = redaction.text, redaction.events
        if error is not None:
            error = shaping.redact(error).text
    text, truncated = truncate_observation(observation, shaping.max_bytes)
    return ToolOutcome(
        call_id=call["id"] or "",
        tool=call["name"],
        args=call["args"],
        observation=text,
        status=status,
        duration_ms=round(timing.duration_ms, 3),
        truncated=truncated,
        error=None if error is None else clean_text(error),
        artifact=artifact,
        rule_events=events,
        started_at=timing.started_at,
    )


def _from_result(call: ToolCall, shaping: _Shaping, result: Any, timing: _Timing) -> ToolOutcome:
    if isinstance(result, Command):
        return _from_command(call, shaping, result, timing)
    if isinstance(result, ToolMessage):
        status: ToolStatus = "error" if result.status == "error" else "ok"
        error = result.text if status == "error" else None
        return _outcome(call, shaping, status, result.text, timing, error, result.artifact)
    text = result if isinstance(result, str) else str(result)
    return _outcome(call, shaping, "ok", text, timing)


def _from_command(
    call: ToolCall, shaping: _Shaping, command: Command[Any], timing: _Timing
) -> ToolOutcome:
    """The outcome of a tool that returned a `Command`, with the command to apply.

    A command for the current graph must answer the call with a `ToolMessage` in its
    update (as in ``ToolNode``); that message is capped like any observation. A command
    for a parent graph passes as it is.
    """
    if command.graph is not None:
        return _outcome(call, shaping, "ok", "", timing).with_command(command)
    update = command.update if isinstance(command.update, dict) else {}
    messages = convert_to_messages(update.get("messages") or [])
    answer = next(
        (m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call["id"]),
        None,
    )
    if answer is None:
        observation = COMMAND_WITHOUT_TOOL_MESSAGE.format(tool=call["name"])
        return _outcome(call, shaping, "error", observation, timing, observation)
    outcome = _from_result(call, shaping, answer, timing)
    capped = answer.model_copy(update={"content": outcome.observation, "name": call["name"]})
    messages = [capped if m is answer else m for m in messages]
    return outcome.with_command(
        Command(
            graph=command.graph,
            update={**update, "messages": messages},
            resume=command.resume,
            goto=command.goto,
        )
    )


def _from_error(
    call: ToolCall, shaping: _Shaping, error: BaseException, timing: _Timing
) -> ToolOutcome:
    if isinstance(error, ValidationError | ValidationErrorV1):
        message = _validation_message(error)
        observation = INVALID_ARGS.format(tool=call["name"], message=message)
        return _outcome(call, shaping, "invalid_args", observation, timing, message)
    message = str(error) or type(error).__name__
    status: ToolStatus = "invalid_args" if isinstance(error, InvalidToolCallError) else "error"
    observation = TOOL_ERROR.format(message=message)
    return _outcome(call, shaping, status, observation, timing, message)


def _timed_out(call: ToolCall, shaping: _Shaping, timeout: float, started_at: float) -> ToolOutcome:
    observation = TOOL_TIMEOUT.format(tool=call["name"], seconds=timeout)
    timing = _Timing(started_at, timeout * 1000)
    return _outcome(call, shaping, "timeout", observation, timing, error="timeout")


def _unknown(call: ToolCall, shaping: _Shaping, names: Sequence[str]) -> ToolOutcome:
    observation = UNKNOWN_TOOL.format(tool=call["name"], available=", ".join(names) or "none")
    timing = _Timing(time.time(), 0.0)
    return _outcome(call, shaping, "unknown_tool", observation, timing, error="unknown tool")


def _wait(
    future: Future[tuple[Any, float]],
    call: ToolCall,
    stopwatch: Stopwatch,
    deadline: float | None,
    timeout: float | None,
    shaping: _Shaping,
) -> ToolOutcome:
    remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
    try:
        result, duration_ms = future.result(timeout=remaining)
    except GraphBubbleUp:
        raise
    except Exception as error:
        # A tool may raise TimeoutError itself; only our own wait expiring is a timeout.
        if isinstance(error, FutureTimeoutError) and not (
            future.done() and future.exception() is error
        ):
            assert timeout is not None
            return _timed_out(call, shaping, timeout, stopwatch.started_at)
        # The worker measures only calls that return; a failed one is timed from its start.
        timing = _Timing(stopwatch.started_at, stopwatch.elapsed_ms())
        return _from_error(call, shaping, error, timing)
    return _from_result(call, shaping, result, _Timing(stopwatch.started_at, duration_ms))


def run_tool_call(
    tool: BaseTool,
    call: Mapping[str, Any],
    timeout: float | None,
    max_observation_bytes: int,
    prepare: PrepareCall | None = None,
    redact: ObservationFilter | None = None,
) -> ToolOutcome:
    """Run one tool call in a worker thread and wait at most ``timeout`` seconds."""
    return run_tool_calls(
        {tool.name: tool}, [call], timeout, max_observation_bytes, prepare, redact
    )[0]


def run_tool_calls(
    tools: Mapping[str, BaseTool],
    calls: Sequence[Mapping[str, Any]],
    timeout: float | None,
    max_observation_bytes: int,
    prepare: PrepareCall | None = None,
    redact: ObservationFilter | None = None,
) -> list[ToolOutcome]:
    """Run ``calls`` concurrently, each within ``timeout``; one outcome per call, in order.

    An interrupt from a tool is raised after every call has finished or timed out.
    """
    shaping = _Shaping(max_observation_bytes, redact)
    deadline = None if timeout is None else time.monotonic() + timeout
    pending: list[ToolOutcome | tuple[Future[tuple[Any, float]], ToolCall, Stopwatch]] = []
    for raw in calls:
        call = _call_dict(raw)
        tool = tools.get(call["name"])
        if tool is None:
            pending.append(_unknown(call, shaping, list(tools)))
        else:
            stopwatch = Stopwatch()
            work = _WORKERS.submit(partial(_invoke_sync, tool, call, prepare))
            pending.append((work, call, stopwatch))
    outcomes: list[ToolOutcome] = []
    signal: GraphBubbleUp | None = None
    for item in pending:
        if isinstance(item, ToolOutcome):
            outcomes.append(item)
            continue
        try:
            outcomes.append(_wait(*item, deadline, timeout, shaping))
        except GraphBubbleUp as raised:
            signal = signal or raised
    if signal is not None:
        raise signal
    return outcomes


async def arun_tool_call(
    tool: BaseTool,
    call: Mapping[str, Any],
    timeout: float | None,
    max_observation_bytes: int,
    prepare: PrepareCall | None = None,
    redact: ObservationFilter | None = None,
) -> ToolOutcome:
    """Run one tool call with an asyncio deadline (sync tools on a worker thread)."""
    outcomes = await arun_tool_calls(
        {tool.name: tool}, [call], timeout, max_observation_bytes, prepare, redact
    )
    return outcomes[0]


async def arun_tool_calls(
    tools: Mapping[str, BaseTool],
    calls: Sequence[Mapping[str, Any]],
    timeout: float | None,
    max_observation_bytes: int,
    prepare: PrepareCall | None = None,
    redact: ObservationFilter | None = None,
) -> list[ToolOutcome]:
    """The async twin of `run_tool_calls`; calls run concurrently on the event loop."""
    shaping = _Shaping(max_observation_bytes, redact)

    async def run_one(raw: Mapping[str, Any]) -> ToolOutcome | GraphBubbleUp:
        call = _call_dict(raw)
        tool = tools.get(call["name"])
        if tool is None:
            return _unknown(call, shaping, list(tools))
        stopwatch = Stopwatch()
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                if _has_native_async(tool):
                    result = await tool.ainvoke(prepare(call) if prepare else call)
                else:
                    work = _WORKERS.submit(partial(_invoke_sync, tool, call, prepare))
                    result, _ = await asyncio.wrap_future(work)
        except GraphBubbleUp as signal:
            return signal
        except Exception as error:
            if isinstance(error, TimeoutError) and deadline.expired():
                assert timeout is not None
                return _timed_out(call, shaping, timeout, stopwatch.started_at)
            elapsed = _Timing(stopwatch.started_at, stopwatch.elapsed_ms())
            return _from_error(call, shaping, error, elapsed)
        elapsed = _Timing(stopwatch.started_at, stopwatch.elapsed_ms())
        return _from_result(call, shaping, result, elapsed)

    if len(calls) == 1:
        results = [await run_one(calls[0])]
    else:
        results = list(await asyncio.gather(*(run_one(call) for call in calls)))
    outcomes: list[ToolOutcome] = []
    for result in results:
        if isinstance(result, GraphBubbleUp):
            raise result
        outcomes.append(result)
    return outcomes
