"""`RunResult`: what one run of a `RulesAgent` produced, as a value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_agent_rules.middleware.state import (
    WASTED_STATUSES,
    ModelCall,
    RuleEvent,
    StopReason,
    TraceStep,
    Usage,
    no_usage,
)

__all__ = ["RunResult"]


@dataclass(frozen=True)
class RunResult:
    """The answer of one run and how it got there.

    ``stop_reason`` says why the run ended (`StopReason`), ``iterations`` counts the
    model turns that used tools, ``trace`` holds one step per tool call, ``usage`` the
    model calls and tokens, ``model_calls`` when each model call started, how long it
    took and why it was made, ``rule_events`` what the agent did about rules (for example
    a rule left out because it was over a limit) and ``thread_id`` the checkpointer
    thread the run was stored under (``None`` without a checkpointer).
    """

    answer: str
    stop_reason: StopReason | None
    iterations: int = 0
    trace: list[TraceStep] = field(default_factory=list)
    usage: Usage = field(default_factory=no_usage)
    model_calls: list[ModelCall] = field(default_factory=list)
    rule_events: list[RuleEvent] = field(default_factory=list)
    thread_id: str | None = None

    @property
    def wasted_calls(self) -> int:
        """Tool calls that gave the model nothing new: failures and repeats (`WASTED_STATUSES`)."""
        return sum(1 for step in self.trace if step["status"] in WASTED_STATUSES)

    @classmethod
    def from_state(cls, state: Mapping[str, Any], thread_id: str | None = None) -> RunResult:
        """The result held by a finished run's state."""
        return cls(
            answer=str(state.get("answer") or ""),
            stop_reason=state.get("stop_reason"),
            iterations=int(state.get("iterations") or 0),
            trace=list(state.get("trace") or []),
            usage=state.get("usage") or no_usage(),
            model_calls=list(state.get("model_calls") or []),
            rule_events=list(state.get("rule_events") or []),
            thread_id=thread_id,
        )
