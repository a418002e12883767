"""The text tool protocol, for models without native tool calling.

The tools are described in the system prompt (`render_tools_prompt`), the model replies
with a fenced ```` ```tool ```` block holding ``{"tool": ..., "args": {...}}`` or with a
final answer, and `parse_tool_reply` reads what small models really write: ```` ```json ````
fences, fences without a newline, bare JSON objects, ``name``/``arguments`` keys,
``<tool_call>`` tags, trailing commas, single quotes and a missing opening brace.
`to_text_messages` turns a protocol-neutral history (``AIMessage.tool_calls`` plus
``ToolMessage``) into what a text-protocol model reads: the parsed call as a canonical
block (never the model's prose around it) and each turn's observations as one user
message that starts with ``Observation:``.

The parser is linear in the reply's length (every pattern scans each character a bounded
number of times), and hostile replies end as a `ParsedError`, never an exception: calls
nested deeper than `MAX_JSON_NESTING`, numbers Python will not read, escaped lone
surrogates and Python values JSON cannot hold (sets, bytes) are unreadable calls.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

__all__ = [
    "MAX_JSON_NESTING",
    "OBSERVATION_MESSAGE",
    "OBSERVATION_PART",
    "TEXT_PROTOCOL_INSTRUCTIONS",
    "TOOL_ARGUMENT_LINE",
    "TOOL_LINE",
    "ParsedError",
    "ParsedReply",
    "ParsedToolCall",
    "extract_answer",
    "new_call_id",
    "parse_tool_reply",
    "render_tool_call_block",
    "render_tools_prompt",
    "to_text_messages",
]

# Model-facing text of the protocol: named, and tested word for word.
TOOL_LINE = "- {name}: {description}"
TOOL_ARGUMENT_LINE = "    {name} ({type}, {required}){description}"
TEXT_PROTOCOL_INSTRUCTIONS = """You can call these tools:
{tools}

Tools are optional: if you can answer without one, answer directly.
To call a tool, reply with exactly one block like this and nothing after it:
```tool
{{"tool": "<tool name>", "args": {{"<argument>": <value>}}}}
```
When you know the answer, reply with FINAL: followed by the answer."""

# The task is restated after each observation: without it, the embedded 1.5B model answered
# the first half of a two-step task ("who owns the release?") and never took the second step.
OBSERVATION_MESSAGE = (
    "Observation:\n{observations}\n\n"
    "The task: {task}\n"
    "If these observations answer the whole task, reply with FINAL: followed by your answer. "
    "Otherwise call one more tool."
)
OBSERVATION_PART = "[{tool}]\n{observation}"

_FENCE_OPENING = re.compile(r"```[ \t]*([A-Za-z_-]*)[ \t]*\n?")
_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL | re.IGNORECASE)
_FINAL = re.compile(r"(?:\*\*)?\bfinal(?:[ _]answer)?\b(?:\*\*)?\s*:\s*(?:\*\*)?", re.IGNORECASE)
_TOOL_FENCES = {"tool", "tool_call", "tool-call", "tool_code"}
_JSON_FENCES = {"", "json", "json5", "jsonc", "javascript", "js"}
# Search-only patterns: an opening quote before a key changes nothing, so none is matched.
_CALL_KEY = re.compile(r"""(?:tool|tool_name|function)["']?\s*:""")
_NAME_KEY = re.compile(r"""name["']?\s*:""")
_ARGS_KEY = re.compile(r"""(?:arguments|args|parameters)["']?\s*:""")
_BARE_START = re.compile(r"""\{\s*["']?(?:tool|tool_name|name|function)["']?\s*:""")
_LEADING_KEY = re.compile(r"""["']\w+["']\s*:""")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_INNER_FENCE = re.compile(r"```[A-Za-z_-]*")
_NAME_KEYS = ("tool", "tool_name", "name")
_ARGS_KEYS = ("args", "arguments", "parameters", "input")
_JSON_WORDS = {"true": "True", "false": "False", "null": "None"}
_JSON_SCALARS = (str, int, float, bool, type(None))
_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_JSON_NESTING = 64
"""The deepest a tool call's JSON may nest (objects and lists); deeper calls are unreadable."""
_MAX_PYTHON_LITERAL_CHARS = 20_000  # the Python-quoting fallback tokenises in pure Python
TOO_DEEP = f"the block nests deeper than {MAX_JSON_NESTING} levels"
NUMBER_TOO_LONG = "the block has a number too long to read"
LONE_SURROGATE = "the block has a lone surrogate ({surrogate}), which is not valid text"
NOT_JSON_VALUE = "the block is not valid JSON (it holds a Python {kind})"


