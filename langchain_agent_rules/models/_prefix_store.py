"""Evaluated prompt prefixes on disk, so a new process starts where the last one left off.

A fresh process would read the whole system prefix (prompt, rules and tools: 450-700
tokens, ~10 s on a slow machine) before its first token. The state llama.cpp holds after
that prefix is written here once and restored by later processes.

An entry is one file, named by a digest of its `PrefixKey`'s ``place`` (the model file's
path and the context settings) and its tokens. It holds a header (the whole key, the
state's length and SHA-256) and the state. An entry is used only when all of it matches;
otherwise (a truncated or foreign file, a checksum mismatch, a state for another version
of the model file or another llama.cpp build) it is deleted and the prefix is evaluated
afresh. Files are written to a temporary name and renamed, so a reader sees a whole entry
or none and concurrent writers of one key need no lock (the last rename wins; both
wrote the same state). The folder is kept under ``max_bytes`` by deleting the entries
least recently used (a hit sets the file's access time, whatever the mount options).
Disk trouble (a full or read-only disk) only costs the warm start, never a model call.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ENTRY_SUFFIX", "PrefixKey", "PrefixStore"]

ENTRY_SUFFIX = ".state"
_MAGIC = b"langchain-agent-rules prefix state 1\n"
_LENGTH_BYTES = 4
_MAX_HEADER_BYTES = 1 << 20
_ABANDONED_TEMP_SECONDS = 3600.0  # a writer that died left its temporary file behind


@dataclass(frozen=True)
class PrefixKey:
    """What an evaluated prefix state depends on.

    ``place`` (model file path and context settings) and ``tokens`` name the entry;
    ``version`` (the model file's size and modification time, the llama.cpp build) must
    match too, or the entry is stale and replaced.
    """

    place: str
    version: str
    tokens: tuple[int, ...]

    def file_name(self) -> str:
        """The entry's file name: a digest of the place and the tokens."""
        digest = hashlib.sha256(self.place.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(json.dumps(self.tokens).encode())
        return digest.hexdigest() + ENTRY_SUFFIX


class PrefixStore:
    """A folder of prefix states, at most ``max_bytes``, least recently used evicted first."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, not {max_bytes}")
        self.folder = folder
        self.max_bytes = max_bytes

    def get(self, key: PrefixKey) -> bytes | None:
        """The state saved for ``key``, or None; an entry that does not match is deleted."""
        path = self.folder / key.file_name()
        try:
            with path.open("rb") as entry:
                content = entry.read(self.max_bytes + 1)
                identity = os.fstat(entry.fileno())
        except OSError:
            return None
        state = _state_in(content, key) if len(content) <= self.max_bytes else None
        if state is None:
            _remove_if_unchanged(path, identity)
            return None
        # Deleted meanwhile, or a read-only folder: the state read is good all the same.
        with contextlib.suppress(OSError):
            os.utime(path, ns=(time.time_ns(), identity.st_mtime_ns))
        return state

    def put(self, key: PrefixKey, state: bytes) -> None:
        """Save ``state`` for ``key`` (atomically), then evict down to the size bound."""
        content = _entry(key, state)
        if len(content) > self.max_bytes:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(handle, "wb") as output:
                output.write(content)
            os.replace(temporary, self.folder / key.file_name())
        except OSError:
            Path(temporary).unlink(missing_ok=True)
            return
        self._evict()

    def _evict(self) -> None:
        """Delete the least recently used entries until the folder holds at most the bound."""
        entries: list[tuple[int, int, Path]] = []
        now = time.time()
        try:
            listing = list(os.scandir(self.folder))
        except OSError:
            return
        for item in listing:
            try:
                stat = item.stat(follow_symlinks=False)
            except OSError:
                continue
            if item.name.endswith(ENTRY_SUFFIX):
                entries.append((stat.st_atime_ns, stat.st_size, Path(item.path)))
            elif item.name.endswith(".tmp") and now - stat.st_mtime > _ABANDONED_TEMP_SECONDS:
                Path(item.path).unlink(missing_ok=True)
        held = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if held <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            held -= size


def _header(key: PrefixKey, state: bytes) -> dict[str, Any]:
    return {
        "place": key.place,
        "version": key.version,
        "tokens": list(key.tokens),
        "state_bytes": len(state),
        "sha256": hashlib.sha256(state).hexdigest(),
    }


def _entry(key: PrefixKey, state: bytes) -> bytes:
    header = json.dumps(_header(key, state)).encode("utf-8", "surrogateescape")
    return _MAGIC + len(header).to_bytes(_LENGTH_BYTES, "big") + header + state


def _state_in(content: bytes, key: PrefixKey) -> bytes | None:
    """The state in an entry's ``content`` when all of it matches ``key``, else None."""
    if not content.startswith(_MAGIC):
        return None
    start = len(_MAGIC) + _LENGTH_BYTES
    length = int.from_bytes(content[len(_MAGIC) : start], "big")
    if length > _MAX_HEADER_BYTES or start + length > len(content):
        return None
    try:
        header = json.loads(content[start : start + length].decode("utf-8", "surrogateescape"))
    except ValueError:
        return None
    state = content[start + length :]
    if header != _header(key, state):
        return None
    return state


def _remove_if_unchanged(path: Path, read: os.stat_result) -> None:
    """Delete ``path`` unless another process has renamed a new entry over it meanwhile."""
    with contextlib.suppress(OSError):
        now = path.stat()
        if (now.st_ino, now.st_dev) == (read.st_ino, read.st_dev):
            path.unlink()
