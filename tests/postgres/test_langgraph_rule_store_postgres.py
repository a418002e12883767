"""LangGraphRuleStore over LangGraph's own PostgresStore, shared by several processes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore

from langchain_agent_rules.errors import RuleNotFoundError
from langchain_agent_rules.rules.langgraph_store import LangGraphRuleStore
from langchain_agent_rules.rules.model import Rule

from .processes import run_alone

pytestmark = pytest.mark.postgres


def numbered(count: int, project_id: int | None = None, prefix: str = "rule") -> list[Rule]:
    return [
        Rule(
            id=f"{prefix}_{index:02d}",
            type="guideline",
            target="agent",
            content=f"Guideline number {index} of {prefix}.",
            priority=index,
            project_id=project_id,
        )
        for index in range(count)
    ]


@pytest.fixture
def postgres_store(pg_search_path_url: str) -> Iterator[PostgresStore]:
    with PostgresStore.from_conn_string(pg_search_path_url) as store:
        store.setup()
        yield store


def list_ids_elsewhere(url: str, project_id: int | None, *, ready: Callable[[], object]) -> str:
    """Open a fresh PostgresStore in this process and list the effective rule ids."""
    ready()
    with PostgresStore.from_conn_string(url) as store:
        rules = LangGraphRuleStore(store).get_all_by_project(project_id)
    return json.dumps([rule.id for rule in rules])


def test_more_than_ten_rules_all_come_back_in_order(postgres_store: PostgresStore) -> None:
    rules = LangGraphRuleStore(postgres_store)
    created = [rules.create(rule) for rule in numbered(25) + numbered(12, 4, prefix="four")]

    global_ids = [rule.id for rule in created[:25]]
    assert [rule.id for rule in rules.get_all_by_project(None)] == global_ids
    assert [rule.id for rule in rules.get_all_by_project(4)] == [rule.id for rule in created]
    assert rules.get("rule_17").priority == 17


def test_another_process_sees_the_same_rules(
    postgres_store: PostgresStore, pg_search_path_url: str
) -> None:
    rules = LangGraphRuleStore(postgres_store)
    for rule in numbered(15, 2):
        rules.create(rule)
    rules.delete("rule_03")

    seen = json.loads(run_alone(list_ids_elsewhere, pg_search_path_url, 2))

    assert seen == [f"rule_{index:02d}" for index in range(15) if index != 3]
    assert json.loads(run_alone(list_ids_elsewhere, pg_search_path_url, None)) == []


async def test_the_async_twins_work_on_async_postgres_store(pg_search_path_url: str) -> None:
    async with AsyncPostgresStore.from_conn_string(pg_search_path_url) as store:
        await store.setup()
        rules = LangGraphRuleStore(store)
        for rule in numbered(12):
            await rules.acreate(rule)
        updated = await rules.aupdate((await rules.aget("rule_05")).with_changes(priority=99))

        listed = await rules.aget_all_by_project(None)

    assert len(listed) == 12
    assert listed[5] == updated


async def test_checks_and_64_bit_numbers_survive_the_postgres_store(
    pg_search_path_url: str,
) -> None:
    checked = Rule(
        id="no_email",
        type="prohibition",
        target="output",
        content="Never reveal e-mail addresses.",
        priority=2**62,
        project_id=2**62,
        check={"forbid": "email", "scope": "answer_and_observations"},
    )
    async with AsyncPostgresStore.from_conn_string(pg_search_path_url) as store:
        await store.setup()
        created = await LangGraphRuleStore(store).acreate(checked)
        read = await LangGraphRuleStore(store).aget("no_email")
        with pytest.raises(RuleNotFoundError):
            await LangGraphRuleStore(store).aget("\ud800")

    assert read == created and read.check == checked.check
