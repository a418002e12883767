"""Run functions in real, separate processes that start their work together.

The processes come from a fork server: a clean interpreter started once, with the heavy
modules imported, that forks each worker. Forking the test process itself would copy
state whose threads do not survive a fork (the agent's tool worker pool), and a fresh
interpreter per worker would cost seconds of imports. Each worker opens its own database
connections; workers must be module-level functions (they are passed by name).
"""

from __future__ import annotations

import multiprocessing
import queue
import traceback
from collections.abc import Callable
from typing import Any

_PRELOAD = [
    "langchain_agent_rules.agent.builder",
    "langchain_agent_rules.cli",
    "langchain_agent_rules.rules.sql_store",
    "langchain_agent_rules.testing",
    "langgraph.checkpoint.postgres",
    "langgraph.store.postgres",
    "psycopg",
]

Worker = Callable[..., str]
"""A worker gets its arguments plus ``ready``: it prepares, calls ``ready()``, then works."""


def run_together(
    worker: Worker, argument_lists: list[tuple[Any, ...]], timeout: float = 120
) -> list[str]:
    """Run ``worker`` once per argument tuple, each in its own process; return their results.

    Every process prepares first; all of them start working when the last one is ready.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)  # used when the fork server first starts
    barrier = context.Barrier(len(argument_lists))
    results: multiprocessing.Queue[tuple[int, str, str]] = context.Queue()
    processes = [
        context.Process(target=_run, args=(index, worker, arguments, barrier, results))
        for index, arguments in enumerate(argument_lists)
    ]
    for process in processes:
        process.start()
    try:
        collected: dict[int, str] = {}
        for _ in processes:
            try:
                index, status, value = results.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"a worker gave no result within {timeout} s") from None
            assert status == "ok", f"worker {index} failed:\n{value}"
            collected[index] = value
        return [collected[index] for index in range(len(processes))]
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()


def run_alone(worker: Worker, *arguments: Any, timeout: float = 120) -> str:
    """Run ``worker`` in one separate process and return its result."""
    return run_together(worker, [arguments], timeout=timeout)[0]


def _run(
    index: int,
    worker: Worker,
    arguments: tuple[Any, ...],
    barrier: Any,
    results: multiprocessing.Queue[tuple[int, str, str]],
) -> None:
    try:
        results.put((index, "ok", worker(*arguments, ready=barrier.wait)))
    except BaseException:
        barrier.abort()
        results.put((index, "error", traceback.format_exc()))
