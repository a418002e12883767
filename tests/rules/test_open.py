from __future__ import annotations

from pathlib import Path

import pytest

from langchain_agent_rules.errors import RuleStoreError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.open import open_rule_store


def test_a_path_opens_a_json_file_store(tmp_path: Path) -> None:
    store = open_rule_store(str(tmp_path / "rules.json"))
    assert isinstance(store, JsonFileRuleStore)
    assert store.path == tmp_path / "rules.json"


@pytest.mark.parametrize("spec", ["", "   "])
def test_an_empty_spec_is_refused(spec: str) -> None:
    with pytest.raises(RuleStoreError, match="path to a JSON rules file"):
        open_rule_store(spec)
