"""The tool-call grammar accepts exactly the replies the text protocol's parser reads as
intended: checked with llama.cpp's own grammar engine on the embedded model's vocabulary
(no decoding, so no model time)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_agent_rules.text_protocol import parse_tool_reply, render_tool_call_block

pytestmark = pytest.mark.local_model


@tool
def sql_query(sql: str) -> str:
    """Run one read-only SQL query."""
    return sql


@tool
def file_read(path: str, offset: int = 0) -> str:
    """Read a file."""
    return path


@tool
def set_flags(names: list[str], enabled: bool, ratio: float | None = None) -> str:
    """Set flags."""
    return ""


TOOLS = [convert_to_openai_tool(t)["function"] for t in (sql_query, file_read, set_flags)]
Accepts = Callable[[str, str], bool]


@pytest.fixture(scope="module")
def accepts() -> Iterator[Accepts]:
    """Whether a grammar accepts a whole reply (and then lets the reply end)."""
    import llama_cpp

    from langchain_agent_rules.models._llama_runner import _Candidates
    from langchain_agent_rules.models.weights import embedded_model_path

    llama = llama_cpp.Llama(model_path=str(embedded_model_path()), vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    candidates = _Candidates(llama.n_vocab())

    def check(grammar: str, reply: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
        assert sampler, "llama.cpp could not parse the grammar"
        try:
            for token in llama.tokenize(reply.encode(), add_bos=False, special=False):
                if not candidates.allows(sampler, token):
                    return False
                llama_cpp.llama_sampler_accept(sampler, token)
            return candidates.allows(sampler, llama.token_eos())
        finally:
            llama_cpp.llama_sampler_free(sampler)

    yield check
    llama.close()


def reply_grammar(tools: list[dict[str, Any]] = TOOLS, *, allow_answer: bool = True) -> Any:
    from langchain_agent_rules.models._tool_grammar import tool_call_grammar

    return tool_call_grammar(tools, allow_answer=allow_answer)


def grammar(tools: list[dict[str, Any]] = TOOLS, *, allow_answer: bool = True) -> str:
    return str(reply_grammar(tools, allow_answer=allow_answer).gbnf)


CALLS = [
    ("sql_query", {"sql": "SELECT COUNT(*) FROM customers WHERE active = 1"}),
    ("sql_query", {"sql": "SELECT name FROM t WHERE note = \"a\\b\"\nAND x = 'é'"}),
    ("file_read", {"path": "docs/notes.md"}),
    ("file_read", {"path": "a.txt", "offset": 8192}),
    ("set_flags", {"names": ["a", "b"], "enabled": True}),
    ("set_flags", {"names": [], "enabled": False, "ratio": -0.5}),
    ("set_flags", {"names": ["x"], "enabled": True, "ratio": None}),
]


@pytest.mark.parametrize(("name", "args"), CALLS)
def test_every_well_formed_call_is_accepted_and_parses_back(
    accepts: Accepts, name: str, args: dict[str, Any]
) -> None:
    block = render_tool_call_block(name, args)
    assert accepts(grammar(), block)
    parsed = parse_tool_reply(block)
    assert [(call.name, call.args) for call in parsed.tool_calls] == [(name, args)]


@pytest.mark.parametrize(
    "reply",
    [
        '```tool\n{"tool": "sql", "args": {"sql": "SELECT 1"}}\n```',  # no such tool
        '```tool\n{"tool": "sql_query", "args": {}}\n```',  # a required argument missing
        '```tool\n{"tool": "sql_query", "args": {"sql": "SELECT 1", "db": "x"}}\n```',  # unknown
        '```tool\n{"tool": "file_read", "args": {"path": "a", "offset": "8"}}\n```',  # a type
        '```tool\n{"tool": "sql_query", "args": {"sql": "SELECT\n1"}}\n```',  # raw newline
        '```tool\n{"args": {"sql": "SELECT 1"}, "tool": "sql_query"}\n```',  # keys reordered
        '```tool\n{ "tool":"sql_query","args":{"sql": "SELECT 1"}}\n```',  # another envelope
        '```tool\n{"tool": "sql_query", "args": {"sql": "SELECT 1"}}\n```\nFINAL: 1',  # after
        'Sure!\n```tool\n{"tool": "sql_query", "args": {"sql": "SELECT 1"}}\n```',  # before
        '```json\n{"tool": "sql_query", "args": {"sql": "SELECT 1"}}\n```',  # another fence
        '{"tool": "sql_query", "args": {"sql": "SELECT 1"}}',  # no fence
        '```tool\n{"tool": "sql_query", "args": {"sql": "SELECT 1"}}',  # unclosed
        "The answer is 84.",  # no FINAL:
        "",
    ],
)
def test_a_malformed_or_impossible_reply_is_rejected(accepts: Accepts, reply: str) -> None:
    assert not accepts(grammar(), reply)


@pytest.mark.parametrize(
    "answer",
    ["FINAL: 84", "FINAL:84", "FINAL: Paris.\n\n- a list\n- of **things**.", "FINAL: use `x`"],
)
def test_an_answer_is_accepted_and_read_as_the_answer(accepts: Accepts, answer: str) -> None:
    assert accepts(grammar(), answer)
    assert parse_tool_reply(answer).final_answer == answer.removeprefix("FINAL:").strip()


@pytest.mark.parametrize(
    "answer",
    [
        'FINAL: ok\n```tool\n{"tool": "sql", "args": {}}\n```',
        'FINAL: ok {"tool": "sql", "args": {}}',
        'FINAL: ok <tool_call>{"name": "sql", "arguments": {}}</tool_call>',
        'FINAL: ok\n```json\n{"name": "sql", "arguments": {}}\n```',
    ],
)
def test_an_answer_cannot_smuggle_a_call_the_parser_would_run(
    accepts: Accepts, answer: str
) -> None:
    assert parse_tool_reply(answer).tool_calls  # what the grammar must keep out
    assert not accepts(grammar(), answer)


def test_without_the_answer_only_calls_are_accepted(accepts: Accepts) -> None:
    strict = grammar(allow_answer=False)
    assert not accepts(strict, "FINAL: 84")
    assert accepts(strict, render_tool_call_block("file_read", {"path": "a"}))


def test_with_no_tools_only_the_answer_is_accepted(accepts: Accepts) -> None:
    answer_only = grammar([], allow_answer=True)
    assert accepts(answer_only, "FINAL: 84")
    assert not accepts(answer_only, render_tool_call_block("file_read", {"path": "a"}))


def test_a_schema_beyond_the_converter_still_gets_a_name_checked_call(accepts: Accepts) -> None:
    odd = [{"name": "odd", "parameters": {"type": "object", "properties": {"x": {"type": "?"}}}}]
    assert accepts(grammar(odd), render_tool_call_block("odd", {"anything": [1, {"a": None}]}))
    assert not accepts(grammar(odd), render_tool_call_block("other", {}))


def test_a_tool_name_with_quotes_and_backslashes_is_matched_literally(accepts: Accepts) -> None:
    name = 'we"ird\\name'
    tools = [{"name": name, "parameters": {"type": "object", "properties": {}}}]
    assert accepts(grammar(tools), render_tool_call_block(name, {}))
    assert not accepts(grammar(tools), render_tool_call_block("weird", {}))


def test_grammar_needs_a_tool_or_the_answer() -> None:
    with pytest.raises(ValueError, match="at least one tool"):
        grammar([], allow_answer=False)


def test_the_grammar_text_is_stable_for_the_same_tools() -> None:
    assert grammar() == grammar(json.loads(json.dumps(TOOLS)))


@pytest.mark.parametrize(
    ("text", "forced"),
    [
        ("", ""),  # an answer or a call: nothing is certain yet
        ("F", "INAL:"),
        ("FINAL:", ""),
        ("`", '``tool\n{"tool": "'),
        ('```tool\n{"tool": "f', 'ile_read", "args": {'),
        ('```tool\n{"tool": "s', ""),  # sql_query or set_flags
        ('```tool\n{"tool": "se', 't_flags", "args": {'),
        ('```tool\n{"tool": "file_read", "args": {', ""),
        ("FINAL: 84", ""),
        ("Sure", ""),
    ],
)
def test_the_text_a_reply_must_continue_with(text: str, forced: str) -> None:
    assert reply_grammar().forced_after(text) == forced


def test_with_one_choice_the_whole_envelope_is_forced() -> None:
    assert reply_grammar(TOOLS[:1], allow_answer=False).forced_after("") == (
        '```tool\n{"tool": "sql_query", "args": {'
    )
    assert reply_grammar([], allow_answer=True).forced_after("") == "FINAL:"


def test_every_forced_start_is_a_start_the_grammar_accepts(accepts: Accepts) -> None:
    # A start is a prefix of a whole reply the grammar accepts.
    replies = [render_tool_call_block(name, args) for name, args in CALLS] + ["FINAL: 1"]
    for start in reply_grammar().starts:
        assert any(reply.startswith(start) and accepts(grammar(), reply) for reply in replies)


@pytest.mark.parametrize(
    ("sql", "accepted"),
    [
        ("SELECT `name` FROM t", True),
        ("SELECT 1 AS `a``b`", True),
        ("SELECT 1 -- ```", False),
        ("SELECT '```tool'", False),
    ],
)
def test_a_string_may_hold_backticks_but_never_a_fence(
    accepts: Accepts, sql: str, accepted: bool
) -> None:
    raw = '```tool\n{"tool": "sql_query", "args": {"sql": ' + json.dumps(sql) + "}}\n```"
    assert accepts(grammar(), raw) is accepted
    if accepted:
        assert [(c.name, c.args) for c in parse_tool_reply(raw).tool_calls] == [
            ("sql_query", {"sql": sql})
        ]


JOKE_SCHEMA = {
    "type": "object",
    "properties": {
        "setup": {"type": "string"},
        "punchline": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "rating": {"type": "integer"},
    },
    "required": ["setup", "rating"],
}


def json_grammar(schema: dict[str, Any]) -> str:
    from langchain_agent_rules.models._tool_grammar import json_reply_grammar

    return json_reply_grammar(schema).gbnf


@pytest.mark.parametrize(
    ("reply", "accepted"),
    [
        ('{"setup": "Why?", "rating": 3}', True),
        ('{"setup": "A ```fence``` is fine here", "rating": 0, "punchline": null}', True),
        ('{"setup": "caf\\u00e9 \\"quoted\\"", "rating": -2, "punchline": "Because."}', True),
        ('{"setup": "Why?", "punchline": "Because.", "rating": 3}', False),  # required keys first
        ('{"rating": 3}', False),  # a required key is missing
        ('{"setup": "Why?", "rating": "3"}', False),  # the wrong type
        ('{"setup": "Why?", "rating": 3, "extra": 1}', False),  # a key the schema lacks
        ('{"setup": "line\nbreak", "rating": 3}', False),  # a raw control character
        ('{"setup": "Why?", "rating": 3} and more', False),  # text after the object
        ('Sure! {"setup": "Why?", "rating": 3}', False),  # text before it
    ],
)
def test_a_json_schema_reply_is_exactly_one_object_of_the_schema(
    accepts: Accepts, reply: str, accepted: bool
) -> None:
    assert accepts(json_grammar(JOKE_SCHEMA), reply) is accepted
    if accepted:
        assert set(json.loads(reply)) >= {"setup", "rating"}


@pytest.mark.parametrize(
    ("reply", "accepted"),
    [
        ('{"setup": "Why?", "punchline": "Because."}', True),
        ('{"nested": {"list": [1, 2.5, true, null, "x"]}}', True),
        ("{}", True),
        ('["not", "an", "object"]', False),
        ('"a string"', False),
        ("{'single': 'quotes'}", False),
    ],
)
def test_json_mode_accepts_any_object_and_nothing_else(
    accepts: Accepts, reply: str, accepted: bool
) -> None:
    from langchain_agent_rules.models._structured_output import ANY_OBJECT

    assert accepts(json_grammar(ANY_OBJECT), reply) is accepted


def test_a_json_reply_starts_with_its_forced_brace() -> None:
    from langchain_agent_rules.models._tool_grammar import json_reply_grammar

    assert json_reply_grammar(JOKE_SCHEMA).forced_after("") == "{"
