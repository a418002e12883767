"""Prefix states on disk: real files, real concurrent processes, damaged and stale entries."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import langchain_agent_rules
from langchain_agent_rules.models._prefix_store import ENTRY_SUFFIX, PrefixKey, PrefixStore
from langchain_agent_rules.models.local import (
    PREFIX_CACHE_DIR_ENV,
    ChatLocalLlama,
    default_prefix_cache_dir,
)
from langchain_agent_rules.models.weights import CACHE_DIR_ENV

KEY = PrefixKey(place='{"model": "/m/a.gguf", "n_ctx": 4096}', version="a:1:2", tokens=(1, 2, 3))
STATE = bytes(range(256)) * 40


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{ENTRY_SUFFIX}"))


def test_a_saved_state_is_read_back_from_its_own_file(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path / "prefix", max_bytes=1 << 20)
    store.put(KEY, STATE)
    assert store.get(KEY) == STATE
    assert [path.name for path in (tmp_path / "prefix").iterdir()] == [KEY.file_name()]
    # Another process (a new store object) reads it the same.
    assert PrefixStore(tmp_path / "prefix", max_bytes=1 << 20).get(KEY) == STATE


def test_other_tokens_or_another_place_miss(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, max_bytes=1 << 20)
    store.put(KEY, STATE)
    assert store.get(PrefixKey(KEY.place, KEY.version, (1, 2))) is None
    assert store.get(PrefixKey('{"model": "/m/b.gguf"}', KEY.version, KEY.tokens)) is None
    assert _entries(tmp_path) == [tmp_path / KEY.file_name()]


def test_a_truncated_entry_is_ignored_and_removed(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, max_bytes=1 << 20)
    store.put(KEY, STATE)
    path = tmp_path / KEY.file_name()
    for size in (path.stat().st_size - 1, 100, 10, 0):
        store.put(KEY, STATE)
        os.truncate(path, size)
        assert store.get(KEY) is None, size
        assert not path.exists()


def _with_header_length(entry: bytes, length: int) -> bytes:
    start = entry.index(b'{"place"')
    return entry[: start - 4] + length.to_bytes(4, "big") + entry[start:]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"not a prefix state" + data[18:], id="wrong magic"),
        pytest.param(lambda data: data[:-1] + bytes([data[-1] ^ 1]), id="one state bit"),
        pytest.param(lambda data: data + b"\0", id="a byte too many"),
        pytest.param(lambda data: data.replace(b'"a:1:2"', b'"a:1:3"'), id="header edited"),
        pytest.param(lambda data: _with_header_length(data, 0xFFFFFFFF), id="huge header"),
        pytest.param(lambda data: _with_header_length(data, 10**6), id="header past the end"),
        pytest.param(lambda data: data.replace(b'{"place"', b"[[[[[[[["), id="header not json"),
        pytest.param(lambda data: data.replace(b'"place"', b'"plac\xff'), id="header not utf-8"),
    ],
)
def test_a_damaged_entry_is_ignored_and_removed(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    store = PrefixStore(tmp_path, max_bytes=1 << 20)
    store.put(KEY, STATE)
    path = tmp_path / KEY.file_name()
    path.write_bytes(damage(path.read_bytes()))
    assert store.get(KEY) is None
    assert not path.exists()


def test_a_state_for_another_version_of_the_model_is_stale_and_replaced(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, max_bytes=1 << 20)
    store.put(KEY, STATE)
    rebuilt = PrefixKey(KEY.place, "a:1:99 (model file re-joined)", KEY.tokens)
    assert rebuilt.file_name() == KEY.file_name()  # the same place and prefix ...
    assert store.get(rebuilt) is None  # ... but not the same model file: stale
    assert _entries(tmp_path) == []
    store.put(rebuilt, b"new state")
    assert store.get(rebuilt) == b"new state"
    assert store.get(KEY) is None


def test_an_entry_copied_under_another_keys_name_is_not_used(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, max_bytes=1 << 20)
    other = PrefixKey(KEY.place, KEY.version, (7, 8, 9))
    store.put(other, b"state after 7 8 9")
    (tmp_path / other.file_name()).rename(tmp_path / KEY.file_name())
    assert store.get(KEY) is None
    assert _entries(tmp_path) == []


def test_the_folder_stays_within_its_bound_least_recently_used_first(tmp_path: Path) -> None:
    keys = [PrefixKey(KEY.place, KEY.version, (number,)) for number in range(3)]
    store = PrefixStore(tmp_path, max_bytes=1 << 20)
    store.put(keys[0], STATE)
    entry_bytes = (tmp_path / keys[0].file_name()).stat().st_size
    store = PrefixStore(tmp_path, max_bytes=2 * entry_bytes)
    store.put(keys[1], STATE)
    hour_ago = time.time() - 3600
    for age, key in enumerate(keys[:2]):  # both written an hour ago, 0 before 1
        path = tmp_path / key.file_name()
        os.utime(path, (hour_ago + age, path.stat().st_mtime))
    assert store.get(keys[0]) == STATE  # now 1 is the least recently used
    store.put(keys[2], STATE)
    assert store.get(keys[1]) is None
    assert store.get(keys[0]) == STATE
    assert store.get(keys[2]) == STATE
    assert sum(path.stat().st_size for path in _entries(tmp_path)) <= store.max_bytes


def test_a_state_larger_than_the_bound_is_not_written(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, max_bytes=len(STATE))  # the header does not fit as well
    store.put(KEY, STATE)
    assert store.get(KEY) is None
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_cannot_be_written_costs_only_the_warm_start(tmp_path: Path) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    store = PrefixStore(blocker / "prefix", max_bytes=1 << 20)
    store.put(KEY, STATE)  # no exception
    assert store.get(KEY) is None


def test_a_temporary_file_abandoned_by_a_dead_writer_is_cleared(tmp_path: Path) -> None:
    abandoned, in_progress = tmp_path / ".dead.tmp", tmp_path / ".busy.tmp"
    abandoned.write_bytes(b"half a state")
    in_progress.write_bytes(b"a state being written")
    two_hours_ago = time.time() - 7200
    os.utime(abandoned, (two_hours_ago, two_hours_ago))
    PrefixStore(tmp_path, max_bytes=1 << 20).put(KEY, STATE)
    assert not abandoned.exists()
    assert in_progress.exists()


_WRITER = """\
import sys
from pathlib import Path
from langchain_agent_rules.models._prefix_store import PrefixKey, PrefixStore

