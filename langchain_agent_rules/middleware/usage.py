"""Count a run's model calls: tokens from each reply's ``usage_metadata``, and their times.

A provider may send any number: a count that is missing, negative, not an integer or a
bool adds nothing, and a count beyond 64 bits is taken as `MAX_COUNT`, so a run never
fails on what a provider reports and any checkpointer can store the sums.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from langchain_agent_rules.middleware.state import (
    MAX_COUNT,
    ModelCall,
    ModelCallPurpose,
    Usage,
    add_usage,
    no_usage,
)

__all__ = ["Stopwatch", "total_tokens", "usage_of"]


def _count(values: Mapping[str, Any], key: str) -> int:
    value = values.get(key)
    # A bool is an int to Python, not a token count.
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return 0
    return min(value, MAX_COUNT)


def _reply_usage(reply: BaseMessage) -> Usage:
    metadata = getattr(reply, "usage_metadata", None)
    metadata = metadata if isinstance(metadata, Mapping) else {}
    details = metadata.get("input_token_details")
    details = details if isinstance(details, Mapping) else {}
    return {
        "model_calls": 1,
        "input_tokens": _count(metadata, "input_tokens"),
        "output_tokens": _count(metadata, "output_tokens"),
        "cached_input_tokens": _count(details, "cache_read"),
    }


def usage_of(replies: Iterable[BaseMessage]) -> Usage:
    """The usage of these model replies: one call each, plus the tokens they report."""
    usage = no_usage()
    for reply in replies:
        usage = add_usage(usage, _reply_usage(reply))
    return usage


def total_tokens(usage: Usage | None) -> int:
    """Input plus output tokens so far."""
    if not usage:
        return 0
    return min(usage["input_tokens"] + usage["output_tokens"], MAX_COUNT)


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
