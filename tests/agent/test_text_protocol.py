from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from langchain_agent_rules.text_protocol import (
    MAX_JSON_NESTING,
    ParsedReply,
    extract_answer,
    parse_tool_reply,
    render_tool_call_block,
    render_tools_prompt,
    to_text_messages,
)

from .parser_corpus import CORPUS


def test_the_corpus_has_at_least_sixty_replies() -> None:
    assert len(CORPUS) >= 60


@pytest.mark.parametrize(("reply", "expected"), CORPUS, ids=[str(i) for i in range(len(CORPUS))])
def test_parser_reads_corpus_reply(reply: str, expected: tuple[str, Any]) -> None:
    parsed = parse_tool_reply(reply)
    kind, value = expected
    if kind == "call":
        assert [(c.name, c.args) for c in parsed.tool_calls] == value
        assert parsed.errors == ()
        assert parsed.final_answer is None
    elif kind == "final":
        assert parsed.tool_calls == ()
        assert parsed.errors == ()
        assert parsed.final_answer == value
    else:
        assert parsed.tool_calls == ()
        assert parsed.final_answer is None
        assert len(parsed.errors) == 1
        assert value in parsed.errors[0].problem


def test_parse_error_keeps_the_raw_block() -> None:
    parsed = parse_tool_reply("Let me look.\n```tool\nread_file(path='a')\n```")
    assert parsed.errors[0].raw == "read_file(path='a')"
    assert parsed.errors[0].problem == (
        "the block is not valid JSON (Expecting value at line 1 column 1)"
    )


def test_a_good_block_and_a_broken_block_give_a_call_and_an_error() -> None:
    parsed = parse_tool_reply(
        '```tool\n{"tool": "a", "args": {}}\n```\n```tool\n{"tool": "b", "args": [}\n```'
    )
    assert [c.name for c in parsed.tool_calls] == ["a"]
    assert len(parsed.errors) == 1


def test_extract_answer_drops_tool_blocks_and_final_marker() -> None:
    text = 'Here it is.\n```tool\n{"tool": "a", "args": {}}\n```\nFINAL: 3 users'
    assert extract_answer(text) == "3 users"
    assert extract_answer('```tool\n{"tool": "a", "args": {}}\n```') == ""


def test_a_tag_inside_a_call_fence_belongs_to_the_call() -> None:
    block = '```tool\n{"tool": "say", "args": {"text": "x <tool_call> y"}}\n```'
    parsed = parse_tool_reply(block)
    assert [(c.name, c.args) for c in parsed.tool_calls] == [("say", {"text": "x <tool_call> y"})]
    assert parsed.errors == ()


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("FINAL: 3 active users**", "3 active users"),
        ("The answer is **bold**", "The answer is **bold**"),
        ("**FINAL:** 3", "3"),
    ],
)
def test_only_an_unpaired_bold_marker_is_dropped_from_an_answer(reply: str, answer: str) -> None:
    assert extract_answer(reply) == answer


def test_canonical_block_round_trips() -> None:
    block = render_tool_call_block("read_file", {"path": "ä.txt"})
    assert block == '```tool\n{"tool": "read_file", "args": {"path": "ä.txt"}}\n```'
    parsed = parse_tool_reply(block)
    assert [(c.name, c.args) for c in parsed.tool_calls] == [("read_file", {"path": "ä.txt"})]


@tool
def read_file(path: str, max_lines: int = 100) -> str:
    """Read a text file under the project root."""
    return path


@tool
def tag(names: list[str], mode: str | None = None) -> str:
    """Tag things."""
    return ""


def test_tools_prompt_word_for_word() -> None:
    assert render_tools_prompt([read_file, tag]) == (
        "You can call these tools:\n"
        "- read_file: Read a text file under the project root.\n"
        "    path (string, required)\n"
        "    max_lines (integer, optional)\n"
        "- tag: Tag things.\n"
        "    names (array of string, required)\n"
        "    mode (string|null, optional)\n"
        "\n"
        "Tools are optional: if you can answer without one, answer directly.\n"
        "To call a tool, reply with exactly one block like this and nothing after it:\n"
        "```tool\n"
        '{"tool": "<tool name>", "args": {"<argument>": <value>}}\n'
        "```\n"
        "When you know the answer, reply with FINAL: followed by the answer."
    )


