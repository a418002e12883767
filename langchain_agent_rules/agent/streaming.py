"""Pick the answer's text out of a model's streamed tokens, as they arrive.

With ``stream_mode="messages"`` LangGraph hands out every token chunk of every model
call. Only part of that is the answer: a text-protocol reply holds prose, fenced tool
blocks and ``FINAL: <answer>``; a native reply may end in tool calls. `AnswerStream`
keeps, per model call, only the text that can be the answer: in a text-protocol reply
(its call is tagged `TEXT_REPLY_TAG`) the text after ``FINAL:``, in a native reply the
text before any tool call, and in both never a tool block (it stops at a fence or a
``<tool_call>`` tag). What it shows may still differ from the run's final answer (a
reply that says ``FINAL:`` and then calls a tool), so a caller compares at the end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessage

__all__ = ["ANSWER_NODES", "TEXT_REPLY_TAG", "AnswerStream"]

TEXT_REPLY_TAG = "rules_agent:text_reply"
"""Tag of a model call whose reply follows the text protocol (its answer after ``FINAL:``)."""

ANSWER_NODES = frozenset({"agent", "limit", "repeated_calls"})
"""The nodes whose model calls can give the answer."""

_FINAL = re.compile(r"(?:\*\*)?\bfinal(?:[ _]answer)?(?:\*\*)?\s*:[ \t]*(?:\*\*)?", re.IGNORECASE)
_STOPS = ("```", "<tool_call>")
_NATIVE_MARKER = "final:"


@dataclass
class _Reply:
    text_protocol: bool
    buffer: str = ""
    start: int | None = None
    shown: int = 0
    stopped: bool = False


class AnswerStream:
    """Turns streamed model chunks into the answer text to show, one model call at a time."""

    def __init__(self) -> None:
        self._replies: dict[str, _Reply] = {}

    def feed(self, chunk: BaseMessage, metadata: Mapping[str, Any]) -> str:
        """The text of ``chunk`` to show now (often ``""``)."""
        if metadata.get("langgraph_node") not in ANSWER_NODES:
            return ""
        if not isinstance(chunk, AIMessageChunk):
            return ""
        tags = metadata.get("tags") or ()
        reply = self._replies.setdefault(
            str(chunk.id), _Reply(text_protocol=TEXT_REPLY_TAG in tags)
        )
        if reply.stopped:
            return ""
        if chunk.tool_call_chunks:
            reply.stopped = True
            return ""
        reply.buffer += chunk.text
        if reply.start is None:
            reply.start = self._answer_start(reply)
            if reply.start is None:
                return ""
            reply.shown = reply.start
        return self._release(reply)

    @staticmethod
    def _answer_start(reply: _Reply) -> int | None:
        """Where the answer starts in the buffer, or None while that is not known yet."""
        buffer = reply.buffer
        if reply.text_protocol:
            marker = _FINAL.search(buffer)
            return None if marker is None else marker.end()
        head = buffer.lstrip()
        skipped = len(buffer) - len(head)
        if _NATIVE_MARKER.startswith(head.lower()):
            return None  # could still become "FINAL:"
        if head.lower().startswith(_NATIVE_MARKER):
            return skipped + len(_NATIVE_MARKER)
        return skipped

    @staticmethod
    def _release(reply: _Reply) -> str:
        pending = reply.buffer[reply.shown :]
        if reply.shown == reply.start:
            pending = pending.lstrip()
            reply.shown = len(reply.buffer) - len(pending)
        lowered = pending.lower()
        stops = [index for stop in _STOPS if (index := lowered.find(stop)) >= 0]
        if stops:
            reply.stopped = True
            end = min(stops)
        else:
            # Hold back a tail that may be the start of a fence or a tag.
            held = next(
                (
                    size
                    for size in range(min(len(lowered), max(map(len, _STOPS))), 0, -1)
                    if any(stop.startswith(lowered[-size:]) for stop in _STOPS)
                ),
                0,
            )
            end = len(pending) - held
        reply.shown += end
        return pending[:end]
