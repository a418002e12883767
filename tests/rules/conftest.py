from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.langgraph_store import LangGraphRuleStore
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.sql_store import SqlRuleStore


def build_rule(
    rule_id: str, project_id: int | None = None, priority: int = 0, **extra: Any
) -> Rule:
    return Rule(
        id=rule_id,
        type=extra.pop("type", "guideline"),
        target=extra.pop("target", "agent"),
        content=extra.pop("content", f"Rule {rule_id} says something useful."),
        priority=priority,
        project_id=project_id,
        **extra,
    )


@pytest.fixture
def make_rule() -> Any:
    return build_rule


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqliteStore]:
    connection = sqlite3.connect(
        tmp_path / "store.sqlite", check_same_thread=False, isolation_level=None
    )
    # A throwaway test file needs no fsync per commit; this keeps 500 puts under a second.
    connection.execute("PRAGMA synchronous=OFF")
    store = SqliteStore(connection)
    store.setup()
    yield store
    connection.close()


STORE_KINDS = ["memory", "json_file", "langgraph_memory", "langgraph_sqlite", "sql_sqlite"]


def open_store(request: pytest.FixtureRequest, tmp_path: Path, kind: str, **options: Any) -> Any:
    """A store of ``kind`` in ``tmp_path``; ``options`` go to its constructor (``limits=``)."""
    if kind == "memory":
        return InMemoryRuleStore(**options)
    if kind == "json_file":
        return JsonFileRuleStore(tmp_path / "rules.json", create=True, **options)
    if kind == "langgraph_memory":
        return LangGraphRuleStore(InMemoryStore(), **options)
    if kind == "sql_sqlite":
        return SqlRuleStore(f"sqlite:///{tmp_path / 'rules.db'}", **options)
    return LangGraphRuleStore(request.getfixturevalue("sqlite_store"), **options)


@pytest.fixture(params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def any_store(request: pytest.FixtureRequest, tmp_path: Path, store_kind: str) -> Any:
    return open_store(request, tmp_path, store_kind)


@pytest.fixture
def store_with_limits(request: pytest.FixtureRequest, tmp_path: Path, store_kind: str) -> Any:
    """A store of every kind with small limits: 40 bytes of content, 400 of payload."""
    limits = {"max_rule_content_bytes": 40, "max_payload_bytes": 400}
    return open_store(request, tmp_path, store_kind, limits=limits)
