"""``rules add/update/delete`` say what changed, and in which store."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_agent_rules.cli import main
from langchain_agent_rules.rules.json_file import JsonFileRuleStore

ADD = [
    "rules", "add", "--id", "answer_in_french", "--type", "requirement", "--target", "output",
    "--content", "Always answer in French.", "--priority", "5", "--project", "4",
]  # fmt: skip


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def store(tmp_path: Path) -> str:
    """An empty rules file, as ``agent-rules rules init`` starts it."""
    JsonFileRuleStore(tmp_path / "rules.json", create=True)
    return str(tmp_path / "rules.json")


def test_add_says_which_rule_it_created_and_where(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_main(capsys, *ADD, "--store", store) == (
        0,
        f"created rule answer_in_french (REQUIREMENT, OUTPUT, project 4, priority 5) in {store}\n",
        "",
    )


def test_add_of_a_global_rule_with_a_check_says_both(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_main(
        capsys, "rules", "add", "--id", "no_emails", "--type", "PROHIBITION",
        "--target", "OUTPUT", "--content", "Never reveal e-mail addresses.",
        "--check", '{"forbid": "email"}', "--store", store,
    )  # fmt: skip

    assert (code, out) == (
        0,
        "created rule no_emails (PROHIBITION, OUTPUT, global, priority 0, "
        f'check {{"forbid":"email"}} → redact) in {store}\n',
    )


def test_update_lists_each_changed_field_old_and_new(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run_main(capsys, *ADD, "--store", store)

    code, out, _ = run_main(
        capsys, "rules", "update", "answer_in_french", "--priority", "10", "--global",
        "--content", 'Always answer in "French".', "--store", store,
    )  # fmt: skip

    assert (code, out) == (
        0,
        f"updated rule answer_in_french in {store}: "
        'content "Always answer in French." -> "Always answer in \\"French\\".", '
        "priority 5 -> 10, scope project 4 -> global\n",
    )


def test_update_of_type_target_and_check_names_them(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run_main(capsys, *ADD, "--store", store)

    code, out, _ = run_main(
        capsys, "rules", "update", "answer_in_french", "--type", "GUIDELINE",
        "--check", '{"language": "fr"}', "--store", store,
    )  # fmt: skip
    assert (code, out) == (
        0,
        f"updated rule answer_in_french in {store}: type REQUIREMENT -> GUIDELINE, "
        'check none -> {"language":"fr"} → revise\n',
    )

    code, out, _ = run_main(
        capsys, "rules", "update", "answer_in_french", "--check", "null", "--store", store
    )
    assert out == (
        f'updated rule answer_in_french in {store}: check {{"language":"fr"}} → revise -> none\n'
    )


def test_an_update_that_changes_nothing_says_so_and_leaves_the_file_alone(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run_main(capsys, *ADD, "--store", store)
    before = Path(store).read_bytes()

    code, out, _ = run_main(
        capsys, "rules", "update", "answer_in_french", "--priority", "5", "--project", "4",
        "--store", store,
    )  # fmt: skip

    assert (code, out) == (
        0,
        f"rule answer_in_french in {store} already has these values; nothing changed\n",
    )
    assert Path(store).read_bytes() == before


def test_delete_says_which_rule_it_removed_and_from_where(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run_main(capsys, *ADD, "--store", store)

    assert run_main(capsys, "rules", "delete", "answer_in_french", "--store", store) == (
        0,
        f"deleted rule answer_in_french (REQUIREMENT, OUTPUT, project 4, priority 5) "
        f"from {store}\n",
        "",
    )
    assert JsonFileRuleStore(store).get_all() == []


def test_a_database_store_is_named_by_its_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'rules.db'}"
    assert run_main(capsys, "rules", "init", "--store", url)[:2] == (
        0,
        f"created an empty rule store at {url}\n",
    )

    code, out, _ = run_main(capsys, *ADD, "--store", url)

    assert (code, out) == (
        0,
        f"created rule answer_in_french (REQUIREMENT, OUTPUT, project 4, priority 5) in {url}\n",
    )
