"""The RuleStore contract, run against every store."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_agent_rules.errors import DuplicateRuleError, RuleNotFoundError
from langchain_agent_rules.rules.store import RuleStore


def test_every_store_satisfies_the_protocol(any_store: Any, make_rule: Any) -> None:
    assert isinstance(any_store, RuleStore)


def test_empty_store_has_no_rules(any_store: Any, make_rule: Any) -> None:
    assert any_store.get_all_by_project(None) == []
    assert any_store.get_all_by_project(1) == []


def test_none_returns_global_rules_only_and_n_adds_project_n(
    any_store: Any, make_rule: Any
) -> None:
    any_store.create(make_rule("global_a"))
    any_store.create(make_rule("project_1_a", project_id=1))
    any_store.create(make_rule("project_2_a", project_id=2))
    any_store.create(make_rule("global_b"))

    assert {r.id for r in any_store.get_all_by_project(None)} == {"global_a", "global_b"}
    assert {r.id for r in any_store.get_all_by_project(1)} == {
        "global_a",
        "global_b",
        "project_1_a",
    }
    assert {r.id for r in any_store.get_all_by_project(3)} == {"global_a", "global_b"}


def test_get_all_returns_the_rules_of_every_project_in_the_store_order(
    any_store: Any, make_rule: Any
) -> None:
    for rule_id, project_id in [("global_a", None), ("project_2_a", 2), ("project_1_a", 1)]:
        any_store.create(make_rule(rule_id, project_id=project_id))

    everything = any_store.get_all()

    assert {(r.id, r.project_id) for r in everything} == {
        ("global_a", None),
        ("project_2_a", 2),
        ("project_1_a", 1),
    }
    assert [r.id for r in everything] == [r.id for r in any_store.get_all()]
    assert [r.id for r in any_store.get_all_by_project(1)] == [
        r.id for r in everything if r.project_id in (None, 1)
    ]


async def test_the_async_get_all_returns_what_get_all_does(any_store: Any, make_rule: Any) -> None:
    any_store.create(make_rule("global_a"))
    any_store.create(make_rule("project_3_a", project_id=3))

    assert await any_store.aget_all() == any_store.get_all()


def test_create_stamps_timestamps_and_get_returns_the_stored_rule(
    any_store: Any, make_rule: Any
) -> None:
    stored = any_store.create(make_rule("stamped", priority=4))
    assert stored.created_at is not None and stored.created_at.tzinfo is not None
    assert stored.updated_at is not None
    assert any_store.get("stamped") == stored


def test_create_of_an_existing_id_raises_duplicate_even_in_another_scope(
    any_store: Any, make_rule: Any
) -> None:
    any_store.create(make_rule("taken", project_id=1))
    with pytest.raises(DuplicateRuleError, match="taken"):
        any_store.create(make_rule("taken", project_id=2))
    assert [r.project_id for r in any_store.get_all_by_project(1)] == [1]


def test_unknown_ids_raise_not_found(any_store: Any, make_rule: Any) -> None:
    with pytest.raises(RuleNotFoundError, match="ghost"):
        any_store.get("ghost")
    with pytest.raises(RuleNotFoundError, match="ghost"):
        any_store.update(make_rule("ghost"))
    with pytest.raises(RuleNotFoundError, match="ghost"):
        any_store.delete("ghost")


def test_update_keeps_created_at_and_sets_updated_at(any_store: Any, make_rule: Any) -> None:
    created = any_store.create(make_rule("changing", created_at=_old_time()))
    updated = any_store.update(created.with_changes(priority=9, created_at=None))
    assert updated.created_at == created.created_at
    assert updated.updated_at is not None and updated.updated_at > created.created_at
    assert any_store.get("changing").priority == 9


def test_update_can_move_a_rule_to_another_project(any_store: Any, make_rule: Any) -> None:
    rule = any_store.create(make_rule("mover", project_id=1))
    any_store.update(rule.with_changes(project_id=2))
    assert [r.id for r in any_store.get_all_by_project(2)] == ["mover"]
    assert any_store.get_all_by_project(1) == []


def test_delete_returns_the_removed_rule(any_store: Any, make_rule: Any) -> None:
    stored = any_store.create(make_rule("doomed"))
    assert any_store.delete("doomed") == stored
    assert any_store.get_all_by_project(None) == []
    with pytest.raises(RuleNotFoundError):
        any_store.get("doomed")


def test_order_is_stable_across_reads(any_store: Any, make_rule: Any) -> None:
    for index in range(15):
        any_store.create(make_rule(f"rule_{index:02d}"))
    first = [r.id for r in any_store.get_all_by_project(None)]
    assert first == [r.id for r in any_store.get_all_by_project(None)]
    assert sorted(first) == [f"rule_{index:02d}" for index in range(15)]


def _old_time() -> Any:
    from datetime import UTC, datetime

    return datetime(2026, 2, 16, 14, 59, tzinfo=UTC)
