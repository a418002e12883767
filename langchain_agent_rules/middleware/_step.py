"""One model step: what our middleware does in one run of `create_agent`'s model node.

The first of our middlewares to see a model call owns the step (`run_model_step`); the
others join it. Sharing one step gives three promises one place each:

- **Every model call is counted once.** Each layer calls the next through `ModelStep.call`;
  the innermost call records the reply and its timing with its purpose (a turn, a
  revision, a review, a summary), however many layers sit above it.
- **A refused tool call never leaves the step unanswered.** A layer that refuses a call
  (unreadable, bad arguments, denied by a rule) records a `Refusal`; the owner moves the
  call to ``invalid_tool_calls``, answers it with an error `ToolMessage` and a trace step,
  and, when the turn made no other call, asks the model again within the same step (a new
  turn), so `create_agent`'s loop goes on and no later hook (LangChain's
  `HumanInTheLoopMiddleware` among them) ever sees a refused call.
- **One write per step.** Layers add their state writes to the step; the owner returns
  them with the model's reply as one `Command`, and only what the checks let through.

While a layer marks the step ``quiet`` (an answer that may still change), model calls run
without the streaming callback handlers (LangGraph's ``messages`` stream, ``astream_events``,
``astream_log``) and tagged ``nostream``: no stream shows a reply before the checks.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware import AgentState as LangChainAgentState
from langchain.agents.middleware.types import ExtendedModelResponse, ModelCallResult
from langchain_core.callbacks import BaseCallbackManager
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, InvalidToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.types import Command

from langchain_agent_rules.middleware.state import (
    ModelCall,
    ModelCallPurpose,
    ToolStatus,
    TraceStep,
)
from langchain_agent_rules.middleware.usage import Stopwatch, storable_reply
from langchain_agent_rules.rules.engine import RuleEvent

__all__ = [
    "MAX_REFUSED_TURNS",
    "Call",
    "ModelStep",
    "Refusal",
    "StepMiddleware",
    "TurnSteps",
    "Work",
    "arun_model_step",
    "run_model_step",
]

MAX_REFUSED_TURNS = 3
"""Turns in a row whose calls were all refused that one step allows, when no
`RunLimitsMiddleware` bounds the run (with one, its budgets decide)."""

_CURRENT: ContextVar[ModelStep | None] = ContextVar("agent_rules_model_step", default=None)


@dataclass(frozen=True)
class Refusal:
    """A tool call refused in the model step: what the model is told, and why."""

    call_id: str
    tool: str
    args: dict[str, Any]
    observation: str
    status: ToolStatus
    rule_events: tuple[RuleEvent, ...] = ()


Finisher = Callable[["ModelStep", AIMessage], dict[str, Any]]
"""Computes a layer's state writes once the step's last reply is known."""


@dataclass
class ModelStep:
    """The shared record of one model node run (see the module docs)."""

    state: dict[str, Any]
    calls: list[tuple[BaseMessage, ModelCall]] = field(default_factory=list)
    refused_turns: int = 0
    quiet: bool = False
    stop_reason: str | None = None
    turn_limit: int | None = MAX_REFUSED_TURNS
    has_room: Callable[[], bool] = lambda: True
    update: dict[str, Any] = field(default_factory=dict)
    memo: dict[int, Any] = field(default_factory=dict)
    _refusals: list[Refusal] = field(default_factory=list)
    _finishers: list[Finisher] = field(default_factory=list)
    _purpose: ModelCallPurpose = "turn"
    _trace: list[TraceStep] = field(default_factory=list)
    _synthetic: set[int] = field(default_factory=set)

    # --- what layers tell the step ----------------------------------------------------

    @property
    def purpose(self) -> ModelCallPurpose:
        """Why the model is being called now."""
        return self._purpose

    def answered_without_model(self, reply: AIMessage) -> AIMessage:
        """Mark ``reply`` as written by a layer, not the model: it is not a model call."""
        self._synthetic.add(id(reply))
        return reply

    @contextmanager
    def within(self, purpose: ModelCallPurpose | None) -> Iterator[None]:
        """Make ``purpose`` the step's purpose for the calls made inside (None: unchanged)."""
        outer, self._purpose = self._purpose, purpose or self._purpose
        try:
            yield
        finally:
            self._purpose = outer

    def is_model_written(self, reply: AIMessage) -> bool:
        """Whether ``reply`` came from the model (not a layer's fixed answer)."""
        return id(reply) not in self._synthetic

    def refuse(self, refusal: Refusal) -> None:
        """Record a call of the current turn that must not run."""
        self._refusals.append(refusal)

    def add_events(self, events: Sequence[RuleEvent]) -> None:
        """Add rule events to the step's writes."""
        if events:
            self.update.setdefault("rule_events", []).extend(events)

    def on_finish(self, finisher: Finisher) -> None:
        """Run ``finisher`` when the step ends (once per layer and step)."""
        if finisher not in self._finishers:
            self._finishers.append(finisher)

    # --- calling the next layer -----------------------------------------------------

    def call(
        self,
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
        request: ModelRequest[Any],
        *,
        purpose: ModelCallPurpose | None = None,
        tags: Sequence[str] = (),
    ) -> ModelResponse[Any]:
        """Call ``handler`` with ``request``; record the reply if no inner layer did."""
        with self._calling(purpose, tags) as record:
            response = handler(request)
            record(response)
        return response

    async def acall(
        self,
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
        request: ModelRequest[Any],
        *,
        purpose: ModelCallPurpose | None = None,
        tags: Sequence[str] = (),
    ) -> ModelResponse[Any]:
        """Async `call`."""
        with self._calling(purpose, tags) as record:
            response = await handler(request)
            record(response)
        return response

    @contextmanager
    def _calling(
        self, purpose: ModelCallPurpose | None, tags: Sequence[str]
    ) -> Iterator[Callable[[ModelResponse[Any]], None]]:
        outer_purpose = self._purpose
        self._purpose = purpose or outer_purpose
        recorded = len(self.calls)
        stopwatch = Stopwatch()
        token = var_child_runnable_config.set(_call_config(self.quiet, tags))

        def record(response: ModelResponse[Any]) -> None:
            if len(self.calls) == recorded:  # the innermost layer: the model's own reply
                reply = next(
                    (m for m in reversed(response.result) if isinstance(m, AIMessage)), None
                )
                if reply is not None and id(reply) not in self._synthetic:
                    self.calls.append((reply, stopwatch.call(self._purpose)))

        try:
            yield record
        finally:
            var_child_runnable_config.reset(token)
            self._purpose = outer_purpose

    # --- the owner's work -------------------------------------------------------------

    def _take_refusals(self) -> list[Refusal]:
        refusals, self._refusals = self._refusals, []
        return refusals

    def _answered(
        self, reply: AIMessage, refusals: list[Refusal], iteration: int
    ) -> list[AnyMessage]:
        """``reply`` with its refused calls moved out of ``tool_calls``, and their answers."""
        refused = {refusal.call_id: refusal for refusal in refusals}
        kept = [call for call in reply.tool_calls if call["id"] not in refused]
        invalid = list(reply.invalid_tool_calls)
        known = {call.get("id") for call in invalid}
        invalid += [_invalid_call(refusal) for refusal in refusals if refusal.call_id not in known]
        message = reply.model_copy(update={"tool_calls": kept, "invalid_tool_calls": invalid})
        answers: list[AnyMessage] = [message]
        for refusal in refusals:
            answers.append(
                ToolMessage(
                    content=refusal.observation,
                    tool_call_id=refusal.call_id,
                    name=refusal.tool,
                    status="error",
                )
            )
            self._trace.append(_refusal_step(refusal, iteration))
        return answers

    def _finish(
        self, response: ModelResponse[Any], earlier: list[AnyMessage]
    ) -> ModelCallResult[Any]:
        reply = _reply_of(response)
        for finisher in self._finishers:
            for key, value in finisher(self, reply).items():
                self.update[key] = value
        if self._trace:
            self.update["trace"] = self._trace
        result = [
            storable_reply(m) if isinstance(m, AIMessage) else m
            for m in [*earlier, *response.result]
        ]
        checked = ModelResponse(result=result, structured_response=response.structured_response)
        if not self.update:
            return checked
        return ExtendedModelResponse(model_response=checked, command=Command(update=self.update))

    def _next_turn(
        self, response: ModelResponse[Any]
    ) -> tuple[ModelResponse[Any], list[AnyMessage] | None]:
        """The response with its refusals answered, and the messages to retry with (or None)."""
        refusals = self._take_refusals()
        if not refusals:
            return response, None
        reply = _reply_of(response)
        iteration = int(self.state.get("iterations") or 0) + self.refused_turns + 1
        answered = self._answered(reply, refusals, iteration)
        others = [m for m in response.result if m is not reply]
        settled = ModelResponse(result=[*others, *answered], structured_response=None)
        may_retry = self.turn_limit is None or self.refused_turns < self.turn_limit
        if answered[0].tool_calls or not may_retry:  # type: ignore[union-attr]
            return settled, None
        self.refused_turns += 1
        return settled, answered


