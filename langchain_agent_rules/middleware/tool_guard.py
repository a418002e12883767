"""`ToolGuardMiddleware`: a timeout, an observation cap and error observations for every tool call.

The guard does not re-implement any of this: it hands `create_agent`'s tool handler to the
agent's own tool runner (`run_tool_call` / `arun_tool_call`) as a zero-argument tool, so a
tool called through `create_agent` meets the same timeout, the same ``ERROR: ...`` texts
and the same truncation marker as one called by `create_rules_agent`. In a callback trace
(LangSmith) each guarded call therefore shows as a ``tool_guard`` run beside the tool's own.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict

from langchain_agent_rules.agent.tool_runner import ToolOutcome, arun_tool_calls, run_tool_calls
from langchain_agent_rules.errors import AgentConfigurationError

__all__ = ["ToolGuardMiddleware"]

_ADAPTER_NAME = "tool_guard"
_ADAPTER_DESCRIPTION = "Runs one tool call through create_agent's tool handler."


class _NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _HandlerResult:
    """What the handler returned besides a `ToolMessage`: a `Command` or a control signal.

    Commands (state updates, jumps) and LangGraph's control signals (interrupts) are not
    observations; they are kept aside here and handed back unchanged.
    """

    def __init__(self) -> None:
        self.command: Command[Any] | None = None
        self.signal: GraphBubbleUp | None = None

    def keep(self, result: ToolMessage | Command[Any]) -> ToolMessage | str:
        if isinstance(result, Command):
            self.command = result
            return ""
        return result

    def answer(self, outcome: ToolOutcome) -> ToolMessage | Command[Any]:
        if outcome.status != "timeout":
            if self.signal is not None:
                raise self.signal
            if self.command is not None:
                return self.command
        return outcome.to_message()


def _call(request: ToolCallRequest) -> ToolCall:
    return {
        "name": request.tool_call["name"],
        "args": {},
        "id": request.tool_call["id"],
        "type": "tool_call",
    }


class ToolGuardMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Bound every tool call of a `create_agent` agent and never let a tool crash the run.

    - a call that runs longer than ``timeout`` seconds is answered with
      ``ERROR: tool "<name>" timed out after <timeout> s`` (a sync tool keeps its worker
      thread until it returns, because Python cannot stop a thread; its late result is
      dropped);
    - an exception from a tool becomes an error `ToolMessage` ``ERROR: <message>``
      (LangGraph's own ToolNode lets most exceptions crash the run);
    - an observation over ``max_observation_bytes`` UTF-8 bytes is cut, with a marker
      saying how much was shown; the full output (and any artifact) is dropped, so it
      never reaches the model or the checkpointed state.

    Interrupts and `Command` results pass through unchanged.

    Setup:
        .. code-block:: bash

            pip install "langchain-agent-rules[langchain]"

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules.middleware import ToolGuardMiddleware

            guard = ToolGuardMiddleware(timeout=10, max_observation_bytes=4096)
            agent = create_agent(model, tools, middleware=[guard])
    """

    def __init__(self, timeout: float | None = 30.0, max_observation_bytes: int = 8192) -> None:
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise AgentConfigurationError(
                f"timeout must be a number of seconds > 0 or None (no timeout), got {timeout!r}"
            )
        if (
            isinstance(max_observation_bytes, bool)
            or not isinstance(max_observation_bytes, int)
            or max_observation_bytes <= 0
        ):
            raise AgentConfigurationError(
                f"max_observation_bytes must be an int > 0, got {max_observation_bytes!r}"
            )
        super().__init__()
        self.timeout = None if timeout is None else float(timeout)
        self.max_observation_bytes = max_observation_bytes
        self.tools = []

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the call through the tool runner, within the timeout and the size cap."""
        kept = _HandlerResult()

        def run() -> ToolMessage | str:
            try:
                return kept.keep(handler(request))
            except GraphBubbleUp as signal:
                kept.signal = signal
                return ""

        adapter = StructuredTool(
            name=_ADAPTER_NAME, description=_ADAPTER_DESCRIPTION, args_schema=_NoArguments, func=run
        )
        call = _call(request)
        [outcome] = run_tool_calls(
            {call["name"]: adapter}, [call], self.timeout, self.max_observation_bytes
        )
        return kept.answer(outcome)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async `wrap_tool_call`: the timeout is an asyncio deadline."""
        kept = _HandlerResult()

        async def run() -> ToolMessage | str:
            try:
                return kept.keep(await handler(request))
            except GraphBubbleUp as signal:
                kept.signal = signal
                return ""

        adapter = StructuredTool(
            name=_ADAPTER_NAME,
            description=_ADAPTER_DESCRIPTION,
            args_schema=_NoArguments,
            coroutine=run,
        )
        call = _call(request)
        [outcome] = await arun_tool_calls(
            {call["name"]: adapter}, [call], self.timeout, self.max_observation_bytes
        )
        return kept.answer(outcome)
