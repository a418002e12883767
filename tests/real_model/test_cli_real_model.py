"""``agent-rules run`` with the embedded model, through the real console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import numbers_in

pytestmark = pytest.mark.local_model

AGENT_RULES = str(Path(sys.executable).with_name("agent-rules"))


def test_run_answers_from_the_database_and_stores_its_trace(
    demo_database: Path, tmp_path: Path
) -> None:
    checkpoints = tmp_path / "runs.sqlite"
    run = subprocess.run(
        [
            AGENT_RULES,
            "run",
            "How many active customers do we have?",
            "--db",
            f"sqlite:///{demo_database}",
            "--checkpoints",
            str(checkpoints),
            "--thread",
            "t1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert 9 in numbers_in(result["answer"])
    assert [step["tool"] for step in result["trace"]] == ["sql_query"]
    trace = subprocess.run(
        [AGENT_RULES, "trace", "t1", "--checkpoints", str(checkpoints), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(trace.stdout) == result["trace"]
