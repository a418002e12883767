"""ChatLocalLlama against LangChain's standard unit tests, and what it refuses; no model is
loaded here (the standard integration tests run in tests/real_model)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.utils.function_calling import convert_to_json_schema
from langchain_tests.unit_tests import ChatModelUnitTests
from pydantic import BaseModel

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.models.local import ChatLocalLlama
from models.standard_features import LocalLlamaFeatures

pytest.importorskip("llama_cpp", reason="the `local` extra (llama-cpp-python) is not installed")


class TestChatLocalLlamaUnit(LocalLlamaFeatures, ChatModelUnitTests):
    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"n_threads": 2}


def test_the_traced_model_name_is_the_model_file_unless_a_call_names_another() -> None:
    model = ChatLocalLlama(stop=["\n\n"])
    params = model._get_ls_params()
    assert params["ls_provider"] == "llamacpp"
    assert params["ls_model_name"] == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert params["ls_stop"] == ["\n\n"]
    assert model._get_ls_params(stop=["END"])["ls_stop"] == ["END"]
    assert model._get_ls_params(model="other.gguf")["ls_model_name"] == "other.gguf"


def test_a_call_cannot_switch_to_another_model() -> None:
    with pytest.raises(AgentConfigurationError) as caught:
        ChatLocalLlama().invoke("Hello", model="gpt-4o")
    assert str(caught.value) == (
        "this ChatLocalLlama runs qwen2.5-coder-1.5b-instruct-q4_k_m.gguf; it cannot switch "
        "to model='gpt-4o' for one call: create a ChatLocalLlama with that model_path instead"
    )


class Joke(BaseModel):
    setup: str
    punchline: str


def test_an_unknown_structured_output_method_is_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="method='xml' is not a structured"):
        ChatLocalLlama().with_structured_output(Joke, method="xml")  # type: ignore[arg-type]


def test_json_methods_bind_a_response_format_and_name_the_method_for_tracing() -> None:
    model = ChatLocalLlama()
    for method, response_format in [
        ("json_schema", convert_to_json_schema(Joke)),
        ("json_mode", {"type": "object"}),
    ]:
        chain = model.with_structured_output(Joke, method=method)  # type: ignore[arg-type]
        bound = chain.first  # type: ignore[attr-defined]
        assert bound.kwargs["response_format"] == response_format
        assert bound.kwargs["ls_structured_output_format"]["kwargs"] == {"method": method}