def _reply_of(response: ModelResponse[Any]) -> AIMessage:
    for message in reversed(response.result):
        if isinstance(message, AIMessage):
            return message
    return AIMessage(content="")


def _invalid_call(refusal: Refusal) -> InvalidToolCall:
    return {
        "name": refusal.tool or None,
        "args": json.dumps(refusal.args, ensure_ascii=False, separators=(",", ":")),
        "id": refusal.call_id,
        "error": refusal.observation,
        "type": "invalid_tool_call",
    }


def _refusal_step(refusal: Refusal, iteration: int) -> TraceStep:
    settled = Stopwatch()
    return {
        "step": 0,
        "iteration": iteration,
        "tool": refusal.tool,
        "args": refusal.args,
        "observation": refusal.observation,
        "status": refusal.status,
        "started_at": settled.started_at,
        "duration_ms": 0.0,
        "truncated": False,
        "error": refusal.observation,
        "approval": None,
        "rule_events": list(refusal.rule_events),
    }


def _is_stream_handler(handler: Any) -> bool:
    # The protocol LangChain's and LangGraph's streaming handlers implement (messages
    # stream, astream_events, astream_log): they hand each token to a consumer.
    return callable(getattr(handler, "tap_output_iter", None))


def _call_config(quiet: bool, tags: Sequence[str]) -> RunnableConfig | None:
    config = var_child_runnable_config.get()
    if config is None or (not quiet and not tags):
        return config
    changed: dict[str, Any] = dict(config)
    changed["tags"] = [*(config.get("tags") or ()), *tags, *([TAG_NOSTREAM] if quiet else [])]
    callbacks = config.get("callbacks")
    if quiet and isinstance(callbacks, BaseCallbackManager):
        quieter = callbacks.copy()
        for handler in [*quieter.handlers, *quieter.inheritable_handlers]:
            if _is_stream_handler(handler):
                quieter.remove_handler(handler)
        changed["callbacks"] = quieter
    elif quiet and isinstance(callbacks, list):
        changed["callbacks"] = [h for h in callbacks if not _is_stream_handler(h)]
    return changed  # type: ignore[return-value]


