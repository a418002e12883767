"""Tools for the middleware tests: one that hangs, one that raises, one with a 1 MB result."""

from __future__ import annotations

import threading

from langchain_core.tools import BaseTool, tool

ONE_MB = 1_000_000


def hanging_tool(release: threading.Event) -> BaseTool:
    """A tool that blocks until ``release`` is set (the fixture sets it at teardown)."""

    @tool
    def wait_forever() -> str:
        """Wait until the test ends."""
        release.wait(timeout=60)
        return "finished late"

    return wait_forever


@tool
def explode() -> str:
    """Always fail."""
    raise RuntimeError("the disk is on fire")


@tool
def huge() -> str:
    """Return one megabyte of text."""
    return "x" * ONE_MB


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
