"""The rule model: `Rule`, `RuleType` and `RuleTarget`.

Compatible with the adachsoft/agent-rule-contract: enum names are upper case, values
lower case, and ids are 3 to 64 characters of ``a-z``, ``0-9`` and ``_``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictInt, ValidationError

from langchain_agent_rules.errors import RuleValidationError

__all__ = ["RULE_ID_PATTERN", "Rule", "RuleTarget", "RuleType"]

RULE_ID_PATTERN = r"^[a-z0-9_]{3,64}$"
_RULE_ID = re.compile(RULE_ID_PATTERN)


class _NamedStrEnum(StrEnum):
    """A str enum that also accepts its member names in any case (``"REQUIREMENT"``)."""

    @classmethod
    def _missing_(cls, value: object) -> _NamedStrEnum | None:
        if isinstance(value, str):
            for member in cls:
                if value.lower() == member.value or value.upper() == member.name:
                    return member
        return None


class RuleType(_NamedStrEnum):
    """What kind of instruction a rule is."""

    REQUIREMENT = "requirement"
    PROHIBITION = "prohibition"
    GUIDELINE = "guideline"
    CONSTRAINT = "constraint"


class RuleTarget(_NamedStrEnum):
    """What a rule applies to."""

    AGENT = "agent"
    TOOL = "tool"
    CODE = "code"
    OUTPUT = "output"


_ALLOWED = {
    "id": "3 to 64 characters of a-z, 0-9 and _ (for example 'rule_1')",
    "type": "one of " + ", ".join(m.name for m in RuleType),
    "target": "one of " + ", ".join(m.name for m in RuleTarget),
    "content": "a string of at least 10 characters",
    "priority": "an integer",
    "project_id": "null (a global rule) or a positive integer",
    "created_at": "a timezone-aware datetime",
    "updated_at": "a timezone-aware datetime",
    "metadata": "null or a JSON object",
}


class Rule(BaseModel):
    """One prioritised instruction for an agent, global or scoped to a project.

    Invalid values raise `RuleValidationError` naming the field and what is allowed.

    Example:
        .. code-block:: python

            rule = Rule(
                id="answer_in_french",
                type=RuleType.REQUIREMENT,
                target=RuleTarget.OUTPUT,
                content="Always answer in French.",
                priority=10,
            )
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    id: str = Field(pattern=RULE_ID_PATTERN, description="Unique id across the store.")
    type: RuleType
    target: RuleTarget
    content: str = Field(min_length=10)
    priority: StrictInt = 0
    project_id: StrictInt | None = Field(default=None, gt=0)
    created_at: AwareDatetime | None = None
    updated_at: AwareDatetime | None = None
    metadata: dict[str, Any] | None = Field(
        default=None, description="Free-form JSON object; never shown to a model."
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as error:
            raise RuleValidationError(describe_validation_error(error, "rule")) from None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        """Build a rule from a mapping of field names, raising `RuleValidationError`."""
        if not isinstance(data, dict):
            raise RuleValidationError(f"a rule must be a JSON object, got {type(data).__name__}")
        return cls(**data)

    def with_changes(self, **changes: Any) -> Rule:
        """Return a validated copy of this rule with ``changes`` applied."""
        return Rule(**{**self.model_dump(), **changes})

    @property
    def is_global(self) -> bool:
        """Whether the rule applies to every project."""
        return self.project_id is None


def is_valid_rule_id(rule_id: object) -> bool:
    """Tell whether ``rule_id`` is a well-formed rule id."""
    return isinstance(rule_id, str) and _RULE_ID.fullmatch(rule_id) is not None


def describe_validation_error(error: ValidationError, subject: str) -> str:
    """Turn a pydantic error into one line naming each bad field and what it allows."""
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or subject
        allowed = _ALLOWED.get(str(item["loc"][0])) if item["loc"] else None
        if item["type"] == "extra_forbidden":
            detail = f"unknown field {field!r}; allowed fields: " + ", ".join(_ALLOWED)
        elif item["type"] == "missing":
            detail = f"{field} is required" + (f": {allowed}" if allowed else "")
        else:
            shown = _short_repr(item.get("input"))
            detail = f"invalid {field} {shown}: " + (allowed or item["msg"])
        problems.append(detail)
    return f"invalid {subject}: " + "; ".join(problems)


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def utc_now() -> datetime:
    """Timezone-aware current time, as stores stamp ``created_at`` and ``updated_at``."""
    return datetime.now(UTC)