@dataclass(frozen=True)
class Call:
    """A layer's request for the next layer (and, at the end, the model) to answer."""

    request: ModelRequest[Any]
    purpose: ModelCallPurpose | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Work:
    """Work a layer needs done that has a sync and an async way (reading a rule store)."""

    run: Callable[[], Any]
    arun: Callable[[], Awaitable[Any]]


TurnSteps = Generator[Call | Work, Any, ModelResponse[Any]]
"""A layer's part of a model step, written once for sync and async runs: it yields each
`Call` (and is sent the response, or thrown the model's error) and each `Work` (and is sent
its result), and returns the response it passes on."""
Turn = Callable[[ModelRequest[Any], ModelStep], TurnSteps]
_Handler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
_AsyncHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


def _drive(steps: TurnSteps, step: ModelStep, handler: _Handler) -> ModelResponse[Any]:
    try:
        effect = next(steps)
        while True:
            try:
                if isinstance(effect, Call):
                    result = step.call(
                        handler, effect.request, purpose=effect.purpose, tags=effect.tags
                    )
                else:
                    result = effect.run()
            except Exception as error:
                effect = steps.throw(error)
            else:
                effect = steps.send(result)
    except StopIteration as done:
        response: ModelResponse[Any] = done.value
        return response


async def _adrive(steps: TurnSteps, step: ModelStep, handler: _AsyncHandler) -> ModelResponse[Any]:
    try:
        effect = next(steps)
        while True:
            try:
                if isinstance(effect, Call):
                    result = await step.acall(
                        handler, effect.request, purpose=effect.purpose, tags=effect.tags
                    )
                else:
                    result = await effect.arun()
            except Exception as error:
                effect = steps.throw(error)
            else:
                effect = steps.send(result)
    except StopIteration as done:
        response: ModelResponse[Any] = done.value
        return response


def run_model_step(
    request: ModelRequest[Any], handler: _Handler, turn: Turn
) -> ModelCallResult[Any]:
    """Run one layer's ``turn``: joining the current step, or owning a new one."""
    step = _CURRENT.get()
    if step is not None:
        return _drive(turn(request, step), step, handler)
    step = ModelStep(dict(request.state))
    token = _CURRENT.set(step)
    try:
        earlier: list[AnyMessage] = []
        while True:
            retry = request.override(messages=[*request.messages, *earlier]) if earlier else request
            response, answered = step._next_turn(_drive(turn(retry, step), step, handler))
            if answered is None:
                return step._finish(response, earlier)
            earlier += answered
    finally:
        _CURRENT.reset(token)


async def arun_model_step(
    request: ModelRequest[Any], handler: _AsyncHandler, turn: Turn
) -> ModelCallResult[Any]:
    """Async `run_model_step`."""
    step = _CURRENT.get()
    if step is not None:
        return await _adrive(turn(request, step), step, handler)
    step = ModelStep(dict(request.state))
    token = _CURRENT.set(step)
    try:
        earlier: list[AnyMessage] = []
        while True:
            retry = request.override(messages=[*request.messages, *earlier]) if earlier else request
            turned = await _adrive(turn(retry, step), step, handler)
            response, answered = step._next_turn(turned)
            if answered is None:
                return step._finish(response, earlier)
            earlier += answered
    finally:
        _CURRENT.reset(token)


StateT = TypeVar("StateT", bound=LangChainAgentState[Any])


class StepMiddleware(AgentMiddleware[StateT, Any, Any]):
    """A middleware whose part of each model call is a `Turn`, run in the shared model step."""

    def _turn(self, request: ModelRequest[Any], step: ModelStep) -> TurnSteps:
        raise NotImplementedError  # pragma: no cover - every subclass has its own

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: _Handler
    ) -> ModelCallResult[Any]:
        """Take this middleware's part in the model step (see `_turn`)."""
        return run_model_step(request, handler, self._turn)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: _AsyncHandler
    ) -> ModelCallResult[Any]:
        """Async `wrap_model_call`."""
        return await arun_model_step(request, handler, self._turn)
