"""Turn a model string into a chat model, as LangChain users write them.

``"local"`` is the embedded model, ``"local:/path/model.gguf"`` another GGUF file,
``"ollama:<name>"`` an Ollama model (with tool-support detection); anything else goes to
LangChain's `init_chat_model` (``"openai:gpt-4o-mini"``, ``"anthropic:claude-..."``),
whose missing provider package becomes a `ModelUnavailableError` naming it.
"""

from __future__ import annotations

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

from langchain_agent_rules.errors import AgentConfigurationError, ModelUnavailableError
from langchain_agent_rules.models.local import ChatLocalLlama
from langchain_agent_rules.models.ollama import create_ollama_chat_model

__all__ = ["MODEL_SPEC_FORMS", "resolve_chat_model"]

MODEL_SPEC_FORMS = (
    '"local" (the embedded model), "local:/path/model.gguf", "ollama:<name>", '
    'a LangChain provider string such as "openai:gpt-4o-mini", or a chat model object'
)


def resolve_chat_model(spec: str | BaseChatModel) -> BaseChatModel:
    """The chat model that ``spec`` names; a model object is returned unchanged.

    Raises `AgentConfigurationError` for a spec no provider takes, and
    `ModelUnavailableError` when the named model cannot be loaded or reached, or its
    provider package is not installed.
    """
    if isinstance(spec, BaseChatModel):
        return spec
    if not isinstance(spec, str):
        raise AgentConfigurationError(
            f"model must be {MODEL_SPEC_FORMS}, not {type(spec).__name__}"
        )
    kind, separator, argument = spec.partition(":")
    if kind == "local" and not separator:
        return ChatLocalLlama()
    if kind == "local" and argument:
        return ChatLocalLlama(model_path=argument)
    if kind == "ollama" and argument:
        return create_ollama_chat_model(argument)
    if kind in ("local", "ollama") or not spec.strip():
        raise AgentConfigurationError(f"unknown model {spec!r}; use {MODEL_SPEC_FORMS}")
    try:
        return init_chat_model(spec)
    except ImportError as error:
        raise ModelUnavailableError(f"model {spec!r}: {error}") from None
    except ValueError as error:
        if "infer model provider" not in str(error):
            raise ModelUnavailableError(f"model {spec!r}: {error}") from None
        raise AgentConfigurationError(f"unknown model {spec!r}; use {MODEL_SPEC_FORMS}") from None
    except Exception as error:  # a provider's own error, e.g. a missing API key
        raise ModelUnavailableError(f"model {spec!r}: {error}") from None
