"""Check a model's tool-call arguments before they enter the graph state.

A model (or a hostile prompt steering it) can produce arguments no tool should get and
no checkpointer can store: text with unpaired surrogates (a lone U+D800), nesting tens
of thousands of levels deep (msgpack stops at 255, ``repr`` and pydantic recurse),
integers beyond 64 bits (msgpack refuses them) and megabytes of text. `argument_problem`
finds these in time bounded by ``max_bytes`` and the depth limit, never by the input's
size, and says what is wrong in words the model can act on; the agent then answers the
call with an ``invalid_args`` observation instead of storing it. `clean_text` replaces
unpaired surrogates in text the agent stores (replies, observations, error messages).
"""

from __future__ import annotations

from typing import Any

from langchain_agent_rules.middleware.prompts import (
    ARGUMENTS_BAD_INTEGER,
    ARGUMENTS_BAD_TEXT,
    ARGUMENTS_BAD_VALUE,
    ARGUMENTS_NOT_AN_OBJECT,
    ARGUMENTS_TOO_DEEP,
    ARGUMENTS_TOO_LARGE,
)

__all__ = ["MAX_ARGUMENT_DEPTH", "argument_problem", "clean_text"]

MAX_ARGUMENT_DEPTH = 32
"""How deeply tool-call arguments may nest (the arguments object itself is level 1)."""

_SCALAR_BYTES = 8
_MIN_INT = -(2**63)
_MAX_INT = 2**64 - 1


def clean_text(text: str) -> str:
    """``text`` with every unpaired surrogate replaced by U+FFFD (valid pairs are joined)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _text_bytes(text: str, budget: int) -> int | None:
    """UTF-8 size of ``text``, or None when it holds an unpaired surrogate."""
    if len(text) > budget or text.isascii():
        return len(text)  # over budget already (a character is at least one byte)
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def argument_problem(args: Any, max_bytes: int) -> str | None:
    """Why ``args`` cannot be a tool call's arguments, or None when they can.

    The arguments must be a JSON object of JSON values (text, numbers, booleans, null,
    lists, objects with text keys) nested at most `MAX_ARGUMENT_DEPTH` levels, with
    integers in the 64-bit range, valid Unicode text, and about ``max_bytes`` UTF-8 bytes
    of compact JSON at most.
    """
    if not isinstance(args, dict):
        return ARGUMENTS_NOT_AN_OBJECT
    size = 0
    pending: list[tuple[Any, int]] = [(args, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            length = _text_bytes(value, max_bytes)
            if length is None:
                return ARGUMENTS_BAD_TEXT
            size += length + 2
        elif isinstance(value, bool) or value is None or isinstance(value, float):
            size += _SCALAR_BYTES
        elif isinstance(value, int):
            if not _MIN_INT <= value <= _MAX_INT:
                return ARGUMENTS_BAD_INTEGER
            size += _SCALAR_BYTES
        elif isinstance(value, dict | list | tuple):
            if depth > MAX_ARGUMENT_DEPTH:
                return ARGUMENTS_TOO_DEEP.format(limit=MAX_ARGUMENT_DEPTH)
            # Every entry costs at least a byte (its comma), so nothing is queued
            # beyond the budget, however many entries the container has.
            size += 2 + len(value)
            if size > max_bytes:
                return ARGUMENTS_TOO_LARGE.format(limit=max_bytes)
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        return ARGUMENTS_BAD_VALUE.format(kind=f"{type(key).__name__} key")
                    pending += [(key, depth), (item, depth + 1)]
            else:
                pending += [(item, depth + 1) for item in value]
        else:
            return ARGUMENTS_BAD_VALUE.format(kind=type(value).__name__)
        if size > max_bytes:
            return ARGUMENTS_TOO_LARGE.format(limit=max_bytes)
    return None