folder, writer = Path(sys.argv[1]), int(sys.argv[2])
store = PrefixStore(folder, max_bytes=64 << 20)
key = PrefixKey("place", "version", (1, 2, 3))
for _ in range(30):
    store.put(key, bytes([writer]) * (2 << 20))
"""


def test_processes_writing_the_same_key_never_show_a_reader_half_an_entry(
    tmp_path: Path,
) -> None:
    key = PrefixKey("place", "version", (1, 2, 3))
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path), str(number)],
            env={**os.environ, "PYTHONPATH": str(Path(langchain_agent_rules.__file__).parents[1])},
        )
        for number in range(1, 5)
    ]
    store = PrefixStore(tmp_path, max_bytes=64 << 20)
    whole = {bytes([number]) * (2 << 20) for number in range(1, 5)}
    seen: list[bytes | None] = []
    while any(writer.poll() is None for writer in writers):
        seen.append(store.get(key))
    assert [writer.wait() for writer in writers] == [0, 0, 0, 0]
    seen.append(store.get(key))
    found = [state for state in seen if state is not None]
    assert found, "the reader never saw an entry"
    assert set(found) <= whole
    # Once an entry existed, a read never found it damaged (which would delete it).
    first = next(index for index, state in enumerate(seen) if state is not None)
    assert None not in seen[first:]
    assert [path.name for path in tmp_path.iterdir()] == [key.file_name()]


def test_the_disk_cache_lives_in_the_cache_folder_unless_moved_or_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(PREFIX_CACHE_DIR_ENV, raising=False)
    assert default_prefix_cache_dir() == str(tmp_path / "cache" / "prefix")
    monkeypatch.setenv(PREFIX_CACHE_DIR_ENV, str(tmp_path / "elsewhere"))
    assert default_prefix_cache_dir() == str(tmp_path / "elsewhere")
    monkeypatch.setenv(PREFIX_CACHE_DIR_ENV, "off")
    assert default_prefix_cache_dir() is None


def test_the_model_takes_its_disk_cache_folder_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("llama_cpp")
    model_file = tmp_path / "model.gguf"
    model_file.write_bytes(b"GGUF")  # not loaded here
    monkeypatch.setenv(PREFIX_CACHE_DIR_ENV, "off")
    assert ChatLocalLlama(model_path=str(model_file)).prefix_cache_dir is None
    monkeypatch.setenv(PREFIX_CACHE_DIR_ENV, str(tmp_path / "states"))
    assert ChatLocalLlama(model_path=str(model_file)).prefix_cache_dir == str(tmp_path / "states")
    chosen = ChatLocalLlama(model_path=str(model_file), prefix_cache_dir=None)
    assert chosen.prefix_cache_dir is None
