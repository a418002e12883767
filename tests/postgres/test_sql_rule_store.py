"""SqlRuleStore on a real SQLite file and on the real PostgreSQL server at POSTGRES_URL."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    inspect,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

from langchain_agent_rules.errors import DuplicateRuleError, RuleNotFoundError, RuleStoreError
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.sql_store import SqlRuleStore, sqlalchemy_url

from .processes import run_together
from .rule_writer import engine_for, write_many, write_one


@dataclass
class Database:
    """Where a test's rules live: an engine, plus what a worker process needs to reach it."""

    engine: Engine
    url: str
    schema: str | None  # None when the database has no schemas (SQLite)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'rules.db'}"
        engine = create_engine(url)
        yield Database(engine, url, None)
        engine.dispose()
    else:
        schema = request.getfixturevalue("pg_schema")
        url = request.getfixturevalue("postgres_url")
        engine = engine_for(url, schema)
        yield Database(engine, url, schema)
        engine.dispose()


def make_rule(rule_id: str, project_id: int | None = None, **fields: object) -> Rule:
    values: dict[str, object] = {
        "type": "requirement",
        "target": "output",
        "content": f"Follow the rule called {rule_id}.",
        "priority": 5,
    }
    values.update(fields)
    return Rule(id=rule_id, project_id=project_id, **values)


def test_a_created_rule_reads_back_with_every_field(database: Database) -> None:
    store = SqlRuleStore(database.engine)
    paris = timezone(timedelta(hours=2))
    created = store.create(
        make_rule(
            "with_fields",
            project_id=3,
            metadata={"owner": "ops", "tags": ["a", "b"], "nested": {"n": 1}},
            created_at=datetime(2026, 2, 16, 14, 59, tzinfo=paris),
        )
    )

    read = store.get("with_fields")

    assert read == created
    assert read.created_at == datetime(2026, 2, 16, 12, 59, tzinfo=UTC)
    assert read.created_at is not None and read.created_at.utcoffset() == timedelta(0)
    assert read.metadata == {"owner": "ops", "tags": ["a", "b"], "nested": {"n": 1}}
    assert read.updated_at is not None and read.updated_at > read.created_at


def test_a_project_sees_global_rules_and_its_own_oldest_first(database: Database) -> None:
    store = SqlRuleStore(database.engine)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    store.create(make_rule("global_b", created_at=start))
    store.create(make_rule("global_a", created_at=start))
    store.create(make_rule("project_seven", project_id=7, created_at=start - timedelta(days=1)))
    store.create(make_rule("project_eight", project_id=8))

    assert [r.id for r in store.get_all_by_project(7)] == [
        "project_seven",
        "global_a",
        "global_b",
    ]
    assert [r.id for r in store.get_all_by_project(None)] == ["global_a", "global_b"]
    assert [r.id for r in store.get_all_by_project(9)] == ["global_a", "global_b"]


def test_a_duplicate_id_is_refused_and_the_store_stays_usable(database: Database) -> None:
    store = SqlRuleStore(database.engine)
    store.create(make_rule("taken", content="The first rule with this id."))

    with pytest.raises(DuplicateRuleError, match="'taken' already exists"):
        store.create(make_rule("taken", project_id=4, content="A second rule with this id."))

    assert store.get("taken").content == "The first rule with this id."
    store.create(make_rule("after_the_refusal"))
    assert [r.id for r in store.get_all_by_project(4)] == ["taken", "after_the_refusal"]


def test_update_keeps_created_at_and_moves_updated_at(database: Database) -> None:
    store = SqlRuleStore(database.engine)
    original = store.create(make_rule("changing"))

    updated = store.update(
        original.with_changes(content="Changed content of the rule.", created_at=None)
    )

    assert updated.created_at == original.created_at
    assert updated.updated_at is not None and original.updated_at is not None
    assert updated.updated_at > original.updated_at
    assert store.get("changing") == updated


def test_delete_returns_the_rule_and_removes_it(database: Database) -> None:
    store = SqlRuleStore(database.engine)
    created = store.create(make_rule("short_lived"))

    assert store.delete("short_lived") == created
    assert store.get_all_by_project(None) == []


@pytest.mark.parametrize("operation", ["get", "update", "delete"])
def test_an_unknown_id_raises_rule_not_found(database: Database, operation: str) -> None:
    store = SqlRuleStore(database.engine)
    argument = make_rule("missing") if operation == "update" else "missing"

    with pytest.raises(RuleNotFoundError, match="no rule with id 'missing'"):
        getattr(store, operation)(argument)


async def test_the_async_twins_read_and_write(database: Database) -> None:
    store = SqlRuleStore(database.engine)

    created = await store.acreate(make_rule("async_rule", project_id=2))
    updated = await store.aupdate(created.with_changes(priority=9))

    assert await store.aget("async_rule") == updated
    assert await store.aget_all_by_project(2) == [updated]
    assert await store.adelete("async_rule") == updated
    with pytest.raises(DuplicateRuleError):
        await store.acreate(make_rule("twice"))
        await store.acreate(make_rule("twice"))


