"""`ToolProtocolMiddleware`: how the model calls tools, and every reply made safe to store.

``protocol="native"`` leaves tool calling to the model (`create_agent` binds the tools);
``"text"`` drives a model without native tool calling through fenced JSON: the tools are
described in the system prompt (`render_tools_prompt`), the history is shown as text
(`to_text_messages`: calls as canonical blocks, results as ``Observation:`` messages) and
the reply is read with `parse_tool_reply`; ``"auto"`` uses native calling unless the
model's ``bind_tools`` is not implemented or an Ollama server says the model has no tool
support (asked once per model; a "does not support tools" error also switches it to text
and the call is retried). The embedded `ChatLocalLlama` gets its text-protocol replies
constrained by a grammar to the tools' schemas.

Either way the reply passes `checked_reply`: a call with arguments no tool should get
(too large, too deep, lone surrogates, integers beyond 64 bits) and an unreadable call are
refused and answered with an ``ERROR:`` observation (statuses ``invalid_args`` and
``parse_error``), so nothing unsafe reaches the state or a tool, and the model is asked
again in the same model step. A reply without tool calls is the answer, ``FINAL:``
removed.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, cast

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware._replies import (
    checked_reply,
    from_text_reply,
    strip_final,
)
from langchain_agent_rules.middleware._step import (
    Call,
    ModelStep,
    StepMiddleware,
    TurnSteps,
    Work,
)
from langchain_agent_rules.middleware._system import with_section
from langchain_agent_rules.middleware.state import GuardState
from langchain_agent_rules.options import AgentOptions, ProtocolName
from langchain_agent_rules.text_protocol import render_tools_prompt, to_text_messages

__all__ = ["TEXT_REPLY_TAG", "TextToolProtocolMiddleware", "ToolProtocolMiddleware"]

TEXT_REPLY_TAG = "rules_agent:text_reply"
"""Tag of a model call whose reply follows the text protocol (its answer after ``FINAL:``)."""

Protocol = Literal["native", "text"]
_DEFAULTS = AgentOptions()


def _is_ollama(model: BaseChatModel) -> bool:
    from langchain_ollama import ChatOllama

    return isinstance(model, ChatOllama)


def _is_local_llama(model: BaseChatModel) -> bool:
    from langchain_agent_rules.models.local import ChatLocalLlama

    return isinstance(model, ChatLocalLlama)


class ToolProtocolMiddleware(StepMiddleware[GuardState]):
    """Call tools natively or through fenced JSON, and make every reply safe to store.

    Setup:
        .. code-block:: bash

            pip install langchain-agent-rules

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules.middleware import ToolProtocolMiddleware

            agent = create_agent(model, tools, middleware=[ToolProtocolMiddleware("auto")])

    Put it last among this package's middleware, so the others see parsed replies.
    Structured output (``response_format``) and provider built-in tools (dicts) need
    native tool calling.
    """

    state_schema = GuardState

    def __init__(
        self,
        protocol: ProtocolName = _DEFAULTS.protocol,
        max_argument_bytes: int = _DEFAULTS.max_argument_bytes,
    ) -> None:
        options = AgentOptions(protocol=protocol, max_argument_bytes=max_argument_bytes)
        super().__init__()
        self.protocol: ProtocolName = options.protocol
        self.max_argument_bytes = options.max_argument_bytes
        self.tools = []
        self._chosen: dict[int, Protocol] = {}

    # --- choosing the protocol -------------------------------------------------------

    def _choose(self, request: ModelRequest[Any]) -> Protocol:
        if self.protocol != "auto":
            return self.protocol
        model = request.model
        if id(model) not in self._chosen:
            self._chosen[id(model)] = self._probe(model, request)
        return self._chosen[id(model)]

    @staticmethod
    def _probe(model: BaseChatModel, request: ModelRequest[Any]) -> Protocol:
        tools = [t for t in request.tools if isinstance(t, BaseTool)]
        try:
            model.bind_tools(tools)
        except NotImplementedError:
            return "text"
        if _is_ollama(model):
            from langchain_agent_rules.models.ollama import ollama_supports_tools

            return "native" if ollama_supports_tools(model) else "text"  # type: ignore[arg-type]
        return "native"

    def _falls_back(self, request: ModelRequest[Any], error: Exception) -> bool:
        """Whether ``error`` says the Ollama model has no tools (then it switches to text)."""
        if self.protocol != "auto" or not _is_ollama(request.model):
            return False
        from langchain_agent_rules.models.ollama import is_tools_unsupported_error

        if not is_tools_unsupported_error(error):
            return False
        self._chosen[id(request.model)] = "text"
        return True

    # --- one model call ----------------------------------------------------------------

    def _text_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if request.response_format is not None:
            raise AgentConfigurationError(
                "the text tool protocol does not support response_format; use "
                "protocol='native' with a model that calls tools"
            )
        tools = [tool for tool in request.tools if isinstance(tool, BaseTool)]
        if len(tools) != len(request.tools):
            raise AgentConfigurationError(
                "the text tool protocol can only describe BaseTool tools, not provider "
                "built-in tools given as dicts"
            )
        settings = dict(request.model_settings)
        if tools and _is_local_llama(request.model):
            # The embedded model constrains its reply to the protocol's shapes.
            settings["text_protocol_tools"] = [
                convert_to_openai_tool(tool)["function"] for tool in tools
            ]
        return request.override(
            tools=[],
            tool_choice=None,
            model_settings=settings,
            system_message=with_section(
                request.system_message, render_tools_prompt(tools) if tools else ""
            ),
            messages=cast("list[AnyMessage]", to_text_messages(request.messages)),
        )

    def _plan(
        self, request: ModelRequest[Any], step: ModelStep
    ) -> tuple[Protocol | None, ModelRequest[Any]]:
        """The protocol of this call (None: not a turn) and the request to send."""
        if step.purpose != "turn":
            return None, request
        if request.tools:
            protocol = self._choose(request)
        else:
            protocol = "text" if self.protocol == "text" else "native"
        return protocol, (self._text_request(request) if protocol == "text" else request)

    def _reply(
        self, protocol: Protocol | None, response: ModelResponse[Any], step: ModelStep
    ) -> ModelResponse[Any]:
        reply = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
        if reply is None:
            return response
        if protocol is None:
            return response  # a summary, revision or review: its caller reads the answer
        if protocol == "text":
            reply = from_text_reply(reply)
        elif not reply.tool_calls and not reply.invalid_tool_calls:
            reply = strip_final(reply)
        checked, refusals = checked_reply(reply, self.max_argument_bytes)
        for refusal in refusals:
            step.refuse(refusal)
        others = [m for m in response.result if not isinstance(m, AIMessage)]
        return ModelResponse(
            result=[*others, checked], structured_response=response.structured_response
        )

    def _turn(self, request: ModelRequest[Any], step: ModelStep) -> TurnSteps:
        if self.protocol == "auto" and request.tools and id(request.model) not in self._chosen:
            # Asking an Ollama server blocks: an async run does it off the event loop.
            yield Work(
                lambda: self._choose(request), lambda: asyncio.to_thread(self._choose, request)
            )
        protocol, sent = self._plan(request, step)
        try:
            response = yield Call(sent, tags=(TEXT_REPLY_TAG,) if protocol == "text" else ())
        except Exception as error:
            if protocol != "native" or not self._falls_back(request, error):
                raise
            protocol, sent = self._plan(request, step)
            response = yield Call(sent, tags=(TEXT_REPLY_TAG,))
        return self._reply(protocol, response, step)


class TextToolProtocolMiddleware(ToolProtocolMiddleware):
    """`ToolProtocolMiddleware` that always uses the fenced-JSON text protocol.

    The model is asked to reply either with one block

    .. code-block:: text

        ```tool
        {"tool": "<tool name>", "args": {...}}
        ```

    or with ``FINAL: <answer>``. The parser reads what small models really write (json
    fences, bare objects, ``<tool_call>`` tags, a missing brace); an unreadable call is
    answered with what was wrong and the model is asked again.

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules.middleware import TextToolProtocolMiddleware

            agent = create_agent(model, tools, middleware=[TextToolProtocolMiddleware()])
    """

    def __init__(self, max_argument_bytes: int = _DEFAULTS.max_argument_bytes) -> None:
        super().__init__("text", max_argument_bytes)
