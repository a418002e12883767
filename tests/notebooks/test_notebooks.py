"""Run every notebook top to bottom on the scripted model, as a reader would (nbclient)."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CELL_TIMEOUT_S = 120

# What each notebook must show when the scripted model drives it (a pattern where the
# tool's JSON spacing is not the point). A table row reads "cell | cell | ...".
EXPECTED_OUTPUT: dict[str, list[str | re.Pattern[str]]] = {
    "01_quickstart.ipynb": [
        "9\nstop: final",
        "2 model calls, 1 tool call, stop: final",
        "1 | 1 | sql_query | ok",
        re.compile(r'"COUNT\(\*\)"\s*:\s*9'),
        "answer: The total amount of all orders is 626.25 EUR. (final, 1 iteration(s))",
        " 50 REQUIREMENT OUTPUT: Write every money amount with two decimals",
        "    check: {'forbid': 'email'}",
    ],
    "02_rules.ipynb": [
        '{"project_id":1,"count":3,',
        "invalid agent_rule_admin arguments: invalid rule.id",
        "[redacted: email]\n",
        "no_email_addresses | redacted | answer",
        "The most expensive product costs 60.00 EUR.",
        "amounts_in_eur | revised | answer",
        "amounts_in_eur | passed | answer | the required pattern matched",
        "1 | 1 | agent_rule_admin | denied",
        'ERROR: rule no_rule_deletes does not allow this call to tool "agent_rule_admin"',
        "| no_rule_deletes denied",
        "still stored: amounts_in_eur",
        "approval asked for agent_rule_admin",
        "1 | 1 | agent_rule_admin | ok (approved)",
        "Added the rule short_answers to project 1.",
        "'amounts_in_eur', 'short_answers']",
        "1 | 1 | agent_rule_admin | rejected",
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
        "is refused because it is not a read-only query",
        "1 | 1 | sql_query | error",
    ],
    "04_custom_tools.ipynb": [
        "127.25 EUR = 119.61 CHF",
        "1 | 1 | sql_query | ok",
        "2 | 2 | currency_convert | ok",
        "Bruno Keller spent 127.25 EUR in total, which is 119.61 CHF.",
        "3 model calls, 2 tool calls, stop: final",
        "1 | 1 | currency_convert | error",
        "ERROR: unknown currency 'JPY'; use one of: CHF, USD, GBP",
    ],
}
# How many timeline charts each notebook draws.
EXPECTED_CHARTS = {
    "01_quickstart.ipynb": 1,
    "02_rules.ipynb": 2,
    "03_safe_tools.ipynb": 0,
    "04_custom_tools.ipynb": 1,
}


class _TableText(HTMLParser):
    """An HTML table as text: its caption, then one ``cell | cell`` line per row."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self._cells: list[str] = []
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("caption", "td", "th"):
            self._text = []

    def handle_data(self, data: str) -> None:
        self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "caption":
            self.lines.append("".join(self._text))
        elif tag in ("td", "th"):
            self._cells.append("".join(self._text))
        elif tag == "tr":
            self.lines.append(" | ".join(self._cells))
            self._cells = []


def html_text(markup: str) -> str:
    parser = _TableText()
    parser.feed(markup)
    return "\n".join(parser.lines)


def output_text(notebook: nbformat.NotebookNode) -> str:
    parts: list[str] = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            data = output.get("data", {})
            parts.append(data.get("text/plain", ""))
            parts.append(html_text(data.get("text/html", "")))
    return "\n".join(parts)


def charts(notebook: nbformat.NotebookNode) -> int:
    return sum(
        "image/png" in output.get("data", {})
        for cell in notebook.cells
        for output in cell.get("outputs", [])
    )


def warnings_shown(notebook: nbformat.NotebookNode) -> list[str]:
    return [
        output.get("text", "")
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if output.get("name") == "stderr"
    ]


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
    assert charts(notebook) == EXPECTED_CHARTS[name]
    assert not warnings_shown(notebook)


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_the_committed_notebook_carries_the_outputs_of_a_clean_run(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]

    counts = [cell.execution_count for cell in code_cells]
    assert counts == list(range(1, len(code_cells) + 1)), "run it top to bottom before committing"
    assert code_cells[-1].outputs
    assert not [o for c in code_cells for o in c.outputs if o.output_type == "error"]
    assert not warnings_shown(notebook)
