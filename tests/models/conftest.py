"""The `ollama` marker: run against a real Ollama server only when one answers.

Without ``OLLAMA_HOST`` only the default loopback address is probed, so a test never
reaches for another machine unless the developer pointed it there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from langchain_agent_rules.models.ollama import DEFAULT_OLLAMA_HOST

from .fake_ollama import FakeOllama, running_fake_ollama

_probe: dict[str, str | None] = {}


def real_ollama_host() -> str:
    return os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST


def _why_no_real_ollama() -> str | None:
    host = real_ollama_host()
    if host not in _probe:
        url = host if "://" in host else f"http://{host}"
        try:
            httpx.get(f"{url.rstrip('/')}/api/tags", timeout=2.0).raise_for_status()
            _probe[host] = None
        except httpx.HTTPError as error:
            _probe[host] = f"no Ollama server answers at {host} ({type(error).__name__})"
    return _probe[host]


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("ollama"):
        reason = _why_no_real_ollama()
        if reason:
            pytest.skip(reason)


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    with running_fake_ollama(
        {"qwen-tools": ["completion", "tools"], "gemma-plain": ["completion"]}
    ) as fake:
        yield fake
