"""Ollama: capability detection, the "does not support tools" error and clear failures.

Driven against a fake Ollama server on 127.0.0.1 that answers with the documented JSON.
"""

from __future__ import annotations

import socket

import ollama
import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_ollama import ChatOllama

from langchain_agent_rules.errors import ModelUnavailableError
from langchain_agent_rules.models.ollama import (
    DEFAULT_OLLAMA_NUM_CTX,
    create_ollama_chat_model,
    is_tools_unsupported_error,
    ollama_supports_tools,
)

from .fake_ollama import FakeOllama


@tool
def count_users() -> int:
    """Count the users."""
    return 3


def _closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_a_model_with_the_tools_capability_supports_tools(fake_ollama: FakeOllama) -> None:
    assert ollama_supports_tools(ChatOllama(model="qwen-tools", base_url=fake_ollama.url))


def test_a_model_without_the_tools_capability_does_not(fake_ollama: FakeOllama) -> None:
    assert not ollama_supports_tools(ChatOllama(model="gemma-plain", base_url=fake_ollama.url))


def test_capabilities_are_asked_once_per_host_and_model(fake_ollama: FakeOllama) -> None:
    for _ in range(3):
        ollama_supports_tools(ChatOllama(model="qwen-tools", base_url=fake_ollama.url))
    assert fake_ollama.requests_to("/api/show") == [{"model": "qwen-tools"}]


def test_create_ollama_chat_model_sets_host_and_context(fake_ollama: FakeOllama) -> None:
    model = create_ollama_chat_model("qwen-tools", host=fake_ollama.url)
    assert (model.model, model.base_url, model.num_ctx) == (
        "qwen-tools",
        fake_ollama.url,
        DEFAULT_OLLAMA_NUM_CTX,
    )


def test_the_context_size_is_sent_with_every_chat(fake_ollama: FakeOllama) -> None:
    fake_ollama.replies.append("Hello.")
    model = create_ollama_chat_model("gemma-plain", host=fake_ollama.url, num_ctx=4096)
    assert model.invoke("Say hello").content == "Hello."
    (chat,) = fake_ollama.requests_to("/api/chat")
    assert chat["options"]["num_ctx"] == 4096


def test_the_host_comes_from_ollama_host(
    fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    assert create_ollama_chat_model("qwen-tools").base_url == fake_ollama.url


def test_a_model_that_is_not_pulled_says_to_pull_it(fake_ollama: FakeOllama) -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        create_ollama_chat_model("llama9:70b", host=fake_ollama.url)
    assert "`ollama pull llama9:70b`" in str(caught.value)
    assert "--model local" in str(caught.value)


def test_an_unreachable_server_says_to_start_it() -> None:
    url = _closed_port_url()
    with pytest.raises(ModelUnavailableError) as caught:
        create_ollama_chat_model("qwen-tools", host=url)
    message = str(caught.value)
    assert f"cannot reach an Ollama server at {url}" in message
    assert "`ollama serve`" in message
    assert "--model local" in message


def test_capability_detection_on_an_unreachable_server_raises_the_same_error() -> None:
    with pytest.raises(ModelUnavailableError, match="ollama serve"):
        ollama_supports_tools(ChatOllama(model="qwen-tools", base_url=_closed_port_url()))


def test_the_servers_tool_refusal_is_recognised(fake_ollama: FakeOllama) -> None:
    model = ChatOllama(model="gemma-plain", base_url=fake_ollama.url)
    with pytest.raises(ollama.ResponseError) as caught:
        model.bind_tools([count_users]).invoke("How many users?")
    assert is_tools_unsupported_error(caught.value)


def test_other_errors_are_not_tool_refusals(fake_ollama: FakeOllama) -> None:
    model = ChatOllama(model="missing", base_url=fake_ollama.url)
    with pytest.raises(ollama.ResponseError) as caught:
        model.invoke("Hello")
    assert not is_tools_unsupported_error(caught.value)
    assert not is_tools_unsupported_error(ValueError("does not support tools"))
    assert not is_tools_unsupported_error(ollama.ResponseError("does not support tools", 500))


def test_a_tool_capable_model_returns_native_tool_calls(fake_ollama: FakeOllama) -> None:
    call = {"function": {"name": "count_users", "arguments": {}}}
    fake_ollama.replies.append({"role": "assistant", "content": "", "tool_calls": [call]})
    model = create_ollama_chat_model("qwen-tools", host=fake_ollama.url)
    reply = model.bind_tools([count_users]).invoke("How many users?")
    assert isinstance(reply, AIMessage)
    assert [c["name"] for c in reply.tool_calls] == ["count_users"]
