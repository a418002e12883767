"""Streamed reply text into message chunks: stop sequences, and replies to bound tools.

A reply to bound tools is grammar-constrained to ``FINAL: <answer>`` or one fenced tool
block. The answer streams as content as it comes (without the marker and the surrounding
whitespace, as `parse_tool_reply` reads it); a tool block is held until it is complete
and then becomes one tool-call chunk, so a block cut off by ``max_tokens`` ends as an
invalid tool call, never as a call with half of its arguments.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk

from langchain_agent_rules.text_protocol import new_call_id, parse_tool_reply

__all__ = ["StopScanner", "ToolReplyStream"]

_ANSWER, _CALL = "FINAL:", "```"


class StopScanner:
    """Cut streamed text before the first stop sequence, holding back what may start one."""

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = [stop for stop in stops if stop]
        self._hold = max((len(stop) for stop in self._stops), default=1) - 1
        self._pending = ""

    def feed(self, piece: str) -> tuple[str, bool]:
        """The text that can be shown now, and whether a stop sequence was reached."""
        self._pending += piece
        found = [index for stop in self._stops if (index := self._pending.find(stop)) >= 0]
        if found:
            shown, self._pending = self._pending[: min(found)], ""
            return shown, True
        cut = max(0, len(self._pending) - self._hold)
        shown, self._pending = self._pending[:cut], self._pending[cut:]
        return shown, False

    def flush(self) -> str:
        """The text held back at the end of the reply."""
        shown, self._pending = self._pending, ""
        return shown


class ToolReplyStream:
    """The chunks of one reply to bound tools: streamed answer text, or one tool call."""

    def __init__(self) -> None:
        self._text = ""
        self._shape: str | None = None
        self._answer_started = False
        self._held = ""

    def feed(self, piece: str) -> list[AIMessageChunk]:
        """The chunks that ``piece`` completes."""
        self._text += piece
        if self._shape is None:
            self._shape = _shape_of(self._text)
            if self._shape == _ANSWER:
                return self._answer(self._text[len(_ANSWER) :])
            if self._shape == "":
                return [AIMessageChunk(content=self._text)]
            return []
        if self._shape == _ANSWER:
            return self._answer(piece)
        if self._shape == "":
            return [AIMessageChunk(content=piece)]
        return []

    def finish(self) -> list[AIMessageChunk]:
        """The chunks held until the reply ended: the tool call, or an unfinished start."""
        if self._shape is None and self._text:
            return [AIMessageChunk(content=self._text.strip())]
        if self._shape != _CALL:
            return []
        parsed = parse_tool_reply(self._text)
        if parsed.errors or not parsed.tool_calls:
            # Text that is not JSON, so LangChain's partial-JSON repair cannot make a call of it.
            return [_call_chunk([(None, self._text)])]
        return [_call_chunk([(call.name, json.dumps(call.args)) for call in parsed.tool_calls])]

    def _answer(self, text: str) -> list[AIMessageChunk]:
        if not self._answer_started:
            text = text.lstrip()
            self._answer_started = bool(text)
        text = self._held + text
        shown = text.rstrip()
        self._held = text[len(shown) :]
        return [AIMessageChunk(content=shown)] if shown else []


def _shape_of(text: str) -> str | None:
    """``FINAL:`` or a fence when the text starts with one, None while it still may, else ""."""
    for start in (_ANSWER, _CALL):
        if text.startswith(start):
            return start
        if start.startswith(text):
            return None
    return ""


def _call_chunk(calls: list[tuple[str | None, str]]) -> AIMessageChunk:
    return AIMessageChunk(
        content="",
        tool_call_chunks=[
            tool_call_chunk(name=name, args=args, id=new_call_id(), index=index)
            for index, (name, args) in enumerate(calls)
        ],
    )
