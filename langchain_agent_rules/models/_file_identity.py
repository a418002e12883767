"""Which files a cached result depends on, named cheaply: path, size and modification time.

Hashing the 1 GB model file in every process would cost more than most of what the caches
save, so a file is named by its resolved path, size and modification time (a re-joined
or replaced file gets a new one). The llama.cpp build is named by its shared libraries.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path

__all__ = ["file_identity", "llama_cpp_build", "llama_cpp_library_files"]


def file_identity(path: Path) -> str:
    """``<resolved path>:<size>:<mtime in ns>`` of ``path``."""
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def llama_cpp_library_files() -> list[Path]:
    """The installed llama-cpp-python's shared libraries (none when it is not installed)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    package = Path(next(iter(spec.submodule_search_locations)))
    return sorted(path for path in package.rglob("*.so*") if path.is_file()) + sorted(
        path for path in package.rglob("*.dylib") if path.is_file()
    )


@functools.cache
def llama_cpp_build() -> str:
    """A digest naming the installed llama.cpp build (its libraries' identities)."""
    digest = hashlib.sha256()
    for path in llama_cpp_library_files():
        digest.update(file_identity(path).encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()
