"""What `RulesAgent.stream` yields, and the answer's text picked out of streamed tokens.

Stream events are typed dicts told apart by their ``type``, as LangGraph's stream parts
are: a ``"step"`` for each tool call as it finishes, an ``"answer_delta"`` for each piece
of the answer as the model writes it (when asked for), and one ``"end"`` with the run's
result.

With ``stream_mode="messages"`` LangGraph hands out every token chunk of every model
call. Only part of that is the answer: a text-protocol reply holds prose, fenced tool
blocks and ``FINAL: <answer>``; a native reply may end in tool calls. `AnswerStream`
keeps, per model call, only the text that can be the answer: in a text-protocol reply
(its call is tagged `TEXT_REPLY_TAG`) the text after ``FINAL:``, in a native reply the
text before any tool call, and in both never a tool block. An answer the rules may still
change is never streamed as tokens: LangGraph then sends the checked message once, and
`AnswerStream` passes it on whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from typing_extensions import TypedDict

from langchain_agent_rules.middleware.protocol import TEXT_REPLY_TAG
from langchain_agent_rules.middleware.state import RuleEvent, StopReason, TraceStep, Usage

__all__ = [
    "ANSWER_NODE",
    "AnswerDeltaEvent",
    "AnswerStream",
    "EndEvent",
    "StepEvent",
    "StreamEvent",
]

ANSWER_NODE = "model"
"""The node whose model calls can give the answer (`create_agent`'s model node)."""


class StepEvent(TypedDict):
    """A tool call finished (or was refused): its trace step."""

    type: Literal["step"]
    step: TraceStep


class AnswerDeltaEvent(TypedDict):
    """A piece of the answer, as the model writes it."""

    type: Literal["answer_delta"]
    text: str


class EndEvent(TypedDict):
    """The run ended: its answer and how it got there."""

    type: Literal["end"]
    answer: str
    stop_reason: StopReason | None
    iterations: int
    usage: Usage
    rule_events: list[RuleEvent]
    thread_id: str | None


StreamEvent = StepEvent | AnswerDeltaEvent | EndEvent

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
    """Turns streamed model messages into the answer text to show, one model call at a time."""

    def __init__(self) -> None:
        self._replies: dict[str, _Reply] = {}

    def feed(self, message: BaseMessage, metadata: Mapping[str, Any]) -> str:
        """The text of ``message`` to show now (often ``""``)."""
        if metadata.get("langgraph_node") != ANSWER_NODE:
            return ""
        if not isinstance(message, AIMessageChunk):
            return self._whole(message)
        tags = metadata.get("tags") or ()
        reply = self._replies.setdefault(
            str(message.id), _Reply(text_protocol=TEXT_REPLY_TAG in tags)
        )
        if reply.stopped:
            return ""
        if message.tool_call_chunks:
            reply.stopped = True
            return ""
        reply.buffer += message.text
        if reply.start is None:
            reply.start = self._answer_start(reply)
            if reply.start is None:
                return ""
            reply.shown = reply.start
        return self._release(reply)

    def _whole(self, message: BaseMessage) -> str:
        """A message the model node returned without streaming it: the checked answer."""
        if not isinstance(message, AIMessage) or message.tool_calls or message.invalid_tool_calls:
            return ""
        if str(message.id) in self._replies:
            return ""
        self._replies[str(message.id)] = _Reply(text_protocol=False, stopped=True)
        return message.text

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
