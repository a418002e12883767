"""Shared test setup: skip tests whose backing service or extra is absent, unless CI requires it.

CI sets ``AGENT_RULES_REQUIRE_LOCAL_MODEL=1`` and ``AGENT_RULES_REQUIRE_POSTGRES=1`` so a
missing embedded model or PostgreSQL server fails the run instead of skipping silently.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from hypothesis import HealthCheck, settings

# Machines of our kind differ 3-10x in speed: property tests bound their work by examples,
# never by the time one example or its generation takes.
settings.register_profile(
    "agent_rules", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("agent_rules")


def _require(available: bool, require_env: str, reason: str) -> None:
    if available:
        return
    if os.environ.get(require_env) == "1":
        pytest.fail(f"{reason}, but {require_env}=1 requires it", pytrace=False)
    pytest.skip(reason)


_probe_failure: list[str] = []


def _llama_cpp_runs_here() -> None:
    """Fail local-model tests, instead of crashing the test process, on a broken build.

    Several tests use llama.cpp in this process; a build with instructions the OS has not
    enabled would kill pytest itself (SIGILL). The package's own probe runs once first.
    """
    if not _probe_failure:
        from langchain_agent_rules.errors import ModelUnavailableError
        from langchain_agent_rules.models._cpu_probe import ensure_llama_cpp_runs
        from langchain_agent_rules.models.weights import embedded_model_path

        try:
            ensure_llama_cpp_runs(str(embedded_model_path()), 2)
            _probe_failure.append("")
        except ModelUnavailableError as error:
            _probe_failure.append(str(error))
    if _probe_failure[0]:
        pytest.fail(_probe_failure[0], pytrace=False)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("local_model"):
        _require(
            importlib.util.find_spec("llama_cpp") is not None,
            "AGENT_RULES_REQUIRE_LOCAL_MODEL",
            "the embedded model is not installed (the README's first command installs it)",
        )
        _llama_cpp_runs_here()
    if item.get_closest_marker("postgres"):
        _require(
            bool(os.environ.get("POSTGRES_URL")),
            "AGENT_RULES_REQUIRE_POSTGRES",
            "POSTGRES_URL is not set (point it at a throwaway PostgreSQL database)",
        )