def test_text_messages_show_only_the_parsed_call_and_observations_as_user_messages() -> None:
    history = [
        SystemMessage("sys"),
        HumanMessage("task"),
        AIMessage(
            "I will read it first, then answer.",
            tool_calls=[{"name": "read_file", "args": {"path": "a"}, "id": "c1"}],
        ),
        ToolMessage("hello", tool_call_id="c1", name="read_file"),
        AIMessage("FINAL: hello"),
    ]
    rendered = to_text_messages(history)
    assert [m.type for m in rendered] == ["system", "human", "ai", "human", "ai"]
    assert rendered[2].content == '```tool\n{"tool": "read_file", "args": {"path": "a"}}\n```'
    assert rendered[3].content == (
        "Observation:\nhello\n\nThe task: task\nIf these observations answer the whole task, "
        "reply with FINAL: followed by your answer. Otherwise call one more tool."
    )


def test_text_messages_join_parallel_observations_with_tool_names() -> None:
    history = [
        AIMessage(
            "",
            tool_calls=[
                {"name": "a", "args": {}, "id": "1"},
                {"name": "b", "args": {}, "id": "2"},
            ],
        ),
        ToolMessage("one", tool_call_id="1", name="a"),
        ToolMessage("two", tool_call_id="2", name="b"),
    ]
    rendered = to_text_messages(history)
    assert rendered[1].content.startswith("Observation:\n[a]\none\n\n[b]\ntwo\n\n")


def test_text_messages_show_the_raw_block_of_an_unreadable_call() -> None:
    history = [
        AIMessage(
            "",
            invalid_tool_calls=[{"name": None, "args": "read_file(x)", "id": "c1", "error": "bad"}],
        ),
        ToolMessage("ERROR: bad", tool_call_id="c1", name="read_file"),
    ]
    assert to_text_messages(history)[0].content == "read_file(x)"


def test_an_observation_restates_the_latest_user_task_of_a_conversation() -> None:
    history = [
        HumanMessage("first question"),
        AIMessage("FINAL: first answer"),
        HumanMessage("second question"),
        AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "a"}, "id": "c1"}]),
        ToolMessage("hello", tool_call_id="c1", name="read_file"),
    ]
    observation = to_text_messages(history)[-1]
    assert "\n\nThe task: second question\n" in observation.text
    assert "first question" not in observation.text


# --- hostile replies: a ParsedReply in time linear in the reply, never an exception -------

# Generous bounds: each case takes milliseconds here; the quadratic parser took 295 s on the
# first one.
GENEROUS_SECONDS = 10.0


def parse_within_bound(reply: str) -> ParsedReply:
    started = time.perf_counter()
    parsed = parse_tool_reply(reply)
    extract_answer(reply)
    assert time.perf_counter() - started < GENEROUS_SECONDS
    return parsed


def records(count: int, keys: str = '"name": "Ada {i}", "id": {i}') -> str:
    return ",\n".join("{" + keys.format(i=i) + "}" for i in range(count))


def test_an_answer_quoting_json_records_with_name_keys_parses_fast() -> None:
    reply = "FINAL: Here are the users:\n```json\n[" + records(6_000) + "]\n```"
    assert len(reply) > 200_000
    parsed = parse_within_bound(reply)
    assert parsed.final_answer is not None
    assert parsed.final_answer.startswith("Here are the users:\n```json\n[{")


def test_bare_name_keys_without_a_fence_parse_fast() -> None:
    reply = 'Users: {"name": "x", "id": 1} ' * 10_000
    assert parse_within_bound(reply).final_answer == reply.strip()


@pytest.mark.parametrize(
    "reply",
    [
        "<tool_call>{}</tool_call>" * 5_000 + "```tool\n{}\n```" * 5_000,
        '```tool\n{"tool": "a", "args": {"n": 1}}\n```\n' * 5_000,
        "".join(f'```tool\n{{"tool": "a", "args": {{"n": {i}}}}}\n```\n' for i in range(5_000)),
        "```" * 50_000,
        "final " * 50_000 + ":",
        "{" + " " * 200_000,
        "," + " " * 200_000 + "x",
        '"name"' + " " * 200_000,
        "```tool\n" + "{" * 100_000,
    ],
    ids=["tags-and-fences", "repeated-calls", "distinct-calls", "backticks", "finals",
         "brace-spaces", "comma-spaces", "name-spaces", "open-braces"],
)  # fmt: skip
def test_pathological_replies_parse_in_bounded_time(reply: str) -> None:
    parse_within_bound(reply)


