"""Count a run's model calls: tokens from each reply's ``usage_metadata``, and their times.

A provider may send any number: a count that is missing, negative, not an integer or a
bool adds nothing, and a count beyond 64 bits is taken as `MAX_COUNT`, so a run never
fails on what a provider reports and any checkpointer can store the sums.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from langchain_agent_rules.middleware.state import (
    MAX_COUNT,
    ModelCall,
    ModelCallPurpose,
    Usage,
    add_usage,
    no_usage,
)

__all__ = ["Stopwatch", "storable_reply", "total_tokens", "usage_of"]

_MAX_DEPTH = 8


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


def _bounded(value: Any, depth: int = 0) -> Any:
    """``value`` with every integer held within 64 bits (msgpack stores nothing larger)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return max(-MAX_COUNT, min(value, MAX_COUNT))
    if depth >= _MAX_DEPTH:
        return value if isinstance(value, str | float) or value is None else repr(value)[:200]
    if isinstance(value, Mapping):
        return {key: _bounded(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_bounded(item, depth + 1) for item in value]
    return value


def storable_reply(reply: AIMessage) -> AIMessage:
    """``reply`` with the numbers a provider reported made storable by any checkpointer.

    Token counts are clamped to [0, `MAX_COUNT`]; other integers in the reply's usage and
    response metadata to 64 bits.
    """
    usage = reply.usage_metadata
    if usage is None and not reply.response_metadata:
        return reply
    update: dict[str, Any] = {"response_metadata": _bounded(reply.response_metadata)}
    if usage is not None:
        counted = _reply_usage(reply)
        details = _bounded(dict(usage.get("input_token_details") or {}))
        clamped = {key: max(0, value) for key, value in details.items() if isinstance(value, int)}
        update["usage_metadata"] = {
            **_bounded(dict(usage)),
            "input_tokens": counted["input_tokens"],
            "output_tokens": counted["output_tokens"],
            "total_tokens": min(counted["input_tokens"] + counted["output_tokens"], MAX_COUNT),
            "input_token_details": clamped,
        }
    return reply.model_copy(update=update)


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
