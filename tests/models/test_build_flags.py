"""build_flags: CMake flags from what the OS has enabled, never AMX, AVX-512 only when usable."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_agent_rules.models import build_flags
from langchain_agent_rules.models.build_flags import PORTABLE_CMAKE_ARGS, cmake_args

_AVX512 = {"avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"}
_AVX2 = {"avx", "avx2", "fma", "f16c", "bmi2"}
_AMX = {"amx_tile", "amx_int8", "amx_bf16"}
_AVX512_STATE = 0xE7  # x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM


def test_an_avx2_machine_gets_the_portable_flags() -> None:
    assert cmake_args(_AVX2, 0x7) == PORTABLE_CMAKE_ARGS
    assert "-DGGML_NATIVE=OFF" in PORTABLE_CMAKE_ARGS


def test_avx512_is_used_when_the_kernel_lists_it_and_enabled_its_state() -> None:
    args = cmake_args(_AVX2 | _AVX512 | {"avx512_vnni", "avx512_bf16"}, _AVX512_STATE)
    assert args.startswith(PORTABLE_CMAKE_ARGS)
    assert "-DGGML_AVX512=ON" in args
    assert "-DGGML_AVX512_VNNI=ON" in args
    assert "-DGGML_AVX512_BF16=ON" in args
    assert "-DGGML_AVX512_VBMI=ON" not in args


def test_avx512_listed_but_its_state_not_enabled_gives_the_portable_flags() -> None:
    assert cmake_args(_AVX2 | _AVX512, 0x7) == PORTABLE_CMAKE_ARGS


def test_a_cpu_that_reports_amx_never_gets_amx() -> None:
    # The machine of the issue: CPUID reports AMX, the OS does not enable its tile state.
    args = cmake_args(_AVX2 | _AVX512 | _AMX, _AVX512_STATE)
    assert "AMX" not in args
    assert "-DGGML_NATIVE=OFF" in args


def test_other_architectures_turn_native_detection_off() -> None:
    assert cmake_args(set(), None, machine="aarch64") == "-DGGML_NATIVE=OFF"


def test_the_script_runs_with_only_the_standard_library() -> None:
    script = Path(build_flags.__file__)
    result = subprocess.run(
        [sys.executable, "-I", str(script)], capture_output=True, text=True, check=True
    )
    assert result.stdout.startswith(PORTABLE_CMAKE_ARGS)
    portable = subprocess.run(
        [sys.executable, "-I", str(script), "--portable"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert portable.stdout.strip() == PORTABLE_CMAKE_ARGS


def test_ci_builds_llama_cpp_from_source_never_from_a_wheel_it_finds() -> None:
    # --no-cache-dir alone loses to a wheel on an index or in --find-links (pip prefers
    # wheels): a wheel built natively elsewhere would be installed as it is.
    ci_run = (Path(__file__).parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install --quiet --no-cache-dir --no-binary llama-cpp-python -e ".[dev,local]"' in (
        ci_run
    )


_ISA_FEATURES = re.compile(r"\b(AVX512\w*|AMX\w*|AVX_VNNI\w*) = 1\b")
_AMX_MACHINE_NATIVE_BUILD = (
    "CPU : SSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "AVX512 = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | "
)


def _not_allowed(system_info: str, allowed_cmake_args: str) -> list[str]:
    """The instruction sets a build has compiled in that these CMake flags do not turn on."""
    compiled = _ISA_FEATURES.findall(system_info)
    return [name for name in compiled if f"-DGGML_{name}=ON" not in allowed_cmake_args]


def test_a_native_build_on_the_machine_of_the_issue_is_caught() -> None:
    allowed = cmake_args(_AVX2 | _AVX512 | _AMX | {"avx512_vnni", "avx512_bf16"}, _AVX512_STATE)
    assert _not_allowed(_AMX_MACHINE_NATIVE_BUILD, allowed) == ["AVX_VNNI", "AMX_INT8"]
    assert _not_allowed(_AMX_MACHINE_NATIVE_BUILD, PORTABLE_CMAKE_ARGS) == [
        "AVX_VNNI",
        "AVX512",
        "AVX512_VNNI",
        "AVX512_BF16",
        "AMX_INT8",
    ]


@pytest.mark.local_model
def test_the_installed_llama_cpp_uses_only_instructions_the_os_enabled() -> None:
    import llama_cpp

    system_info = llama_cpp.llama_print_system_info().decode()
    allowed = cmake_args(build_flags.cpu_flags(), build_flags.os_enabled_xfeatures())
    assert _not_allowed(system_info, allowed) == [], (system_info, allowed)
