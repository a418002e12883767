"""The agent graph's state: messages plus the result, trace, usage, model calls and rule events.

Everything here is a `typing_extensions.TypedDict`, so pydantic can read the state on
Python 3.11 and ``graph.get_input_jsonschema()`` / ``get_output_jsonschema()`` (what
LangGraph Studio shows) work. Every field but ``messages`` is reset when a run starts.

`GraphState` adds the ``draft``: an answer not yet checked. It is a private channel (not
in the output schema, and not a message), so no stream mode (``values``, ``updates``,
``messages``) and no final state shows an answer before ``check_answer`` has judged it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from langchain_agent_rules.rules.engine import RuleEvent

__all__ = [
    "AgentInput",
    "AgentState",
    "Draft",
    "GraphState",
    "ModelCall",
    "ModelCallPurpose",
    "RuleEvent",
    "StopReason",
    "TraceStep",
    "Usage",
]

StopReason = Literal[
    "final", "max_iterations", "max_model_calls", "max_total_tokens", "repeated_calls"
]
"""Why a run ended: ``final`` (the model answered); ``max_iterations``,
``max_model_calls`` or ``max_total_tokens`` (that budget was spent and the ``limit``
node answered as ``on_limit`` says); ``repeated_calls`` (a model turn only repeated tool
calls already made in this run, so the model was asked once, without tools, for its
answer)."""


class TraceStep(TypedDict):
    """One tool call of a run, as plain data any checkpointer can store.

    ``started_at`` is when the call started, in seconds since the epoch (``time.time()``,
    so a run that paused for approval and resumed in another process keeps one clock);
    for a call that never ran (denied, rejected, repeated, unknown tool), when it was
    settled. Steps stored by earlier versions of this package have no ``started_at``.
    ``observation`` is what the model saw (capped and redacted, never the full output);
    ``status`` is one of ``ok``, ``error``, ``timeout``, ``unknown_tool``,
    ``invalid_args``, ``parse_error``, ``rejected``, ``repeated`` or ``denied`` (a rule's
    check stopped the call); ``approval`` is ``"approved"``, ``"edited"`` or
    ``"rejected"`` for calls that needed approval, else ``None``; ``rule_events`` are
    what the rules' checks did about this call and its observation.
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
    read from its cache (``input_token_details["cache_read"]``).
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


class AgentInput(TypedDict):
    """What a run takes: the conversation so far, the task last."""

    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(AgentInput, total=False):
    """The full state; every field but ``messages`` belongs to the current run."""

    answer: str | None
    stop_reason: StopReason | None
    iterations: int
    trace: list[TraceStep]
    usage: Usage
    model_calls: list[ModelCall]
    rule_events: list[RuleEvent]


class Draft(TypedDict):
    """An answer before its checks: the text, why the run ends, and its message as a dict.

    ``message`` is the answer's `AIMessage` as ``message_to_dict`` writes it: a plain dict,
    so LangGraph's ``messages`` stream does not pick it up.
    """

    answer: str
    stop_reason: StopReason
    message: dict[str, Any]


class GraphState(AgentState, total=False):
    """The graph's working state: `AgentState` plus the ``draft`` answer, never output."""

    draft: Draft | None
