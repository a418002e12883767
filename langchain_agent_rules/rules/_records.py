"""Conversion between `Rule` and the adachsoft/agent-rule record (camelCase JSON object).

A record is what a rules file holds per entry::

    {"id": "rule_1", "type": "requirement", "projectId": null, "target": "agent",
     "content": "...", "priority": 0, "createdAt": "2026-02-16T14:59:00+00:00",
     "updatedAt": "2026-02-16T14:59:00+00:00", "metadata": null}

A rule with a check gets one more key, ``"check"``, after ``metadata``; a rule without one
is written exactly as adachsoft writes it, so a file without checks stays in its format.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain_agent_rules.errors import RuleValidationError
from langchain_agent_rules.rules.model import Rule

_FIELD_OF_KEY = {
    "id": "id",
    "type": "type",
    "projectId": "project_id",
    "target": "target",
    "content": "content",
    "priority": "priority",
    "createdAt": "created_at",
    "updatedAt": "updated_at",
    "metadata": "metadata",
    "check": "check",
}
RECORD_KEYS = tuple(_FIELD_OF_KEY)


def _timestamp(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def rule_to_record(rule: Rule) -> dict[str, Any]:
    """The camelCase record of ``rule``, with lower-case type/target and ISO 8601 timestamps."""
    record = {
        "id": rule.id,
        "type": rule.type.value,
        "projectId": rule.project_id,
        "target": rule.target.value,
        "content": rule.content,
        "priority": rule.priority,
        "createdAt": _timestamp(rule.created_at),
        "updatedAt": _timestamp(rule.updated_at),
        "metadata": rule.metadata,
    }
    if rule.check is not None:
        record["check"] = rule.check.to_record()
    return record


def rule_from_record(record: object) -> Rule:
    """Build a `Rule` from a camelCase record, raising `RuleValidationError` naming the problem."""
    if not isinstance(record, dict):
        raise RuleValidationError(f"an entry must be a JSON object, got {type(record).__name__}")
    unknown = [key for key in record if key not in _FIELD_OF_KEY]
    if unknown:
        raise RuleValidationError(
            f"unknown key(s) {', '.join(map(repr, unknown))}; allowed keys: "
            + ", ".join(RECORD_KEYS)
        )
    fields = {_FIELD_OF_KEY[key]: value for key, value in record.items()}
    for name in ("created_at", "updated_at"):
        fields[name] = _parse_timestamp(name, fields.get(name))
    return Rule(**fields)


def _parse_timestamp(name: str, value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise RuleValidationError(f"invalid {name} {value!r}: an ISO 8601 string with offset")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise RuleValidationError(
            f"invalid {name} {value!r}: an ISO 8601 string with offset "
            "(for example '2026-02-16T14:59:00+00:00')"
        ) from None
    if parsed.tzinfo is None:
        raise RuleValidationError(f"invalid {name} {value!r}: the timestamp needs an offset")
    return parsed
