"""A model's reply as the agent stores it: one conversion for both tool protocols.

`from_text_reply` reads a text-protocol reply (`parse_tool_reply`) into an `AIMessage`
with real ``tool_calls`` (fresh ids from `new_call_id`), ``invalid_tool_calls`` for
unreadable blocks, or the answer as its content. `checked_reply` then makes any reply
safe to store and run: a call whose arguments `argument_problem` refuses (too large, too
deep, lone surrogates, integers beyond 64 bits) and every unreadable call become a
`Refusal` the model is told about; text loses its lone surrogates; names and ids are
cut to a sane length. `answer_text` is the answer in a reply without tool calls.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall

from langchain_agent_rules.middleware._arguments import argument_problem, clean_text
from langchain_agent_rules.middleware._step import Refusal
from langchain_agent_rules.middleware.prompts import INVALID_ARGS, PARSE_ERROR
from langchain_agent_rules.text_protocol import extract_answer, new_call_id, parse_tool_reply

__all__ = ["answer_text", "checked_reply", "from_text_reply", "strip_final"]

_MAX_NAME_CHARS = 200


def _short(text: str | None) -> str:
    return "" if text is None else clean_text(text)[:_MAX_NAME_CHARS]


def answer_text(reply: AIMessage) -> str:
    """The answer a reply without tool calls gives: ``FINAL:`` and tool blocks removed."""
    return clean_text(extract_answer(reply.text))


def strip_final(reply: AIMessage) -> AIMessage:
    """A native reply without a leading ``FINAL:`` (its text is otherwise kept as written)."""
    text = reply.text.strip()
    if text[:6].upper() != "FINAL:":
        return reply
    return reply.model_copy(update={"content": text[6:].strip()})


def from_text_reply(reply: AIMessage) -> AIMessage:
    """A text-protocol reply as a protocol-neutral message (only the parsed calls kept)."""
    parsed = parse_tool_reply(reply.text)
    if parsed.final_answer is not None:
        return reply.model_copy(
            update={"content": parsed.final_answer, "tool_calls": [], "invalid_tool_calls": []}
        )
    calls: list[ToolCall] = [
        {"name": call.name, "args": call.args, "id": new_call_id(), "type": "tool_call"}
        for call in parsed.tool_calls
    ]
    invalid: list[InvalidToolCall] = [
        {
            "name": None,
            "args": error.raw,
            "id": new_call_id(),
            "error": error.problem,
            "type": "invalid_tool_call",
        }
        for error in parsed.errors
    ]
    return reply.model_copy(
        update={"content": "", "tool_calls": calls, "invalid_tool_calls": invalid}
    )


def checked_reply(reply: AIMessage, max_argument_bytes: int) -> tuple[AIMessage, list[Refusal]]:
    """``reply`` safe to store, and the calls refused for their arguments or form."""
    calls: list[ToolCall] = []
    refusals: list[Refusal] = []
    for call in reply.tool_calls:
        name, call_id = _short(call["name"]), _short(call["id"]) or new_call_id()
        problem = argument_problem(call["args"], max_argument_bytes)
        if problem is None:
            calls.append({**call, "name": name, "id": call_id})
        else:
            observation = INVALID_ARGS.format(tool=name, message=problem)
            refusals.append(Refusal(call_id, name, {}, observation, "invalid_args"))
    invalid: list[InvalidToolCall] = []
    for bad in reply.invalid_tool_calls:
        call_id = _short(bad.get("id")) or new_call_id()
        raw = bad.get("args")
        problem = clean_text(bad.get("error") or "the arguments are not valid JSON")
        name = _short(bad.get("name"))
        if name and raw is None:
            status, observation = "invalid_args", INVALID_ARGS.format(tool=name, message=problem)
        else:
            status, observation = "parse_error", PARSE_ERROR.format(problem=problem)
        text = None if raw is None else clean_text(raw[: max_argument_bytes + 1])
        invalid.append({**bad, "name": name or None, "args": text, "id": call_id, "error": problem})
        refusals.append(Refusal(call_id, name, {}, observation, status))  # type: ignore[arg-type]
    content = reply.content
    if isinstance(content, str):
        content = clean_text(content)
    checked = reply.model_copy(
        update={"content": content, "tool_calls": calls, "invalid_tool_calls": invalid}
    )
    return checked, refusals
