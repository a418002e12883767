"""The one path guard: which files ``file_read`` may open, opened without a race.

Two layers. :func:`check_relative_path` judges the text the model sent (relative,
no ``..`` component, no NUL, not on the deny list). :func:`open_inside_root` then
opens the file and judges *the file that was opened*: the kernel reports the real
path of the open descriptor (``/proc/self/fd`` on Linux, ``F_GETPATH`` on macOS),
which must lie inside the real root and must not be denied, and ``fstat`` of the
same descriptor must show a regular file. Because the verdict is about the opened
descriptor and not about a name, a symlink swapped between any check and the open
cannot lead outside: whatever was opened is what gets verified. A ``realpath`` pre-check
before the open only avoids opening files that are plainly outside (such as devices).
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import stat
import sys
from collections.abc import Sequence

from langchain_agent_rules.errors import InvalidToolCallError, ToolConfigurationError
from langchain_agent_rules.tools._text import first_surrogate

__all__ = [
    "DEFAULT_DENY",
    "check_relative_path",
    "denied_by",
    "is_inside",
    "open_inside_root",
]

DEFAULT_DENY: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".htpasswd",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".git/",
    ".ssh/",
    ".gnupg/",
    ".aws/",
    ".docker/",
    ".kube/",
)
"""Patterns for secrets. A name pattern matches any path component (``*.pem``); a pattern
ending in ``/`` matches everything inside a directory of that name (``.git/``); a pattern
with an inner ``/`` matches the whole relative path (``config/*.secret``)."""

ALLOWED_PATHS = "Allowed: a relative path to a text file inside the project, such as 'src/app.py'."
BAD_PATH = "The path {path!r} is refused: {reason}. " + ALLOWED_PATHS
DENIED_PATH = (
    "The path {path!r} is refused: it matches the deny pattern {pattern!r}, which protects "
    "secrets. Read other files instead."
)
OUTSIDE_ROOT = "The path {path!r} is refused: it leads outside the project folder. " + ALLOWED_PATHS
NOT_A_FILE = "The path {path!r} is refused: it is {kind}, not a regular file. " + ALLOWED_PATHS
NOT_FOUND = "The file {path!r} does not exist."
CLOSE_PATHS = "Did you mean {paths}?"
FOLDER_HOLDS = "{folder} holds: {entries}."
FOLDER_SHOWS_NOTHING = "{folder} holds no file that can be shown."
PROJECT_FOLDER = "The project folder"
SUBFOLDER = "The folder {path!r}"
MORE_ENTRIES = "{entries}, and {more} more"
MAX_NEARBY_BYTES = 600
"""The most bytes of folder entries a missing-file observation lists."""
_MAX_CLOSE_PATHS = 3
_MAX_SEARCHED_FOLDERS = 10  # subfolders searched for a close name, one level down
_CLOSE_RATIO = 0.6  # difflib's own default cutoff
_MAX_ENTRY_CHARS = 100


def check_relative_path(path: str, deny: Sequence[str]) -> str:
    """Return ``path`` normalised (``a//./b`` -> ``a/b``) when its text is allowed.

    Raises:
        InvalidToolCallError: empty, absolute, with a NUL byte, a lone surrogate, a
            backslash or a ``..`` component, naming the root itself, or matching a
            ``deny`` pattern.
    """
    reason = None
    if not path or not path.strip():
        reason = "it is empty"
    elif "\x00" in path:
        reason = "it contains a NUL byte"
    elif first_surrogate(path) is not None:
        reason = "it contains a lone surrogate, which no file name can hold"
    elif "\\" in path:
        reason = "it contains a backslash; use '/' between folders"
    elif path.startswith("/") or path.startswith("~") or (len(path) > 1 and path[1] == ":"):
        reason = "it is absolute; give a path relative to the project folder"
    if reason is None:
        parts = [part for part in path.split("/") if part not in ("", ".")]
        if ".." in parts:
            reason = "it contains a '..' component"
        elif not parts:
            reason = "it names the project folder itself, not a file"
    if reason is not None:
        raise InvalidToolCallError(BAD_PATH.format(path=path, reason=reason))
    relative = "/".join(parts)
    pattern = denied_by(relative, deny)
    if pattern is not None:
        raise InvalidToolCallError(DENIED_PATH.format(path=path, pattern=pattern))
    return relative


def denied_by(relative: str, deny: Sequence[str]) -> str | None:
    """Return the first ``deny`` pattern that matches the relative path, or ``None``.

    Matching ignores case, so ``.ENV`` is as secret as ``.env``.
    """
    parts = [part.lower() for part in relative.split("/") if part]
    for pattern in deny:
        lowered = pattern.lower()
        if lowered.endswith("/"):
            directory = lowered.rstrip("/")
            if any(fnmatch.fnmatchcase(part, directory) for part in parts[:-1]):
                return pattern
        elif "/" in lowered:
            if fnmatch.fnmatchcase("/".join(parts), lowered):
                return pattern
        elif any(fnmatch.fnmatchcase(part, lowered) for part in parts):
            return pattern
    return None


def is_inside(path: str, root: str) -> bool:
    """Return whether absolute ``path`` is ``root`` or below it, separator-safe.

    ``/srv/app-secrets`` is not inside ``/srv/app``.
    """
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _descriptor_path(fd: int) -> str:
    if sys.platform.startswith("linux"):
        return os.readlink(f"/proc/self/fd/{fd}")
    if sys.platform == "darwin":
        import fcntl

        buffer = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))  # type: ignore[attr-defined]
        return os.fsdecode(buffer.rstrip(b"\x00"))
    raise ToolConfigurationError(
        f"file_read needs Linux or macOS to verify opened files; this is {sys.platform}."
    )


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def open_inside_root(relative: str, root: str, deny: Sequence[str]) -> tuple[int, os.stat_result]:
    """Open ``root/relative`` read-only and return the descriptor and its ``fstat``.

    ``root`` must be a real path (no symlinks). The caller owns (and closes) the
    descriptor.

    Raises:
        InvalidToolCallError: the file does not exist, is outside the root (directly or
            through a symlink), is denied once symlinks are resolved, or is not a
            regular file.
    """
    candidate = os.path.join(root, relative)
    _verify(relative, os.path.realpath(candidate), root, deny)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
        fd = os.open(candidate, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        lines = [NOT_FOUND.format(path=relative), *_nearby(relative, root, deny)]
        raise InvalidToolCallError(" ".join(lines)) from None
    except IsADirectoryError:
        raise InvalidToolCallError(NOT_A_FILE.format(path=relative, kind="a directory")) from None
    except OSError as error:
        raise InvalidToolCallError(
            BAD_PATH.format(path=relative, reason=f"it cannot be opened ({error.strerror})")
        ) from None
    try:
        _verify(relative, _descriptor_path(fd), root, deny)
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise InvalidToolCallError(NOT_A_FILE.format(path=relative, kind=_kind(status.st_mode)))
    except BaseException:
        os.close(fd)
        raise
    return fd, status


def _verify(relative: str, real_path: str, root: str, deny: Sequence[str]) -> None:
    if not is_inside(real_path, root):
        raise InvalidToolCallError(OUTSIDE_ROOT.format(path=relative))
    if real_path == root:
        raise InvalidToolCallError(NOT_A_FILE.format(path=relative, kind="a directory"))
    # A symlink inside the root may point at a secret inside the root: judge the target.
    pattern = denied_by(os.path.relpath(real_path, root).replace(os.sep, "/"), deny)
    if pattern is not None:
        raise InvalidToolCallError(DENIED_PATH.format(path=relative, pattern=pattern))


def _shown_entries(folder: str, root: str, deny: Sequence[str]) -> list[str] | None:
    """The entries of ``root/folder`` a model may see (``name`` or ``name/``), sorted.

    ``None`` when that folder does not exist, is not a folder, leads outside the root or
    is denied. An entry is left out when it, or what a symlink leads to, is outside the
    root, denied, or neither a regular file nor a folder.
    """
    if folder and (denied_by(folder, deny) or denied_by(f"{folder}/-", deny)):
        return None
    try:
        fd = os.open(os.path.join(root, folder), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        real_folder = _descriptor_path(fd)
        if not is_inside(real_folder, root) or _denied_folder(real_folder, root, deny):
            return None
        names = os.listdir(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    entries = []
    for name in sorted(names):
        if len(name) > _MAX_ENTRY_CHARS or not name.isprintable() or first_surrogate(name):
            continue
        shown = f"{folder}/{name}" if folder else name
        real = os.path.realpath(os.path.join(real_folder, name))
        if denied_by(shown, deny) or not is_inside(real, root) or real == root:
            continue
        real_relative = os.path.relpath(real, root).replace(os.sep, "/")
        if stat.S_ISDIR(_mode(real)):
            if not (denied_by(f"{shown}/-", deny) or _denied_folder(real, root, deny)):
                entries.append(f"{name}/")
        elif stat.S_ISREG(_mode(real)) and denied_by(real_relative, deny) is None:
            entries.append(name)
    return entries


def _mode(path: str) -> int:
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0


def _denied_folder(real_folder: str, root: str, deny: Sequence[str]) -> bool:
    if real_folder == root:
        return False
    relative = os.path.relpath(real_folder, root).replace(os.sep, "/")
    return denied_by(relative, deny) is not None or denied_by(f"{relative}/-", deny) is not None


def _nearby(relative: str, root: str, deny: Sequence[str]) -> list[str]:
    """What exists near a missing ``relative`` path: close names, and its nearest folder."""
    parts = relative.split("/")
    for depth in range(len(parts) - 1, -1, -1):
        folder = "/".join(parts[:depth])
        entries = _shown_entries(folder, root, deny)
        if entries is not None:
            return _folder_lines(folder, entries, parts[depth], root, deny)
    return []  # not even the root could be listed


def _folder_lines(
    folder: str, entries: list[str], missing: str, root: str, deny: Sequence[str]
) -> list[str]:
    place = SUBFOLDER.format(path=folder) if folder else PROJECT_FOLDER
    if not entries:
        return [FOLDER_SHOWS_NOTHING.format(folder=place)]
    lines = []
    close = _close_paths(folder, entries, missing, root, deny)
    if close:
        lines.append(CLOSE_PATHS.format(paths=" or ".join(repr(path) for path in close)))
    lines.append(FOLDER_HOLDS.format(folder=place, entries=_fit_entries(entries)))
    return lines


def _close_paths(
    folder: str, entries: list[str], missing: str, root: str, deny: Sequence[str]
) -> list[str]:
    """Paths in ``folder`` and its subfolders whose names are close to ``missing``."""
    if len(missing) > _MAX_ENTRY_CHARS:  # difflib is quadratic in the lengths it compares
        return []
    prefix = f"{folder}/" if folder else ""
    candidates = [prefix + entry for entry in entries]
    for subfolder in [entry for entry in entries if entry.endswith("/")][:_MAX_SEARCHED_FOLDERS]:
        below = _shown_entries(prefix + subfolder.rstrip("/"), root, deny) or []
        candidates += [prefix + subfolder + entry for entry in below]
    scored = []
    for path in candidates:
        name = path.rstrip("/").rsplit("/", 1)[-1].lower()
        ratio = difflib.SequenceMatcher(None, missing.lower(), name).ratio()
        if ratio >= _CLOSE_RATIO:
            scored.append((-ratio, path.count("/"), path))
    return [path for _ratio, _depth, path in sorted(scored)[:_MAX_CLOSE_PATHS]]


def _fit_entries(entries: list[str]) -> str:
    every = ", ".join(entries)
    if len(every.encode()) <= MAX_NEARBY_BYTES:
        return every
    room = MAX_NEARBY_BYTES - len(MORE_ENTRIES.format(entries="", more=len(entries)).encode())
    shown, used = 0, 0
    for entry in entries:
        used += len(entry.encode()) + (2 if shown else 0)
        if used > room:
            break
        shown += 1
    return MORE_ENTRIES.format(entries=", ".join(entries[:shown]), more=len(entries) - shown)
