"""`ChatLocalLlama`: a GGUF model run in-process by llama.cpp, as a LangChain chat model.

The defaults are the ones the embedded 1.5B model needs to follow the agent's text tool
protocol: greedy decoding (temperature 0), no repeat penalty (with 1.1 it followed the
protocol in 0 tasks of 5), rope settings and chat template read from the GGUF file, a
4,096-token context and a fixed seed. A loaded model takes about a second and 2 GB, so it
is loaded once per process and shared by every `ChatLocalLlama` with the same file,
context size and thread count; calls to it are serialised because llama.cpp is not
reentrant. It has no native tool calling: `bind_tools` raises `NotImplementedError`, and
the rules agent drives it with its text protocol.

Setup:
    ``pip install "langchain-agent-rules[local]"`` (compiles llama-cpp-python, ~5 minutes).

Instantiate:
    .. code-block:: python

        from langchain_agent_rules.models.local import ChatLocalLlama

        model = ChatLocalLlama()  # the embedded Qwen2.5-Coder-1.5B-Instruct
        other = ChatLocalLlama(model_path="/models/any.gguf", n_threads=1)

Invoke:
    .. code-block:: python

        model.invoke("Say hello in French.").content
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, model_validator

from langchain_agent_rules.errors import ModelUnavailableError
from langchain_agent_rules.models._cpu_probe import ensure_llama_cpp_runs
from langchain_agent_rules.models.weights import LOCAL_EXTRA_HINT, embedded_model_path

__all__ = ["ChatLocalLlama", "default_thread_count"]

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def default_thread_count() -> int:
    """``min(2, cpu count)``: two threads are the sweet spot on a small idle machine."""
    return min(2, os.cpu_count() or 1)


class ChatLocalLlama(BaseChatModel):
    """A GGUF chat model run in-process by llama-cpp-python (the embedded model by default)."""

    model_path: str | None = None
    """The GGUF file; ``None`` means the embedded model, joined from its chunk packages."""
    n_ctx: int = Field(default=4096, gt=0)
    """The context window in tokens (prompt plus reply)."""
    n_threads: int = Field(default_factory=default_thread_count, gt=0)
    """CPU threads for prompt processing and generation."""
    temperature: float = Field(default=0.0, ge=0.0)
    """0 means greedy decoding: the same prompt always gets the same reply."""
    repeat_penalty: float = Field(default=1.0, gt=0.0)
    """1.0 means none; small models stop following a tool protocol with a penalty."""
    max_tokens: int = Field(default=512, gt=0)
    """The longest reply in tokens."""
    seed: int = 0
    """The sampling seed, fixed so runs repeat."""

    @model_validator(mode="after")
    def _resolve_model_file(self) -> ChatLocalLlama:
        _check_llama_cpp_installed()
        if self.model_path is None:
            self.model_path = str(embedded_model_path())
        elif not Path(self.model_path).is_file():
            raise ModelUnavailableError(
                f"no GGUF model file at {self.model_path}; give the path of a .gguf file "
                "(local:/path/model.gguf) or use the embedded model (local)"
            )
        return self

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "temperature": self.temperature,
            "repeat_penalty": self.repeat_penalty,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Not supported: the rules agent drives this model with its text tool protocol."""
        del tool_choice, kwargs
        names = ", ".join(convert_to_openai_tool(tool)["function"]["name"] for tool in tools)
        raise NotImplementedError(
            f"ChatLocalLlama has no native tool calling (asked to bind: {names}); "
            'use create_rules_agent(..., protocol="text") or "auto"'
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        loaded = _shared_model(self._model_file(), self.n_ctx, self.n_threads, self.seed)
        response = loaded.complete(
            [_to_llama_message(message) for message in messages],
            temperature=self.temperature,
            repeat_penalty=self.repeat_penalty,
            max_tokens=self.max_tokens,
            stop=stop or [],
            seed=self.seed,
        )
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        message = AIMessage(
            content=choice["message"].get("content") or "",
            usage_metadata=UsageMetadata(
                input_tokens=usage.get("prompt_tokens", 0),
                output_tokens=usage.get("completion_tokens", 0),
                total_tokens=usage.get("total_tokens", 0),
            ),
            response_metadata={
                "model_name": Path(self._model_file()).name,
                "finish_reason": choice.get("finish_reason"),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _model_file(self) -> str:
        assert self.model_path is not None  # set by the validator
        return self.model_path


@dataclass
class _LoadedModel:
    """One loaded `llama_cpp.Llama`, the lock that serialises it, and its last conversation."""

    llama: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    conversation: list[dict[str, str]] = field(default_factory=list)

    def complete(self, messages: list[dict[str, str]], **options: Any) -> dict[str, Any]:
        with self.lock:
            # llama.cpp reuses the cached prefix of the previous prompt, and a reused prefix
            # gives slightly different numbers than a fresh one; at temperature 0 that can
            # change a reply. Reuse it only when this call continues the previous call's
            # conversation (the steps of one agent run), so a conversation's replies never
            # depend on what ran before it.
            if messages[: len(self.conversation)] != self.conversation:
                self.llama.reset()
            self.conversation = messages
            return dict(self.llama.create_chat_completion(messages=messages, **options))


_LOADED: dict[tuple[str, int, int, int], _LoadedModel] = {}
_LOADING_LOCK = threading.Lock()


def _shared_model(path: str, n_ctx: int, n_threads: int, seed: int) -> _LoadedModel:
    """The process-wide model for these settings, loaded on first use."""
    key = (os.path.realpath(path), n_ctx, n_threads, seed)
    with _LOADING_LOCK:
        if key not in _LOADED:
            llama_cpp = _import_llama_cpp(path, n_threads)
            try:
                llama = llama_cpp.Llama(
                    model_path=path,
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    n_threads_batch=n_threads,
                    seed=seed,
                    verbose=False,
                )
            except ValueError as error:
                raise ModelUnavailableError(
                    f"llama.cpp cannot load {path}: {error}; is it a GGUF model file?"
                ) from None
            # Freed before interpreter shutdown: llama-cpp-python's __del__ at exit runs
            # after its C bindings are gone and prints a TypeError traceback.
            atexit.register(llama.close)
            _LOADED[key] = _LoadedModel(llama)
        return _LOADED[key]


def _check_llama_cpp_installed() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelUnavailableError(
            f"the local model needs llama-cpp-python; install it with {LOCAL_EXTRA_HINT}, "
            "or use an Ollama model (--model ollama:<name>)"
        )


def _import_llama_cpp(model_path: str, n_threads: int) -> Any:
    """Import llama.cpp once a child process has shown that this build runs here."""
    _check_llama_cpp_installed()
    ensure_llama_cpp_runs(model_path, n_threads)
    import llama_cpp

    return llama_cpp


def _to_llama_message(message: BaseMessage) -> dict[str, str]:
    role = message.role if isinstance(message, ChatMessage) else _ROLES.get(message.type, "user")
    return {"role": role, "content": message.text}
