"""What the docs' examples run against: demo data, PostgreSQL, a Studio server, a token tally.

Each example runs in its own folder holding what ``agent-rules demo --export .`` writes
(``shop.db``, ``project/``, ``rules.json``). A ``postgres`` example gets ``POSTGRES_URL``
pointing at a throwaway schema; a ``studio`` example gets ``LANGGRAPH_URL``, a real
``langgraph dev`` on 127.0.0.1 and a free port. The embedded model's calls made by
``local_model`` examples are tallied and printed at the end, since they share CI's budget
with the real-model suite.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from langchain_core.tracers.context import register_configure_hook

REPO_ROOT = Path(__file__).resolve().parents[2]
STUDIO_STARTUP_TIMEOUT_S = 90.0


class ModelUsage(BaseCallbackHandler):
    """Sums the ``usage_metadata`` of every model call it sees."""

    def __init__(self) -> None:
        self.model_calls = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.generated_tokens = 0

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                message = getattr(generation, "message", None)
                usage = message.usage_metadata if message is not None else None
                if not usage:
                    continue
                self.model_calls += 1
                self.prompt_tokens += usage["input_tokens"]
                self.cached_tokens += usage.get("input_token_details", {}).get("cache_read", 0)
                self.generated_tokens += usage["output_tokens"]


LOCAL_MODEL_USAGE = ModelUsage()
# While set, every LangChain run in this context reports to the handler (as tracers do).
_counting: ContextVar[ModelUsage | None] = ContextVar("docs_model_usage", default=None)
register_configure_hook(_counting, inheritable=True)


@pytest.fixture
def count_model_usage() -> Iterator[ModelUsage]:
    """Tally every model call made while the test runs."""
    token = _counting.set(LOCAL_MODEL_USAGE)
    try:
        yield LOCAL_MODEL_USAGE
    finally:
        _counting.reset(token)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    usage = LOCAL_MODEL_USAGE
    if usage.model_calls:
        terminalreporter.write_line(
            f"docs examples on the embedded model: {usage.model_calls} calls, "
            f"{usage.prompt_tokens - usage.cached_tokens} prompt tokens evaluated "
            f"(of {usage.prompt_tokens}; the rest reused), "
            f"{usage.generated_tokens} tokens generated"
        )


@pytest.fixture
def postgres_schema_url() -> Iterator[str]:
    """POSTGRES_URL with ``search_path`` set to a fresh schema, dropped afterwards."""
    import psycopg

    url = os.environ["POSTGRES_URL"]
    schema = f"docs_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in url else "?"
    try:
        yield f"{url}{separator}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def studio_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``langgraph dev`` serving this repository's langgraph.json, offline."""
    langgraph = Path(sys.executable).with_name("langgraph")
    port = _free_loopback_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path_factory.mktemp("langgraph-dev") / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false")
    command = [str(langgraph), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"]
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [*command, "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + STUDIO_STARTUP_TIMEOUT_S
        while not _answers(url):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start:\n{log_path.read_text()}")
            time.sleep(0.25)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/ok", timeout=2.0).status_code == 200
    except httpx.TransportError:
        return False