def test_a_duplicate_id_from_two_processes_at_once_is_refused_for_one(
    database: Database,
) -> None:
    results = run_together(
        write_one,
        [
            (database.url, database.schema, "contested", "Written by the first process."),
            (database.url, database.schema, "contested", "Written by the second process."),
        ],
    )

    assert sorted(results) == ["created", "duplicate"]
    winner = results.index("created")
    stored = SqlRuleStore(database.engine).get_all_by_project(None)
    assert [r.id for r in stored] == ["contested"]
    assert (
        stored[0].content
        == ["Written by the first process.", "Written by the second process."][winner]
    )


@pytest.mark.postgres
def test_eight_processes_writing_100_rules_each_end_with_exactly_800(
    postgres_url: str, pg_schema: str, pg_engine: Engine
) -> None:
    results = run_together(
        write_many, [(postgres_url, pg_schema, f"writer{n}", 100) for n in range(8)]
    )

    assert results == ["created 100"] * 8
    rules = SqlRuleStore(pg_engine).get_all_by_project(None)
    assert len(rules) == 800
    assert len({rule.id for rule in rules}) == 800
    with pg_engine.connect() as connection:
        assert (
            connection.execute(text(f"SELECT count(*) FROM {pg_schema}.agent_rules")).scalar()
            == 800
        )


def test_a_url_opens_the_store(tmp_path: Path) -> None:
    store = SqlRuleStore(f"sqlite:///{tmp_path / 'from_url.db'}")
    store.create(make_rule("from_url"))

    assert SqlRuleStore(f"sqlite:///{tmp_path / 'from_url.db'}").get("from_url").id == "from_url"


def test_a_plain_postgresql_url_uses_psycopg_3() -> None:
    assert sqlalchemy_url("postgresql://u:p@127.0.0.1:5432/db") == (
        "postgresql+psycopg://u:p@127.0.0.1:5432/db"
    )
    assert sqlalchemy_url("sqlite:///rules.db") == "sqlite:///rules.db"


@pytest.mark.parametrize("bad", ["not a url", 42])
def test_something_else_than_an_engine_or_url_is_refused(bad: object) -> None:
    with pytest.raises(RuleStoreError, match="URL"):
        SqlRuleStore(bad)  # type: ignore[arg-type]


def test_a_file_that_is_not_a_database_raises_rule_store_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not a SQLite database, just some text " * 100)

    with pytest.raises(RuleStoreError, match=r"cannot read rules in .*broken\.db"):
        SqlRuleStore(f"sqlite:///{broken}").get_all_by_project(None)


def _table_of_version_0_1() -> Table:
    """The rules table exactly as version 0.1 created it: 32-bit integers, no check column."""
    metadata = MetaData()
    json_type = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
    return Table(
        "agent_rules",
        metadata,
        Column("id", String(64), primary_key=True),
        Column("type", String(16), nullable=False),
        Column("target", String(16), nullable=False),
        Column("content", Text, nullable=False),
        Column("priority", Integer, nullable=False),
        Column("project_id", Integer, nullable=True, index=True),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
        Column("metadata", json_type),
    )


def test_a_table_from_version_0_1_gains_the_check_column_and_keeps_its_rules(
    database: Database,
) -> None:
    old = _table_of_version_0_1()
    old.metadata.create_all(database.engine)
    stamp = datetime(2026, 2, 16, 14, 59, tzinfo=UTC)
    with database.engine.begin() as connection:
        connection.execute(
            old.insert().values(
                id="old_rule", type="guideline", target="agent", content="Written by 0.1 code.",
                priority=3, project_id=None, created_at=stamp, updated_at=stamp, metadata=None,
            )
        )  # fmt: skip

    store = SqlRuleStore(database.engine)
    assert store.get("old_rule").check is None
    checked = store.create(
        make_rule("no_email", check={"forbid": "email"}, priority=2**40, project_id=2**40)
    )

    assert SqlRuleStore(database.engine).get("no_email") == checked
    assert [r.id for r in store.get_all_by_project(2**40)] == ["old_rule", "no_email"]
    with database.engine.connect() as connection:
        schema = connection.schema_for_object(old)
        columns = {c["name"] for c in inspect(connection).get_columns("agent_rules", schema=schema)}
    assert "check" in columns


def test_two_stores_migrating_the_same_old_table_both_work(database: Database) -> None:
    _table_of_version_0_1().metadata.create_all(database.engine)
    first, second = SqlRuleStore(database.engine), SqlRuleStore(database.engine)
    first.create(make_rule("from_first", check={"language": "fr"}))
    second.create(make_rule("from_second", check={"max_chars": 10}))
    assert {r.id for r in first.get_all_by_project(None)} == {"from_first", "from_second"}


def test_ids_no_rule_can_have_never_reach_the_database(database: Database) -> None:
    store = SqlRuleStore(database.engine)
    for bad in ["\ud800bad", "x" * 10_000, "DROP TABLE"]:
        with pytest.raises(RuleNotFoundError, match="no rule with id"):
            store.get(bad)
        with pytest.raises(RuleNotFoundError, match="no rule with id"):
            store.delete(bad)
    assert store.get_all_by_project(None) == []
