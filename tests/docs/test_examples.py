"""Every ```python block of README.md and docs/*.md runs as written (pytest-examples).

Each block runs in a fresh folder where `export_demo` (what ``agent-rules demo --export .``
does) has put ``shop.db``, ``project/`` and ``rules.json``, and fails on any exception.
What it prints must be what its ``#>`` comments (or the quoted block after a ``print``)
say, except on the embedded model; ``pytest tests/docs --update-examples`` writes them.
Blocks that need the embedded model, PostgreSQL or a Studio server say so in their fence
(see `examples`) and get the matching marker and service.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample

from langchain_agent_rules.demo import export_demo

from .examples import EXAMPLES, example_id, need_of

_MARKS = {"local_model": [pytest.mark.local_model], "postgres": [pytest.mark.postgres]}


@pytest.mark.parametrize(
    "example",
    [
        pytest.param(example, id=example_id(example), marks=_MARKS.get(need_of(example) or "", []))
        for example in EXAMPLES
    ],
)
def test_the_block_runs_as_written(
    example: CodeExample,
    eval_example: EvalExample,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    export_demo(tmp_path)
    monkeypatch.chdir(tmp_path)
    # pytest-examples runs the block as __main__; put pytest's own back afterwards.
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    monkeypatch.setenv("COLUMNS", "100")  # text tables as wide as on any terminal
    need = need_of(example)
    if need == "local_model":
        request.getfixturevalue("count_model_usage")
    elif need == "postgres":
        monkeypatch.setenv("POSTGRES_URL", request.getfixturevalue("postgres_schema_url"))
    elif need == "studio":
        monkeypatch.setenv("LANGGRAPH_URL", request.getfixturevalue("studio_url"))

    # The code is formatted as ruff formats this repository (black's rules, 100 columns),
    # which would turn the "#>" output lines into "# >": pytest-examples keeps them.
    eval_example.set_config(line_length=100, quotes="double", target_version="py311")
    if eval_example.update_examples:
        eval_example.format_black(example)
    else:
        eval_example.lint_black(example)
    # A printed line stays one "#>" line, however long (an error message, a JSON payload).
    eval_example.set_config(line_length=1000, quotes="double", target_version="py311")
    if need == "local_model":
        eval_example.run(example)  # a real model's words may differ between CPU builds
    elif eval_example.update_examples:
        eval_example.run_print_update(example)  # pytest --update-examples writes the output
    else:
        eval_example.run_print_check(example)
