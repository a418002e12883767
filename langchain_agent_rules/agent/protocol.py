"""Choose between native tool calling and the text protocol for one model.

``"native"`` binds the tools; ``"text"`` describes them in the system prompt. ``"auto"``
picks text for a model whose ``bind_tools`` is not implemented, asks an Ollama server
whether the model supports tools (once, on the first model call), and otherwise uses
native; if an Ollama call still fails with "does not support tools", it switches to
text for the rest of the agent's life and the failed call is retried.

`ChatLocalLlama` constrains its replies with a grammar either way: the text protocol calls
it through ``bind_text_protocol`` (``text_bound``), and its ``bind_tools`` shows the model
the same prompt under the same grammar. On the real-model tasks both protocols gave the
same replies token for token; ``"auto"`` keeps native for it, which streams answers
without the ``FINAL:`` marker and keeps each reply's ``usage_metadata`` in the history.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypeGuard

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from langchain_agent_rules.errors import AgentConfigurationError

if TYPE_CHECKING:
    from langchain_agent_rules.models.local import ChatLocalLlama

__all__ = ["PROTOCOLS", "Protocol", "ProtocolChoice"]

Protocol = Literal["native", "text"]
PROTOCOLS = ("auto", "native", "text")


def _is_ollama(model: BaseChatModel) -> bool:
    try:
        from langchain_ollama import ChatOllama
    except ImportError:  # pragma: no cover - langchain-ollama is a dependency
        return False
    return isinstance(model, ChatOllama)


def _is_local_llama(model: BaseChatModel) -> TypeGuard[ChatLocalLlama]:
    from langchain_agent_rules.models.local import ChatLocalLlama

    return isinstance(model, ChatLocalLlama)


class ProtocolChoice:
    """The protocol an agent uses with its model, and the model bound to its tools."""

    def __init__(self, model: BaseChatModel, tools: Sequence[BaseTool], requested: str) -> None:
        if requested not in PROTOCOLS:
            raise AgentConfigurationError(
                f"protocol={requested!r} is not supported; use one of: {', '.join(PROTOCOLS)}"
            )
        self.requested = requested
        self._model = model
        self._ask_ollama = False
        self.current: Protocol = "text" if requested == "text" else "native"
        self.bound: Runnable[LanguageModelInput, BaseMessage] = model
        # What the text protocol calls: the model itself, unless it can constrain its
        # replies to the protocol's shape for these tools.
        self.text_bound: Runnable[LanguageModelInput, BaseMessage] = (
            model.bind_text_protocol(tools) if tools and _is_local_llama(model) else model
        )
        if requested == "text" or not tools:
            return
        try:
            self.bound = model.bind_tools(list(tools))
        except NotImplementedError:
            if requested == "native":
                raise AgentConfigurationError(
                    f"protocol='native' needs tool calling, but {type(model).__name__}."
                    "bind_tools is not implemented; use protocol='text' or 'auto'"
                ) from None
            self.current = "text"
            return
        self._ask_ollama = requested == "auto" and _is_ollama(model)

    def resolve(self) -> Protocol:
        """The protocol for the next call; asks Ollama once when the choice is pending."""
        if self._ask_ollama:
            from langchain_ollama import ChatOllama

            from langchain_agent_rules.models.ollama import ollama_supports_tools

            self._ask_ollama = False
            assert isinstance(self._model, ChatOllama)
            if not ollama_supports_tools(self._model):
                self.current = "text"
        return self.current

    async def aresolve(self) -> Protocol:
        """Async `resolve`: the capability query runs in a thread."""
        if self._ask_ollama:
            return await asyncio.to_thread(self.resolve)
        return self.current

    def fall_back_to_text(self, error: BaseException) -> bool:
        """Switch to text when ``error`` says the Ollama model has no tool support."""
        if self.requested != "auto" or not _is_ollama(self._model):
            return False
        from langchain_agent_rules.models.ollama import is_tools_unsupported_error

        if not is_tools_unsupported_error(error):
            return False
        self.current = "text"
        return True
