"""Every store keeps a rule's check and refuses, when it is written, a rule over a limit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from langchain_agent_rules.errors import RuleValidationError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.model import Rule

ADACHSOFT_FILE = Path(__file__).parent / "fixtures" / "adachsoft_rules.json"


def checked(rule_id: str = "no_email", **fields: Any) -> Rule:
    values: dict[str, Any] = {
        "type": "prohibition",
        "target": "output",
        "content": "Never reveal e-mail addresses.",
        "check": {"forbid": "email", "scope": "answer_and_observations"},
    }
    values.update(fields)
    return Rule(id=rule_id, **values)


# -- the adachsoft format -------------------------------------------------------------


def test_a_file_without_checks_stays_byte_for_byte_in_the_adachsoft_format(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rules.json"
    shutil.copyfile(ADACHSOFT_FILE, path)
    store = JsonFileRuleStore(path)
    store.create(checked())
    store.create(checked("plain_rule", check=None))
    store.delete("no_email")
    store.delete("plain_rule")
    assert path.read_bytes() == ADACHSOFT_FILE.read_bytes()


def test_a_check_is_one_more_key_on_its_own_rule_only(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    shutil.copyfile(ADACHSOFT_FILE, path)
    JsonFileRuleStore(path).create(checked())
    lines = path.read_text(encoding="utf-8").splitlines()
    original = ADACHSOFT_FILE.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == original[:3] and lines[3] == original[3] + ","
    record = json.loads(lines[4].rstrip(","))
    assert list(record)[-2:] == ["metadata", "check"]
    assert record["check"] == {"forbid": "email", "scope": "answer_and_observations"}
    assert lines[4].endswith(
        '"metadata": null, "check": {"forbid": "email", "scope": "answer_and_observations"}}'
    )
    again = JsonFileRuleStore(path).get("no_email")
    assert again.check == checked().check


def test_an_adachsoft_file_loads_with_every_field(tmp_path: Path) -> None:
    rules = JsonFileRuleStore(ADACHSOFT_FILE).get_all_by_project(7)
    assert [rule.id for rule in rules] == ["rule_1", "no_secrets", "polish_comments"]
    assert all(rule.check is None for rule in rules)
    assert rules[2].metadata == {"tags": ["pl", "style"], "nested": {"level": 2}}


# -- every store keeps the check ------------------------------------------------------


def test_every_store_keeps_the_check_through_create_update_and_removal(any_store: Any) -> None:
    created = any_store.create(checked())
    assert any_store.get("no_email").check == created.check == checked().check
    tool_rule = any_store.create(
        checked("no_delete", target="tool", check={"tool": "sql_query", "args": "regex:DELETE"})
    )
    assert [r.check for r in any_store.get_all_by_project(None)] == [
        created.check,
        tool_rule.check,
    ]
    changed = any_store.update(created.with_changes(check={"forbid": "phone:FR"}))
    assert any_store.get("no_email").check == changed.check
    assert changed.check is not None and changed.check.forbid == "phone:FR"
    any_store.update(changed.with_changes(check=None))
    assert any_store.get("no_email").check is None


async def test_the_async_twins_keep_the_check(any_store: Any) -> None:
    created = await any_store.acreate(checked())
    assert (await any_store.aget("no_email")).check == created.check
    updated = await any_store.aupdate(created.with_changes(check={"language": "fr"}))
    assert [r.check for r in await any_store.aget_all_by_project(None)] == [updated.check]


# -- limits on write ------------------------------------------------------------------


CONTENT_OVER = "rule 'too_long' has 41 bytes of content; the limit is max_rule_content_bytes=40"


def test_every_store_refuses_content_over_the_limit_and_stays_as_it_was(
    store_with_limits: Any,
) -> None:
    store = store_with_limits
    kept = store.create(checked("kept_rule", content="x" * 40))
    with pytest.raises(RuleValidationError) as caught:
        store.create(checked("too_long", content="x" * 41))
    assert str(caught.value) == CONTENT_OVER
    with pytest.raises(RuleValidationError, match="max_rule_content_bytes=40"):
        store.update(kept.with_changes(content="ż" * 21))
    assert store.get_all_by_project(None) == [kept]


def test_every_store_refuses_a_rule_whose_own_payload_is_over_the_limit(
    store_with_limits: Any,
) -> None:
    store = store_with_limits
    long_check = {"require": "regex:" + "(?:EUR)" * 50}
    with pytest.raises(RuleValidationError) as caught:
        store.create(checked("big_check", check=long_check))
    assert str(caught.value) == (
        "rule 'big_check' alone makes a rules payload of 532 bytes; "
        "the limit is max_payload_bytes=400"
    )
    assert store.get_all_by_project(None) == []


async def test_the_async_twins_refuse_over_the_limit_too(store_with_limits: Any) -> None:
    store = store_with_limits
    kept = await store.acreate(checked("kept_rule"))
    with pytest.raises(RuleValidationError, match="max_rule_content_bytes=40"):
        await store.acreate(checked("too_long", content="x" * 41))
    with pytest.raises(RuleValidationError, match="max_rule_content_bytes=40"):
        await store.aupdate(kept.with_changes(content="x" * 41))
    assert await store.aget_all_by_project(None) == [kept]


def test_the_default_limits_apply_when_none_are_given(any_store: Any) -> None:
    with pytest.raises(RuleValidationError, match="max_rule_content_bytes=500"):
        any_store.create(checked("too_long", content="x" * 501))
