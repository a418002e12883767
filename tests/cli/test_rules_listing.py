"""``rules list``: every project's rules with ``--all``, and tables that wrap instead of cutting."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise
from pathlib import Path

import pytest

from langchain_agent_rules.cli import main
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.model import Rule

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rules.json"
DEMO = (
    Path(__file__).resolve().parents[2] / "langchain_agent_rules" / "demo" / "data" / "rules.json"
)


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def example_store(tmp_path: Path) -> str:
    store = tmp_path / "rules.json"
    shutil.copy(EXAMPLE, store)
    return str(store)


def test_list_all_groups_every_projects_rules_global_first_then_by_project(
    example_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_main(capsys, "rules", "list", "--all", "--store", example_store, "--json")

    assert code == 0
    assert [(r["projectId"], r["id"]) for r in json.loads(out)] == [
        (None, "no_secrets_in_output"),
        (None, "answer_in_english"),
        (None, "read_before_answering"),
        (1, "sql_select_only"),
        (1, "amounts_in_eur"),
        (2, "python_type_hints"),
    ]


def test_list_all_as_a_table_shows_each_rules_project(
    example_store: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_main(capsys, "rules", "list", "--all", "--store", example_store)

    assert code == 0
    cells = column(out, "rule", "type")
    below = dict(pairwise(cells))
    assert below["answer_in_english"] == "global, priority 50"
    assert below["amounts_in_eur"] == "project 1, priority 50"
    assert below["python_type_hints"] == "project 2, priority 20"


def test_list_with_a_project_keeps_the_effective_view(
    example_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_main(
        capsys, "rules", "list", "--project", "2", "--store", example_store, "--json"
    )

    assert code == 0
    assert [r["id"] for r in json.loads(out)] == [
        "no_secrets_in_output",
        "answer_in_english",
        "python_type_hints",
        "read_before_answering",
    ]


def test_all_and_project_together_are_one_error_line(
    example_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["rules", "list", "--all", "--project", "1", "--store", example_store])

    assert caught.value.code == 1
    assert capsys.readouterr().err.splitlines() == [
        "agent-rules: error: argument --project: not allowed with argument --all "
        "(see agent-rules rules list --help)"
    ]


def test_an_existing_store_without_rules_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "rules.json"
    store.write_text("[]\n", encoding="utf-8")

    code, out, _ = run_main(capsys, "rules", "list", "--all", "--store", str(store))

    assert (code, out) == (0, f"No rules in {store}.\n")


def column(out: str, name: str, next_name: str | None = None) -> list[str]:
    """The lines of the table column headed ``name`` (up to the one headed ``next_name``)."""
    lines = out.splitlines()
    rule_line = next(index for index, line in enumerate(lines) if line.startswith("─"))

    def position(heading: str) -> int:
        return next(line.index(heading) for line in lines[:rule_line] if heading in line)

    end = None if next_name is None else position(next_name)
    return [line[position(name) : end].strip() for line in lines[rule_line + 1 :]]


def content_column(out: str) -> str:
    """The text of the table's last column, its lines joined by spaces."""
    return " ".join(column(out, "content"))


@pytest.mark.parametrize("store", [EXAMPLE, DEMO], ids=["example", "demo"])
def test_at_80_columns_the_table_wraps_every_rule_whole(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")

    code, out, _ = run_main(capsys, "rules", "list", "--all", "--store", str(store))

    assert code == 0
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    shown = content_column(out)
    for rule in JsonFileRuleStore(store).get_all():
        assert rule.content in shown
        if rule.check is not None:
            assert f"→ {rule.check.action}" in shown


def test_at_80_columns_a_64_character_id_and_long_content_are_printed_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    store = JsonFileRuleStore(tmp_path / "rules.json", create=True)
    content = " ".join(["Answer every question in plain words a newcomer understands."] * 8)
    store.create(
        Rule(id="r" * 64, type="guideline", target="output", content=content, project_id=3)
    )

    code, out, _ = run_main(capsys, "rules", "list", "--all", "--store", str(store.path))

    assert code == 0
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    assert "".join(column(out, "rule", "type")).startswith("r" * 64 + "project 3, priority 0")
    assert content in content_column(out)


def test_control_characters_in_a_rule_are_shown_escaped_never_sent_to_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    store = JsonFileRuleStore(tmp_path / "rules.json", create=True)
    content = "Clear the screen \x1b[2J then \x9b2J and ring \x07 here."
    store.create(Rule(id="hostile", type="guideline", target="output", content=content))

    code, out, _ = run_main(capsys, "rules", "list", "--store", str(store.path))

    assert code == 0
    assert not any(character in out for character in "\x1b\x9b\x07")
    assert "Clear the screen \\x1b[2J then \\x9b2J and ring \\x07 here." in out