@dataclass(frozen=True)
class ParsedToolCall:
    """A tool call read from a reply: the tool's name, its arguments and the raw block."""

    name: str
    args: dict[str, Any]
    raw: str


@dataclass(frozen=True)
class ParsedError:
    """A reply part that tried to call a tool but could not be read, and why."""

    problem: str
    raw: str


@dataclass(frozen=True)
class ParsedReply:
    """What a text-protocol reply holds.

    ``final_answer`` is set only when the reply has neither a tool call nor a malformed
    attempt at one; it has ``FINAL:`` and the surrounding whitespace stripped.
    """

    tool_calls: tuple[ParsedToolCall, ...] = ()
    errors: tuple[ParsedError, ...] = ()
    final_answer: str | None = None


def new_call_id() -> str:
    """A fresh id for a tool call read from text: ``call_`` and 24 hex digits."""
    return f"call_{uuid.uuid4().hex[:24]}"


class _Unreadable(ValueError):
    """A block that tries to be a tool call but cannot be read."""


def parse_tool_reply(text: str) -> ParsedReply:
    """Read the tool calls, malformed attempts or final answer in a model's reply."""
    calls: list[ParsedToolCall] = []
    seen: set[str] = set()
    errors: list[ParsedError] = []
    for _start, _end, body in _call_segments(text):
        try:
            call = _to_call(_decode(body), body)
        except _Unreadable as problem:
            errors.append(ParsedError(str(problem), body.strip()))
            continue
        # Checked JSON values have string keys only, so the sorted dump is their identity.
        identity = json.dumps([call.name, call.args], sort_keys=True, ensure_ascii=False)
        if identity not in seen:
            seen.add(identity)
            calls.append(call)
    if calls or errors:
        return ParsedReply(tuple(calls), tuple(errors))
    return ParsedReply(final_answer=_answer(text, []))


def extract_answer(text: str) -> str:
    """The answer in ``text``: tool-call blocks removed, text after ``FINAL:`` when present."""
    return _answer(text, _call_segments(text))


def _answer(text: str, segments: list[tuple[int, int, str]]) -> str:
    kept: list[str] = []
    position = 0
    for start, end, _body in segments:
        kept.append(text[position:start])
        position = end
    text = "".join(kept) + text[position:]
    marker = _FINAL.search(text)
    if marker:
        text = text[marker.end() :]
    text = text.strip()
    # "FINAL: 3 active users**" (a bold marker opened before FINAL:): drop the unpaired one.
    if text.endswith("**") and text.count("**") % 2 == 1:
        text = text[:-2].rstrip()
    return text


def _call_segments(text: str) -> list[tuple[int, int, str]]:
    """The spans meant as tool calls: (start, end, body), in order and not overlapping.

    ``tool`` fences and ``<tool_call>`` tags always are; a JSON fence or a bare JSON
    object only when it has a ``tool`` key or both ``name`` and ``arguments``, so JSON
    data in a final answer stays an answer. A fence that starts inside a tag belongs to
    the tag, and a tag that starts inside a call's fence belongs to the fence.
    """
    tags = [
        (match.start(), match.end(), _INNER_FENCE.sub("", match.group(1)))
        for match in _TAG.finditer(text)
    ]
    fences = [
        (start, end, body)
        for start, end, language, body in _fences(text)
        if language in _TOOL_FENCES or (language in _JSON_FENCES and _looks_like_call(body))
    ]
    segments: list[tuple[int, int, str]] = []
    for segment in sorted(tags + fences):
        if not segments or segment[0] >= segments[-1][1]:
            segments.append(segment)
    if not segments:
        bare = _BARE_START.search(text)
        if bare and _looks_like_call(text[bare.start() :]):
            segments.append((bare.start(), len(text), text[bare.start() :]))
    return segments


