"""Sum the model calls and tokens of a run from each reply's ``usage_metadata``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from langchain_agent_rules.agent.state import Usage

__all__ = ["add_reply", "no_usage", "total_tokens"]


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
