"""The state our middleware adds to `create_agent`: the run's answer, trace, usage and events.

Each middleware declares the keys it writes in its ``state_schema`` (LangChain merges
them): `RunLimitsMiddleware` the answer, stop reason, iterations, usage and model
calls; `ToolGuardMiddleware` the trace; `AgentRulesMiddleware` the rule events and the
rules of the current turn (private: never in the input or the output). `AgentState` is
their union, the state of `create_rules_agent`'s graph. Every field but ``messages``
belongs to the current run: each middleware resets its own in ``before_agent``.

A reducer comes last in its ``Annotated`` (LangGraph reads only the last item).
Everything here is a `typing_extensions.TypedDict`, so pydantic reads it on Python 3.11
and LangGraph Studio can show the graph's input and output schemas. Lists and usage are
merged by reducers, because the tool calls of one turn run as parallel tasks that each
add a trace step and rule events.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired, Required

from langchain.agents.middleware import AgentState as LangChainAgentState
from langchain.agents.middleware.types import OmitFromInput, PrivateStateAttr
from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from langchain_agent_rules.rules.engine import RuleEvent

__all__ = [
    "CALL_RECORD_KEY",
    "MAX_COUNT",
    "WASTED_STATUSES",
    "AgentState",
    "GuardState",
    "LimitsState",
    "ModelCall",
    "ModelCallPurpose",
    "RuleEvent",
    "RulesState",
    "StopReason",
    "ToolStatus",
    "TraceStep",
    "Usage",
    "add_steps",
    "add_usage",
    "no_usage",
]

StopReason = Literal[
    "final", "max_iterations", "max_model_calls", "max_total_tokens", "repeated_calls"
]
"""Why a run ended: ``final`` (the model answered); ``max_iterations``,
``max_model_calls`` or ``max_total_tokens`` (that budget was spent and the run answered
as ``on_limit`` says); ``repeated_calls`` (a model turn only repeated tool calls already
made in this run, so the model was asked once, without tools, for its answer)."""

ToolStatus = Literal[
    "ok",
    "error",
    "timeout",
    "unknown_tool",
    "invalid_args",
    "parse_error",
    "rejected",
    "repeated",
    "repeated_failure",
    "denied",
]
"""What became of one tool call (see `TraceStep`)."""

WASTED_STATUSES = frozenset(
    {
        "error",
        "timeout",
        "unknown_tool",
        "invalid_args",
        "parse_error",
        "repeated",
        "repeated_failure",
    }
)
"""Statuses of calls that gave the model nothing new: a failure, or a call it had made before."""

CALL_RECORD_KEY = "agent_rules"
"""Key in a `ToolMessage`'s ``response_metadata`` where `AgentRulesMiddleware` says what
it did with the call (``status``: ``denied`` or ``rejected``; ``approval``) for
`ToolGuardMiddleware`'s trace step; the guard removes it."""

MAX_COUNT = 2**63 - 1
"""The largest token count kept: sums saturate here, so any checkpointer can store them."""


class TraceStep(TypedDict):
    """One tool call of a run, as plain data any checkpointer can store.

    ``step`` numbers the calls of the run from 1; ``iteration`` is the model turn that
    made the call. ``started_at`` is when the call started, in seconds since the epoch
    (``time.time()``, so a run that paused for approval and resumed in another process
    keeps one clock); for a call that never ran (denied, rejected, repeated, unknown
    tool), when it was settled. ``observation`` is what the model saw (capped and
    redacted, never the full output); ``status`` is a `ToolStatus`: ``ok``, ``error``,
    ``timeout``, ``unknown_tool``, ``invalid_args``, ``parse_error``, ``rejected``,
    ``repeated`` (it repeated a call that succeeded, so it was not run again),
    ``repeated_failure`` (it repeated a call that failed) or ``denied`` (a rule's check
    stopped the call); ``approval`` is
    ``"approved"``, ``"edited"`` or ``"rejected"`` for calls that needed approval, else
    ``None``; ``rule_events`` are what the rules' checks did about this call and its
    observation.
    """

    step: int
    iteration: int
    tool: str
    args: dict[str, Any]
    observation: str
    status: str
    started_at: float
    duration_ms: float
    truncated: bool
    error: str | None
    approval: str | None
    rule_events: list[RuleEvent]