def _fences(text: str) -> Iterator[tuple[int, int, str, str]]:
    """Each fenced block: (start, end, language in lower case, body), an unclosed one too."""
    start = text.find("```")
    while start != -1:
        opening = _FENCE_OPENING.match(text, start)
        assert opening is not None  # it matches any three backticks
        close = text.find("```", opening.end())
        end = len(text) if close == -1 else close + 3
        yield start, end, opening.group(1).lower(), text[opening.end() : end - 3 * (close != -1)]
        start = -1 if close == -1 else text.find("```", end)


def _looks_like_call(body: str) -> bool:
    """A ``tool`` key, or a ``name`` key followed by an ``arguments`` key (one pass each)."""
    if _CALL_KEY.search(body):
        return True
    name = _NAME_KEY.search(body)
    return bool(name and _ARGS_KEY.search(body, name.end()))


def _decode(body: str) -> Any:
    """Decode a JSON object leniently: trailing commas, single quotes, a missing brace."""
    text = body.strip()
    if not text:
        raise _Unreadable("the block is empty")
    candidate = "{" + text if _LEADING_KEY.match(text) else text
    missing = candidate.count("{") - candidate.count("}")
    variants = [candidate, _TRAILING_COMMA.sub(r"\1", candidate)]
    if missing > 0:
        variants += [variant + "}" * missing for variant in variants]
    first_error: json.JSONDecodeError | None = None
    for variant in variants:
        try:
            value = json.JSONDecoder().raw_decode(variant)[0]
        except json.JSONDecodeError as error:
            first_error = first_error or error
            continue
        except RecursionError:
            raise _Unreadable(TOO_DEEP) from None
        except ValueError:  # an integer past Python's limit of 4,300 digits
            raise _Unreadable(NUMBER_TOO_LONG) from None
        return _checked(value)
    # Python quoting tolerates trailing commas itself: only a missing brace needs a variant.
    for variant in [candidate] + ([candidate + "}" * missing] if missing > 0 else []):
        literal = _python_literal(variant)
        if literal is not None:
            return _checked(literal)
    assert first_error is not None
    raise _Unreadable(
        f"the block is not valid JSON ({first_error.msg} at line {first_error.lineno} "
        f"column {first_error.colno})"
    )


def _checked(value: Any) -> Any:
    """``value`` when it nests at most `MAX_JSON_NESTING` deep and holds only valid JSON.

    Walks iteratively, so any depth is safe to inspect; raises `_Unreadable` otherwise.
    """
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, dict | list):
            if depth == MAX_JSON_NESTING:
                raise _Unreadable(TOO_DEEP)
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, str):
                        kind = f"{type(key).__name__} key"
                        raise _Unreadable(NOT_JSON_VALUE.format(kind=kind))
                    _check_text(key)
            children: Iterable[Any] = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
        elif not isinstance(item, _JSON_SCALARS):
            raise _Unreadable(NOT_JSON_VALUE.format(kind=type(item).__name__))
    return value


def _check_text(text: str) -> None:
    if not text.isascii():
        surrogate = _SURROGATE.search(text)
        if surrogate:
            shown = surrogate.group().encode("utf-8", "backslashreplace").decode()
            raise _Unreadable(LONE_SURROGATE.format(surrogate=shown))


def _python_literal(text: str) -> Any:
    """Read JSON-like text written with Python quoting, or return None."""
    if len(text) > _MAX_PYTHON_LITERAL_CHARS:
        return None
    try:
        tokens = [
            (token.type, _JSON_WORDS.get(token.string, token.string))
            if token.type == tokenize.NAME
            else (token.type, token.string)
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
        ]
        value = ast.literal_eval(tokenize.untokenize(tokens).strip())
    except (ValueError, TypeError, SyntaxError, tokenize.TokenError, MemoryError, RecursionError):
        # TypeError: a set or dict key that is not hashable, such as {{}} or {[1]: 2}.
        return None
    return value if isinstance(value, dict) else None


