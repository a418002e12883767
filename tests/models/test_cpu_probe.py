"""The llama.cpp probe: a child that dies of a real SIGILL becomes ModelUnavailableError."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_agent_rules.errors import ModelUnavailableError
from langchain_agent_rules.models._cpu_probe import (
    REINSTALL_HINT,
    probe_child_argv,
    probe_key,
    run_probe,
)
from langchain_agent_rules.models.build_flags import PORTABLE_CMAKE_ARGS
from langchain_agent_rules.models.weights import CACHE_DIR_ENV

# Executes `ud2`, the instruction x86-64 defines to be illegal, from an executable page.
_ILLEGAL_INSTRUCTION = """\
import ctypes, mmap
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(b"\\x0f\\x0b")
address = ctypes.addressof(ctypes.c_char.from_buffer(page))
ctypes.CFUNCTYPE(None)(address)()
print("ok")
"""
_SEGFAULT = "import ctypes; ctypes.string_at(0)"

x86_64_only = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="ud2 is an x86-64 instruction"
)


@x86_64_only
def test_a_child_killed_by_sigill_becomes_model_unavailable_naming_the_fix(
    tmp_path: Path,
) -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        run_probe([sys.executable, "-c", _ILLEGAL_INSTRUCTION])
    message = str(caught.value)
    assert "SIGILL" in message
    assert REINSTALL_HINT in message
    assert PORTABLE_CMAKE_ARGS in message
    assert "--no-cache-dir --no-binary llama-cpp-python" in message


def test_a_child_killed_by_sigsegv_becomes_model_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="SIGSEGV"):
        run_probe([sys.executable, "-c", _SEGFAULT], timeout=60)
    assert not list(tmp_path.glob("core*"))


def test_a_child_that_fails_reports_its_last_error_line() -> None:
    with pytest.raises(ModelUnavailableError, match=r"probe failed: RuntimeError: no kernel"):
        run_probe([sys.executable, "-c", "raise RuntimeError('no kernel')"])


def test_a_child_that_hangs_is_stopped_at_the_timeout() -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        run_probe([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1)
    assert str(caught.value) == (
        "llama.cpp's probe did not finish in 1 s (loading the model and decoding a few "
        "tokens): the machine is short of memory or very busy; free memory or wait for other "
        "work to finish, then try again"
    )


def test_a_child_that_prints_ok_passes() -> None:
    run_probe([sys.executable, "-c", "print('ok')"])


def test_the_probe_key_changes_with_the_library_the_cpu_and_the_model(tmp_path: Path) -> None:
    library, model = tmp_path / "libggml-cpu.so", tmp_path / "model.gguf"
    library.write_bytes(b"one build")
    model.write_bytes(b"weights")
    key = probe_key([library], {"avx2", "fma"}, str(model))
    assert key == probe_key([library], {"fma", "avx2"}, str(model))
    assert key != probe_key([library], {"avx2", "fma", "amx_tile"}, str(model))
    library.write_bytes(b"another build, rebuilt with other flags")
    assert key != probe_key([library], {"avx2", "fma"}, str(model))


@pytest.mark.local_model
def test_the_embedded_model_passes_the_probe_in_a_child_process() -> None:
    from langchain_agent_rules.models.weights import embedded_model_path

    run_probe(probe_child_argv(str(embedded_model_path()), 1))


@pytest.mark.local_model
def test_a_passed_probe_is_remembered_per_build_machine_and_model(tmp_path: Path) -> None:
    # Fresh processes and a fresh cache folder (the weights are joined into it once), so
    # nothing this test process or an earlier run has probed counts.
    script = (
        "from langchain_agent_rules.models._cpu_probe import ensure_llama_cpp_runs\n"
        "from langchain_agent_rules.models.weights import embedded_model_path\n"
        "path = str(embedded_model_path())\n"
        "print(ensure_llama_cpp_runs(path, 1), ensure_llama_cpp_runs(path, 1))\n"
    )
    environment = {**os.environ, CACHE_DIR_ENV: str(tmp_path)}
    assert (_python(script, environment), _python(script, environment)) == (
        "True False",
        "False False",
    )
    assert len(list((tmp_path / "llama-cpp-probes").iterdir())) == 1


def _python(script: str, environment: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
