"""Count a run's model calls: tokens from each reply's ``usage_metadata``, and their times."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from langchain_agent_rules.agent.state import ModelCall, ModelCallPurpose, Usage

__all__ = ["Stopwatch", "add_reply", "count_call", "no_usage", "total_tokens"]


def no_usage() -> Usage:
    """The usage of a run that has not called its model yet."""
    return {"model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cached_input_tokens": 0}


def _count(values: Mapping[str, Any], key: str) -> int:
    value = values.get(key)
    # A bool is an int to Python, not a token count.
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def add_reply(usage: Usage | None, reply: BaseMessage) -> Usage:
    """``usage`` plus one model call and the tokens ``reply`` reports (if any)."""
    before = usage or no_usage()
    metadata: Mapping[str, Any] = getattr(reply, "usage_metadata", None) or {}
    details: Mapping[str, Any] = metadata.get("input_token_details") or {}
    return {
        "model_calls": before["model_calls"] + 1,
        "input_tokens": before["input_tokens"] + _count(metadata, "input_tokens"),
        "output_tokens": before["output_tokens"] + _count(metadata, "output_tokens"),
        "cached_input_tokens": before["cached_input_tokens"] + _count(details, "cache_read"),
    }


def total_tokens(usage: Usage | None) -> int:
    """Input plus output tokens so far."""
    if usage is None:
        return 0
    return usage["input_tokens"] + usage["output_tokens"]


class Stopwatch:
    """Times one call: started now (wall clock), measured on the monotonic clock."""

    def __init__(self) -> None:
        self.started_at = time.time()
        self._started = time.perf_counter()

    def elapsed_ms(self) -> float:
        """Milliseconds since the start, on the monotonic clock."""
        return (time.perf_counter() - self._started) * 1000

    def call(self, purpose: ModelCallPurpose) -> ModelCall:
        """The finished call: when it started, how long it took, and why it was made."""
        return {
            "started_at": self.started_at,
            "duration_ms": round(self.elapsed_ms(), 3),
            "purpose": purpose,
        }


def count_call(state: Mapping[str, Any], reply: BaseMessage, call: ModelCall) -> dict[str, Any]:
    """The ``usage`` and ``model_calls`` update for one more model call of the run."""
    return {
        "usage": add_reply(state.get("usage"), reply),
        "model_calls": [*(state.get("model_calls") or []), call],
    }
