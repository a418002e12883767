"""The package's middleware as one `create_agent` middleware: the same parts, one hook each.

`create_agent` wraps every middleware hook in a tracing span of its own, and an async one
hands part of that work to a thread: with four middleware that is most of what a model
turn of the agent costs beyond `create_agent`'s own. `EngineMiddleware` runs the parts of
`rules_agent_middleware` in that order behind one ``before_agent``, one
``wrap_model_call`` (their model-step turns chained: each part's `Call` is served by the
parts after it) and one ``wrap_tool_call`` (the guard around the rules). What each part
does is exactly what it does on its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from langchain_agent_rules.middleware._step import Call, ModelStep, StepMiddleware, Turn, TurnSteps
from langchain_agent_rules.middleware.rules import AgentRulesMiddleware
from langchain_agent_rules.middleware.state import AgentState
from langchain_agent_rules.middleware.tool_guard import ToolGuardMiddleware

__all__ = ["EngineMiddleware", "chained"]

Result = ToolMessage | Command[Any]


def chained(turns: Sequence[Turn], request: ModelRequest[Any], step: ModelStep) -> TurnSteps:
    """``turns[0]``'s part of the step, each of its calls served by the turns after it."""
    response: ModelResponse[Any]
    if not turns:
        response = yield Call(request)
        return response
    head = turns[0](request, step)
    try:
        effect = next(head)
        while True:
            if not isinstance(effect, Call):
                effect = head.send((yield effect))
                continue
            try:
                result = yield from _served(turns[1:], effect, step)
            except Exception as error:
                effect = head.throw(error)
            else:
                effect = head.send(result)
    except StopIteration as done:
        response = done.value
        return response


def _served(rest: Sequence[Turn], call: Call, step: ModelStep) -> TurnSteps:
    """``call`` answered by the ``rest`` of the chain, under its purpose."""
    response: ModelResponse[Any]
    if not rest:
        response = yield call
        return response
    with step.within(call.purpose):
        response = yield from chained(rest, call.request, step)
    return response


class EngineMiddleware(StepMiddleware[AgentState]):
    """The rules agent's middleware (`rules_agent_middleware`) behind one hook each."""

    state_schema = AgentState

    def __init__(
        self,
        guard: ToolGuardMiddleware,
        rules: AgentRulesMiddleware,
        turns: Sequence[StepMiddleware[Any]],
    ) -> None:
        super().__init__()
        self.guard, self.rules = guard, rules
        self.parts: list[AgentMiddleware[Any, Any, Any]] = [
            guard,
            rules,
            *[part for part in turns if part is not rules],
        ]
        self._turns: list[Turn] = [part._turn for part in turns]
        self.tools = list(rules.tools)

    @property
    def name(self) -> str:
        """The name LangGraph gives this middleware's nodes."""
        return "RulesAgentEngine"

    def before_agent(self, state: AgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Every part's start of a run, as one update."""
        update: dict[str, Any] = {}
        for part in self.parts:
            update.update(part.before_agent(state, runtime) or {})
        return update or None

    async def abefore_agent(
        self, state: AgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async `before_agent`."""
        return self.before_agent(state, runtime)

    def _turn(self, request: ModelRequest[Any], step: ModelStep) -> TurnSteps:
        return (yield from chained(self._turns, request, step))

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Result]
    ) -> Result:
        """The guard around the rules around the tool call."""
        return self.guard.wrap_tool_call(
            request, lambda inner: self.rules.wrap_tool_call(inner, handler)
        )

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[Result]],
    ) -> Result:
        """Async `wrap_tool_call`."""
        return await self.guard.awrap_tool_call(
            request, lambda inner: self.rules.awrap_tool_call(inner, handler)
        )
