"""Run one call within a timeout, and cap what a tool returns.

`call_with_timeout` runs a sync call on a shared pool of daemon worker threads and waits at
most ``timeout`` seconds (`acall_with_timeout` is an asyncio deadline). Python cannot stop
a thread, so a call that times out keeps its worker busy until it returns; its result is
then dropped. Daemon threads (unlike ``ThreadPoolExecutor``'s, which are joined at exit)
let the process exit even while a tool hangs. Each worker runs the call in a copy of the
caller's context, so LangGraph's ``interrupt()`` and ``get_config()`` work inside it.

`truncate_observation` cuts a text to a number of UTF-8 bytes, marker included, at a
character boundary.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from langchain_agent_rules.middleware._arguments import clean_text
from langchain_agent_rules.middleware.prompts import TRUNCATION_MARKER

__all__ = ["CallTimedOut", "acall_with_timeout", "call_with_timeout", "truncate_observation"]

T = TypeVar("T")


class CallTimedOut(Exception):
    """The call did not finish within its timeout (raised by our wait, never by a tool)."""


def truncate_observation(text: str, max_bytes: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes, marker included.

    Returns the text and whether it was cut. The marker says how many bytes were shown
    out of how many; the cut never splits a character. Unpaired surrogates become
    U+FFFD, so the text can always be encoded and stored.
    """
    text = clean_text(text)
    encoded = text.encode("utf-8")
    total = len(encoded)
    if total <= max_bytes:
        return text, False
    budget = max_bytes - len(TRUNCATION_MARKER.format(shown=max_bytes, total=total).encode())
    shown = encoded[: max(budget, 0)].decode("utf-8", errors="ignore")
    shown_bytes = len(shown.encode("utf-8"))
    return shown + TRUNCATION_MARKER.format(shown=shown_bytes, total=total), True


class _DaemonWorkers:
    """A pool of daemon threads that grows when every worker is busy (or stuck)."""

    def __init__(self) -> None:
        self._tasks: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, work: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        context = contextvars.copy_context()
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                threading.Thread(target=self._work, name="agent-tool", daemon=True).start()
        self._tasks.put((future, lambda: context.run(work)))
        return future

    def _work(self) -> None:
        while True:
            future, work = self._tasks.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work())
                except BaseException as error:
                    future.set_exception(error)
            with self._lock:
                self._idle += 1


_WORKERS = _DaemonWorkers()


def _new_workers_after_fork() -> None:
    # A forked child inherits the pool's idle count but none of its threads; without a
    # fresh pool every sync tool call in a pre-fork worker (gunicorn --preload, Celery
    # prefork) would wait for a thread that does not exist and time out.
    global _WORKERS
    _WORKERS = _DaemonWorkers()


os.register_at_fork(after_in_child=_new_workers_after_fork)


def call_with_timeout(work: Callable[[], T], timeout: float | None) -> T:
    """``work()``, or `CallTimedOut` once ``timeout`` seconds have passed (None: no limit)."""
    if timeout is None:
        return work()
    future = _WORKERS.submit(work)
    try:
        return future.result(timeout=timeout)
    except TimeoutError as error:
        # A tool may raise TimeoutError itself; only our own wait expiring is a timeout.
        if future.done() and future.exception() is error:
            raise
        raise CallTimedOut from None


async def acall_with_timeout(work: Callable[[], Awaitable[T]], timeout: float | None) -> T:
    """Async `call_with_timeout`: an asyncio deadline around ``work()``."""
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            return await work()
    except TimeoutError:
        if deadline.expired():
            raise CallTimedOut from None
        raise
