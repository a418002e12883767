"""JsonFileRuleStore on real files: format, errors, atomic writes, cache."""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from langchain_agent_rules.errors import RuleNotFoundError, RuleStoreError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.model import RuleTarget, RuleType

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rules.json"
PHP_RECORD = {
    "id": "rule_1",
    "type": "requirement",
    "projectId": None,
    "target": "agent",
    "content": "Always answer politely.",
    "priority": 10,
    "createdAt": "2026-02-16T14:59:00+00:00",
    "updatedAt": "2026-02-16T14:59:00+00:00",
    "metadata": {"source": "php"},
}


def write(path: Path, value: Any) -> Path:
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def test_a_missing_file_is_an_error_naming_it_and_nothing_is_created(tmp_path: Path) -> None:
    path = tmp_path / "rulez.json"
    with pytest.raises(RuleStoreError) as caught:
        JsonFileRuleStore(path)
    assert str(caught.value) == (
        f"no rules file at {path}; give the path of an existing rules file, or pass "
        "create=True to start an empty one"
    )
    assert list(tmp_path.iterdir()) == []


def test_create_starts_an_empty_file_and_its_folder(tmp_path: Path, make_rule: Any) -> None:
    path = tmp_path / "nested" / "rules.json"
    store = JsonFileRuleStore(path, create=True)
    assert path.read_text(encoding="utf-8") == "[]\n"
    assert store.get_all_by_project(None) == []
    store.create(make_rule("first_rule"))
    assert [entry["id"] for entry in json.loads(path.read_text())] == ["first_rule"]


def test_create_opens_an_existing_file_as_it_is(tmp_path: Path) -> None:
    path = write(tmp_path / "rules.json", [PHP_RECORD])
    before = path.read_bytes()
    assert [rule.id for rule in JsonFileRuleStore(path, create=True).get_all()] == ["rule_1"]
    assert path.read_bytes() == before


def test_a_file_removed_after_opening_is_an_error_not_an_empty_store(
    tmp_path: Path, make_rule: Any
) -> None:
    path = write(tmp_path / "rules.json", [PHP_RECORD])
    store = JsonFileRuleStore(path)
    assert len(store.get_all()) == 1
    path.unlink()
    for use in (
        lambda: store.get_all_by_project(None),
        lambda: store.get("rule_1"),
        lambda: store.create(make_rule("second")),
    ):
        with pytest.raises(RuleStoreError, match=r"^no rules file at "):
            use()
    assert not path.exists()


def test_the_file_uses_the_php_format(tmp_path: Path, make_rule: Any) -> None:
    path = tmp_path / "rules.json"
    JsonFileRuleStore(path, create=True).create(
        make_rule("php_compatible", project_id=3, priority=2, type="CONSTRAINT", metadata={"a": 1})
    )
    [record] = json.loads(path.read_text())
    assert list(record) == [
        "id", "type", "projectId", "target", "content",
        "priority", "createdAt", "updatedAt", "metadata",
    ]  # fmt: skip
    assert record["type"] == "constraint" and record["target"] == "agent"
    assert record["projectId"] == 3 and record["metadata"] == {"a": 1}
    assert record["createdAt"].endswith("+00:00") and len(record["createdAt"]) == 25


def test_a_php_written_file_loads(tmp_path: Path) -> None:
    store = JsonFileRuleStore(write(tmp_path / "rules.json", [PHP_RECORD]))
    rule = store.get("rule_1")
    assert rule.type is RuleType.REQUIREMENT and rule.target is RuleTarget.AGENT
    assert rule.created_at is not None and rule.created_at.isoformat() == PHP_RECORD["createdAt"]
    assert rule.metadata == {"source": "php"}


def test_the_example_file_loads() -> None:
    store = JsonFileRuleStore(EXAMPLE)
    assert len(store.get_all_by_project(1)) > len(store.get_all_by_project(None)) > 0


