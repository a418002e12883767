"""A llama.cpp GBNF grammar for the text protocol's two reply shapes, built from tool schemas.

A constrained reply is either ``FINAL:`` followed by the answer, or exactly one fenced
block::

    ```tool
    {"tool": "<one of the tools' names>", "args": {<that tool's arguments>}}
    ```

and nothing after it. The argument object follows the tool's JSON schema (its keys,
required keys and value types) through llama-cpp-python's JSON-schema converter. Strings
may not hold raw control characters (JSON forbids them, so `parse_tool_reply` could not
read them), and the answer may not hold what `parse_tool_reply` would take for a tool
call (a triple backtick, ``{`` or ``<``), so a wrong tool name is impossible by
construction.

The envelope around the arguments is written exactly as `render_tool_call_block` writes
it, so once a reply has started, the text up to the arguments is often the only one
possible (`ReplyGrammar.forced_after`): the sampler then appends it without asking the
model, one batch instead of a decode step per token.

A structured reply (`json_reply_grammar`) is one JSON object following a schema, through
the same converter, and nothing else.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ReplyGrammar", "json_reply_grammar", "tool_call_grammar"]

_ANSWER_START = "FINAL:"
_BLOCK_START = "```tool\n"

_ANSWER_RULES = r"""final-answer ::= "FINAL:" answer-piece* ("`" | "``")?
answer-piece ::= answer-char | "`" answer-char | "``" answer-char
answer-char ::= [^`{<\x00]"""
# llama-cpp-python's converter lets a JSON string hold raw control characters, and a
# triple backtick in a string would close the fence early for `parse_tool_reply`: a string
# here holds neither (one or two backticks in a row are fine: SQL quotes names with them).
_STRICT_CHAR = (
    r'char ::= [^"\\\x7F\x00-\x1F`] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
    "\n"
    r'string ::= "\"" string-piece* ("`" | "``")? "\"" space'
    "\n"
    r'string-piece ::= char | "`" char | "``" char'
)
_JSON_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_CHAR_RULE = re.compile(r"^char ::= .*$", re.MULTILINE)
_STRING_RULE = re.compile(r'^string ::= "\\"" char\* "\\"" space\n', re.MULTILINE)
_ANY_OBJECT: dict[str, Any] = {"type": "object"}


@dataclass(frozen=True)
class ReplyGrammar:
    """A reply's grammar (GBNF text) and the starts of the replies it allows."""

    gbnf: str
    starts: tuple[str, ...]
    """Each allowed reply shape's fixed start: ``FINAL:``, and for each tool its block up
    to the opening brace of the arguments."""

    def forced_after(self, text: str) -> str:
        """The text that every allowed reply beginning with ``text`` continues with."""
        rests = [start[len(text) :] for start in self.starts if start.startswith(text)]
        if not rests:
            return ""
        return _common_prefix(rests)


def tool_call_grammar(tools: Sequence[Mapping[str, Any]], *, allow_answer: bool) -> ReplyGrammar:
    """The grammar of a reply that calls one of ``tools`` or, when allowed, answers.

    ``tools`` are OpenAI function descriptions (``name`` and ``parameters``). With no
    tools the grammar allows only the answer.
    """
    if not tools and not allow_answer:
        raise ValueError("a grammar needs at least one tool or the answer")
    converter = _converter()
    calls = [
        _call_rule(converter, index, tool["name"], tool.get("parameters") or {})
        for index, tool in enumerate(tools)
    ]
    shapes = (["final-answer"] if allow_answer else []) + (["tool-block"] if calls else [])
    lines = [f"root ::= {' | '.join(shapes)}"]
    if allow_answer:
        lines.append(_ANSWER_RULES)
    if calls:
        lines.append(f'tool-block ::= {_literal(_BLOCK_START)} tool-call "\\n```"')
        lines.append(f"tool-call ::= {' | '.join(f'tool-call-{i}' for i in range(len(calls)))}")
        lines += calls
        rules = _STRING_RULE.sub("", converter.format_grammar())
        lines.append(_CHAR_RULE.sub(lambda _: _STRICT_CHAR, rules))
    starts = ([_ANSWER_START] if allow_answer else []) + [
        f"{_BLOCK_START}{_envelope(tool['name'])}{{" for tool in tools
    ]
    return ReplyGrammar("\n".join(lines) + "\n", tuple(starts))


def json_reply_grammar(schema: Mapping[str, Any]) -> ReplyGrammar:
    """The grammar of a reply that is one JSON object following ``schema`` and nothing else.

    ``{"type": "object"}`` allows any object (JSON mode). As in a tool call, strings hold
    no raw control characters, so ``json.loads`` reads every reply the grammar allows.
    """
    converter = _converter()
    root = _args_rule(converter, "reply", schema)
    rules = _CHAR_RULE.sub(lambda _: _JSON_CHAR, converter.format_grammar())
    return ReplyGrammar(f"root ::= {root}\n{rules}\n", ("{",))


def _envelope(tool_name: str) -> str:
    """A call's JSON up to its arguments, as `render_tool_call_block` writes it."""
    name = json.dumps(tool_name).replace("`", "\\u0060")
    return f'{{"tool": {name}, "args": '


def _call_rule(converter: Any, index: int, tool_name: str, parameters: Mapping[str, Any]) -> str:
    args_rule = _args_rule(converter, f"tool-{index}", parameters)
    return f'tool-call-{index} ::= {_literal(_envelope(tool_name))} {args_rule} "}}"'


def _args_rule(converter: Any, name: str, parameters: Mapping[str, Any]) -> str:
    """The rule for a tool's argument object.

    Any JSON object when the schema is beyond the converter (it asserts on what it does
    not know).
    """
    schema = dict(copy.deepcopy(parameters))
    schema.setdefault("type", "object")
    trial = _converter()
    try:
        trial.visit(trial.resolve_refs(copy.deepcopy(schema), name), f"{name}-args")
    except (AssertionError, KeyError, ValueError, TypeError, RecursionError):
        schema = _ANY_OBJECT
    return str(converter.visit(converter.resolve_refs(schema, name), f"{name}-args"))


def _converter() -> Any:
    from llama_cpp.llama_grammar import SchemaConverter

    return SchemaConverter(  # type: ignore[no-untyped-call]
        prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
    )


def _common_prefix(texts: list[str]) -> str:
    shortest = min(texts, key=len)
    for index, char in enumerate(shortest):
        if any(text[index] != char for text in texts):
            return shortest[:index]
    return shortest


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r") + '"'
