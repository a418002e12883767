"""The rule model: `Rule`, `RuleType` and `RuleTarget`.

Compatible with the adachsoft/agent-rule-contract: enum names are upper case, values
lower case, and ids are 3 to 64 characters of ``a-z``, ``0-9`` and ``_``. A rule may
carry a `RuleCheck` that the agent enforces in code.

Whatever a rules file, a database or a model hands in, a rule holds only what every
store can write: integers within 64 bits, text without lone surrogates, and metadata
that is plain JSON nested at most `MAX_METADATA_DEPTH` levels.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from langchain_agent_rules.errors import RuleValidationError
from langchain_agent_rules.rules._describe import (
    describe_validation_error,
    refuse_surrogates,
    short_repr,
)
from langchain_agent_rules.rules.check import CHECK_ALLOWED, RuleCheck

__all__ = ["MAX_METADATA_DEPTH", "RULE_ID_PATTERN", "Rule", "RuleTarget", "RuleType"]

RULE_ID_PATTERN = r"^[a-z0-9_]{3,64}$"
_RULE_ID = re.compile(RULE_ID_PATTERN)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_METADATA_DEPTH = 32

METADATA_DEPTH_TEMPLATE = (
    "metadata is nested more than {limit} levels deep; allowed: a JSON object nested at most "
    "{limit} levels"
)
METADATA_VALUE_TEMPLATE = (
    "metadata holds {what}; allowed: JSON values (objects with string keys, arrays, strings, "
    "finite numbers, integers within 64 bits, true, false, null)"
)
CHECK_TARGET_TEMPLATE = "a {condition} check needs target {needed}, got {target}"


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
    "priority": "an integer within 64 bits (higher comes first)",
    "project_id": "null (a global rule) or a positive integer within 64 bits",
    "created_at": "a timezone-aware datetime",
    "updated_at": "a timezone-aware datetime",
    "metadata": "null or a JSON object",
    "check": "null or a JSON object with one of forbid, require, language, max_chars, tool",
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
    priority: StrictInt = Field(default=0, ge=INT64_MIN, le=INT64_MAX)
    project_id: StrictInt | None = Field(default=None, gt=0, le=INT64_MAX)
    created_at: AwareDatetime | None = None
    updated_at: AwareDatetime | None = None
    metadata: dict[str, Any] | None = Field(
        default=None, description="Free-form JSON object; never shown to a model."
    )
    check: RuleCheck | None = Field(
        default=None, description="What the agent enforces in code; None: prompt only."
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except (ValidationError, RecursionError) as error:
            if isinstance(error, RecursionError):
                raise RuleValidationError("invalid rule: a value is nested too deeply") from None
            raise RuleValidationError(
                describe_validation_error(error, "rule", _ALLOWED, {"check": CHECK_ALLOWED})
            ) from None

    @field_validator("metadata")
    @classmethod
    def _plain_json(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            _check_metadata(value)
        return value

    @model_validator(mode="after")
    def _check_fits_target(self) -> Rule:
        check = self.check
        if check is None:
            return self
        needed = RuleTarget.OUTPUT if check.is_answer_check else RuleTarget.TOOL
        if self.target is not needed:
            raise ValueError(
                CHECK_TARGET_TEMPLATE.format(
                    condition=check.condition, needed=needed.name, target=self.target.name
                )
            )
        return self

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        """Build a rule from a mapping of field names, raising `RuleValidationError`."""
        if not isinstance(data, dict):
            raise RuleValidationError(f"a rule must be a JSON object, got {type(data).__name__}")
        return cls(**data)

    def with_changes(self, **changes: Any) -> Rule:
        """Return a validated copy of this rule with ``changes`` applied."""
        return Rule(**{**dict(self), **changes})

    @property
    def is_global(self) -> bool:
        """Whether the rule applies to every project."""
        return self.project_id is None


def is_valid_rule_id(rule_id: object) -> bool:
    """Tell whether ``rule_id`` is a well-formed rule id."""
    return isinstance(rule_id, str) and _RULE_ID.fullmatch(rule_id) is not None


def _check_metadata(metadata: dict[str, Any]) -> None:
    """Walk ``metadata`` without recursion: plain JSON, 64-bit ints, bounded depth."""
    pending: list[tuple[object, int]] = [(metadata, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            if depth > MAX_METADATA_DEPTH:
                raise ValueError(METADATA_DEPTH_TEMPLATE.format(limit=MAX_METADATA_DEPTH))
            for key, item in value.items():
                if not isinstance(key, str):
                    raise ValueError(
                        METADATA_VALUE_TEMPLATE.format(what="a key that is not a string")
                    )
                refuse_surrogates("metadata", key)
                pending.append((item, depth + 1))
        elif isinstance(value, list):
            if depth > MAX_METADATA_DEPTH:
                raise ValueError(METADATA_DEPTH_TEMPLATE.format(limit=MAX_METADATA_DEPTH))
            pending.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            refuse_surrogates("metadata", value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            if not INT64_MIN <= value <= INT64_MAX:
                raise ValueError(METADATA_VALUE_TEMPLATE.format(what="an integer beyond 64 bits"))
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(METADATA_VALUE_TEMPLATE.format(what="a number that is not finite"))
        else:
            raise ValueError(METADATA_VALUE_TEMPLATE.format(what=f"a {type(value).__name__}"))


def shown_id(rule_id: object) -> str:
    """``rule_id`` for an error message: its repr, cut short when it is long."""
    return short_repr(rule_id)


def utc_now() -> datetime:
    """Timezone-aware current time, as stores stamp ``created_at`` and ``updated_at``."""
    return datetime.now(UTC)
