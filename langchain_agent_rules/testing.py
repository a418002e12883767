"""Test doubles for agents built with langchain-agent-rules.

`ScriptedChatModel` is a chat model that replays a fixed list of steps, so a test can
drive an agent through any path (tool calls, malformed replies, model errors) without a
real model. Unlike langchain-core's ``GenericFakeChatModel`` it has a working
``bind_tools``, it records every call it receives (with the tool schemas the model was
shown) and it streams: with a streaming consumer (``stream_mode="messages"``,
``model.stream``) each reply arrives in several chunks, word by word, its tool calls as
``tool_call_chunks`` in the last one.

Example:
    .. code-block:: python

        from langchain_core.messages import AIMessage
        from langchain_agent_rules.testing import ScriptedChatModel

        model = ScriptedChatModel(
            steps=[
                AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}]),
                "FINAL: 3",
            ]
        )
        agent = create_rules_agent(model, [add])
        agent.invoke({"messages": [("user", "What is 1 + 2?")]})
        assert model.calls[1].messages[-1].content == "3"
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

__all__ = ["ScriptExhaustedError", "ScriptedCall", "ScriptedChatModel", "ScriptedStep"]

ScriptedStep = AIMessage | str | BaseException
"""One scripted reply: an `AIMessage` (may carry ``tool_calls``), raw text, or an error to raise."""


class ScriptExhaustedError(AssertionError):
    """`ScriptedChatModel` was called more often than it has steps."""


@dataclass(frozen=True)
class ScriptedCall:
    """One call a `ScriptedChatModel` received: the messages and the bound tools.

    ``tools`` holds the tools' names, ``tool_schemas`` what the model was shown of them
    (OpenAI function format).
    """

    number: int
    messages: list[BaseMessage]
    tools: list[str] = field(default_factory=list)
    tool_schemas: list[dict[str, Any]] = field(default_factory=list)

    @property
    def system_prompt(self) -> str:
        """The text of the first message when it is a system message, else ``""``."""
        if self.messages and self.messages[0].type == "system":
            return self.messages[0].text
        return ""


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers with a fixed list of steps, one step per call.

    Steps are consumed in order across sync and async calls. Tool calls whose
    ``id`` is ``None`` get ``call_<n>``. A call after the last step raises `ScriptExhaustedError`
    naming the call number, so a test cannot pass by accident.

    Setup:
        Nothing to install; it lives in ``langchain_agent_rules.testing``.

    Instantiate:
        .. code-block:: python

            model = ScriptedChatModel(steps=["FINAL: 42"])

    Invoke:
        .. code-block:: python

            model.invoke("What is the answer?").content  # "FINAL: 42"
            model.calls[0].messages  # what the model received

    Tool calling:
        .. code-block:: python

            bound = model.bind_tools([my_tool])
            bound.invoke("...")
            model.calls[-1].tools  # ["my_tool"]
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    steps: list[Any] = Field(default_factory=list)
    """The replies, in order: `AIMessage`, ``str`` or an exception instance to raise."""

    _calls: list[ScriptedCall] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, steps: Sequence[ScriptedStep] = (), **kwargs: Any) -> None:
        super().__init__(steps=list(steps), **kwargs)
        for index, step in enumerate(self.steps):
            if not isinstance(step, AIMessage | str | BaseException):
                raise TypeError(
                    f"step {index} is a {type(step).__name__}; a step must be an AIMessage, "
                    "a str or an exception instance"
                )

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[ScriptedCall]:
        """Every call received so far, in order."""
        return list(self._calls)

    @property
    def remaining(self) -> int:
        """How many steps are left."""
        return len(self.steps) - len(self._calls)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools; each later call records their names in `ScriptedCall.tools`."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, **kwargs)

    def _next(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> AIMessage:
        schemas = list(kwargs.get("tools") or [])
        tools = [tool["function"]["name"] for tool in schemas]
        with self._lock:
            number = len(self._calls) + 1
            self._calls.append(ScriptedCall(number, list(messages), tools, schemas))
        if number > len(self.steps):
            last = messages[-1].text[:200] if messages else ""
            raise ScriptExhaustedError(
                f"ScriptedChatModel got call {number} but has only {len(self.steps)} "
                f"step(s); the last message was: {last!r}"
            )
        step = self.steps[number - 1]
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str):
            return AIMessage(content=step)
        calls = [
            {**call, "id": call.get("id") or f"call_{number}_{index}"}
            for index, call in enumerate(step.tool_calls)
        ]
        message: AIMessage = step.model_copy(update={"tool_calls": calls})
        return message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages, kwargs))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages, kwargs))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in _chunks(self._next(messages, kwargs)):
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in _chunks(self._next(messages, kwargs)):
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk


_PIECE = re.compile(r"\s*\S+|\s+")


def _chunks(message: AIMessage) -> list[ChatGenerationChunk]:
    """``message`` as streamed chunks: its text word by word, tool calls and usage last."""
    pieces = _PIECE.findall(message.text) if isinstance(message.content, str) else []
    chunks = [AIMessageChunk(content=piece, id=message.id) for piece in pieces]
    try:
        call_chunks = [
            tool_call_chunk(
                name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index
            )
            for index, call in enumerate(message.tool_calls)
        ]
    except (TypeError, ValueError, RecursionError) as error:
        raise TypeError(
            f"ScriptedChatModel cannot stream tool-call arguments that are not JSON: {error}"
        ) from None
    chunks.append(
        AIMessageChunk(
            content="" if pieces or isinstance(message.content, str) else message.content,
            id=message.id,
            tool_call_chunks=call_chunks,
            usage_metadata=message.usage_metadata,
        )
    )
    return [ChatGenerationChunk(message=chunk) for chunk in chunks]