def test_five_thousand_distinct_calls_are_all_kept_in_order() -> None:
    reply = "".join(f'```tool\n{{"tool": "a", "args": {{"n": {i}}}}}\n```\n' for i in range(5_000))
    assert [c.args["n"] for c in parse_within_bound(reply).tool_calls] == list(range(5_000))


def deep_json(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [MAX_JSON_NESTING + 1, 5_000, 200_000])
def test_arguments_nested_past_the_bound_are_an_error(depth: int) -> None:
    reply = '```tool\n{"tool": "t", "args": ' + deep_json(depth) + "}\n```"
    parsed = parse_within_bound(reply)
    assert parsed.tool_calls == ()
    assert [e.problem for e in parsed.errors] == [
        f"the block nests deeper than {MAX_JSON_NESTING} levels"
    ]


def test_arguments_nested_up_to_the_bound_are_read() -> None:
    reply = '```tool\n{"tool": "t", "args": ' + deep_json(MAX_JSON_NESTING - 1) + "}\n```"
    (call,) = parse_within_bound(reply).tool_calls
    assert call.name == "t"


def test_deep_python_style_arguments_are_an_error() -> None:
    reply = "```tool\n{'tool': 't', 'args': " + "{'a': " * 5_000 + "1" + "}" * 5_001 + "\n```"
    parsed = parse_within_bound(reply)
    assert parsed.tool_calls == () and len(parsed.errors) == 1


def test_an_integer_past_pythons_digit_limit_is_an_error() -> None:
    reply = '```tool\n{"tool": "t", "args": {"n": ' + "9" * 5_000 + "}}\n```"
    parsed = parse_within_bound(reply)
    assert [e.problem for e in parsed.errors] == ["the block has a number too long to read"]


def test_an_integer_beyond_64_bits_is_read() -> None:
    reply = '```tool\n{"tool": "t", "args": {"n": ' + str(2**70) + "}}\n```"
    assert parse_within_bound(reply).tool_calls[0].args == {"n": 2**70}


@pytest.mark.parametrize(
    "body",
    [
        '{"tool": "t\\ud800", "args": {}}',
        '{"tool": "t", "args": {"x": "\\udcff"}}',
        '{"tool": "t", "args": {"\\ud800": 1}}',
        '{"tool": "t", "args": "{\\"x\\": \\"\\\\ud83d\\"}"}',
    ],
)
def test_an_escaped_lone_surrogate_is_an_error(body: str) -> None:
    parsed = parse_within_bound(f"```tool\n{body}\n```")
    assert parsed.tool_calls == ()
    (error,) = parsed.errors
    assert error.problem.startswith("the block has a lone surrogate (\\u")
    assert error.problem.endswith("), which is not valid text")


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("{'tool': 't', 'args': {'x': {1, 2}}}", "set"),
        ("{'tool': 't', 'args': {'x': b'raw'}}", "bytes"),
        ("{'tool': 't', 'args': {'x': 1j}}", "complex"),
        ("{'tool': 't', 'args': {1: 'x'}}", "int key"),
        ("{'tool': 't', 'args': {'x': (1, 2)}}", "tuple"),
    ],
)
def test_python_values_json_cannot_hold_are_an_error(body: str, kind: str) -> None:
    parsed = parse_within_bound(f"```tool\n{body}\n```")
    assert parsed.tool_calls == ()
    assert [e.problem for e in parsed.errors] == [
        f"the block is not valid JSON (it holds a Python {kind})"
    ]


@pytest.mark.parametrize(
    "reply",
    [
        '{"tool":"","":{{',
        "```tool\n{'tool': 'a', 'args': {{}}}\n```",
        "{'tool': 'a', 'args': {[1]: 2}}",
    ],
)
def test_unhashable_python_literals_are_unreadable_calls(reply: str) -> None:
    # Found by the property test below: ast.literal_eval raises TypeError for these.
    parsed = parse_within_bound(reply)
    assert parsed.tool_calls == () and len(parsed.errors) == 1


def test_a_raw_lone_surrogate_in_prose_stays_in_the_answer() -> None:
    assert parse_within_bound("FINAL: a\ud800b").final_answer == "a\ud800b"


# --- property tests: any reply, the same invariant ---------------------------------------

