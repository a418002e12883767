"""Turning a constrained reply's text pieces into message chunks (no model needed)."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessageChunk

from langchain_agent_rules.models._reply_stream import StopScanner, ToolReplyStream

BLOCK = '```tool\n{"tool": "sql_query", "args": {"sql": "SELECT COUNT(*) FROM t"}}\n```'


def _merge(pieces: list[str]) -> AIMessageChunk:
    stream = ToolReplyStream()
    chunks = [chunk for piece in pieces for chunk in stream.feed(piece)] + stream.finish()
    merged = AIMessageChunk(content="")
    for chunk in chunks:
        merged = merged + chunk
    return merged


def _pieces(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
def test_an_answer_streams_without_its_final_marker(size: int) -> None:
    merged = _merge(_pieces("FINAL:  The total is 12.50 EUR.\n\n", size))
    assert merged.content == "The total is 12.50 EUR."
    assert merged.tool_call_chunks == []


def test_an_answer_is_streamed_as_it_comes() -> None:
    stream = ToolReplyStream()
    assert stream.feed("FINAL: The") == [AIMessageChunk(content="The")]
    assert stream.feed(" total ") == [AIMessageChunk(content=" total")]
    assert stream.feed("is 9") == [AIMessageChunk(content=" is 9")]
    assert stream.finish() == []


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_tool_block_becomes_one_tool_call(size: int) -> None:
    merged = _merge(_pieces(BLOCK, size))
    assert merged.content == ""
    assert len(merged.tool_calls) == 1
    call = merged.tool_calls[0]
    assert (call["name"], call["args"]) == ("sql_query", {"sql": "SELECT COUNT(*) FROM t"})
    assert call["id"]
    assert merged.invalid_tool_calls == []


def test_a_cut_off_tool_block_is_an_invalid_call_never_a_repaired_one() -> None:
    cut = BLOCK[: BLOCK.index("FROM")]
    merged = _merge([cut])
    assert merged.tool_calls == []
    assert len(merged.invalid_tool_calls) == 1
    assert merged.invalid_tool_calls[0]["args"] == cut


def test_every_call_has_its_own_id() -> None:
    first, second = _merge([BLOCK]), _merge([BLOCK])
    assert first.tool_calls[0]["id"] != second.tool_calls[0]["id"]


ANSWERS = ["", " ", "\n9\n", "  two  words  ", "é\u00a0x", "a\tb \n", "FINAL: twice", "x" * 70]


@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("size", [1, 2, 7])
def test_any_answer_merges_to_the_stripped_text(answer: str, size: int) -> None:
    merged = _merge(_pieces("FINAL:" + answer, size))
    assert merged.content == answer.strip()


@pytest.mark.parametrize(
    "args",
    [{}, {"a": 1}, {"q": 'say "hi"\n', "n": -3}, {"nested": {"x": [1, 2]}}, {"é": "\u2603"}],
)
def test_any_argument_object_survives_the_stream(args: dict[str, object]) -> None:
    block = "```tool\n" + json.dumps({"tool": "t", "args": args}) + "\n```"
    merged = _merge(_pieces(block, 3))
    assert merged.tool_calls[0]["args"] == args


@pytest.mark.parametrize("size", [1, 2, 4, 1000])
def test_text_stops_before_a_stop_sequence(size: int) -> None:
    scanner = StopScanner(["\nObservation", "STOP"])
    shown = ""
    for piece in _pieces("The answer\nObservation: x", size):
        text, stopped = scanner.feed(piece)
        shown += text
        if stopped:
            break
    assert stopped
    assert shown == "The answer"


def test_text_without_a_stop_sequence_passes_whole() -> None:
    scanner = StopScanner(["STOP"])
    shown = [scanner.feed(piece) for piece in ["ST", "O", "RM ST", "OR"]]
    assert not any(stopped for _, stopped in shown)
    assert "".join(text for text, _ in shown) + scanner.flush() == "STORM STOR"


def test_no_stop_sequences_hold_nothing_back() -> None:
    scanner = StopScanner([])
    assert scanner.feed("abc") == ("abc", False)
