"""Hostile rules-file paths: whatever a path names, a store is a rules file or an error.

A FIFO with no writer, a device, a folder, a socket, a symlink loop, a file over the size
bound, a lock file that is not a file: each is a `RuleStoreError` naming the path, raised
in bounded time (a FIFO once hung every reader for ever), through every way a path
reaches a store. Nothing here is mocked: real FIFOs, sockets, devices and symlinks.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_agent_rules import JsonFileRuleStore, Rule, RuleStoreError, open_rule_store
from langchain_agent_rules.rules.json_file import MAX_RULES_FILE_BYTES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs, sockets and /dev are POSIX")

BOUND_SECONDS = 5.0


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()  # the socket file stays


def make_folder(path: Path) -> None:
    path.mkdir()


def link_to(target: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.symlink_to(target)

    return make


def make_loop(path: Path) -> None:
    path.symlink_to(path.name)


def make_sparse_huge_file(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(MAX_RULES_FILE_BYTES + 1)


def make_link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name("fifo"))
    path.symlink_to("fifo")


def make_link_to_folder(path: Path) -> None:
    path.with_name("folder").mkdir()
    path.symlink_to("folder")


# What sits at the rules path, and a piece of the message naming what is wrong.
HOSTILE_PATHS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (make_fifo, "is a FIFO (named pipe), not a rules file"),
    "socket": (make_socket, "is a socket, not a rules file"),
    "folder": (make_folder, "is a folder; give the path of a rules file such as"),
    "dev_null": (link_to("/dev/null"), "is a character device, not a rules file"),
    "dev_zero": (link_to("/dev/zero"), "is a character device, not a rules file"),
    "dev_urandom": (link_to("/dev/urandom"), "is a character device, not a rules file"),
    "link_to_fifo": (make_link_to_fifo, "is a FIFO (named pipe), not a rules file"),
    "link_to_folder": (make_link_to_folder, "is a folder"),
    "symlink_loop": (make_loop, "rules.json"),
    "over_the_size_bound": (make_sparse_huge_file, "a rules file may have at most 16,777,216"),
}

ENTRY_POINTS: dict[str, Callable[[Path], Any]] = {
    "JsonFileRuleStore": lambda path: JsonFileRuleStore(path).get_all(),
    "JsonFileRuleStore create": lambda path: JsonFileRuleStore(path, create=True).get_all(),
    "open_rule_store": lambda path: open_rule_store(str(path)).get_all(),
    "open_rule_store create": lambda path: open_rule_store(str(path), create=True).get_all(),
}


@pytest.fixture
def short_folder() -> Iterator[Path]:
    """A folder with a short path: a Unix socket's path must fit in 108 bytes."""
    with tempfile.TemporaryDirectory(prefix="rs") as folder:
        yield Path(folder)