def _to_call(value: Any, raw: str) -> ParsedToolCall:
    if not isinstance(value, dict):
        raise _Unreadable(
            f'the block must be a JSON object with "tool" and "args", not a {_json_type(value)}'
        )
    if isinstance(value.get("function"), dict):
        value = value["function"]
    name_key = next((key for key in _NAME_KEYS if key in value), None)
    name = value.get(name_key) if name_key else None
    if not isinstance(name, str) or not name.strip():
        raise _Unreadable('the block has no "tool" name')
    args_key = next((key for key in _ARGS_KEYS if key in value), None)
    if args_key is None and name_key == "name":
        raise _Unreadable('the block has no "args"')
    if args_key is None:
        # {"tool": "x", "path": "a.txt"}: small models sometimes flatten the arguments.
        args: Any = {k: v for k, v in value.items() if k not in _NAME_KEYS}
    else:
        args = value[args_key]
    if isinstance(args, str):
        args = _decode(args) if args.strip() else {}
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise _Unreadable(f'"args" must be a JSON object, not a {_json_type(args)}')
    return ParsedToolCall(name.strip(), args, raw.strip())


def _json_type(value: Any) -> str:
    names = {list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), "null" if value is None else type(value).__name__)


def render_tool_call_block(name: str, args: dict[str, Any]) -> str:
    r"""The canonical fenced block for one tool call, as the prompt asks for it.

    A backtick is written as ``\u0060``, so a value holding a triple backtick cannot
    close the fence early (JSON reads the escape back as the backtick).
    """
    payload = json.dumps({"tool": name, "args": args}, ensure_ascii=False)
    escaped = payload.replace("`", "\\u0060")
    return f"```tool\n{escaped}\n```"


def render_tools_prompt(tools: Sequence[BaseTool]) -> str:
    """Describe ``tools`` (name, description, typed arguments) and how to call them."""
    lines: list[str] = []
    for tool in tools:
        function = convert_to_openai_tool(tool)["function"]
        description = " ".join(str(function.get("description", "")).split())
        lines.append(TOOL_LINE.format(name=function["name"], description=description))
        parameters = function.get("parameters", {})
        required = set(parameters.get("required", ()))
        for arg_name, schema in parameters.get("properties", {}).items():
            arg_description = schema.get("description")
            lines.append(
                TOOL_ARGUMENT_LINE.format(
                    name=arg_name,
                    type=_schema_type(schema),
                    required="required" if arg_name in required else "optional",
                    description=f": {arg_description}" if arg_description else "",
                )
            )
    return TEXT_PROTOCOL_INSTRUCTIONS.format(tools="\n".join(lines))


def _schema_type(schema: dict[str, Any]) -> str:
    if "type" in schema:
        kind = schema["type"]
        if kind == "array" and isinstance(schema.get("items"), dict):
            return f"array of {_schema_type(schema['items'])}"
        return "|".join(kind) if isinstance(kind, list) else str(kind)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return "|".join(_schema_type(option) for option in options)
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(value) for value in schema["enum"])
    return "any"


def to_text_messages(messages: Iterable[BaseMessage]) -> list[BaseMessage]:
    """Render a protocol-neutral history the way a text-protocol model reads it."""
    rendered: list[BaseMessage] = []
    pending: list[ToolMessage] = []
    task = ""
    for message in messages:
        if isinstance(message, ToolMessage):
            pending.append(message)
            continue
        if pending:
            rendered.append(_observation_message(pending, task))
            pending = []
        if isinstance(message, HumanMessage):
            task = message.text
        if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            blocks = [render_tool_call_block(c["name"], c["args"]) for c in message.tool_calls]
            blocks += [_invalid_block(c) for c in message.invalid_tool_calls]
            rendered.append(AIMessage(content="\n".join(blocks)))
        else:
            rendered.append(message)
    if pending:
        rendered.append(_observation_message(pending, task))
    return rendered


def _invalid_block(call: InvalidToolCall) -> str:
    """A refused call as the model wrote it: its block when it named a tool, else its text."""
    raw = str(call.get("args") or "")
    name = call.get("name")
    if name:
        try:
            args = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(args, dict):
            return render_tool_call_block(name, args)
    return raw


def _observation_message(results: list[ToolMessage], task: str) -> HumanMessage:
    observations: str
    if len(results) == 1:
        observations = results[0].text
    else:
        observations = "\n\n".join(
            OBSERVATION_PART.format(tool=result.name or "tool", observation=result.text)
            for result in results
        )
    return HumanMessage(content=OBSERVATION_MESSAGE.format(observations=observations, task=task))
