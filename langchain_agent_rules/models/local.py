"""`ChatLocalLlama`: a GGUF model run in-process by llama.cpp, as a LangChain chat model.

The defaults are the ones the embedded 1.5B model needs to follow the agent's text tool
protocol: greedy decoding (temperature 0), no repeat penalty (with 1.1 it followed the
protocol in 0 tasks of 5), rope settings and chat template read from the GGUF file, a
4,096-token context and a fixed seed. A loaded model takes about a second and 2 GB, so it
is loaded once per process and shared by every `ChatLocalLlama` with the same file,
context size, thread count and seed; calls to it are serialised because llama.cpp is not
reentrant, and async calls run in a worker thread, so the event loop keeps running.

The evaluated state of a system message (prompt, rules and tools) is kept in RAM (least
recently used first out, at most `PREFIX_CACHE_BYTES`) and on disk (``prefix_cache_dir``,
at most `PREFIX_STORE_BYTES`, see ``_prefix_store``) and restored for every conversation
that starts with it, in this process or a later one; replies stay exactly those of a
fresh evaluation (see ``_llama_runner``). ``usage_metadata`` gives the whole prompt as
``input_tokens`` and the prompt tokens not evaluated by this call as
``input_token_details["cache_read"]``; ``response_metadata["forced_tokens"]`` says how
many of the ``output_tokens`` the grammar forced (appended without a decode step of
their own).

Replies to bound tools (`bind_tools`, or `bind_text_protocol` for the rules agent's text
protocol) are constrained by a llama.cpp grammar to ``FINAL: <answer>`` or exactly one
call of a bound tool with the argument keys and types of its schema: a call the parser
cannot read, or of a tool that does not exist, cannot be generated. Structured output
is a forced tool call, or (``method="json_schema"`` / ``"json_mode"``) a reply that is the
JSON object itself, by grammar. It passes LangChain's standard chat model tests.

Setup:
    the ``local`` extra, with llama.cpp compiled for the instruction sets this machine's OS
    enabled (about 5 minutes): the command is `LOCAL_EXTRA_HINT` (``models/weights.py``),
    also named by every error that asks for the extra.

Instantiate:
    .. code-block:: python

        from langchain_agent_rules.models.local import ChatLocalLlama

        model = ChatLocalLlama()  # the embedded Qwen2.5-Coder-1.5B-Instruct
        other = ChatLocalLlama(model_path="/models/any.gguf", n_threads=1)

Invoke:
    .. code-block:: python

        model.invoke("Say hello in French.").content
        for chunk in model.stream("Count to five."):
            print(chunk.content, end="")

Tool calling:
    .. code-block:: python

        reply = model.bind_tools([sql_query]).invoke("How many customers are active?")
        reply.tool_calls  # [{"name": "sql_query", "args": {"sql": "SELECT ..."}, ...}]

Structured output:
    .. code-block:: python

        joke = model.with_structured_output(Joke, method="json_schema").invoke("A joke.")
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.base import LangSmithParams
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    SystemMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, model_validator

from langchain_agent_rules.errors import AgentConfigurationError, ModelUnavailableError
from langchain_agent_rules.models._llama_runner import CallUsage, LlamaRunner, Sampling
from langchain_agent_rules.models._prefix_store import PrefixStore
from langchain_agent_rules.models._reply_stream import StopScanner, ToolReplyStream
from langchain_agent_rules.models._structured_output import json_structured_output
from langchain_agent_rules.models._tool_grammar import (
    ReplyGrammar,
    json_reply_grammar,
    tool_call_grammar,
)
from langchain_agent_rules.models.weights import (
    LOCAL_EXTRA_HINT,
    cache_dir,
    embedded_model_path,
)
from langchain_agent_rules.text_protocol import render_tools_prompt, to_text_messages

__all__ = [
    "PREFIX_CACHE_BYTES",
    "PREFIX_CACHE_DIR_ENV",
    "PREFIX_STORE_BYTES",
    "ChatLocalLlama",
    "default_prefix_cache_dir",
    "default_thread_count",
]

PREFIX_CACHE_BYTES = 256 * 1024 * 1024
"""RAM for saved system-prompt states per loaded model: the embedded model's ~700-token
prefix (rules, tools, schema) takes about 20 MB."""
PREFIX_STORE_BYTES = 512 * 1024 * 1024
"""Disk for saved system-prompt states, all models and processes together (about 25
prefixes of the embedded model); the least recently used go first."""
PREFIX_CACHE_DIR_ENV = "AGENT_RULES_PREFIX_CACHE_DIR"

_StructuredOutputMethod = Literal["function_calling", "json_schema", "json_mode"]
_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
_ToolLike = dict[str, Any] | type | Callable[..., Any] | BaseTool


def default_prefix_cache_dir() -> str | None:
    """``$AGENT_RULES_PREFIX_CACHE_DIR``, else ``prefix`` in the cache folder; ``off``: None."""
    value = os.environ.get(PREFIX_CACHE_DIR_ENV, "").strip()
    if value.lower() == "off":
        return None
    return str(Path(value).expanduser() if value else cache_dir() / "prefix")


def default_thread_count() -> int:
    """``min(2, cpu count)``: two threads are the sweet spot on a small idle machine."""
    return min(2, os.cpu_count() or 1)


class ChatLocalLlama(BaseChatModel):
    """A GGUF chat model run in-process by llama-cpp-python (the embedded model by default)."""

    model_path: str | None = None
    """The GGUF file; ``None`` means the embedded model, joined from its chunk packages."""
    n_ctx: int = Field(default=4096, gt=0)
    """The context window in tokens (prompt plus reply); a longer prompt raises
    `ContextWindowError` before anything is generated."""
    n_threads: int = Field(default_factory=default_thread_count, gt=0)
    """CPU threads for prompt processing and generation."""
    temperature: float = Field(default=0.0, ge=0.0)
    """0 means greedy decoding: the same prompt always gets the same reply."""
    repeat_penalty: float = Field(default=1.0, gt=0.0)
    """1.0 means none; small models stop following a tool protocol with a penalty."""
    max_tokens: int = Field(default=512, gt=0)
    """The longest reply in tokens."""
    stop: list[str] | None = None
    """Stop sequences for every call; a call's own ``stop`` replaces them."""
    seed: int = 0
    """The sampling seed, fixed so runs repeat."""
    prefix_cache_dir: str | None = Field(default_factory=default_prefix_cache_dir)
    """Where evaluated system messages are saved on disk, so that a new process restores
    them instead of reading them again (at most `PREFIX_STORE_BYTES`); ``None`` keeps
    them in RAM only. The default follows `PREFIX_CACHE_DIR_ENV`."""

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
            "stop": self.stop,
            "seed": self.seed,
        }

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = LangSmithParams(
            ls_provider="llamacpp",
            ls_model_name=kwargs.get("model") or self._model_name(),
            ls_model_type="chat",
            ls_temperature=self.temperature,
            ls_max_tokens=self.max_tokens,
        )
        if stop or self.stop:
            params["ls_stop"] = stop or self.stop
        return params

    def bind_tools(
        self,
        tools: Sequence[_ToolLike],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind ``tools``: each reply is real ``tool_calls`` or an answer, by grammar.

        The tools are described in the system message as the text protocol describes
        them, the history is shown as the text protocol shows it, and decoding is
        constrained to ``FINAL: <answer>`` (the answer becomes the content) or one call of
        a bound tool with the arguments of its schema. ``tool_choice``: ``None`` or
        ``"auto"`` (a call or an answer), ``"any"`` or ``"required"`` (a call), a tool's
        name (a call of that tool), ``"none"`` (an answer).
        """
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        _grammar_functions(formatted, tool_choice)  # refuses an impossible choice now
        return super().bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        method: _StructuredOutputMethod = "function_calling",
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """The model replying with ``schema`` (a pydantic class, TypedDict or JSON schema).

        ``method``: ``"function_calling"`` (a forced call of a tool named after the
        schema), ``"json_schema"`` (the reply is the schema's JSON object, by grammar) or
        ``"json_mode"`` (any JSON object, by grammar; say in the prompt which keys).
        ``strict`` is accepted for compatibility: the grammar always holds the reply to
        the schema.
        """
        if method == "function_calling":
            return super().with_structured_output(schema, include_raw=include_raw, **kwargs)
        if method not in ("json_schema", "json_mode"):
            raise AgentConfigurationError(
                f"method={method!r} is not a structured output method; use "
                "'function_calling', 'json_schema' or 'json_mode'"
            )
        if kwargs:
            raise AgentConfigurationError(f"unsupported arguments {sorted(kwargs)}")
        return json_structured_output(self, schema, method, include_raw)

    def bind_text_protocol(
        self, tools: Sequence[_ToolLike]
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The model with its replies constrained to the text protocol's shapes for ``tools``.

        The caller describes the tools in the prompt (`render_tools_prompt`) and parses
        the reply (`parse_tool_reply`); every reply is ``FINAL: <answer>`` or exactly one
        ```` ```tool ```` block naming one of ``tools`` with the arguments of its schema.
        """
        functions = [convert_to_openai_tool(tool)["function"] for tool in tools]
        return self.bind(text_protocol_tools=functions)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return generate_from_stream(self._stream(messages, stop, None, **kwargs))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self._check_model_override(kwargs.get("model"))
        # Loaded (and so imported) first: the grammar is built by llama-cpp-python.
        runner = _shared_model(self._model_file(), self.n_ctx, self.n_threads, self.seed)
        tools: list[dict[str, Any]] | None = kwargs.get("tools")
        grammar = None
        replies = None
        if tools is not None:
            messages = _with_tools_prompt(messages, tools)
            grammar = _grammar(*_grammar_functions(tools, kwargs.get("tool_choice")))
            replies = ToolReplyStream()
        elif kwargs.get("text_protocol_tools"):
            grammar = _grammar(kwargs["text_protocol_tools"], True)
        elif kwargs.get("response_format") is not None:
            grammar = _json_grammar(json.dumps(kwargs["response_format"], sort_keys=True))
        sampling = Sampling(self.temperature, self.repeat_penalty, self.seed, self.max_tokens)
        usage = CallUsage()
        scanner = StopScanner(stop or self.stop or [])
        store = None
        if self.prefix_cache_dir is not None:
            store = PrefixStore(Path(self.prefix_cache_dir), PREFIX_STORE_BYTES)
        pieces = runner.generate(
            [_to_llama_message(message) for message in messages], sampling, grammar, usage, store
        )
        try:
            for piece in pieces:
                text, stopped = scanner.feed(piece)
                yield from _emit(_chunks(text, replies), run_manager)
                if stopped:
                    usage.finish_reason = "stop"
                    break
        finally:
            pieces.close()
        yield from _emit(_chunks(scanner.flush(), replies), run_manager)
        if replies is not None:
            yield from _emit(replies.finish(), run_manager)
        yield from _emit([self._last_chunk(usage)], run_manager)

    def _last_chunk(self, usage: CallUsage) -> AIMessageChunk:
        return AIMessageChunk(
            content="",
            usage_metadata=UsageMetadata(
                input_tokens=usage.prompt_tokens,
                output_tokens=usage.generated_tokens,
                total_tokens=usage.prompt_tokens + usage.generated_tokens,
                input_token_details={"cache_read": usage.cached_tokens},
            ),
            response_metadata={
                "model_name": self._model_name(),
                "finish_reason": usage.finish_reason,
                "forced_tokens": usage.forced_tokens,
            },
            chunk_position="last",
        )

    def _model_file(self) -> str:
        assert self.model_path is not None  # set by the validator
        return self.model_path

    def _model_name(self) -> str:
        return Path(self._model_file()).name

    def _check_model_override(self, requested: object) -> None:
        if requested is not None and requested != self._model_name():
            raise AgentConfigurationError(
                f"this ChatLocalLlama runs {self._model_name()}; it cannot switch to "
                f"model={requested!r} for one call: create a ChatLocalLlama with that "
                "model_path instead"
            )


def _chunks(text: str, replies: ToolReplyStream | None) -> list[AIMessageChunk]:
    if not text:
        return []
    return replies.feed(text) if replies is not None else [AIMessageChunk(content=text)]


def _emit(
    messages: list[AIMessageChunk], run_manager: CallbackManagerForLLMRun | None
) -> Iterator[ChatGenerationChunk]:
    for message in messages:
        chunk = ChatGenerationChunk(message=message)
        if run_manager is not None:
            run_manager.on_llm_new_token(message.text, chunk=chunk)
        yield chunk


def _grammar_functions(
    tools: list[dict[str, Any]], tool_choice: str | None
) -> tuple[list[dict[str, Any]], bool]:
    """The functions a reply may call, and whether it may answer instead."""
    functions = [tool["function"] for tool in tools]
    names = [function["name"] for function in functions]
    if tool_choice in (None, "auto"):
        return functions, True
    if tool_choice == "none":
        return [], True
    if tool_choice in ("any", "required") and functions:
        return functions, False
    if tool_choice in names:
        return [functions[names.index(tool_choice)]], False
    raise AgentConfigurationError(
        f"tool_choice={tool_choice!r} is not possible with the bound tools "
        f"({', '.join(names) or 'none'}); use None, 'auto', 'any', 'required', 'none' "
        "or the name of a bound tool"
    )


def _grammar(functions: list[dict[str, Any]], allow_answer: bool) -> ReplyGrammar:
    return _cached_grammar(json.dumps(functions), allow_answer)


@functools.lru_cache(maxsize=64)
def _json_grammar(schema_json: str) -> ReplyGrammar:
    return json_reply_grammar(json.loads(schema_json))


@functools.lru_cache(maxsize=64)
def _cached_grammar(functions_json: str, allow_answer: bool) -> ReplyGrammar:
    return tool_call_grammar(json.loads(functions_json), allow_answer=allow_answer)


def _with_tools_prompt(
    messages: list[BaseMessage], tools: list[dict[str, Any]]
) -> list[BaseMessage]:
    """The conversation as the text protocol shows it, the tools in the system message."""
    prompt = render_tools_prompt(cast("list[BaseTool]", tools))
    rendered = to_text_messages(messages)
    if rendered and isinstance(rendered[0], SystemMessage):
        system = "\n\n".join(part for part in (rendered[0].text, prompt) if part)
        return [SystemMessage(system), *rendered[1:]]
    return [SystemMessage(prompt), *rendered]


_LOADED: dict[tuple[str, int, int, int], LlamaRunner] = {}
_LOADING_LOCK = threading.Lock()


def _shared_model(path: str, n_ctx: int, n_threads: int, seed: int) -> LlamaRunner:
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
            _LOADED[key] = LlamaRunner(llama, PREFIX_CACHE_BYTES)
        return _LOADED[key]


def _check_llama_cpp_installed() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelUnavailableError(
            f"the local model needs llama-cpp-python; install it with {LOCAL_EXTRA_HINT}, "
            "or use an Ollama model (--model ollama:<name>)"
        )


def _import_llama_cpp(model_path: str, n_threads: int) -> Any:
    """Import llama.cpp once a child process has shown that this build runs here."""
    # Imported here, not with this module: the package then never loads build_flags, so
    # `python3 -m langchain_agent_rules.models.build_flags` runs it as a plain script.
    from langchain_agent_rules.models._cpu_probe import ensure_llama_cpp_runs

    _check_llama_cpp_installed()
    ensure_llama_cpp_runs(model_path, n_threads)
    import llama_cpp

    return llama_cpp


def _to_llama_message(message: BaseMessage) -> dict[str, str]:
    role = message.role if isinstance(message, ChatMessage) else _ROLES.get(message.type, "user")
    return {"role": role, "content": message.text}