def within_bound(action: Callable[[], Any]) -> BaseException | None:
    """Run ``action`` in a thread; fail if it is still running after the bound."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            action()
        except BaseException as error:  # reported to the test
            outcome.append(error)
        else:
            outcome.append(None)

    worker = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(BOUND_SECONDS)
    assert not worker.is_alive(), f"still running after {BOUND_SECONDS} s"
    assert time.monotonic() - started < BOUND_SECONDS
    return outcome[0]


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("kind", list(HOSTILE_PATHS))
def test_a_path_that_is_not_a_rules_file_is_an_error_naming_it_in_bounded_time(
    short_folder: Path, kind: str, entry: str
) -> None:
    make, message = HOSTILE_PATHS[kind]
    path = short_folder / "rules.json"
    make(path)
    before = sorted(p.name for p in short_folder.iterdir())

    error = within_bound(lambda: ENTRY_POINTS[entry](path))

    assert isinstance(error, RuleStoreError), repr(error)
    assert str(path) in str(error) and message in str(error)
    assert sorted(p.name for p in short_folder.iterdir()) == before  # nothing created


@pytest.mark.parametrize("kind", ["fifo", "socket", "folder", "dev_null", "over_the_size_bound"])
def test_a_rules_file_replaced_after_opening_is_refused_at_the_next_read(
    short_folder: Path, kind: str
) -> None:
    path = short_folder / "rules.json"
    store = JsonFileRuleStore(path, create=True)
    assert store.get_all() == []
    path.unlink()
    make, message = HOSTILE_PATHS[kind]
    make(path)

    for use in (store.get_all, lambda: store.get("any_rule"), lambda: store.delete("any_rule")):
        error = within_bound(use)
        assert isinstance(error, RuleStoreError) and message in str(error), repr(error)


def test_a_path_flipping_between_a_file_and_a_fifo_never_hangs_a_reader(
    short_folder: Path,
) -> None:
    """The stat and the open race: a FIFO renamed in between is caught by fstat."""
    path = short_folder / "rules.json"
    regular, fifo = short_folder / "regular", short_folder / "fifo"
    store = JsonFileRuleStore(path, create=True)
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            regular.write_text("[]\n", encoding="utf-8")
            os.replace(regular, path)
            os.mkfifo(fifo)
            os.replace(fifo, path)

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    outcomes: dict[str, int] = {"read": 0, "refused": 0}
    try:
        for _ in range(2000):
            error = within_bound(store.get_all)
            if error is None:
                outcomes["read"] += 1
            else:
                assert isinstance(error, RuleStoreError), repr(error)
                outcomes["refused"] += 1
    finally:
        stop.set()
        flipper.join(BOUND_SECONDS)
    assert outcomes["refused"] > 0


def test_a_write_that_would_pass_the_size_bound_is_refused_and_the_file_kept(
    short_folder: Path,
) -> None:
    path = short_folder / "rules.json"
    limits = {"max_rule_content_bytes": MAX_RULES_FILE_BYTES, "max_payload_bytes": 2**30}
    store = JsonFileRuleStore(path, create=True, limits=limits)
    half = MAX_RULES_FILE_BYTES // 2 + 1
    store.create(Rule(id="big_one", type="guideline", target="agent", content="x" * half))
    before = path.read_bytes()

    with pytest.raises(RuleStoreError, match=r"the change would make the file .* nothing written"):
        store.create(Rule(id="big_two", type="guideline", target="agent", content="y" * half))

    assert path.read_bytes() == before
    assert [rule.id for rule in JsonFileRuleStore(path).get_all()] == ["big_one"]


@pytest.mark.parametrize("kind", ["folder", "fifo", "dev_null"])
def test_a_lock_file_that_is_not_a_file_ends_a_write_in_bounded_time(
    short_folder: Path, kind: str
) -> None:
    path = short_folder / "rules.json"
    store = JsonFileRuleStore(path, create=True)
    lock = short_folder / "rules.json.lock"
    lock.unlink(missing_ok=True)
    HOSTILE_PATHS[kind][0](lock)
    rule = Rule(id="new_rule", type="guideline", target="agent", content="A new rule here.")

    error = within_bound(lambda: store.create(rule))

    # Either the write went through (a FIFO or a device can be locked) or it is our error.
    if error is None:
        assert [r.id for r in JsonFileRuleStore(path).get_all()] == ["new_rule"]
    else:
        assert isinstance(error, RuleStoreError) and str(path) in str(error), repr(error)
        assert JsonFileRuleStore(path).get_all() == []


def test_a_dangling_symlink_is_a_missing_file_and_create_writes_nothing_elsewhere(
    short_folder: Path,
) -> None:
    path = short_folder / "rules.json"
    path.symlink_to(short_folder / "elsewhere" / "target.json")
    with pytest.raises(RuleStoreError, match=r"^no rules file at "):
        JsonFileRuleStore(path)

    JsonFileRuleStore(path, create=True)  # the link is replaced, as every write replaces

    assert not path.is_symlink() and path.read_text(encoding="utf-8") == "[]\n"
    assert not (short_folder / "elsewhere").exists()
