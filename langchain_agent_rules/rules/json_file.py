"""`JsonFileRuleStore`: rules in one JSON file, file-compatible with adachsoft/agent-rule.

The file is a top-level JSON array of camelCase records (see `_records`), one rule per
line. Writes are atomic (a temporary file in the same folder, fsync, rename) and run
their read-modify-write under an exclusive cross-process lock on ``<file>.lock``, so
concurrent processes lose no update and a writer killed at any moment leaves either the
old or the new file. Reads check the file's identity (mtime, size, inode) and parse it
again only when it changed, so other processes' writes are seen without a restart.

Rules never fail open: the file must exist (``create=True`` starts an empty one) and be
a regular file of at most `MAX_RULES_FILE_BYTES`. A missing file, a folder, a FIFO, a
device or a socket raises `RuleStoreError` naming the path, at construction and at every
read, in bounded time: the file is opened without blocking and checked with ``fstat``
before a byte is read, so a FIFO with no writer cannot hang a reader.

A rule with a check is written with one more key, ``"check"``; a file whose rules have
no check stays byte for byte in the adachsoft format.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock, Timeout

from langchain_agent_rules.errors import (
    DuplicateRuleError,
    RuleNotFoundError,
    RuleStoreError,
    RuleValidationError,
)
from langchain_agent_rules.rules._async_twins import ThreadedAsyncTwins
from langchain_agent_rules.rules._records import rule_from_record, rule_to_record
from langchain_agent_rules.rules.limits import AgentRuleToolConfig, check_rule_limits, limits_config
from langchain_agent_rules.rules.model import Rule, utc_now

__all__ = ["MAX_RULES_FILE_BYTES", "JsonFileRuleStore"]

MAX_RULES_FILE_BYTES = 16 * 1024 * 1024
"""The largest rules file a store reads or writes (some 30,000 rules)."""

MISSING_FILE_TEMPLATE = (
    "no rules file at {path}; give the path of an existing rules file, or pass create=True "
    "to start an empty one"
)
FOLDER_TEMPLATE = "{path} is a folder; give the path of a rules file such as {example}"
NOT_A_FILE_TEMPLATE = "{path} is {kind}, not a rules file; give the path of a regular JSON file"
TOO_LARGE_TEMPLATE = (
    "{path} has {size:,} bytes; a rules file may have at most {limit:,} (MAX_RULES_FILE_BYTES)"
)
WOULD_BE_TOO_LARGE_TEMPLATE = (
    "{path}: the change would make the file {size:,} bytes; a rules file may have at most "
    "{limit:,} (MAX_RULES_FILE_BYTES); nothing written"
)

_LOCK_TIMEOUT_SECONDS = 30.0
_LOCK_POLL_SECONDS = 0.002
_NEW_FILE_MODE = 0o644
_EMPTY_FILE = "[]\n"
# Non-blocking, so opening a FIFO that slipped in after the stat returns at once.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

_FileKey = tuple[int, int, int]
_Result = TypeVar("_Result")


@dataclass
class _Snapshot:
    """The parsed content of one version of the file."""

    key: _FileKey
    rules: list[Rule]
    positions: dict[str, int]
    _lines: list[str] | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        """One serialised record per rule, computed once per snapshot."""
        if self._lines is None:
            self._lines = [_record_line(rule) for rule in self.rules]
        return self._lines


def _record_line(rule: Rule) -> str:
    return json.dumps(rule_to_record(rule), ensure_ascii=False)


def _file_text(lines: list[str]) -> str:
    if not lines:
        return _EMPTY_FILE
    return "[\n" + ",\n".join(lines) + "\n]\n"


def _now() -> datetime:
    # The PHP library writes whole seconds ('2026-02-16T14:59:00+00:00'); so do we.
    return utc_now().replace(microsecond=0)


class JsonFileRuleStore(ThreadedAsyncTwins):
    """A rule store kept in one JSON file, safe for several processes at once.

    The file must exist: a missing one raises `RuleStoreError` naming the path, so a
    mistyped path is never read as a store without rules. ``create=True`` starts an
    empty file (and its folder) when there is none and opens the file when there is.
    The path must name a regular file of at most `MAX_RULES_FILE_BYTES`; a folder, a
    FIFO or a device is refused at once. Corrupt JSON, a top level that is not an
    array, an invalid entry or a duplicate id raise `RuleStoreError` naming the file and
    the entry, and a store that cannot read its file never writes it. ``limits`` (an
    `AgentRuleToolConfig` or its keys; the defaults when omitted) are checked on every
    write: a rule that alone breaks one raises `RuleValidationError` and the file is left
    as it was.

    Example:
        .. code-block:: python

            store = JsonFileRuleStore("rules.json", create=True)  # empty if it was missing
            store.create(Rule(id="be_brief", type="guideline", target="output",
                              content="Keep answers under five sentences."))
            JsonFileRuleStore("rules.json").get_all_by_project(7)  # global and project 7's
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        limits: AgentRuleToolConfig | Mapping[str, Any] | None = None,
        create: bool = False,
    ) -> None:
        self._path = Path(path)
        self._limits = limits_config(limits)
        self._lock = FileLock(
            f"{self._path}.lock",
            timeout=_LOCK_TIMEOUT_SECONDS,
            poll_interval=_LOCK_POLL_SECONDS,
        )
        self._cache: _Snapshot | None = None
        self._cache_guard = threading.Lock()
        if create:
            self._create_if_missing()
        else:
            self._status()

    @property
    def path(self) -> Path:
        """The rules file."""
        return self._path

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        """Return the global rules plus, when ``project_id`` is set, that project's rules."""
        rules = self._snapshot().rules
        return [rule for rule in rules if rule.project_id is None or rule.project_id == project_id]

    def get_all(self) -> list[Rule]:
        """Return every rule in file order: the global ones and those of every project."""
        return list(self._snapshot().rules)

    def get(self, rule_id: str) -> Rule:
        """Return the rule with ``rule_id`` or raise `RuleNotFoundError`."""
        snapshot = self._snapshot()
        position = snapshot.positions.get(rule_id)
        if position is None:
            raise RuleNotFoundError(f"no rule with id {rule_id!r} in {self._path}")
        return snapshot.rules[position]

    def create(self, rule: Rule) -> Rule:
        """Store a new rule; raise `DuplicateRuleError` if its id exists."""
        check_rule_limits(rule, self._limits)

        def change(snapshot: _Snapshot) -> tuple[list[Rule], list[str], Rule]:
            if rule.id in snapshot.positions:
                raise DuplicateRuleError(f"a rule with id {rule.id!r} already exists")
            now = _now()
            stored = rule.with_changes(created_at=rule.created_at or now, updated_at=now)
            return [*snapshot.rules, stored], [*snapshot.lines, _record_line(stored)], stored

        return self._write(change)

    def update(self, rule: Rule) -> Rule:
        """Replace the rule with the same id, keeping ``created_at``."""
        check_rule_limits(rule, self._limits)

        def change(snapshot: _Snapshot) -> tuple[list[Rule], list[str], Rule]:
            position = self._position(snapshot, rule.id)
            current = snapshot.rules[position]
            stored = rule.with_changes(created_at=current.created_at, updated_at=_now())
            rules, lines = list(snapshot.rules), list(snapshot.lines)
            rules[position], lines[position] = stored, _record_line(stored)
            return rules, lines, stored

        return self._write(change)

    def delete(self, rule_id: str) -> Rule:
        """Remove the rule with ``rule_id`` and return it."""

        def change(snapshot: _Snapshot) -> tuple[list[Rule], list[str], Rule]:
            position = self._position(snapshot, rule_id)
            rules, lines = list(snapshot.rules), list(snapshot.lines)
            removed = rules.pop(position)
            del lines[position]
            return rules, lines, removed

        return self._write(change)

    def _position(self, snapshot: _Snapshot, rule_id: str) -> int:
        position = snapshot.positions.get(rule_id)
        if position is None:
            raise RuleNotFoundError(f"no rule with id {rule_id!r} in {self._path}")
        return position

    def _create_if_missing(self) -> None:
        """Write an empty rules file (and its folder) unless a rules file is there."""
        if self._status_or_none() is not None:
            return
        with self._writing("create"):
            self._path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock:
                if self._status_or_none() is None:
                    self._replace_file(_EMPTY_FILE.encode("utf-8"), new=True)

    def _write(
        self, change: Callable[[_Snapshot], tuple[list[Rule], list[str], _Result]]
    ) -> _Result:
        """Run ``change`` on the current file and replace it, all under the file lock."""
        self._snapshot()  # an unreadable file fails here, before the lock file is made
        with self._writing("write"), self._lock:
            snapshot = self._snapshot()
            rules, lines, result = change(snapshot)
            data = _file_text(lines).encode("utf-8")
            if len(data) > MAX_RULES_FILE_BYTES:
                raise RuleStoreError(
                    WOULD_BE_TOO_LARGE_TEMPLATE.format(
                        path=self._path, size=len(data), limit=MAX_RULES_FILE_BYTES
                    )
                )
            key = self._replace_file(data, new=False)
            positions = {rule.id: index for index, rule in enumerate(rules)}
            with self._cache_guard:
                self._cache = _Snapshot(key, rules, positions, lines)
            return result

    @contextmanager
    def _writing(self, verb: str) -> Iterator[None]:
        """A lock timeout or an OS error inside becomes a `RuleStoreError` naming the file."""
        try:
            yield
        except Timeout:
            raise RuleStoreError(
                f"{self._path}: could not lock {self._lock.lock_file} within "
                f"{_LOCK_TIMEOUT_SECONDS:g} s; another process holds it"
            ) from None
        except OSError as error:
            raise RuleStoreError(f"{self._path}: cannot {verb} the rules file: {error}") from None

    def _replace_file(self, data: bytes, *, new: bool) -> _FileKey:
        mode = _NEW_FILE_MODE if new else self._path.stat().st_mode & 0o777
        folder = self._path.parent
        descriptor, temporary = tempfile.mkstemp(
            dir=folder, prefix=f".{self._path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                status = os.fstat(handle.fileno())
            os.chmod(temporary, mode)  # mkstemp creates 0600; keep the file's mode
            os.replace(temporary, self._path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self._sync_folder(folder)
        return (status.st_mtime_ns, status.st_size, status.st_ino)

    @staticmethod
    def _sync_folder(folder: Path) -> None:
        # Make the rename itself durable; POSIX only (Windows cannot open a folder).
        if os.name != "posix":
            return
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def _status(self) -> os.stat_result:
        """The rules file's status; a missing file or anything but a rules file raises."""
        status = self._status_or_none()
        if status is None:
            raise RuleStoreError(MISSING_FILE_TEMPLATE.format(path=self._path))
        return status

    def _status_or_none(self) -> os.stat_result | None:
        """The rules file's status, None when it is missing; not a rules file raises."""
        try:
            status = os.stat(self._path)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise RuleStoreError(f"{self._path}: cannot read the rules file: {error}") from None
        self._check_kind(status)
        return status

    def _check_kind(self, status: os.stat_result) -> None:
        """Refuse anything but a regular file of at most `MAX_RULES_FILE_BYTES`."""
        mode = status.st_mode
        if stat.S_ISDIR(mode):
            raise RuleStoreError(
                FOLDER_TEMPLATE.format(path=self._path, example=self._path / "rules.json")
            )
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise RuleStoreError(NOT_A_FILE_TEMPLATE.format(path=self._path, kind=kind))
        if status.st_size > MAX_RULES_FILE_BYTES:
            raise RuleStoreError(
                TOO_LARGE_TEMPLATE.format(
                    path=self._path, size=status.st_size, limit=MAX_RULES_FILE_BYTES
                )
            )

    def _snapshot(self) -> _Snapshot:
        """The current content of the file, parsed again only when the file changed."""
        status = self._status()
        key = (status.st_mtime_ns, status.st_size, status.st_ino)
        with self._cache_guard:
            cached = self._cache
        if cached is not None and cached.key == key:
            return cached
        snapshot = self._load()
        with self._cache_guard:
            self._cache = snapshot
        return snapshot

    def _load(self) -> _Snapshot:
        try:
            descriptor = os.open(self._path, _READ_FLAGS)
        except FileNotFoundError:
            raise RuleStoreError(MISSING_FILE_TEMPLATE.format(path=self._path)) from None
        except OSError as error:
            raise RuleStoreError(f"{self._path}: cannot read the rules file: {error}") from None
        try:
            with open(descriptor, "rb") as handle:
                status = os.fstat(descriptor)
                self._check_kind(status)  # the path may have changed since it was stat'ed
                raw = handle.read(MAX_RULES_FILE_BYTES + 1)
                if len(raw) > MAX_RULES_FILE_BYTES:  # it grew after the fstat
                    self._check_kind(os.fstat(descriptor))
                    raise RuleStoreError(f"{self._path} grew while it was read; try again")
        except OSError as error:
            raise RuleStoreError(f"{self._path}: cannot read the rules file: {error}") from None
        key = (status.st_mtime_ns, status.st_size, status.st_ino)
        rules = self._parse(raw)
        positions: dict[str, int] = {}
        for index, rule in enumerate(rules):
            if rule.id in positions:
                raise RuleStoreError(
                    f"{self._path}: entry {index} has id {rule.id!r}, "
                    f"already used by entry {positions[rule.id]}; ids must be unique"
                )
            positions[rule.id] = index
        return _Snapshot(key, rules, positions)

    def _parse(self, raw: bytes) -> list[Rule]:
        try:
            entries = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise RuleStoreError(f"{self._path}: not UTF-8 text: {error}") from None
        except json.JSONDecodeError as error:
            raise RuleStoreError(
                f"{self._path}: corrupt JSON at line {error.lineno} column {error.colno}: "
                f"{error.msg}"
            ) from None
        except ValueError as error:  # an integer literal too long to convert
            raise RuleStoreError(f"{self._path}: unreadable JSON: {error}") from None
        except RecursionError:
            raise RuleStoreError(f"{self._path}: JSON nested too deeply to read") from None
        if not isinstance(entries, list):
            raise RuleStoreError(
                f"{self._path}: the top level must be a JSON array of rules, "
                f"got {type(entries).__name__}"
            )
        rules = []
        for index, entry in enumerate(entries):
            try:
                rules.append(rule_from_record(entry))
            except RuleValidationError as error:
                shown = entry.get("id") if isinstance(entry, dict) else None
                name = f" (id {shown!r})" if isinstance(shown, str) and len(shown) <= 64 else ""
                raise RuleStoreError(f"{self._path}: entry {index}{name}: {error}") from None
        return rules
