"""A real `langgraph dev` server on 127.0.0.1, started from the repository root for the tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
STARTUP_TIMEOUT_S = 90.0
SHUTDOWN_TIMEOUT_S = 15.0

# Keep the server offline: no version check against PyPI, no LangSmith tracing.
_OFFLINE_ENV = {
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
}
_DROPPED_ENV = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY")


@dataclass(frozen=True)
class DevServer:
    """A running `langgraph dev` process and where to reach it."""

    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        """The server's combined output so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def langgraph_command(*args: str) -> list[str]:
    if not LANGGRAPH.exists():
        pytest.fail(
            f"langgraph-cli is not installed next to {sys.executable}: "
            'install the dev extra (pip install -e ".[dev]")',
            pytrace=False,
        )
    return [str(LANGGRAPH), *args]


def server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(_OFFLINE_ENV)
    return env


def _wait_until_ready(server: DevServer) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(
                f"langgraph dev exited with {server.process.returncode}:\n{server.log()}",
                pytrace=False,
            )
        try:
            if httpx.get(f"{server.url}/ok", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    pytest.fail(
        f"langgraph dev did not answer within {STARTUP_TIMEOUT_S:.0f} s:\n{server.log()}",
        pytrace=False,
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=SHUTDOWN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=SHUTDOWN_TIMEOUT_S)


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    port = free_loopback_port()
    log_path = tmp_path_factory.mktemp("langgraph-dev") / "server.log"
    command = langgraph_command(
        "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)
    )
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=server_env(), stdout=log_file, stderr=subprocess.STDOUT
        )
    server = DevServer(url=f"http://127.0.0.1:{port}", process=process, log_path=log_path)
    try:
        _wait_until_ready(server)
        yield server
    finally:
        _stop(process)
