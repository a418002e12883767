"""protocol="auto" with ChatOllama, against the fake Ollama server on 127.0.0.1."""

from __future__ import annotations

from langchain_core.tools import tool
from langchain_ollama import ChatOllama
from models.fake_ollama import running_fake_ollama

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.models.ollama import ollama_supports_tools

from .helpers import run

TEXT_CALL = '```tool\n{"tool": "add", "args": {"a": 1, "b": 2}}\n```'


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_auto_asks_ollama_and_uses_text_for_a_model_without_tools() -> None:
    with running_fake_ollama({"plain:1b": ["completion"]}, [TEXT_CALL, "FINAL: 3"]) as fake:
        model = ChatOllama(model="plain:1b", base_url=fake.url)
        result = run(create_rules_agent(model, [add]), "1+2?", "sync")
        chats = fake.requests_to("/api/chat")
    assert result["answer"] == "3"
    assert result["trace"][0]["status"] == "ok"
    assert all(not chat.get("tools") for chat in chats)
    assert "```tool" in chats[0]["messages"][0]["content"]


def test_auto_switches_to_text_when_ollama_refuses_tools() -> None:
    models = {"liar:1b": ["completion", "tools"]}
    with running_fake_ollama(models, [TEXT_CALL, "FINAL: 3"]) as fake:
        model = ChatOllama(model="liar:1b", base_url=fake.url)
        assert ollama_supports_tools(model)  # cached: the agent will not ask again
        models["liar:1b"] = ["completion"]
        result = run(create_rules_agent(model, [add]), "1+2?", "sync")
        chats = fake.requests_to("/api/chat")
    assert result["answer"] == "3"
    assert chats[0].get("tools")
    assert all(not chat.get("tools") for chat in chats[1:])
    assert len(chats) == 3
