"""What ChatLocalLlama declares to LangChain's standard tests, unit and integration alike."""

from __future__ import annotations

from langchain_agent_rules.models.local import ChatLocalLlama


class LocalLlamaFeatures:
    """The features of ChatLocalLlama; put before the langchain-tests base class."""

    @property
    def chat_model_class(self) -> type[ChatLocalLlama]:
        return ChatLocalLlama

    @property
    def has_tool_calling(self) -> bool:
        return True

    @property
    def has_tool_choice(self) -> bool:
        return True

    @property
    def has_structured_output(self) -> bool:
        return True

    @property
    def supports_json_mode(self) -> bool:
        return True

    @property
    def returns_usage_metadata(self) -> bool:
        return True

    @property
    def supports_model_override(self) -> bool:
        """One in-process model: a call naming another is refused (see the unit tests)."""
        return False
