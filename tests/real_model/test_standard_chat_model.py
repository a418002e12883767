"""ChatLocalLlama against LangChain's standard integration tests, on the embedded model.

Sized in tokens for CI's slowest machine (~50 prompt and ~4 generated tokens a second).
Measured for this module (seed 0, 2 threads, a cold start): 48 model calls, 1,947 prompt
tokens evaluated (of 4,211) and 911 tokens generated, 304 of them forced by a grammar
(no decode step of their own), plus one ~9-token call that astream_events(v3) makes
without callbacks: about 45 s of prompt and 2.6 minutes of generation there, 3.3 minutes
in all. Replies are held to ``MAX_TOKENS`` (a joke as structured output needs about 42).
Standard tests that would only repeat a covered path at the price of generated tokens
are skipped by name (`COSTLY_REPEATS`), each with its reason and cost.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from langchain_tests.integration_tests import ChatModelIntegrationTests
from pydantic import BaseModel

from langchain_agent_rules.models.local import ChatLocalLlama

from .conftest import TALLY, embedded_model

pytestmark = pytest.mark.local_model

MAX_TOKENS = 48
_JOKES = "a joke is ~27 generated tokens, ~7 s on the slowest machine of our kind"
_SCHEMA_TYPE = (
    "a {kind} differs from the pydantic run only in LangChain's conversion of the schema, "
    f"which the sync test runs for all three types ({{jokes}} jokes; {_JOKES})"
)
_V1 = (
    "output_version='v1' changes only LangChain's rendering of the same reply, which "
    "test_stream[model1] and test_astream[model1] run ({calls}; ~{tokens} generated tokens)"
)
# Standard tests that would only repeat a covered path at the price of generated tokens.
# langchain-tests forbids overriding its tests (except as xfail), so they are skipped by
# name, here, each with its reason and cost.
COSTLY_REPEATS = {
    "test_structured_output[typeddict]": (
        "a TypedDict differs from the pydantic and JSON-schema runs only in LangChain's "
        f"conversion of the schema (2 jokes; {_JOKES})"
    ),
    "test_structured_output_async[typeddict]": "the async path runs with pydantic; "
    + _SCHEMA_TYPE.format(kind="TypedDict", jokes=2),
    "test_structured_output_async[json_schema]": "the async path runs with pydantic; "
    + _SCHEMA_TYPE.format(kind="JSON schema", jokes=2),
    "test_structured_output_pydantic_2_v1": (
        f"pydantic.v1 classes take test_structured_output's path (4 jokes; {_JOKES})"
    ),
    "test_structured_output_optional_param": (
        "optional keys are pinned in tests/models/test_tool_grammar.py, whose grammar holds "
        f"every reply to the schema (4 jokes; {_JOKES})"
    ),
    "test_json_mode": (
        "json_mode and json_schema run on short replies in "
        f"test_json_methods_reply_with_the_object_asked_for (this one: 4 jokes; {_JOKES})"
    ),
    "test_tool_calling[model1]": _V1.format(calls="2 tool calls", tokens=14),
    "test_agent_loop[model1]": _V1.format(calls="a tool call and an answer", tokens=23),
}


class TestChatLocalLlamaIntegration(ChatModelIntegrationTests):
    @property
    def chat_model_class(self) -> type[ChatLocalLlama]:
        return ChatLocalLlama

    @pytest.fixture(autouse=True)
    def _skip_costly_repeats(self, request: pytest.FixtureRequest) -> None:
        reason = COSTLY_REPEATS.get(request.node.name)
        if reason is not None:
            pytest.skip(reason)

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"n_threads": 2, "seed": 0, "max_tokens": MAX_TOKENS, "callbacks": [TALLY]}

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
