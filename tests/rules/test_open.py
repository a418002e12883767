from __future__ import annotations

from pathlib import Path

import pytest

from langchain_agent_rules.errors import RuleStoreError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.open import POSTGRES_CONNECT_TIMEOUT_SECONDS, open_rule_store
from langchain_agent_rules.rules.sql_store import SqlRuleStore


def test_a_path_opens_a_json_file_store(tmp_path: Path) -> None:
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
    store = open_rule_store(str(tmp_path / "odd://name.json"))
    assert isinstance(store, JsonFileRuleStore)


def test_a_folder_is_refused_naming_a_file_inside_it(tmp_path: Path) -> None:
    with pytest.raises(RuleStoreError, match="is a folder; give the path of a rules file such as"):
        open_rule_store(str(tmp_path))


def test_must_exist_refuses_a_missing_rules_file_or_sqlite_database(tmp_path: Path) -> None:
    with pytest.raises(RuleStoreError, match=r"^no rules file at "):
        open_rule_store(str(tmp_path / "rules.json"), must_exist=True)
    with pytest.raises(RuleStoreError, match=r"^no SQLite database file at "):
        open_rule_store(f"sqlite:///{tmp_path / 'rules.db'}", must_exist=True)
    assert list(tmp_path.iterdir()) == []


def test_must_exist_opens_an_existing_store(tmp_path: Path) -> None:
    (tmp_path / "rules.json").write_text("[]\n", encoding="utf-8")
    assert open_rule_store(str(tmp_path / "rules.json"), must_exist=True).get_all() == []


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
