"""Rule store benchmark: effective-rule reads and creates at 100, 1,000 and 10,000 rules.

Run by hand (not in CI):

    python benchmarks/bench_rules.py

Each store is filled with N rules (half global, half spread over 10 projects), then
measured in the same run as `InMemoryRuleStore`, and printed as a Markdown table with
the ratio to the in-memory store. With ``POSTGRES_URL`` set, the PostgreSQL stores join
(`SqlRuleStore` and `LangGraphRuleStore(PostgresStore)`, each in a throwaway schema);
concurrent writers are measured in ``benchmarks/bench_postgres.py``. A read is
``get_all_by_project(1)`` of an unchanged store; a create adds one new rule to a store
of N rules (for the JSON file this includes the lock, the full-file rewrite and two
fsyncs). Aims from issue 2: a read of an unchanged 10,000-rule file within 2x of the
in-memory store; a create at 10,000 rules under 50 ms.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langchain_agent_rules.rules._records import rule_to_record
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.langgraph_store import DEFAULT_RULE_NAMESPACE, LangGraphRuleStore
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule, utc_now
from langchain_agent_rules.rules.sql_store import SqlRuleStore, _row_of, _rules

SIZES = (100, 1_000, 10_000)
READ_REPEATS = 30
CREATE_REPEATS = 10


def rules(count: int) -> list[Rule]:
    now = utc_now().replace(microsecond=0)
    return [
        Rule(
            id=f"rule_{index:06d}",
            type="guideline",
            target="agent",
            content=f"Benchmark rule number {index}: keep answers short and precise.",
            priority=index % 7,
            project_id=None if index % 2 == 0 else index % 10 + 1,
            created_at=now,
            updated_at=now,
        )
        for index in range(count)
    ]


@contextmanager
def in_memory(seed: list[Rule], _: Path) -> Iterator[Any]:
    yield InMemoryRuleStore(seed)


@contextmanager
def json_file(seed: list[Rule], folder: Path) -> Iterator[Any]:
    path = folder / "rules.json"
    lines = [json.dumps(rule_to_record(rule), ensure_ascii=False) for rule in seed]
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    store = JsonFileRuleStore(path)
    store.get_all_by_project(None)  # the one parse; later reads hit the cache
    yield store


def _put_all(backend: Any, seed: list[Rule]) -> None:
    backend.batch(
        [PutOp(DEFAULT_RULE_NAMESPACE, rule.id, rule_to_record(rule), index=False) for rule in seed]
    )


@contextmanager
def langgraph_memory(seed: list[Rule], _: Path) -> Iterator[Any]:
    backend = InMemoryStore()
    _put_all(backend, seed)
    yield LangGraphRuleStore(backend)


@contextmanager
def langgraph_sqlite(seed: list[Rule], folder: Path) -> Iterator[Any]:
    connection = sqlite3.connect(
        folder / "store.sqlite", check_same_thread=False, isolation_level=None
    )
    backend = SqliteStore(connection)
    backend.setup()
    _put_all(backend, seed)
    yield LangGraphRuleStore(backend)
    connection.close()


def _seed_sql(store: SqlRuleStore, seed: list[Rule]) -> None:
    store.get_all_by_project(None)  # creates the table
    with store.engine.begin() as connection:  # one bulk insert instead of N transactions
        connection.execute(_rules.insert(), [_row_of(rule) for rule in seed])


@contextmanager
def sql_sqlite(seed: list[Rule], folder: Path) -> Iterator[Any]:
    store = SqlRuleStore(f"sqlite:///{folder / 'rules.db'}")
    _seed_sql(store, seed)
    yield store
    store.engine.dispose()


@contextmanager
def postgres_schema() -> Iterator[str]:
    """POSTGRES_URL with its search_path set to a new schema, dropped afterwards."""
    import psycopg

    url, schema = os.environ["POSTGRES_URL"], f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


@contextmanager
def sql_postgres(seed: list[Rule], _: Path) -> Iterator[Any]:
    with postgres_schema() as url:
        store = SqlRuleStore(url)
        _seed_sql(store, seed)
        yield store
        store.engine.dispose()


@contextmanager
def langgraph_postgres(seed: list[Rule], _: Path) -> Iterator[Any]:
    from langgraph.store.postgres import PostgresStore

    with postgres_schema() as url, PostgresStore.from_conn_string(url) as backend:
        backend.setup()
        _put_all(backend, seed)
        yield LangGraphRuleStore(backend)


STORES: dict[str, Callable[[list[Rule], Path], Any]] = {
    "InMemoryRuleStore": in_memory,
    "JsonFileRuleStore": json_file,
    "LangGraphRuleStore(InMemoryStore)": langgraph_memory,
    "LangGraphRuleStore(SqliteStore)": langgraph_sqlite,
    "SqlRuleStore(SQLite)": sql_sqlite,
}
if os.environ.get("POSTGRES_URL"):
    STORES["SqlRuleStore(PostgreSQL)"] = sql_postgres
    STORES["LangGraphRuleStore(PostgresStore)"] = langgraph_postgres


def median_seconds(action: Callable[[int], object], repeats: int) -> float:
    timings = []
    for attempt in range(repeats):
        start = time.perf_counter()
        action(attempt)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def measure(name: str, size: int) -> tuple[float, float]:
    seed = rules(size)
    with tempfile.TemporaryDirectory() as folder, STORES[name](seed, Path(folder)) as store:
        read = median_seconds(lambda _: store.get_all_by_project(1), READ_REPEATS)
        template = seed[0]
        create = median_seconds(
            lambda attempt: store.create(
                template.with_changes(id=f"new_{attempt:04d}", created_at=None, updated_at=None)
            ),
            CREATE_REPEATS,
        )
    return read, create


def main() -> None:
    print("| store | rules | read (ms) | read vs memory | create (ms) | create vs memory |")
    print("|---|---:|---:|---:|---:|---:|")
    for size in SIZES:
        baseline = measure("InMemoryRuleStore", size)
        for name in STORES:
            read, create = baseline if name == "InMemoryRuleStore" else measure(name, size)
            print(
                f"| {name} | {size:,} | {read * 1000:.3f} | {read / baseline[0]:.1f}x "
                f"| {create * 1000:.3f} | {create / baseline[1]:.0f}x |"
            )


if __name__ == "__main__":
    main()
