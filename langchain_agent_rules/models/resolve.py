"""Turn a model string (``local``, ``local:/path.gguf``, ``ollama:<name>``) into a chat model."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.models.local import ChatLocalLlama
from langchain_agent_rules.models.ollama import create_ollama_chat_model

__all__ = ["MODEL_SPEC_FORMS", "resolve_chat_model"]

MODEL_SPEC_FORMS = (
    '"local" (the embedded model), "local:/path/model.gguf", "ollama:<name>", '
    "or a LangChain chat model object"
)


def resolve_chat_model(spec: str | BaseChatModel) -> BaseChatModel:
    """The chat model that ``spec`` names; a model object is returned unchanged.

    Raises `AgentConfigurationError` for a spec of another form, and
    `ModelUnavailableError` when the named model cannot be loaded or reached.
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
    raise AgentConfigurationError(f"unknown model {spec!r}; use {MODEL_SPEC_FORMS}")
