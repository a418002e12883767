"""Ollama models: build a `ChatOllama` that is known to work, and detect tool support.

`create_ollama_chat_model("qwen2.5:7b")` asks the server at ``OLLAMA_HOST`` (default
``http://127.0.0.1:11434``) about the model before returning, so an unreachable server
or a model that is not pulled fails at once, with the command that fixes it. The model
gets an explicit ``num_ctx``: Ollama's small default context silently cuts long prompts.

The rules agent's ``protocol="auto"`` uses `ollama_supports_tools` (the server's
``/api/show`` capabilities, asked once per host and model) and
`is_tools_unsupported_error` (Ollama's HTTP 400 "... does not support tools") to pick
native tool calling or its text protocol.
"""

from __future__ import annotations

import os
import threading

import httpx
import ollama
from langchain_ollama import ChatOllama

from langchain_agent_rules.errors import ModelUnavailableError

__all__ = [
    "DEFAULT_OLLAMA_HOST",
    "DEFAULT_OLLAMA_NUM_CTX",
    "create_ollama_chat_model",
    "is_tools_unsupported_error",
    "ollama_host",
    "ollama_supports_tools",
]

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_NUM_CTX = 8192
_PROBE_TIMEOUT_SECONDS = 10.0
_TOOLS_UNSUPPORTED = "does not support tools"

_capabilities: dict[tuple[str, str], list[str]] = {}
_capabilities_lock = threading.Lock()


def ollama_host() -> str:
    """The Ollama server to use: ``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``."""
    return os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST


def create_ollama_chat_model(
    name: str, *, host: str | None = None, num_ctx: int = DEFAULT_OLLAMA_NUM_CTX
) -> ChatOllama:
    """A `ChatOllama` for the pulled model ``name`` at ``host`` (default `ollama_host()`).

    Raises `ModelUnavailableError` saying what to run when the server does not answer
    (``ollama serve``) or the model is not pulled (``ollama pull <name>``).
    """
    model = ChatOllama(model=name, base_url=host or ollama_host(), num_ctx=num_ctx, temperature=0)
    _model_capabilities(model)
    return model


def ollama_supports_tools(model: ChatOllama) -> bool:
    """Whether the server lists ``"tools"`` in the model's capabilities (asked once, cached)."""
    return "tools" in _model_capabilities(model)


def is_tools_unsupported_error(error: BaseException) -> bool:
    """Whether ``error`` is Ollama's HTTP 400 refusal of a model without tool support."""
    return (
        isinstance(error, ollama.ResponseError)
        and error.status_code == 400
        and _TOOLS_UNSUPPORTED in str(error.error)
    )


def _model_capabilities(model: ChatOllama) -> list[str]:
    host = model.base_url or ollama_host()
    key = (host, model.model)
    with _capabilities_lock:
        if key not in _capabilities:
            _capabilities[key] = _ask_capabilities(host, model.model)
        return _capabilities[key]


def _ask_capabilities(host: str, name: str) -> list[str]:
    client = ollama.Client(host=host, timeout=_PROBE_TIMEOUT_SECONDS)
    try:
        shown = client.show(name)
    except ollama.ResponseError as error:
        if error.status_code == 404:
            raise ModelUnavailableError(
                f"the Ollama server at {host} has no model {name!r}; run `ollama pull {name}`, "
                "or use the embedded model (--model local)"
            ) from None
        raise ModelUnavailableError(
            f"the Ollama server at {host} refused model {name!r}: {error.error} "
            f"(HTTP {error.status_code})"
        ) from None
    except (ConnectionError, httpx.HTTPError) as error:
        raise ModelUnavailableError(
            f"cannot reach an Ollama server at {host} ({_reason(error)}); start one with "
            "`ollama serve` (or set OLLAMA_HOST), or use the embedded model (--model local)"
        ) from None
    return list(shown.capabilities or [])


def _reason(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    return type(cause).__name__ if cause is not None else type(error).__name__
