"""LangGraphRuleStore on InMemoryStore and the SQLite stores, with more than a page of rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from langchain_agent_rules.errors import DuplicateRuleError, RuleNotFoundError, RuleStoreError
from langchain_agent_rules.rules._records import rule_to_record
from langchain_agent_rules.rules.langgraph_store import DEFAULT_RULE_NAMESPACE, LangGraphRuleStore


def fill(store: LangGraphRuleStore, make_rule: Any, count: int) -> None:
    for index in range(count):
        store.create(make_rule(f"rule_{index:04d}", project_id=None if index % 2 else 1))


@pytest.mark.parametrize("count", [11, 500])
def test_every_rule_comes_back_from_in_memory_store(make_rule: Any, count: int) -> None:
    store = LangGraphRuleStore(InMemoryStore())
    fill(store, make_rule, count)
    assert len(store.get_all_by_project(1)) == count
    assert len(store.get_all_by_project(None)) == count // 2


@pytest.mark.parametrize("count", [11, 500])
def test_every_rule_comes_back_from_sqlite_store(
    sqlite_store: SqliteStore, make_rule: Any, count: int
) -> None:
    store = LangGraphRuleStore(sqlite_store)
    fill(store, make_rule, count)
    assert len(store.get_all_by_project(1)) == count
    assert len(store.get_all_by_project(2)) == count // 2


def test_rules_persist_in_the_sqlite_file(tmp_path: Path, make_rule: Any) -> None:
    path = str(tmp_path / "store.sqlite")
    with SqliteStore.from_conn_string(path) as first:
        first.setup()
        LangGraphRuleStore(first).create(make_rule("persisted", metadata={"k": "v"}))
    with SqliteStore.from_conn_string(path) as second:
        rule = LangGraphRuleStore(second).get("persisted")
    assert rule.metadata == {"k": "v"} and rule.created_at is not None


def test_order_is_by_created_at_then_id(make_rule: Any) -> None:
    store = LangGraphRuleStore(InMemoryStore())
    start = datetime(2026, 1, 1, tzinfo=UTC)
    store.create(make_rule("late", created_at=start + timedelta(days=2)))
    store.create(make_rule("b_same", created_at=start))
    store.create(make_rule("a_same", created_at=start))
    store.create(make_rule("early", created_at=start - timedelta(days=1)))
    assert [r.id for r in store.get_all_by_project(None)] == ["early", "a_same", "b_same", "late"]


def test_rules_in_other_namespaces_are_not_seen(make_rule: Any) -> None:
    backend = InMemoryStore()
    LangGraphRuleStore(backend, ("team_a", "rules")).create(make_rule("team_a_rule"))
    LangGraphRuleStore(backend, ("team_a", "rules", "nested")).create(make_rule("nested_rule"))
    assert [
        r.id for r in LangGraphRuleStore(backend, ("team_a", "rules")).get_all_by_project(None)
    ] == ["team_a_rule"]
    assert LangGraphRuleStore(backend).get_all_by_project(None) == []


@pytest.mark.parametrize("namespace", [("agent.rules",), (), ("",), ("ok", 3), ["agent_rules"]])
def test_an_invalid_namespace_is_refused_at_construction(namespace: Any) -> None:
    with pytest.raises(RuleStoreError, match=r"without '\.'"):
        LangGraphRuleStore(InMemoryStore(), namespace)


def test_something_that_is_not_a_base_store_is_refused() -> None:
    with pytest.raises(RuleStoreError, match="BaseStore"):
        LangGraphRuleStore({})  # type: ignore[arg-type]


def test_an_item_that_is_not_a_rule_raises_naming_the_item() -> None:
    backend = InMemoryStore()
    backend.put(("agent_rules",), "broken", {"id": "broken", "type": "wish"})
    with pytest.raises(RuleStoreError, match="item 'broken'"):
        LangGraphRuleStore(backend).get_all_by_project(None)


async def test_async_twins_on_in_memory_store(make_rule: Any) -> None:
    store = LangGraphRuleStore(InMemoryStore())
    for index in range(25):
        await store.acreate(make_rule(f"async_{index:02d}", project_id=index % 3 or None))
    assert len(await store.aget_all_by_project(1)) == len(store.get_all_by_project(1))
    with pytest.raises(DuplicateRuleError):
        await store.acreate(make_rule("async_00"))
    created = await store.aget("async_00")
    updated = await store.aupdate(created.with_changes(priority=3))
    assert updated.created_at == created.created_at and store.get("async_00").priority == 3
    assert await store.adelete("async_00") == updated
    with pytest.raises(RuleNotFoundError):
        await store.aget("async_00")


async def test_async_twins_on_async_sqlite_store(tmp_path: Path, make_rule: Any) -> None:
    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "store.sqlite")) as backend:
        await backend.setup()
        store = LangGraphRuleStore(backend)
        for index in range(30):
            await store.acreate(make_rule(f"rule_{index:02d}"))
        assert len(await store.aget_all_by_project(None)) == 30


async def test_async_twins_fall_back_to_a_thread_for_the_sync_sqlite_store(
    sqlite_store: SqliteStore, make_rule: Any
) -> None:
    store = LangGraphRuleStore(sqlite_store)
    await store.acreate(make_rule("threaded"))
    assert [r.id for r in await store.aget_all_by_project(None)] == ["threaded"]
    assert (await store.adelete("threaded")).id == "threaded"


def test_more_rules_than_one_search_page_all_come_back(make_rule: Any) -> None:
    backend = InMemoryStore()
    template = rule_to_record(make_rule("template"))
    count = 10_001  # one more than a page of LangGraphRuleStore's paged search
    backend.batch(
        [
            PutOp(DEFAULT_RULE_NAMESPACE, f"rule_{i:05d}", {**template, "id": f"rule_{i:05d}"})
            for i in range(count)
        ]
    )
    rules = LangGraphRuleStore(backend).get_all_by_project(None)
    assert [rule.id for rule in rules] == [f"rule_{i:05d}" for i in range(count)]


def test_a_changed_item_is_parsed_again(make_rule: Any) -> None:
    backend = InMemoryStore()
    store = LangGraphRuleStore(backend)
    store.create(make_rule("changing"))
    first = store.get_all_by_project(None)[0]
    assert store.get_all_by_project(None)[0] is first  # unchanged: parsed once
    other = LangGraphRuleStore(backend)
    other.update(first.with_changes(priority=6))
    assert store.get_all_by_project(None)[0].priority == 6