ANY_CHARACTER = st.characters(exclude_categories=())  # lone surrogates included
TEXT = st.one_of(
    st.text(ANY_CHARACTER, max_size=30),
    st.sampled_from(["", "\ud800", "{", "}", "[", '"', "'", "\\", ",", ":", "`", "\n", "9" * 5000]),
)
JSON_ARGS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children),
    max_leaves=8,
)
NAMES = st.sampled_from(["read_file", "sql_query", " x ", ""]) | st.text(max_size=10)


def _call_json(name: str, args: Any, keys: tuple[str, str]) -> str:
    return json.dumps({keys[0]: name, keys[1]: args}, ensure_ascii=False)


CALL_BODIES = st.one_of(
    st.builds(
        _call_json,
        NAMES,
        st.dictionaries(st.text(max_size=8), JSON_ARGS, max_size=3) | JSON_ARGS,
        st.sampled_from([("tool", "args"), ("name", "arguments"), ("tool_name", "parameters")]),
    ),
    st.builds(lambda body, cut: body[:cut], st.just('{"tool": "t", "args": {"x": [1, 2]}}'),
              st.integers(0, 40)),
    st.builds(lambda depth: '{"tool": "t", "args": ' + "[" * depth + "]" * depth + "}",
              st.integers(0, 3000)),
    st.sampled_from(["{'tool': 'a', 'args': {'x': {1}}}", "{'tool': 'a', 'args': {'x': True}}",
                     '{"tool": "\\ud800", "args": {}}', "", "null", "[]", '"tool": "a"}']),
    TEXT,
)  # fmt: skip
FRAGMENTS = st.one_of(
    TEXT,
    st.builds("```{}\n{}\n```".format, st.sampled_from(["tool", "json", "", "TOOL", "py"]),
              CALL_BODIES),
    st.builds("```{}{}".format, st.sampled_from(["tool", "json", ""]), CALL_BODIES),
    st.builds("<tool_call>{}</tool_call>".format, CALL_BODIES),
    st.builds("<tool_call>{}".format, CALL_BODIES),
    CALL_BODIES,
    st.sampled_from(["FINAL:", "**Final Answer:**", "final answer:", "\n", " "]),
)  # fmt: skip
REPLIES = st.lists(FRAGMENTS, max_size=8).map("".join)


def _depth(value: Any) -> int:
    pending, deepest = [(value, 0)], 0
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            pending += [(c, depth + 1) for c in (item.values() if isinstance(item, dict) else item)]
    return deepest


@settings(max_examples=500, deadline=None)
@given(REPLIES)
def test_any_reply_parses_to_calls_errors_or_an_answer(reply: str) -> None:
    """Invariant: a ParsedReply, never an exception; calls hold valid, bounded JSON."""
    parsed = parse_tool_reply(reply)
    assert (parsed.final_answer is None) == bool(parsed.tool_calls or parsed.errors)
    seen = set()
    for call in parsed.tool_calls:
        assert call.name and call.name == call.name.strip()
        assert isinstance(call.args, dict) and all(isinstance(k, str) for k in call.args)
        identity = json.dumps([call.name, call.args], sort_keys=True, ensure_ascii=False)
        identity.encode("utf-8")  # no lone surrogate
        assert identity not in seen
        seen.add(identity)
        assert _depth({"tool": call.name, "args": call.args}) <= MAX_JSON_NESTING
    for error in parsed.errors:
        error.problem.encode("utf-8")
    assert isinstance(extract_answer(reply), str)


# Any text round-trips, fences and <tool_call> tags included (backticks are escaped).
PLAIN = st.text(ANY_CHARACTER.filter(lambda c: not 0xD800 <= ord(c) <= 0xDFFF)) | st.sampled_from(
    ["```", "a ```tool b", "<tool_call>", "x </tool_call> y", "`name`"]
)
PLAIN_ARGS = st.dictionaries(
    PLAIN,
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | PLAIN,
        lambda children: st.lists(children, max_size=3) | st.dictionaries(PLAIN, children),
        max_leaves=8,
    ),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(name=PLAIN.filter(lambda name: name.strip()), args=PLAIN_ARGS)
def test_the_canonical_block_of_any_call_parses_back_to_it(name: str, args: Any) -> None:
    parsed = parse_tool_reply(render_tool_call_block(name, args))
    assert [(c.name, c.args) for c in parsed.tool_calls] == [(name.strip(), args)]
