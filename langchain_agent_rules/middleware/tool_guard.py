"""`ToolGuardMiddleware`: a timeout, an observation cap and error observations for every tool call.

The guard does not re-implement any of this: it hands `create_agent`'s tool handler to the
agent's own tool runner (`run_tool_call` / `arun_tool_call`) as a zero-argument tool, so a
tool called through `create_agent` meets the same timeout, the same ``ERROR: ...`` texts
and the same truncation marker as one called by `create_rules_agent`. In a callback trace
(LangSmith) each guarded call therefore shows as a ``tool_guard`` run beside the tool's own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict

from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.tool_runner import ToolOutcome, arun_tool_calls, run_tool_calls

__all__ = ["ToolGuardMiddleware"]

_ADAPTER_NAME = "tool_guard"
_ADAPTER_DESCRIPTION = "Runs one tool call through create_agent's tool handler."


class _NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _call(request: ToolCallRequest) -> ToolCall:
    return {
        "name": request.tool_call["name"],
        "args": {},
        "id": request.tool_call["id"],
        "type": "tool_call",
    }


def _answer(outcome: ToolOutcome) -> ToolMessage | Command[Any]:
    return outcome.command if outcome.command is not None else outcome.to_message()


_DEFAULTS = AgentOptions()


class ToolGuardMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Bound every tool call of a `create_agent` agent and never let a tool crash the run.

    - a call that runs longer than ``timeout`` seconds is answered with
      ``ERROR: tool "<name>" timed out after <timeout> s`` (a sync tool keeps its worker
      thread until it returns, because Python cannot stop a thread; its late result is
      dropped);
    - an exception from a tool becomes an error `ToolMessage` ``ERROR: <message>``
      (LangGraph's own ToolNode lets most exceptions crash the run);
    - an observation over ``max_observation_bytes`` UTF-8 bytes is cut, with a marker
      saying how much was shown; the full output is dropped, so it never reaches the
      model or the checkpointed state (an artifact stays on the message).

    Interrupts pass through; a `Command` result passes through with its `ToolMessage`
    capped like any observation. The defaults and checks of ``timeout`` and
    ``max_observation_bytes`` are those of `AgentOptions` (``tool_timeout``,
    ``max_observation_bytes``).

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

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the call through the tool runner, within the timeout and the size cap."""

        def run() -> ToolMessage | Command[Any]:
            return handler(request)

        adapter = StructuredTool(
            name=_ADAPTER_NAME, description=_ADAPTER_DESCRIPTION, args_schema=_NoArguments, func=run
        )
        call = _call(request)
        [outcome] = run_tool_calls(
            {call["name"]: adapter}, [call], self.timeout, self.max_observation_bytes
        )
        return _answer(outcome)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async `wrap_tool_call`: the timeout is an asyncio deadline."""

        async def run() -> ToolMessage | Command[Any]:
            return await handler(request)

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
        return _answer(outcome)