class Usage(TypedDict):
    """Tokens and model calls of one run, summed over its model calls.

    Read from each reply's ``usage_metadata`` (a model that reports none adds only to
    ``model_calls``); ``cached_input_tokens`` is the part of ``input_tokens`` the model
    read from its cache (``input_token_details["cache_read"]``). Counts that are missing,
    negative or not integers add nothing; sums stop at 2**63 - 1.
    """

    model_calls: int
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int


ModelCallPurpose = Literal["turn", "revision", "review", "summary"]
"""Why the agent called its model: a ``turn`` of the ReAct loop (tool calls or the
answer), a ``revision`` or a ``review`` of the answer for the rules' checks, or a
``summary`` (the answer without tools once a budget was spent or a turn only repeated
earlier calls)."""


class ModelCall(TypedDict):
    """One model call of a run: when it started, how long it took and why it was made.

    ``started_at`` is in seconds since the epoch (``time.time()``); ``duration_ms`` is
    measured with a monotonic clock. A run has one entry per call counted in ``usage``.
    """

    started_at: float
    duration_ms: float
    purpose: ModelCallPurpose


def no_usage() -> Usage:
    """The usage of a run that has not called its model yet."""
    return {"model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cached_input_tokens": 0}


def add_usage(left: Usage | None, right: Usage | None) -> Usage:
    """The reducer of ``usage``: field-wise sums that saturate at `MAX_COUNT`."""
    if not left:
        return right or no_usage()
    if not right:
        return left
    summed = {key: min(left[key] + right[key], MAX_COUNT) for key in no_usage()}  # type: ignore[literal-required]
    return summed  # type: ignore[return-value]


def add_steps(
    left: Sequence[TraceStep] | None, right: Sequence[TraceStep] | None
) -> list[TraceStep]:
    """The reducer of ``trace``: new steps are appended and numbered after the last one."""
    steps = list(left or [])
    for step in right or []:
        steps.append({**step, "step": len(steps) + 1})
    return steps


def _step_batches(
    steps: list[TraceStep], batches: Sequence[Sequence[TraceStep]]
) -> list[TraceStep]:
    for batch in batches:
        steps = add_steps(steps, batch)
    return steps


def _message_batches(messages: Any, batches: Sequence[Any]) -> Any:
    for batch in batches:
        messages = add_messages(messages, batch)
    return messages


class LimitsState(LangChainAgentState[Any]):
    """The keys `RunLimitsMiddleware` writes: the run's result, iterations and usage."""

    answer: NotRequired[Annotated[str | None, OmitFromInput]]
    stop_reason: NotRequired[Annotated[StopReason | None, OmitFromInput]]
    iterations: NotRequired[Annotated[int, OmitFromInput]]
    usage: NotRequired[Annotated[Usage, OmitFromInput, add_usage]]
    model_calls: NotRequired[Annotated[list[ModelCall], OmitFromInput, operator.add]]


class GuardState(LangChainAgentState[Any]):
    """The key `ToolGuardMiddleware` writes: one trace step per tool call."""

    trace: NotRequired[Annotated[list[TraceStep], OmitFromInput, DeltaChannel(_step_batches)]]


class RulesState(GuardState):
    """The keys `AgentRulesMiddleware` writes: rule events, and the rules of this turn.

    A call it refuses in the model step gets its trace step there; ``turn_rules`` holds
    the rules whose checks apply to this turn's tool calls and observations, as read for
    its model call, so the whole turn is judged by one reading of the rules.
    """

    rule_events: NotRequired[Annotated[list[RuleEvent], OmitFromInput, operator.add]]
    turn_rules: NotRequired[Annotated[list[dict[str, Any]], PrivateStateAttr]]


class AgentState(LimitsState, RulesState):
    """The state of `create_rules_agent`'s graph: messages and the run's record.

    ``answer`` (checked by the rules), ``stop_reason``, ``iterations`` (model turns that
    used tools), ``trace``, ``usage``, ``model_calls`` and ``rule_events``. The history
    and the trace are LangGraph ``DeltaChannel`` s: a checkpoint stores what a step added,
    not the whole list again, so a long run's checkpoints grow with what it did, not with
    its square.
    """

    messages: Required[Annotated[list[AnyMessage], DeltaChannel(_message_batches)]]
