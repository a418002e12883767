"""Hostile rule payloads and rules files end as a rule or one of our errors, never another.

Property tests (hypothesis) state the invariant over generated payloads and files; the
named cases below pin the classes found by attack tests: numbers beyond 64 bits, lone
surrogates, deep nesting, megabyte fields and corrupt files.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from langchain_agent_rules.errors import RuleStoreError, RuleValidationError
from langchain_agent_rules.rules._records import rule_from_record, rule_to_record
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.langgraph_store import LangGraphRuleStore
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.sql_store import SqlRuleStore

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=30)  # lone surrogates too
JSON_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT
)  # unbounded ints, NaN and infinities included
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=12,
)
PLAIN_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
OUTPUT_CHECKS = [
    {"forbid": "email"},
    {"forbid": "iban", "on_fail": "block"},
    {"forbid": "phone:FR", "scope": "answer_and_observations"},
    {"forbid": "regex:(?i)secret"},
    {"require": r"regex:\bEUR\b", "when": r"regex:\d[.,]\d"},
    {"language": "fr"},
    {"max_chars": 500, "on_fail": "block"},
]
VALID_PAYLOADS = st.fixed_dictionaries(
    {
        "id": st.from_regex(r"[a-z0-9_]{3,64}", fullmatch=True),
        "type": st.sampled_from(["requirement", "PROHIBITION", "guideline", "Constraint"]),
        "target": st.just("output"),
        "content": st.text(min_size=10, max_size=60),
        "priority": st.integers(-(2**63), 2**63 - 1),
        "project_id": st.none() | st.integers(1, 2**63 - 1),
        "metadata": st.none() | st.dictionaries(st.text(max_size=8), PLAIN_JSON, max_size=3),
        "check": st.none() | st.sampled_from(OUTPUT_CHECKS),
    }
)
CHECK_KEYS = [
    "forbid",
    "require",
    "when",
    "language",
    "max_chars",
    "tool",
    "args",
    "on_fail",
    "scope",
]
CHECK_VALUES = st.sampled_from(
    ["email", "phone:FR", "secret", "regex:EUR", "regex:(", "regex:a*", "fr", "xx", "*",
     "redact", "revise", "block", "deny", "approve", "answer_and_observations"]
) | JSON_SCALARS  # fmt: skip
HOSTILE_VALUES = (
    JSON_VALUES
    | st.dictionaries(st.sampled_from(CHECK_KEYS), CHECK_VALUES, max_size=3)
    | st.integers(2**63, 2**80)
    | st.just("\ud800" * 11)
)
MUTATIONS = st.tuples(
    st.sampled_from(["id", "type", "target", "content", "priority", "project_id", "metadata",
                     "check", "colour"]),
    HOSTILE_VALUES,
)  # fmt: skip
PAYLOADS = VALID_PAYLOADS | st.tuples(VALID_PAYLOADS, st.lists(MUTATIONS, max_size=2)).map(
    lambda pair: {**pair[0], **dict(pair[1])}
)


def _storable(rule: Rule) -> None:
    """What every store needs of a valid rule: a record that JSON and UTF-8 can write."""
    record = rule_to_record(rule)
    json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
    assert rule_from_record(json.loads(json.dumps(record))) == rule


@PROPERTY
@given(PAYLOADS)
def test_any_rule_payload_is_a_storable_rule_or_a_rule_validation_error(
    payload: dict[str, Any],
) -> None:
    try:
        rule = Rule.from_dict(payload)
    except RuleValidationError:
        return
    _storable(rule)


def _records(payloads: list[dict[str, Any]]) -> list[Any]:
    keys = {"project_id": "projectId", "created_at": "createdAt", "updated_at": "updatedAt"}
    return [{keys.get(key, key): value for key, value in p.items()} for p in payloads]


FILES = (
    st.binary(max_size=300)
    | st.lists(PAYLOADS, max_size=4).map(
        lambda payloads: json.dumps(_records(payloads)).encode("utf-8")
    )
    | JSON_VALUES.map(lambda value: json.dumps(value).encode("utf-8"))
)


@PROPERTY
@given(FILES)
def test_any_rules_file_loads_or_raises_rule_store_error_and_is_never_overwritten(
    content: bytes,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rules.json"
        path.write_bytes(content)
        store = JsonFileRuleStore(path)
        try:
            rules = store.get_all_by_project(None)
        except RuleStoreError:
            with pytest.raises(RuleStoreError):
                store.create(
                    Rule(
                        id="new_rule", type="guideline", target="agent", content="A new rule here."
                    )
                )
            assert path.read_bytes() == content
            return
        for rule in rules:
            _storable(rule)


def _stores(folder: Path) -> list[Any]:
    return [
        InMemoryRuleStore(),
        JsonFileRuleStore(folder / "rules.json", create=True),
        LangGraphRuleStore(InMemoryStore()),
        SqlRuleStore(f"sqlite:///{folder / 'rules.db'}"),
    ]


@PROPERTY
@given(PAYLOADS)
def test_a_valid_rule_reads_back_equal_from_every_store(payload: dict[str, Any]) -> None:
    try:
        rule = Rule.from_dict({**payload, "created_at": None, "updated_at": None})
    except RuleValidationError:
        return
    with tempfile.TemporaryDirectory() as folder:
        for store in _stores(Path(folder)):
            try:
                stored = store.create(rule)
            except RuleValidationError as error:
                assert "max_" in str(error)  # only a limit may refuse a valid rule
                continue
            assert store.get(rule.id) == stored
            assert stored.with_changes(created_at=None, updated_at=None) == rule


# -- named classes --------------------------------------------------------------------


def _rule(**fields: Any) -> dict[str, Any]:
    return {
        "id": "rule_1",
        "type": "requirement",
        "target": "output",
        "content": "Always answer politely.",
        **fields,
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"priority": 2**63}, "invalid priority 9223372036854775808: an integer within 64 bits"),
        ({"priority": -(2**63) - 1}, "invalid priority -9223372036854775809"),
        ({"project_id": 2**64}, "invalid project_id 18446744073709551616"),
        ({"check": {"max_chars": 2**64}}, "invalid check.max_chars 18446744073709551616"),
        ({"metadata": {"n": 10**4000}}, "metadata holds an integer beyond 64 bits"),
        ({"content": "Polite \ud800 answers only."}, "invalid content: text must be valid Unicode"),
        ({"metadata": {"k": ["\udfff"]}}, "metadata holds a lone surrogate (\\udfff)"),
        ({"metadata": {"x": float("inf")}}, "metadata holds a number that is not finite"),
    ],
)
def test_named_hostile_fields_raise_rule_validation_error(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(RuleValidationError) as caught:
        Rule.from_dict(_rule(**fields))
    assert message in str(caught.value)


def _nested(depth: int) -> Any:
    value: Any = "deep"
    for _ in range(depth):
        value = {"d": value}
    return value


@pytest.mark.parametrize("depth", [33, 100_000])
def test_deep_metadata_or_checks_raise_rule_validation_error(depth: int) -> None:
    with pytest.raises(RuleValidationError, match="nested more than 32 levels"):
        Rule.from_dict(_rule(metadata=_nested(depth)))
    with pytest.raises(RuleValidationError, match="check"):
        Rule.from_dict(_rule(check=_nested(depth)))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'[{"priority": ' + b"9" * 5000 + b"}]", "unreadable JSON"),
        (b'[{"id": "rule_1", "content": "\\ud800 lone"}]', "entry 0 (id 'rule_1')"),
        (b'[{"id": "rule_1", "priority": NaN}]', "entry 0 (id 'rule_1')"),
        (b"\xff\xfe not utf-8", "not UTF-8"),
        (b'{"rules": []}', "must be a JSON array"),
    ],
)
def test_corrupt_rules_files_raise_rule_store_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "rules.json"
    path.write_bytes(content)
    with pytest.raises(RuleStoreError, match=message.replace("(", r"\(").replace(")", r"\)")):
        JsonFileRuleStore(path).get_all_by_project(None)


def test_a_megabyte_field_is_refused_by_the_limit_and_the_file_stays_valid(
    tmp_path: Path,
) -> None:
    store = JsonFileRuleStore(tmp_path / "rules.json", create=True)
    store.create(Rule.from_dict(_rule()))
    with pytest.raises(RuleValidationError, match="max_rule_content_bytes=500"):
        store.create(Rule.from_dict(_rule(id="huge_rule", content="x" * 1_000_000)))
    with pytest.raises(RuleValidationError, match="the limit is 2000"):
        Rule.from_dict(_rule(check={"require": "regex:" + "x" * 1_000_000}))
    assert [r.id for r in JsonFileRuleStore(tmp_path / "rules.json").get_all_by_project(None)] == [
        "rule_1"
    ]
