"""PostgreSQL in numbers: the rule stores and `PostgresSaver`, beside their peers, in one run.

Run by hand against a throwaway server (never in CI; figures depend on the machine):

    pg_env="$(.ci/postgres.sh start)" && eval "$pg_env"
    /work/venv/bin/python benchmarks/bench_postgres.py
    .ci/postgres.sh stop

Three parts:
1. Rule stores: writes per second with 1 and 8 concurrent writer processes, and the reads
   per second a reader process gets meanwhile (and with no writer).
2. The duplicate-id race: two processes create the same id at the same moment, many times;
   how often did both "succeed" (the second silently overwrote the first)?
3. The agent loop: per-iteration cost of a 25-iteration tool loop with no checkpointer,
   InMemorySaver, SqliteSaver and PostgresSaver (sync and async); wall and CPU time of the
   fastest repetition, the one least disturbed by other processes.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.errors import DuplicateRuleError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.langgraph_store import LangGraphRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.sql_store import SqlRuleStore
from langchain_agent_rules.testing import ScriptedChatModel

STORE_KINDS = ["sql/postgresql", "langgraph/postgresql", "sql/sqlite", "json file"]
WRITES_PER_RUN = 400
RACE_TRIALS = 30
LOOP_ITERATIONS = 25
LOOP_REPEATS = 7


# -- places to keep rules --------------------------------------------------------------


def with_search_path(url: str, schema: str) -> str:
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}"


@contextmanager
def fresh_location(kind: str, url: str, folder: Path) -> Iterator[str]:
    """A new empty place for ``kind``: a PostgreSQL schema, or a file in ``folder``."""
    if kind.endswith("postgresql"):
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}")
        try:
            yield with_search_path(url, schema)
        finally:
            with psycopg.connect(url, autocommit=True) as connection:
                connection.execute(f"DROP SCHEMA {schema} CASCADE")
    elif kind == "sql/sqlite":
        # Readers wait for a stream of writers: give them longer than the 5 s default.
        yield f"sqlite:///{folder / f'{uuid.uuid4().hex}.db'}?timeout=60"
    else:
        yield str(folder / f"{uuid.uuid4().hex}.json")


@contextmanager
def open_store(kind: str, location: str) -> Iterator[Any]:
    if kind == "langgraph/postgresql":
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(location) as store:
            store.setup()
            yield LangGraphRuleStore(store)
    elif kind.startswith("sql/"):
        store = SqlRuleStore(location)
        yield store
        store.engine.dispose()
    else:
        yield JsonFileRuleStore(location, create=True)


def guideline(rule_id: str, project_id: int | None = None) -> Rule:
    return Rule(
        id=rule_id,
        type="guideline",
        target="agent",
        content=f"Guideline {rule_id}: keep answers short.",
        project_id=project_id,
    )


# -- processes released together -------------------------------------------------------


def _child(worker: Callable[..., Any], arguments: tuple[Any, ...], barrier: Any, out: Any) -> None:
    try:
        out.put(worker(*arguments, ready=barrier.wait))
    except BaseException as error:
        barrier.abort()
        out.put(error)


def together(jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> list[Any]:
    context = multiprocessing.get_context("fork")
    barrier, out = context.Barrier(len(jobs)), context.Queue()
    processes = [context.Process(target=_child, args=(w, a, barrier, out)) for w, a in jobs]
    for process in processes:
        process.start()
    results = [out.get(timeout=300) for _ in processes]
    for process in processes:
        process.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def write_rules(
    kind: str, location: str, prefix: str, count: int, *, ready: Callable[[], object]
) -> tuple[str, float, float]:
    with open_store(kind, location) as store:
        store.get_all_by_project(None)
        ready()
        start = time.perf_counter()
        for index in range(count):
            store.create(guideline(f"{prefix}_{index}"))
        return "writer", start, time.perf_counter()


def read_while(
    kind: str, location: str, seconds: float | None, *, ready: Callable[[], object]
) -> tuple[str, float, float]:
    """Read all rules in a loop: for ``seconds``, or until the writers are done (None)."""
    with open_store(kind, location) as store:
        ready()
        start = time.perf_counter()
        reads, done = 0, False
        while not done:
            rules = store.get_all_by_project(7)
            reads += 1
            elapsed = time.perf_counter() - start
            # Without a duration, read until every write has landed.
            done = len(rules) >= WRITES_PER_RUN + 50 if seconds is None else elapsed >= seconds
        return "reader", reads, elapsed


def bench_rule_store(kind: str, url: str, folder: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    for writers in (1, 8):
        with fresh_location(kind, url, folder) as location:
            with open_store(kind, location) as store:
                for index in range(50):
                    store.create(guideline(f"seed_{index}", project_id=7 if index % 2 else None))
            per_writer = WRITES_PER_RUN // writers
            jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
                (write_rules, (kind, location, f"w{n}", per_writer)) for n in range(writers)
            ]
            jobs.append((read_while, (kind, location, None)))
            results = together(jobs)
            spans = [(s, e) for tag, s, e in results if tag == "writer"]
            wall = max(e for _, e in spans) - min(s for s, _ in spans)
            figures[f"writes/s, {writers} writer(s)"] = WRITES_PER_RUN / wall
            [(_, reads, elapsed)] = [r for r in results if r[0] == "reader"]
            figures[f"reads/s during {writers} writer(s)"] = reads / elapsed
    with fresh_location(kind, url, folder) as location:
        with open_store(kind, location) as store:
            for index in range(100):
                store.create(guideline(f"seed_{index}", project_id=7 if index % 2 else None))
        [(_, reads, elapsed)] = together([(read_while, (kind, location, 2.0))])
        figures["reads/s, no writer (100 rules)"] = reads / elapsed
    return figures


# -- the duplicate race ----------------------------------------------------------------


def create_contested(kind: str, location: str, rule_id: str, *, ready: Callable[[], object]) -> str:
    with open_store(kind, location) as store:
        store.get_all_by_project(None)
        ready()
        try:
            store.create(guideline(rule_id))
        except DuplicateRuleError:
            return "duplicate"
        return "created"


def bench_race(kind: str, url: str, folder: Path) -> int:
    both_created = 0
    with fresh_location(kind, url, folder) as location:
        with open_store(kind, location):
            pass  # PostgresStore.setup() is not safe to run in two processes at once
        for trial in range(RACE_TRIALS):
            job = (create_contested, (kind, location, f"contested_{trial}"))
            if together([job, job]) == ["created", "created"]:
                both_created += 1
    return both_created


# -- the agent loop --------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script() -> ScriptedChatModel:
    calls = [
        AIMessage("", tool_calls=[{"name": "add", "args": {"a": i, "b": 1}, "id": f"c{i}"}])
        for i in range(LOOP_ITERATIONS)
    ]
    return ScriptedChatModel([*calls, "FINAL: done"])


Timing = tuple[float, float]
"""(wall, CPU) milliseconds per iteration, the fastest repetition: the least disturbed."""


def _agent(checkpointer: Any) -> Any:
    return create_rules_agent(
        script(),
        [add],
        protocol="native",
        max_iterations=LOOP_ITERATIONS + 5,
        checkpointer=checkpointer,
    )


def _fastest(walls: list[float], cpus: list[float]) -> Timing:
    return min(walls) / LOOP_ITERATIONS * 1000, min(cpus) / LOOP_ITERATIONS * 1000


def per_iteration_ms(checkpointer: Any, asynchronous: bool) -> Timing:
    walls, cpus = [], []
    for _ in range(LOOP_REPEATS):
        agent = _agent(checkpointer)
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        task = {"messages": [("user", "Count up.")]}
        wall, cpu = time.perf_counter(), time.process_time()
        if asynchronous:
            asyncio.run(agent.ainvoke(task, config))
        else:
            agent.invoke(task, config)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return _fastest(walls, cpus)


def per_iteration_async_postgres(location: str) -> Timing:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async def measure() -> Timing:
        async with AsyncPostgresSaver.from_conn_string(location) as saver:
            walls, cpus = [], []
            for _ in range(LOOP_REPEATS):
                agent = _agent(saver)
                config = {"configurable": {"thread_id": uuid.uuid4().hex}}
                wall, cpu = time.perf_counter(), time.process_time()
                await agent.ainvoke({"messages": [("user", "Count up.")]}, config)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            return _fastest(walls, cpus)

    return asyncio.run(measure())


def bench_agent_loop(url: str, folder: Path) -> dict[str, Timing]:
    import sqlite3

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    figures = {
        "no checkpointer (sync)": per_iteration_ms(None, False),
        "no checkpointer (async)": per_iteration_ms(None, True),
        "InMemorySaver (sync)": per_iteration_ms(InMemorySaver(), False),
    }
    connection = sqlite3.connect(folder / "checkpoints.sqlite", check_same_thread=False)
    saver = SqliteSaver(connection)
    saver.setup()
    figures["SqliteSaver (sync)"] = per_iteration_ms(saver, False)
    connection.close()
    with fresh_location("sql/postgresql", url, folder) as location:
        with PostgresSaver.from_conn_string(location) as postgres_saver:
            postgres_saver.setup()
            figures["PostgresSaver (sync)"] = per_iteration_ms(postgres_saver, False)
        figures["AsyncPostgresSaver (async)"] = per_iteration_async_postgres(location)
    return figures


# -- report ----------------------------------------------------------------------------


def main() -> int:
    url = os.environ.get("POSTGRES_URL")
    if not url:
        print("POSTGRES_URL is not set; start a server with .ci/postgres.sh start", file=sys.stderr)
        return 2
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)

        print(f"\n== rule stores ({WRITES_PER_RUN} writes per run, 50 seeded rules)")
        table = {kind: bench_rule_store(kind, url, folder) for kind in STORE_KINDS}
        measures = list(next(iter(table.values())))
        print(f"{'':36}" + "".join(f"{kind:>22}" for kind in STORE_KINDS))
        for measure in measures:
            print(f"{measure:36}" + "".join(f"{table[k][measure]:>22,.0f}" for k in STORE_KINDS))
        base = table["sql/postgresql"]
        for kind in STORE_KINDS[1:]:
            ratios = ", ".join(
                f"{m.split(',')[0]} x{table[kind][m] / base[m]:.2f}" for m in measures[:2]
            )
            print(f"  {kind} vs sql/postgresql: {ratios}")

        print(f"\n== duplicate-id race: {RACE_TRIALS} trials of two processes at once")
        for kind in ("sql/postgresql", "langgraph/postgresql", "sql/sqlite", "json file"):
            both = bench_race(kind, url, folder)
            print(f"{kind:24} both processes 'created' the same id in {both}/{RACE_TRIALS}")

        print(
            f"\n== agent loop: ms per iteration ({LOOP_ITERATIONS} tool iterations, fastest of "
            f"{LOOP_REPEATS}; CPU is this process only, not the server's)"
        )
        loop = bench_agent_loop(url, folder)
        bare = loop["no checkpointer (sync)"][0]
        for name, (wall, cpu) in loop.items():
            print(
                f"{name:30} {wall:7.2f} wall {cpu:7.2f} CPU   x{wall / bare:.2f} of no checkpointer"
            )
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
