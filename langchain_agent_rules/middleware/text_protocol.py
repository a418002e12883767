"""`TextToolProtocolMiddleware`: `create_agent` with a model that cannot call tools natively.

The model never sees native tool schemas. Each model call gets the tools described in the
system prompt (`render_tools_prompt`), the history rendered as text (`to_text_messages`:
calls as fenced blocks, results as ``Observation:`` messages), and the reply is read with
`parse_tool_reply`. A reply with calls becomes an `AIMessage` with ``tool_calls``, so
`create_agent` runs its tools as usual; a final answer becomes the answer text. These are
the same functions `create_rules_agent` uses for its text protocol.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall
from langchain_core.tools import BaseTool

from langchain_agent_rules.agent.prompts import PARSE_ERROR
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware._system import with_section
from langchain_agent_rules.text_protocol import (
    ParsedReply,
    parse_tool_reply,
    render_tools_prompt,
    to_text_messages,
)

__all__ = ["MAX_PARSE_RETRIES", "TextToolProtocolMiddleware"]

MAX_PARSE_RETRIES = 2
"""How often one model call is retried when the reply holds only unreadable tool calls."""


class TextToolProtocolMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Let `create_agent` drive a model without native tool calling, through fenced JSON.

    The model is asked to reply either with one block

    .. code-block:: text

        ```tool
        {"tool": "<tool name>", "args": {...}}
        ```

    or with ``FINAL: <answer>``. The parser reads what small models really write (json
    fences, bare objects, ``<tool_call>`` tags, a missing brace). When a reply holds only
    unreadable calls, the model is told what was wrong (`PARSE_ERROR`) and asked again, at
    most `MAX_PARSE_RETRIES` times within the same model call; after that the reply's text
    is returned as the answer, so the run ends instead of looping. Structured output
    (``response_format``) and provider built-in tools (dicts) are not supported.

    Setup:
        .. code-block:: bash

            pip install "langchain-agent-rules[langchain]"

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules.middleware import TextToolProtocolMiddleware

            agent = create_agent(model, tools, middleware=[TextToolProtocolMiddleware()])
    """

    def __init__(self) -> None:
        super().__init__()
        self.tools = []

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Call the model through the text protocol and turn its reply into tool calls."""
        text_request = _text_request(request)
        retries: list[AnyMessage] = []
        while True:
            response = handler(text_request.override(messages=[*text_request.messages, *retries]))
            reply = _reply_of(response)
            parsed = parse_tool_reply(reply.text)
            if not _should_retry(parsed, retries):
                return _response(response, reply, parsed)
            retries += _retry_messages(reply, parsed)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async `wrap_model_call`."""
        text_request = _text_request(request)
        retries: list[AnyMessage] = []
        while True:
            messages = [*text_request.messages, *retries]
            response = await handler(text_request.override(messages=messages))
            reply = _reply_of(response)
            parsed = parse_tool_reply(reply.text)
            if not _should_retry(parsed, retries):
                return _response(response, reply, parsed)
            retries += _retry_messages(reply, parsed)


def _text_request(request: ModelRequest[Any]) -> ModelRequest[Any]:
    if request.response_format is not None:
        raise AgentConfigurationError(
            "TextToolProtocolMiddleware does not support response_format; "
            "create the agent without it"
        )
    tools = [tool for tool in request.tools if isinstance(tool, BaseTool)]
    if len(tools) != len(request.tools):
        raise AgentConfigurationError(
            "TextToolProtocolMiddleware can only describe BaseTool tools, not provider "
            "built-in tools given as dicts"
        )
    tools_prompt = render_tools_prompt(tools) if tools else ""
    return request.override(
        tools=[],
        system_message=with_section(request.system_message, tools_prompt),
        messages=cast("list[AnyMessage]", to_text_messages(request.messages)),
    )


def _reply_of(response: ModelResponse[Any]) -> AIMessage:
    for message in reversed(response.result):
        if isinstance(message, AIMessage):
            return message
    raise AgentConfigurationError("the model returned no AIMessage")  # pragma: no cover


def _should_retry(parsed: ParsedReply, retries: list[AnyMessage]) -> bool:
    unreadable_only = bool(parsed.errors) and not parsed.tool_calls
    return unreadable_only and len(retries) < 2 * MAX_PARSE_RETRIES


def _retry_messages(reply: AIMessage, parsed: ParsedReply) -> list[AnyMessage]:
    problems = "; ".join(error.problem for error in parsed.errors)
    return [
        AIMessage(content=reply.text),
        HumanMessage(content=PARSE_ERROR.format(problem=problems)),
    ]


def _response(
    response: ModelResponse[Any], reply: AIMessage, parsed: ParsedReply
) -> ModelResponse[Any]:
    if parsed.tool_calls:
        calls: list[ToolCall] = [
            {
                "name": call.name,
                "args": call.args,
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "tool_call",
            }
            for call in parsed.tool_calls
        ]
        message = reply.model_copy(update={"tool_calls": calls, "invalid_tool_calls": []})
    else:
        answer = parsed.final_answer if parsed.final_answer is not None else reply.text
        message = reply.model_copy(
            update={"content": answer, "tool_calls": [], "invalid_tool_calls": []}
        )
    return ModelResponse(result=[message], structured_response=response.structured_response)
