"""The CMake flags that build llama.cpp for this machine from what its OS has enabled.

pip compiles llama-cpp-python with ``GGML_NATIVE`` (``-march=native``), which trusts what
the CPU reports. A virtual machine can report AMX or AVX-512 that its OS has not enabled
for processes, and the first decode then dies with SIGILL. These flags turn native
detection off and ask for exactly the instruction sets the kernel has enabled:

- AVX2, FMA, F16C and BMI2 always (the package needs an x86-64 with AVX2);
- AVX-512 (and its VBMI, VNNI and BF16 extensions the CPU has) only when the kernel lists
  it and its register state (opmask, ZMM) is enabled in XCR0, read with
  ``arch_prctl(ARCH_GET_XCOMP_SUPP)``: on 2 idle cores it reads prompts 1.4x faster than
  the AVX2 build (generation, bound by memory bandwidth, 1.06x);
- never AMX: a process must ask the kernel for its tile state, llama.cpp's check of that
  is what failed in the field, and no machine of ours can measure a gain from it.

Run it as a script before the install (it needs nothing but the standard library)::

    export CMAKE_ARGS="$(python3 langchain_agent_rules/models/build_flags.py)"
    pip install --no-cache-dir --no-binary llama-cpp-python -e ".[local]"

``--portable`` prints the AVX2-only flags, for a wheel shared between machines.
``--no-cache-dir`` keeps pip from reusing a wheel it built earlier with other flags, and
``--no-binary`` from installing a wheel it finds on an index or in a ``--find-links`` folder.
"""

from __future__ import annotations

import ctypes
import platform
import sys
from collections.abc import Iterable

__all__ = ["PORTABLE_CMAKE_ARGS", "cmake_args", "cpu_flags", "os_enabled_xfeatures"]

PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
)
_AVX512_BASE = ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw")
_AVX512_EXTENSIONS = (
    ("avx512vbmi", "-DGGML_AVX512_VBMI=ON"),
    ("avx512_vnni", "-DGGML_AVX512_VNNI=ON"),
    ("avx512_bf16", "-DGGML_AVX512_BF16=ON"),
)
# XCR0 bits 5-7: the opmask registers and the upper halves and upper 16 of the ZMM registers.
_AVX512_STATE = 0b1110_0000
_SYS_ARCH_PRCTL = 158
_ARCH_GET_XCOMP_SUPP = 0x1021


def cpu_flags() -> frozenset[str]:
    """The CPU flags the Linux kernel lists in /proc/cpuinfo (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def os_enabled_xfeatures() -> int | None:
    """The register states the kernel enabled (XCR0), or ``None`` where it cannot say."""
    if sys.platform != "linux" or platform.machine() != "x86_64":
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    mask = ctypes.c_uint64()
    if libc.syscall(_SYS_ARCH_PRCTL, _ARCH_GET_XCOMP_SUPP, ctypes.byref(mask)) != 0:
        return None  # kernels before 5.16 lack the call; /proc/cpuinfo alone then decides
    return mask.value


def cmake_args(flags: Iterable[str], xfeatures: int | None, *, machine: str = "x86_64") -> str:
    """CMAKE_ARGS for llama.cpp from the kernel's CPU flags and its enabled XCR0 states."""
    if machine not in ("x86_64", "AMD64"):
        return "-DGGML_NATIVE=OFF"
    flags = frozenset(flags)
    avx512_state = xfeatures is None or xfeatures & _AVX512_STATE == _AVX512_STATE
    if not (avx512_state and all(flag in flags for flag in _AVX512_BASE)):
        return PORTABLE_CMAKE_ARGS
    extensions = [arg for flag, arg in _AVX512_EXTENSIONS if flag in flags]
    return " ".join([PORTABLE_CMAKE_ARGS, "-DGGML_AVX512=ON", *extensions])


def main(argv: list[str]) -> int:
    """Print the flags for this machine (``--portable``: for any x86-64 with AVX2)."""
    if argv not in ([], ["--portable"]):
        print("usage: build_flags.py [--portable]", file=sys.stderr)
        return 2
    if argv == ["--portable"]:
        print(PORTABLE_CMAKE_ARGS)
    else:
        print(cmake_args(cpu_flags(), os_enabled_xfeatures(), machine=platform.machine()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
