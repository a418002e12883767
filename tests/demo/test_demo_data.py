"""The shipped demo data: the shop database built from its script, the project files, rules."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from langchain_agent_rules.demo import (
    DEMO_QUESTIONS,
    demo_database_url,
    demo_project_root,
    demo_rules_path,
)
from langchain_agent_rules.rules.check import RuleCheck
from langchain_agent_rules.rules.engine import check_answer
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.tools.file_read import FileReadTool


def _path_of(url: str) -> Path:
    assert url.startswith("sqlite:///")
    return Path(url.removeprefix("sqlite:///"))


def test_the_shop_database_is_built_in_the_cache_with_the_scripts_data(tmp_path: Path) -> None:
    database = _path_of(demo_database_url(tmp_path))
    assert database.parent == tmp_path / "demo"
    with sqlite3.connect(database) as connection:
        active = connection.execute("SELECT COUNT(*) FROM customers WHERE active = 1").fetchone()
        total = connection.execute("SELECT SUM(amount) FROM orders").fetchone()
        emails = connection.execute("SELECT COUNT(*) FROM customers WHERE email LIKE '%@%'")
        assert (active[0], total[0], emails.fetchone()[0]) == (9, 626.25, 12)


def test_the_database_is_built_once(tmp_path: Path) -> None:
    database = _path_of(demo_database_url(tmp_path))
    built = database.stat().st_mtime_ns
    assert _path_of(demo_database_url(tmp_path)) == database
    assert database.stat().st_mtime_ns == built
    assert [p.name for p in database.parent.iterdir() if p.name.endswith(".part")] == []


def test_the_rules_file_loads_and_scopes_the_french_rule_to_project_2() -> None:
    store = JsonFileRuleStore(demo_rules_path())
    global_ids = {rule.id for rule in store.get_all_by_project(None)}
    assert global_ids == {"no_email_addresses", "look_it_up", "single_select"}
    assert "answer_in_french" in {rule.id for rule in store.get_all_by_project(2)}
    assert "answer_in_french" not in {rule.id for rule in store.get_all_by_project(1)}


def test_the_file_the_third_question_names_is_readable_by_file_read() -> None:
    assert "docs/notes.md" in DEMO_QUESTIONS[2].question
    observation = FileReadTool(demo_project_root()).invoke({"path": "docs/notes.md"})
    assert "14 March 2026" in json.loads(observation)["content"]


def test_there_are_four_demo_questions() -> None:
    assert [q.project_id for q in DEMO_QUESTIONS] == [1, 1, None, None]


def test_the_last_question_asks_for_an_address_the_rules_redact(tmp_path: Path) -> None:
    question = DEMO_QUESTIONS[3]
    assert "e-mail address" in question.question
    with sqlite3.connect(_path_of(demo_database_url(tmp_path))) as connection:
        (address,) = connection.execute(
            "SELECT email FROM customers WHERE name = 'Alice Martin'"
        ).fetchone()
    assert "Alice Martin" in question.question
    rules = JsonFileRuleStore(demo_rules_path()).get_all_by_project(question.project_id)
    verdict = check_answer(rules, f"Her address is {address}.")
    assert verdict.text == "Her address is [redacted: email]."


def test_the_demo_rules_hold_in_code_emails_eur_and_french() -> None:
    store = JsonFileRuleStore(demo_rules_path())
    checks = {
        rule.id: rule.check for rule in store.get_all_by_project(1) + store.get_all_by_project(2)
    }
    assert checks["no_email_addresses"] == RuleCheck(forbid="email")
    assert checks["answer_in_french"] == RuleCheck(language="fr")
    project_1 = store.get_all_by_project(1)
    assert check_answer(project_1, "Alice's address is alice.martin@example.com.").text == (
        "Alice's address is [redacted: email]."
    )
    assert check_answer(project_1, "The total is 329.0").status == "needs_revision"
    assert check_answer(project_1, "The total is 626.25 EUR.").status == "passed"
    project_2 = store.get_all_by_project(2)
    assert check_answer(project_2, "We have 9 active customers.").status == "needs_revision"
    assert check_answer(project_2, "Nous avons 9 clients actifs.").status == "passed"


def test_demo_export_writes_the_files_the_docs_use(tmp_path: Path) -> None:
    from langchain_agent_rules.cli import main
    from langchain_agent_rules.demo import demo_project_root, demo_rules_path

    assert main(["demo", "--export", str(tmp_path / "here")]) == 0
    folder = tmp_path / "here"
    with sqlite3.connect(folder / "shop.db") as connection:
        assert connection.execute("SELECT count(*) FROM customers").fetchone()[0] > 0
    assert (folder / "rules.json").read_bytes() == demo_rules_path().read_bytes()
    assert (folder / "project" / "docs" / "notes.md").read_bytes() == (
        demo_project_root() / "docs" / "notes.md"
    ).read_bytes()


def test_demo_export_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langchain_agent_rules.cli import main

    (tmp_path / "rules.json").write_text("mine", encoding="utf-8")
    assert main(["demo", "--export", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"agent-rules: error: --export: rules.json already in {tmp_path}; "
        "export into an empty folder or remove them first\n"
    )
    assert (tmp_path / "rules.json").read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "shop.db").exists()
