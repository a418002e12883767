"""Against a real Ollama server: runs only when one answers at OLLAMA_HOST (see conftest)."""

from __future__ import annotations

import os

import httpx
import pytest

from langchain_agent_rules.errors import ModelUnavailableError
from langchain_agent_rules.models.ollama import create_ollama_chat_model, ollama_supports_tools

from .conftest import real_ollama_host

pytestmark = pytest.mark.ollama


@pytest.fixture(scope="module")
def model_name() -> str:
    """``$OLLAMA_TEST_MODEL``, else the first model the server has pulled."""
    if os.environ.get("OLLAMA_TEST_MODEL"):
        return os.environ["OLLAMA_TEST_MODEL"]
    host = real_ollama_host()
    url = host if "://" in host else f"http://{host}"
    models = httpx.get(f"{url.rstrip('/')}/api/tags", timeout=5.0).json()["models"]
    if not models:
        pytest.skip(f"the Ollama server at {host} has no model pulled")
    return str(models[0]["name"])


def test_a_pulled_model_answers(model_name: str) -> None:
    model = create_ollama_chat_model(model_name)
    reply = model.invoke("Reply with the single word: ready")
    assert isinstance(reply.content, str)
    assert reply.content.strip()


def test_the_server_reports_whether_the_model_supports_tools(model_name: str) -> None:
    model = create_ollama_chat_model(model_name)
    assert isinstance(ollama_supports_tools(model), bool)


def test_a_model_that_is_not_pulled_is_reported() -> None:
    with pytest.raises(ModelUnavailableError, match="ollama pull no-such-model-xyz"):
        create_ollama_chat_model("no-such-model-xyz")
