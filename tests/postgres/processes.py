"""Run functions in real, separate processes that start their work together.

The processes are forked from the test process, so they skip the seconds of imports a new
interpreter needs; each one opens its own database connections.
"""

from __future__ import annotations

import multiprocessing
import queue
import traceback
from collections.abc import Callable
from typing import Any

Worker = Callable[..., str]
"""A worker gets its arguments plus ``ready``: it prepares, calls ``ready()``, then works."""


def run_together(
    worker: Worker, argument_lists: list[tuple[Any, ...]], timeout: float = 120
) -> list[str]:
    """Run ``worker`` once per argument tuple, each in its own process; return their results.

    Every process prepares first; all of them start working when the last one is ready.
    """
    context = multiprocessing.get_context("fork")
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
