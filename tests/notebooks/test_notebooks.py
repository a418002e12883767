"""Run every notebook top to bottom on the scripted model, as a reader would (nbclient)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CELL_TIMEOUT_S = 120

# What each notebook must show when the scripted model drives it (a pattern where the
# tool's JSON spacing is not the point).
EXPECTED_OUTPUT: dict[str, list[str | re.Pattern[str]]] = {
    "01_quickstart.ipynb": [
        "We have 9 active customers.",
        "| 1 | sql_query |",
        re.compile(r'"active_customers"\s*:\s*9'),
        "answer: The total amount of all orders is 626.25 EUR. (final, 1 iteration(s))",
        "Requirements (always do this):",
    ],
    "02_rules.ipynb": [
        '{"project_id":1,"count":2,',
        "InvalidToolCallError: invalid agent_rule_admin arguments",
        "'type': 'tool_approval', 'tool': 'agent_rule_admin'",
        "Added the rule short_answers to project 1.",
        "| ok |",
        "| rejected |",
        'ERROR: a human reviewer rejected the call to tool "agent_rule_admin"',
    ],
    "03_safe_tools.ipynb": [
        re.compile(r"truncated['\"]\s*:\s*[Tt]rue"),
        "a DELETE statement is not a read-only query",
        "must be exactly one statement; got 2",
        "it leads outside the project folder",
        "matches the deny pattern '.env'",
        "it resolves to 169.254.169.254",
        "The host 'evil.example.net' is not allowed.",
        "I cannot delete customers",
    ],
    "04_custom_tools.ipynb": [
        "127.25 EUR = 119.61 CHF",
        "| 2 | currency_convert |",
        "ERROR: unknown currency 'JPY'; use one of: CHF, USD, GBP",
    ],
}


def output_text(notebook: nbformat.NotebookNode) -> str:
    parts: list[str] = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            data = output.get("data", {})
            parts.append(data.get("text/markdown", "") or data.get("text/plain", ""))
    return "\n".join(parts)


def shows(text: str, expected: str | re.Pattern[str]) -> bool:
    return expected in text if isinstance(expected, str) else bool(expected.search(text))


def test_every_notebook_is_covered() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED_OUTPUT)


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_the_notebook_runs_top_to_bottom_on_the_scripted_model(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )

    client.execute(env={**os.environ, "AGENT_RULES_NOTEBOOK_MODEL": "scripted"})

    text = output_text(notebook)
    assert "model: scripted" in text
    missing = [snippet for snippet in EXPECTED_OUTPUT[name] if not shows(text, snippet)]
    assert not missing, f"{name} did not show {missing}"


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_the_committed_notebook_carries_the_outputs_of_a_clean_run(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]

    counts = [cell.execution_count for cell in code_cells]
    assert counts == list(range(1, len(code_cells) + 1)), "run it top to bottom before committing"
    assert code_cells[-1].outputs
    assert not [o for c in code_cells for o in c.outputs if o.output_type == "error"]
