from __future__ import annotations

from pathlib import Path

import pytest

from langchain_agent_rules.errors import RuleStoreError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.open import (
    POSTGRES_CONNECT_TIMEOUT_SECONDS,
    open_rule_store,
    store_exists,
)
from langchain_agent_rules.rules.sql_store import SqlRuleStore


def test_a_path_opens_a_json_file_store(tmp_path: Path) -> None:
    (tmp_path / "rules.json").write_text("[]\n", encoding="utf-8")
    store = open_rule_store(str(tmp_path / "rules.json"))
    assert isinstance(store, JsonFileRuleStore)
    assert store.path == tmp_path / "rules.json"


@pytest.mark.parametrize("spec", ["", "   "])
def test_an_empty_spec_is_refused(spec: str) -> None:
    with pytest.raises(RuleStoreError, match="path to a JSON rules file"):
        open_rule_store(spec)


@pytest.mark.parametrize("spec", ["foo://bar", "file:///tmp/rules.json", "https://example.org/r"])
def test_an_unsupported_url_scheme_is_refused_naming_the_supported_ones(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scheme = spec.split("://")[0]
    with pytest.raises(RuleStoreError) as caught:
        open_rule_store(spec)
    assert str(caught.value) == (
        f"unsupported rule store URL scheme {scheme!r}; give a postgresql://, postgres:// or "
        "sqlite:/// URL, or the path of a JSON rules file"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_path_with_a_colon_slash_slash_inside_is_still_a_path(tmp_path: Path) -> None:
    store = open_rule_store(str(tmp_path / "odd://name.json"), create=True)
    assert isinstance(store, JsonFileRuleStore)
    assert (tmp_path / "odd:" / "name.json").is_file()


def test_a_folder_is_refused_naming_a_file_inside_it(tmp_path: Path) -> None:
    for create in (False, True):
        with pytest.raises(RuleStoreError, match="is a folder; give the path of a rules file"):
            open_rule_store(str(tmp_path), create=create)


def test_a_missing_rules_file_or_sqlite_database_is_an_error_naming_it(tmp_path: Path) -> None:
    json_spec, sqlite_spec = str(tmp_path / "rulez.json"), f"sqlite:///{tmp_path / 'rulez.db'}"
    with pytest.raises(RuleStoreError) as caught:
        open_rule_store(json_spec)
    assert str(caught.value) == (
        f"no rules file at {json_spec}; give the path of an existing rules file or a database "
        f"URL, or start an empty one with: agent-rules rules init --store {json_spec}"
    )
    with pytest.raises(RuleStoreError) as caught:
        open_rule_store(sqlite_spec)
    assert str(caught.value) == (
        f"no SQLite database file at {tmp_path / 'rulez.db'}; give the path of an existing "
        "database or a rules file, or start an empty one with: agent-rules rules init "
        f"--store {sqlite_spec}"
    )
    assert not store_exists(json_spec) and not store_exists(sqlite_spec)
    assert list(tmp_path.iterdir()) == []


def test_the_init_command_in_the_message_is_quoted_for_a_shell(tmp_path: Path) -> None:
    spec = str(tmp_path / "my rules.json")
    with pytest.raises(RuleStoreError, match=r"init --store '.*/my rules\.json'$"):
        open_rule_store(spec)


def test_create_starts_an_empty_rules_file_or_sqlite_database(tmp_path: Path) -> None:
    json_store = open_rule_store(str(tmp_path / "rules.json"), create=True)
    assert (tmp_path / "rules.json").read_text(encoding="utf-8") == "[]\n"
    sqlite_store = open_rule_store(f"sqlite:///{tmp_path / 'rules.db'}", create=True)
    assert json_store.get_all() == sqlite_store.get_all() == []
    assert store_exists(str(tmp_path / "rules.json"))
    assert store_exists(f"sqlite:///{tmp_path / 'rules.db'}")


def test_an_existing_store_opens_without_create(tmp_path: Path) -> None:
    (tmp_path / "rules.json").write_text("[]\n", encoding="utf-8")
    assert open_rule_store(str(tmp_path / "rules.json")).get_all() == []


def test_a_database_server_store_counts_as_existing_without_a_connection() -> None:
    assert store_exists("postgresql://agent@127.0.0.1:1/rules")


def test_a_postgresql_store_gets_a_connect_timeout_unless_the_url_sets_one() -> None:
    default = open_rule_store("postgresql://agent@127.0.0.1:5432/rules")
    assert isinstance(default, SqlRuleStore)
    assert default.engine.url.query["connect_timeout"] == str(POSTGRES_CONNECT_TIMEOUT_SECONDS)

    chosen = open_rule_store("postgresql://agent@127.0.0.1:5432/rules?connect_timeout=3")
    assert isinstance(chosen, SqlRuleStore)
    assert chosen.engine.url.query["connect_timeout"] == "3"


@pytest.mark.parametrize(
    ("spec", "detail"),
    [
        ("postgresql://agent:secret@127.0.0.1:notaport/rules", "the port is not a number"),
        ("postgresql+psy-copg://agent:secret@127.0.0.1/rules", "not a SQLAlchemy URL"),
    ],
)
def test_a_malformed_database_url_is_refused_without_echoing_it(spec: str, detail: str) -> None:
    scheme = spec.split("://")[0]
    with pytest.raises(RuleStoreError) as caught:
        open_rule_store(spec)
    assert str(caught.value) == (
        f"malformed {scheme}:// URL: {detail}; give a URL such as "
        "'postgresql://user:password@127.0.0.1:5432/db' or 'sqlite:///rules.db'"
    )


def test_a_sql_rule_store_refuses_a_port_that_is_not_a_number() -> None:
    with pytest.raises(RuleStoreError, match="invalid database URL"):
        SqlRuleStore("postgresql://agent@127.0.0.1:notaport/rules")
