"""Model strings: ``local``, ``local:/path.gguf``, ``ollama:<name>`` and model objects."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_ollama import ChatOllama

from langchain_agent_rules.errors import AgentConfigurationError, ModelUnavailableError
from langchain_agent_rules.models.resolve import MODEL_SPEC_FORMS, resolve_chat_model
from langchain_agent_rules.models.weights import LOCAL_EXTRA_HINT

from .fake_ollama import FakeOllama


def test_a_model_object_is_returned_unchanged() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("hi")]))
    assert resolve_chat_model(model) is model


def test_ollama_names_build_a_chat_ollama_at_ollama_host(
    fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    model = resolve_chat_model("ollama:qwen-tools")
    assert isinstance(model, ChatOllama)
    assert (model.model, model.base_url) == ("qwen-tools", fake_ollama.url)


def test_the_model_name_may_hold_a_colon(
    fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_ollama.models["qwen2.5:7b"] = ["completion", "tools"]
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    model = resolve_chat_model("ollama:qwen2.5:7b")
    assert isinstance(model, ChatOllama)
    assert model.model == "qwen2.5:7b"


@pytest.mark.parametrize("spec", ["", "  ", "ollama:", "local:", "Local", "gpt4all-nonsense"])
def test_an_unknown_spec_lists_the_accepted_forms(spec: str) -> None:
    with pytest.raises(AgentConfigurationError) as caught:
        resolve_chat_model(spec)
    assert str(caught.value) == f"unknown model {spec!r}; use {MODEL_SPEC_FORMS}"


def test_a_value_of_another_type_is_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="not int"):
        resolve_chat_model(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "package"),
    [
        ("gpt-4", "langchain-openai"),
        ("openai:gpt-4o", "langchain-openai"),
        ("anthropic:x", "langchain-anthropic"),
    ],
)
def test_a_provider_string_names_the_package_to_install(spec: str, package: str) -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        resolve_chat_model(spec)
    assert str(caught.value).startswith(f"model {spec!r}: ")
    assert f"pip install {package}" in str(caught.value)


def test_the_accepted_forms_are_worded_exactly() -> None:
    assert MODEL_SPEC_FORMS == (
        '"local" (the embedded model), "local:/path/model.gguf", "ollama:<name>", '
        'a LangChain provider string such as "openai:gpt-4o-mini", or a chat model object'
    )


def test_a_missing_gguf_file_is_a_model_unavailable_error(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        resolve_chat_model(f"local:{tmp_path / 'missing.gguf'}")
    if importlib.util.find_spec("llama_cpp") is None:
        assert LOCAL_EXTRA_HINT in str(caught.value)
    else:
        assert f"no GGUF model file at {tmp_path / 'missing.gguf'}" in str(caught.value)
