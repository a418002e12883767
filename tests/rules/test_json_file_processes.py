"""JsonFileRuleStore under real concurrent processes and a writer killed mid-loop.

The writers are forked processes (no interpreter start-up, so the test stays fast);
each opens its own store on the shared file.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from multiprocessing.process import BaseProcess
from pathlib import Path

from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.model import Rule

_FORK = multiprocessing.get_context("fork")


def _write_rules(path: str, prefix: str, count: int) -> None:
    store = JsonFileRuleStore(path, create=True)
    index = 0
    while count < 0 or index < count:
        store.create(
            Rule(
                id=f"{prefix}_{index:05d}",
                type="guideline",
                target="agent",
                content="Written by a concurrent process " + "x" * (index % 50),
            )
        )
        index += 1


def start_writer(path: Path, prefix: str, count: int) -> BaseProcess:
    writer = _FORK.Process(target=_write_rules, args=(str(path), prefix, count))
    writer.start()
    return writer


def test_four_processes_creating_fifty_rules_each_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    writers = [start_writer(path, f"proc{number}", 50) for number in range(4)]
    for writer in writers:
        writer.join(timeout=120)
    assert [writer.exitcode for writer in writers] == [0, 0, 0, 0]

    entries = json.loads(path.read_text(encoding="utf-8"))
    assert len(entries) == 200
    rules = JsonFileRuleStore(path).get_all_by_project(None)
    assert len({rule.id for rule in rules}) == 200
    for number in range(4):
        own = [rule.id for rule in rules if rule.id.startswith(f"proc{number}_")]
        assert own == sorted(own) and len(own) == 50  # each writer's order is kept


def test_a_writer_killed_mid_loop_leaves_a_file_that_loads(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    JsonFileRuleStore(path, create=True)
    writer = start_writer(path, "doomed", -1)
    try:
        deadline = time.monotonic() + 60
        while len(JsonFileRuleStore(path).get_all_by_project(None)) < 20:
            assert writer.is_alive(), "the writer stopped on its own"
            assert time.monotonic() < deadline, "the writer made no progress"
            time.sleep(0.005)
    finally:
        assert writer.pid is not None
        os.kill(writer.pid, signal.SIGKILL)
        writer.join()
    assert writer.exitcode == -signal.SIGKILL

    store = JsonFileRuleStore(path)
    survivors = store.get_all_by_project(None)
    assert len(survivors) >= 20
    assert [rule.id for rule in survivors] == [f"doomed_{i:05d}" for i in range(len(survivors))]
    store.create(survivors[0].with_changes(id="after_the_kill"))  # the lock was released
    assert len(JsonFileRuleStore(path).get_all_by_project(None)) == len(survivors) + 1
