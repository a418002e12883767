from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from langchain_core.tools import BaseTool

from .sample_tools import hanging_tool


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so a hanging tool's worker thread ends with the test."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def wait_forever(release: threading.Event) -> BaseTool:
    return hanging_tool(release)