def test_non_ascii_content_round_trips(tmp_path: Path, make_rule: Any) -> None:
    path = tmp_path / "rules.json"
    JsonFileRuleStore(path, create=True).create(
        make_rule("polish", content="Zażółć gęślą jaźń, proszę.")
    )
    assert "Zażółć" in path.read_text(encoding="utf-8")
    assert JsonFileRuleStore(path).get("polish").content == "Zażółć gęślą jaźń, proszę."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{", "corrupt JSON at line 1"),
        ("", "corrupt JSON"),
        ('{"id": "x"}', "top level must be a JSON array"),
        ("[1]", "entry 0: an entry must be a JSON object"),
        (json.dumps([PHP_RECORD, {**PHP_RECORD, "id": "bad-id"}]), "entry 1 (id 'bad-id')"),
        (json.dumps([{**PHP_RECORD, "type": "wish"}]), "entry 0 (id 'rule_1'): invalid rule"),
        (json.dumps([{**PHP_RECORD, "extra": 1}]), "unknown key(s) 'extra'"),
        (json.dumps([{**PHP_RECORD, "createdAt": "2026-02-16T14:59:00"}]), "needs an offset"),
        (json.dumps([PHP_RECORD, PHP_RECORD]), "entry 1 has id 'rule_1', already used by entry 0"),
    ],
)
def test_an_unreadable_file_raises_naming_the_file_and_the_entry(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path / "rules.json", text)
    with pytest.raises(RuleStoreError) as caught:
        JsonFileRuleStore(path).get_all_by_project(None)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_a_store_that_cannot_read_its_file_never_overwrites_it(
    tmp_path: Path, make_rule: Any
) -> None:
    path = write(tmp_path / "rules.json", "[not json")
    store = JsonFileRuleStore(path)
    for write_once in (
        lambda: store.create(make_rule("new_rule")),
        lambda: store.update(make_rule("rule_1")),
        lambda: store.delete("rule_1"),
    ):
        with pytest.raises(RuleStoreError):
            write_once()
    assert path.read_text() == "[not json"


def test_a_reader_sees_another_instances_writes_without_restart(
    tmp_path: Path, make_rule: Any
) -> None:
    path = tmp_path / "rules.json"
    reader, writer = JsonFileRuleStore(path, create=True), JsonFileRuleStore(path)
    writer.create(make_rule("one_rule"))
    assert [r.id for r in reader.get_all_by_project(None)] == ["one_rule"]
    writer.update(writer.get("one_rule").with_changes(priority=7))
    assert reader.get("one_rule").priority == 7
    writer.delete("one_rule")
    with pytest.raises(RuleNotFoundError):
        reader.get("one_rule")


def test_a_read_of_an_unchanged_file_reuses_the_parsed_rules(
    tmp_path: Path, make_rule: Any
) -> None:
    path = tmp_path / "rules.json"
    JsonFileRuleStore(path, create=True).create(make_rule("cached"))
    store = JsonFileRuleStore(path)
    first = store.get("cached")
    assert store.get("cached") is first
    assert store.get_all_by_project(None)[0] is first
    shutil.copy(path, tmp_path / "copy.json")
    os.replace(tmp_path / "copy.json", path)  # same bytes, new file: parsed again
    assert store.get("cached") is not first
    assert store.get("cached") == first


def test_an_externally_replaced_file_is_read_again(tmp_path: Path, make_rule: Any) -> None:
    path = tmp_path / "rules.json"
    store = JsonFileRuleStore(path, create=True)
    store.create(make_rule("before"))
    write(path, [PHP_RECORD])
    assert [r.id for r in store.get_all_by_project(None)] == ["rule_1"]


def test_writes_leave_no_temporary_files_and_keep_the_file_mode(
    tmp_path: Path, make_rule: Any
) -> None:
    path = write(tmp_path / "rules.json", [PHP_RECORD])
    path.chmod(0o640)
    store = JsonFileRuleStore(path)
    store.create(make_rule("second"))
    store.delete("rule_1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rules.json", "rules.json.lock"]
    assert path.stat().st_mode & 0o777 == 0o640


def test_a_path_that_is_a_folder_raises_a_store_error_naming_a_file_inside_it(
    tmp_path: Path,
) -> None:
    for create in (False, True):
        with pytest.raises(RuleStoreError) as caught:
            JsonFileRuleStore(tmp_path, create=create)
        assert str(caught.value) == (
            f"{tmp_path} is a folder; give the path of a rules file such as "
            f"{tmp_path / 'rules.json'}"
        )


def test_threads_sharing_one_store_lose_no_update(tmp_path: Path, make_rule: Any) -> None:
    store = JsonFileRuleStore(tmp_path / "rules.json", create=True)

    def create_many(thread: int) -> None:
        for index in range(25):
            store.create(make_rule(f"thread{thread}_{index:02d}"))

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(create_many, range(4)))
    assert len(JsonFileRuleStore(tmp_path / "rules.json").get_all_by_project(None)) == 100
