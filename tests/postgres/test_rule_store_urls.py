"""`open_rule_store` and `agent-rules rules --store` with database URLs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_agent_rules.cli import main
from langchain_agent_rules.errors import RuleStoreError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.open import open_rule_store
from langchain_agent_rules.rules.sql_store import SqlRuleStore


def test_a_sqlite_url_opens_a_sql_rule_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rules.db'}"
    assert isinstance(open_rule_store(url, create=True), SqlRuleStore)


def test_a_path_still_opens_a_json_rules_file(tmp_path: Path) -> None:
    store = open_rule_store(str(tmp_path / "rules.json"), create=True)
    assert isinstance(store, JsonFileRuleStore)


def test_an_empty_spec_names_both_kinds_of_store() -> None:
    with pytest.raises(RuleStoreError, match=r"JSON rules file or a database URL"):
        open_rule_store("  ")


def add_and_list(store: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    add = ["rules", "add", "--store", store, "--id", "cli_rule", "--type", "REQUIREMENT"]
    add += ["--target", "OUTPUT", "--content", "Answer in one sentence.", "--priority", "3"]
    assert main(["rules", "init", "--store", store]) == 0
    assert main(add) == 0
    capsys.readouterr()
    assert main(["rules", "list", "--store", store, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert isinstance(listed, list)
    return listed


def test_the_cli_adds_and_lists_rules_in_a_sqlite_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = add_and_list(f"sqlite:///{tmp_path / 'rules.db'}", capsys)

    assert [(rule["id"], rule["priority"]) for rule in listed] == [("cli_rule", 3)]


@pytest.mark.postgres
def test_the_cli_adds_and_lists_rules_in_postgresql(
    pg_search_path_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = add_and_list(pg_search_path_url, capsys)

    assert [(rule["id"], rule["content"]) for rule in listed] == [
        ("cli_rule", "Answer in one sentence.")
    ]
    assert [r.id for r in open_rule_store(pg_search_path_url).get_all_by_project(None)] == [
        "cli_rule"
    ]


@pytest.mark.postgres
def test_the_cli_refuses_a_duplicate_id_in_postgresql_with_one_error_line(
    pg_search_path_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    add_and_list(pg_search_path_url, capsys)
    again = ["rules", "add", "--store", pg_search_path_url, "--id", "cli_rule"]
    again += ["--type", "GUIDELINE", "--target", "AGENT", "--content", "Another rule entirely."]

    assert main(again) == 1
    assert capsys.readouterr().err == (
        "agent-rules: error: a rule with id 'cli_rule' already exists\n"
    )


@pytest.mark.postgres
def test_the_cli_lists_every_projects_rules_in_postgresql(
    pg_search_path_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    add_and_list(pg_search_path_url, capsys)
    scoped = ["rules", "add", "--store", pg_search_path_url, "--id", "project_rule", "--type"]
    scoped += [
        "GUIDELINE",
        "--target",
        "AGENT",
        "--content",
        "Project two's own rule.",
        "--project",
    ]
    assert main([*scoped, "2"]) == 0
    capsys.readouterr()

    assert main(["rules", "list", "--all", "--store", pg_search_path_url, "--json"]) == 0

    listed = json.loads(capsys.readouterr().out)
    assert [(rule["id"], rule["projectId"]) for rule in listed] == [
        ("cli_rule", None),
        ("project_rule", 2),
    ]


@pytest.mark.postgres
def test_init_readies_a_postgresql_store_and_leaves_its_rules_alone(
    pg_search_path_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = add_and_list(pg_search_path_url, capsys)  # init, then one rule

    assert main(["rules", "init", "--store", pg_search_path_url]) == 0

    [line] = capsys.readouterr().out.splitlines()
    assert line.endswith("already exists with 1 rule(s); nothing was overwritten")
    assert [rule.id for rule in open_rule_store(pg_search_path_url).get_all()] == [
        str(listed[0]["id"])
    ]
