"""Try a llama.cpp build in a child process before this process runs any of its code.

A build that uses an instruction the OS has not enabled (a ``-march=native`` build on a
virtual machine that reports AMX) kills the whole process with SIGILL at its first
decode. So before this process imports llama.cpp, a child loads the model, evaluates a
short batch and generates a token. A child killed by a signal becomes
`ModelUnavailableError` naming the fix; the user's process never crashes and never dumps
core. A passed probe is remembered in the cache folder under a key of the library files
(path, size, modification time), the CPU's flags and the model file, so it runs once per
build, machine and model (about as long as loading the model).
"""

from __future__ import annotations

import hashlib
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from langchain_agent_rules.errors import ModelUnavailableError
from langchain_agent_rules.models._file_identity import file_identity, llama_cpp_library_files
from langchain_agent_rules.models.build_flags import PORTABLE_CMAKE_ARGS, cpu_flags
from langchain_agent_rules.models.weights import cache_dir

__all__ = [
    "PROBE_TIMEOUT_SECONDS",
    "REINSTALL_HINT",
    "ensure_llama_cpp_runs",
    "probe_child_argv",
    "probe_key",
    "run_probe",
]

PROBE_TIMEOUT_SECONDS = 300.0
REINSTALL_HINT = (
    f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install --no-cache-dir '
    "--no-binary llama-cpp-python --force-reinstall --no-deps llama-cpp-python==0.3.36"
)
_CRASH_SIGNALS = {signal.SIGILL, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGABRT}
# ~50 tokens: enough for the batched matrix kernels of prompt evaluation, then two
# generated tokens for the single-token ones.
_CHILD_SCRIPT = """\
import sys
import llama_cpp

llama = llama_cpp.Llama(
    model_path=sys.argv[1], n_ctx=256, n_threads=int(sys.argv[2]),
    n_threads_batch=int(sys.argv[2]), verbose=False,
)
llama.create_completion(
    "A short text to check that every kernel of this llama.cpp build runs here: "
    "it is evaluated as one batch of about fifty tokens, then two tokens are generated.",
    max_tokens=2, temperature=0.0,
)
print("ok")
"""

_passed: set[str] = set()
_lock = threading.Lock()


def probe_key(libraries: Iterable[Path], flags: Iterable[str], model_path: str) -> str:
    """The cache key of one probe: library files, CPU flags and model file."""
    digest = hashlib.sha256()
    for part in [
        *(file_identity(path) for path in libraries),
        " ".join(sorted(flags)),
        file_identity(Path(model_path)),
    ]:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def probe_child_argv(model_path: str, n_threads: int) -> list[str]:
    """The child process that tries the build: this interpreter running a short decode."""
    return [sys.executable, "-c", _CHILD_SCRIPT, model_path, str(n_threads)]


def _no_core_dump() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_probe(argv: Sequence[str], timeout: float = PROBE_TIMEOUT_SECONDS) -> None:
    """Run one probe child; raise `ModelUnavailableError` unless it printed ``ok``."""
    try:
        child = subprocess.run(
            list(argv),
            capture_output=True,
            timeout=timeout,
            preexec_fn=_no_core_dump,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ModelUnavailableError(
            f"llama.cpp's probe did not finish in {timeout:.0f} s (loading the model and "
            "decoding a few tokens): the machine is short of memory or very busy; free memory "
            "or wait for other work to finish, then try again"
        ) from None
    if child.returncode < 0 and -child.returncode in _CRASH_SIGNALS:
        name = signal.Signals(-child.returncode).name
        raise ModelUnavailableError(
            f"llama.cpp died of {name} in a probe process: this build uses CPU "
            "instructions the operating system has not enabled (as a -march=native build "
            "does on a virtual machine that reports AMX or AVX-512). Reinstall a portable "
            f"build: {REINSTALL_HINT}"
        )
    if child.returncode != 0 or child.stdout.strip() != b"ok":
        lines = child.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = lines[-1] if lines else f"exit status {child.returncode}"
        raise ModelUnavailableError(f"llama.cpp's probe failed: {detail}")


def ensure_llama_cpp_runs(model_path: str, n_threads: int) -> bool:
    """Probe the installed llama.cpp with ``model_path`` once per build, machine and model.

    Returns:
        ``True`` when a probe ran now, ``False`` when one had passed before.

    Raises:
        ModelUnavailableError: The probe child crashed, failed or timed out.
    """
    key = probe_key(llama_cpp_library_files(), cpu_flags(), model_path)
    with _lock:
        if key in _passed:
            return False
        record = cache_dir() / "llama-cpp-probes" / key
        probed = not record.exists()
        if probed:
            run_probe(probe_child_argv(model_path, n_threads))
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text("ok\n", encoding="utf-8")
        _passed.add(key)
        return probed
