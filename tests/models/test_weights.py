"""Joining and verifying the embedded model's weight chunks, on small chunk files."""

from __future__ import annotations

import hashlib
import multiprocessing
from pathlib import Path

import pytest

from langchain_agent_rules.errors import ModelUnavailableError
from langchain_agent_rules.models.weights import (
    CACHE_DIR_ENV,
    EMBEDDED_MODEL,
    ModelWeights,
    cache_dir,
    embedded_model_path,
    join_weights,
)

PARTS = [b"first slice|", b"second slice|", b"third"]


def _write_chunks(folder: Path, parts: list[bytes] = PARTS) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, data in enumerate(parts, start=1):
        path = folder / f"part{number:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def _weights_of(parts: list[bytes] = PARTS) -> ModelWeights:
    joined = b"".join(parts)
    return ModelWeights("model.gguf", len(joined), hashlib.sha256(joined).hexdigest())


def test_chunks_are_joined_in_order_into_the_folder(tmp_path: Path) -> None:
    chunks = _write_chunks(tmp_path / "chunks")
    path = join_weights(chunks, tmp_path / "cache", _weights_of())
    assert path == tmp_path / "cache" / "model.gguf"
    assert path.read_bytes() == b"first slice|second slice|third"


def test_a_verified_file_is_not_joined_again(tmp_path: Path) -> None:
    chunks = _write_chunks(tmp_path / "chunks")
    first = join_weights(chunks, tmp_path / "cache", _weights_of())
    for chunk in chunks:
        chunk.unlink()
    assert join_weights(chunks, tmp_path / "cache", _weights_of()) == first
    assert first.read_bytes() == b"".join(PARTS)


def test_a_digest_mismatch_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    chunks = _write_chunks(tmp_path / "chunks")
    wrong = ModelWeights("model.gguf", len(b"".join(PARTS)), "0" * 64)
    expected = r"corrupt: 30 bytes .* expected 30 bytes with SHA-256 0{64}"
    with pytest.raises(ModelUnavailableError, match=expected):
        join_weights(chunks, tmp_path / "cache", wrong)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["model.gguf.lock"]


def test_a_size_mismatch_is_refused(tmp_path: Path) -> None:
    chunks = _write_chunks(tmp_path / "chunks", PARTS[:2])
    with pytest.raises(ModelUnavailableError, match="reinstall the weights"):
        join_weights(chunks, tmp_path / "cache", _weights_of())
    assert not (tmp_path / "cache" / "model.gguf").exists()


def test_chunks_in_the_wrong_order_are_refused(tmp_path: Path) -> None:
    chunks = _write_chunks(tmp_path / "chunks")
    with pytest.raises(ModelUnavailableError, match="corrupt"):
        join_weights(list(reversed(chunks)), tmp_path / "cache", _weights_of())


def test_a_file_replaced_after_verification_is_joined_again(tmp_path: Path) -> None:
    chunks = _write_chunks(tmp_path / "chunks")
    path = join_weights(chunks, tmp_path / "cache", _weights_of())
    path.write_bytes(b"truncated")
    assert join_weights(chunks, tmp_path / "cache", _weights_of()).read_bytes() == b"".join(PARTS)


def test_an_unwritable_cache_folder_says_how_to_move_it(tmp_path: Path) -> None:
    chunks = _write_chunks(tmp_path / "chunks")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ModelUnavailableError, match=CACHE_DIR_ENV):
        join_weights(chunks, blocker / "cache", _weights_of())


def _join_in_child(chunk_names: list[str], folder: str, weights: ModelWeights) -> None:
    join_weights([Path(name) for name in chunk_names], Path(folder), weights)


def test_two_processes_joining_at_once_both_get_the_verified_file(tmp_path: Path) -> None:
    parts = [bytes([number]) * 2_000_000 for number in range(8)]
    chunks = _write_chunks(tmp_path / "chunks", parts)
    weights = _weights_of(parts)
    context = multiprocessing.get_context("fork")
    names = [str(chunk) for chunk in chunks]
    processes = [
        context.Process(target=_join_in_child, args=(names, str(tmp_path / "cache"), weights))
        for _ in range(2)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    joined = tmp_path / "cache" / "model.gguf"
    assert hashlib.sha256(joined.read_bytes()).hexdigest() == weights.sha256
    leftovers = [p.name for p in (tmp_path / "cache").iterdir() if p.name.endswith(".part")]
    assert leftovers == []


def test_cache_dir_prefers_the_override_then_xdg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, "/srv/cache")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert cache_dir() == Path("/srv/cache")
    monkeypatch.delenv(CACHE_DIR_ENV)
    assert cache_dir() == Path("/xdg/langchain-agent-rules")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "langchain-agent-rules"


@pytest.mark.local_model
def test_the_installed_chunks_join_into_the_official_file(tmp_path: Path) -> None:
    path = embedded_model_path()
    assert path.name == EMBEDDED_MODEL.file_name
    assert path.stat().st_size == EMBEDDED_MODEL.size_bytes
