"""`ToolGuardMiddleware`: every tool call bounded, answered and traced.

Each call `create_agent` sends to LangGraph's `ToolNode` passes through the guard:

- a call identical (tool and arguments) to one made earlier in this run is not run
  again: the model gets the earlier result (status ``repeated``), or the earlier error and
  a hint to change its approach (status ``repeated_failure``);
- an unknown tool and arguments the tool's schema refuses are answered at once
  (``unknown_tool``, ``invalid_args``), with what is available or what was wrong;
- the call runs within ``timeout`` seconds (``timeout``); an exception from it becomes an
  error observation (``error``; `InvalidToolCallError`: ``invalid_args``) instead of a
  crash (LangGraph's own ToolNode lets most exceptions end the run);
- the observation is cut to ``max_observation_bytes`` UTF-8 bytes with a marker, so the
  full output never reaches the model, the state or a checkpoint (an artifact stays on
  the message);
- the call gets one step in the run's ``trace``.

Interrupts pass through (an approval, or an ``interrupt()`` inside a tool); a tool's
`Command` passes through with its `ToolMessage` capped like any observation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ToolCallRequest
from langchain_core.messages import ToolMessage, convert_to_messages
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite
from pydantic import BaseModel, ValidationError

from langchain_agent_rules.errors import AgentConfigurationError, InvalidToolCallError
from langchain_agent_rules.middleware._arguments import clean_text
from langchain_agent_rules.middleware._tool_runner import (
    CallTimedOut,
    acall_with_timeout,
    call_with_timeout,
    truncate_observation,
)
from langchain_agent_rules.middleware.prompts import (
    COMMAND_WITHOUT_TOOL_MESSAGE,
    INVALID_ARGS,
    REPEATED_CALL,
    REPEATED_FAILURE,
    TOOL_ERROR,
    TOOL_TIMEOUT,
    UNKNOWN_TOOL,
)
from langchain_agent_rules.middleware.state import (
    CALL_RECORD_KEY,
    GuardState,
    RuleEvent,
    ToolStatus,
    TraceStep,
)
from langchain_agent_rules.middleware.usage import Stopwatch
from langchain_agent_rules.options import AgentOptions

__all__ = ["ToolGuardMiddleware"]

_DEFAULTS = AgentOptions()
Result = ToolMessage | Command[Any]
_SETTLED = frozenset({"repeated", "repeated_failure", "unknown_tool", "denied", "rejected"})
_RAN = frozenset({"ok", "error", "timeout", "invalid_args", "unknown_tool"})
"""Statuses of calls the guard answered: an identical later call gets the same answer."""
"""Statuses of calls answered without running the tool: their duration is 0."""


def _validation_message(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in problem['loc']) or 'arguments'}: {problem['msg']}"
        for problem in error.errors()
    )


class ToolGuardMiddleware(AgentMiddleware[GuardState, Any, Any]):
    """Bound, answer and trace every tool call of a `create_agent` agent.

    Setup:
        .. code-block:: bash

            pip install langchain-agent-rules

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules.middleware import ToolGuardMiddleware

            guard = ToolGuardMiddleware(timeout=10, max_observation_bytes=4096)
            agent = create_agent(model, tools, middleware=[guard])

    A sync tool that times out keeps its worker thread until it returns (Python cannot
    stop a thread); its late result is dropped. The defaults and checks of ``timeout``
    and ``max_observation_bytes`` are those of `AgentOptions` (``tool_timeout``,
    ``max_observation_bytes``). Put it first among this package's middleware, so the
    timeout, the cap and the trace cover what the others do to a call.
    """

    state_schema = GuardState

    def __init__(
        self,
        timeout: float | None = _DEFAULTS.tool_timeout,
        max_observation_bytes: int = _DEFAULTS.max_observation_bytes,
    ) -> None:
        options = AgentOptions(tool_timeout=timeout, max_observation_bytes=max_observation_bytes)
        super().__init__()
        self.timeout = options.tool_timeout
        self.max_observation_bytes = options.max_observation_bytes
        self.tools = []

    def before_agent(self, state: GuardState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Start the run with an empty trace."""
        return {"trace": Overwrite([])} if state.get("trace") else None

    async def abefore_agent(
        self, state: GuardState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async `before_agent`."""
        return self.before_agent(state, runtime)

    # --- before the call runs ----------------------------------------------------------

    def _settled(self, request: ToolCallRequest) -> tuple[str, ToolStatus, str | None] | None:
        """The observation of a call answered without running it, or None."""
        call = request.tool_call
        previous = next(
            (
                step
                for step in request.state.get("trace") or []
                if step["status"] in _RAN
                and step["tool"] == call["name"]
                and step["args"] == call["args"]
            ),
            None,
        )
        if previous is not None and previous["status"] == "ok":
            text = REPEATED_CALL.format(tool=call["name"], observation=previous["observation"])
            return text, "repeated", None
        if previous is not None:
            text = REPEATED_FAILURE.format(tool=call["name"], observation=previous["observation"])
            return text, "repeated_failure", previous["error"]
        tool = request.tool
        if tool is None:
            names = [t.name for t in request.runtime.tools] if request.runtime else []
            text = UNKNOWN_TOOL.format(tool=call["name"], available=", ".join(names) or "none")
            return text, "unknown_tool", "unknown tool"
        schema = tool.tool_call_schema
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            try:
                schema.model_validate(call["args"])
            except ValidationError as error:
                problem = _validation_message(error)
                return (
                    INVALID_ARGS.format(tool=call["name"], message=problem),
                    "invalid_args",
                    problem,
                )
        return None

    # --- after it ran --------------------------------------------------------------------

    def _failed(
        self, request: ToolCallRequest, error: Exception
    ) -> tuple[str, ToolStatus, str | None]:
        if isinstance(error, CallTimedOut):
            assert self.timeout is not None
            text = TOOL_TIMEOUT.format(tool=request.tool_call["name"], seconds=self.timeout)
            return text, "timeout", "timeout"
        if isinstance(error, AgentConfigurationError):
            raise error  # a bad approval answer: the run must stop and wait for a good one
        status: ToolStatus = "invalid_args" if isinstance(error, InvalidToolCallError) else "error"
        message = str(error) or type(error).__name__
        return TOOL_ERROR.format(message=message), status, message

    def _traced(
        self,
        request: ToolCallRequest,
        result: Result,
        stopwatch: Stopwatch,
        status: ToolStatus | None = None,
        error: str | None = None,
    ) -> Command[Any]:
        """``result`` with its observation capped, and the call's trace step."""
        call = request.tool_call
        update: dict[str, Any] = {}
        messages: list[Any] = [result]
        if isinstance(result, Command):
            if result.graph is not None or not isinstance(result.update, dict):
                return result  # for a parent graph: nothing of ours to cap or trace
            update = dict(result.update)
            messages = convert_to_messages(update.get("messages") or [])
        answer = next(
            (m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call["id"]),
            None,
        )
        if answer is None:
            answer = ToolMessage(
                COMMAND_WITHOUT_TOOL_MESSAGE.format(tool=call["name"]),
                tool_call_id=call["id"] or "",
                name=call["name"],
                status="error",
            )
            messages, status, error = [*messages, answer], "error", answer.text
        record: Mapping[str, Any] = answer.response_metadata.get(CALL_RECORD_KEY) or {}
        text, truncated = truncate_observation(answer.text, self.max_observation_bytes)
        if status is None and not record and answer.status == "error":
            status, error = "error", answer.text
        status = record.get("status") or status or ("error" if answer.status == "error" else "ok")
        events: list[RuleEvent] = list(update.get("rule_events") or [])
        metadata = {k: v for k, v in answer.response_metadata.items() if k != CALL_RECORD_KEY}
        capped = answer.model_copy(
            update={"content": text, "name": call["name"], "response_metadata": metadata}
        )
        step: TraceStep = {
            "step": 0,
            "iteration": int(request.state.get("iterations") or 0),
            "tool": call["name"],
            "args": record.get("args", call["args"]),
            "observation": text,
            "status": status,
            "started_at": stopwatch.started_at,
            "duration_ms": 0.0 if status in _SETTLED else round(stopwatch.elapsed_ms(), 3),
            "truncated": truncated,
            "error": None if error is None else clean_text(error),
            "approval": record.get("approval"),
            "rule_events": events,
        }
        update["messages"] = [capped if m is answer else m for m in messages]
        update["trace"] = [step]
        return Command(
            update=update, resume=getattr(result, "resume", None), goto=getattr(result, "goto", ())
        )

    def _answer(self, request: ToolCallRequest, text: str) -> ToolMessage:
        call = request.tool_call
        return ToolMessage(text, tool_call_id=call["id"] or "", name=call["name"], status="error")

    def _settled_message(
        self, request: ToolCallRequest, settled: tuple[str, ToolStatus, str | None]
    ) -> ToolMessage:
        message = self._answer(request, settled[0])
        if settled[1] == "repeated":
            return message.model_copy(update={"status": "success"})
        return message

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Result],
    ) -> Result:
        """Run the call within the timeout, capped, answered and traced."""
        stopwatch = Stopwatch()
        settled = self._settled(request)
        if settled is not None:
            return self._traced(
                request, self._settled_message(request, settled), stopwatch, *settled[1:]
            )
        try:
            result = call_with_timeout(lambda: handler(request), self.timeout)
        except GraphBubbleUp:
            raise
        except Exception as error:
            text, status, problem = self._failed(request, error)
            return self._traced(request, self._answer(request, text), stopwatch, status, problem)
        return self._traced(request, result, stopwatch)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[Result]],
    ) -> Result:
        """Async `wrap_tool_call`: the timeout is an asyncio deadline."""
        stopwatch = Stopwatch()
        settled = self._settled(request)
        if settled is not None:
            return self._traced(
                request, self._settled_message(request, settled), stopwatch, *settled[1:]
            )
        try:
            result = await acall_with_timeout(lambda: handler(request), self.timeout)
        except GraphBubbleUp:
            raise
        except Exception as error:
            text, status, problem = self._failed(request, error)
            return self._traced(request, self._answer(request, text), stopwatch, status, problem)
        return self._traced(request, result, stopwatch)
