"""ChatLocalLlama against LangChain's standard integration tests, on the embedded model.

Sized in tokens for CI's slowest machine (~50 prompt and ~4 generated tokens a second).
Every standard test runs that the model's features allow (langchain-tests itself skips,
with its reasons, image, audio and PDF inputs, Anthropic-format inputs, model overrides and
VCR). Measured for this module run alone (seed 0, 2 threads): 70 model calls, 2,614 prompt
tokens evaluated (of 6,901) and 1,677 tokens generated, 563 of them forced by a grammar (no
decode step of their own), plus one ~9-token call that astream_events(v3) makes without
callbacks: about 1 minute of prompt and 4.6 minutes of generation there, under 6 minutes
in all. Replies are held to ``MAX_TOKENS`` (a joke as structured output needs about 42).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from langchain_tests.integration_tests import ChatModelIntegrationTests
from models.standard_features import LocalLlamaFeatures
from pydantic import BaseModel

from .conftest import TALLY, embedded_model

pytestmark = pytest.mark.local_model

MAX_TOKENS = 48


class TestChatLocalLlamaIntegration(LocalLlamaFeatures, ChatModelIntegrationTests):
    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"n_threads": 2, "seed": 0, "max_tokens": MAX_TOKENS, "callbacks": [TALLY]}

    @property
    def supported_usage_metadata_details(self) -> dict[str, list[str]]:
        return {"invoke": ["cache_read_input"], "stream": ["cache_read_input"]}

    def invoke_with_cache_read_input(self, *, stream: bool = False) -> AIMessage:
        model = self.chat_model_class(**self.chat_model_params)
        messages = [SystemMessage("You are a terse assistant."), HumanMessage("Say hi.")]
        model.invoke(messages)
        if stream:
            chunks = list(model.stream(messages))
            reply = sum(chunks[1:], chunks[0])
            assert isinstance(reply, AIMessageChunk)
        else:
            reply = model.invoke(messages)
        assert reply.usage_metadata is not None
        assert reply.usage_metadata["input_token_details"]["cache_read"] > 0
        return reply


class City(BaseModel):
    """A city and its country."""

    city: str
    country: str


def test_json_methods_reply_with_the_object_asked_for() -> None:
    model = embedded_model(max_tokens=MAX_TOKENS)
    question = "What is the capital of Italy?"
    by_schema = model.with_structured_output(City, method="json_schema")
    assert by_schema.invoke(question) == City(city="Rome", country="Italy")
    streamed = list(by_schema.stream(question))
    assert streamed[-1] == City(city="Rome", country="Italy")
    assert all(isinstance(chunk, City) for chunk in streamed)
    any_object = model.with_structured_output(City, method="json_mode", include_raw=True)
    reply = any_object.invoke(f"{question} Reply with JSON with the keys city and country.")
    assert reply["parsing_error"] is None
    assert reply["parsed"] == City(city="Rome", country="Italy")
    assert reply["raw"].text.startswith("{")
