"""The agent graph's state: messages plus the result and the trace of the current run."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

__all__ = ["AgentInput", "AgentState", "StopReason", "TraceStep"]

StopReason = Literal["final", "max_iterations", "repeated_calls"]
"""Why a run ended: ``final`` (the model answered), ``max_iterations`` (the ``limit`` node
answered after the last tool iteration) or ``repeated_calls`` (a model turn only repeated
tool calls already made in this run, so the model was asked once, without tools, for its
answer)."""


class TraceStep(TypedDict):
    """One tool call of a run, as plain data any checkpointer can store.

    ``observation`` is what the model saw (capped, never the full output); ``status`` is
    one of ``ok``, ``error``, ``timeout``, ``unknown_tool``, ``invalid_args``,
    ``parse_error``, ``rejected`` or ``repeated``; ``approval`` is ``"approved"``,
    ``"edited"`` or ``"rejected"`` for calls that needed approval, else ``None``.
    """

    step: int
    iteration: int
    tool: str
    args: dict[str, Any]
    observation: str
    status: str
    duration_ms: float
    truncated: bool
    error: str | None
    approval: str | None


class AgentInput(TypedDict):
    """What a run takes: the conversation so far, the task last."""

    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(AgentInput, total=False):
    """The full state; ``answer``, ``stop_reason``, ``iterations`` and ``trace`` are per run."""

    answer: str | None
    stop_reason: StopReason | None
    iterations: int
    trace: list[TraceStep]
