"""The size limits on effective rules, shared by `agent_rule`, `agent_rule_admin` and the agent.

`AgentRuleToolConfig` holds the limits; `effective_rules_payload` reads a project's
effective rules, orders them by priority and enforces every limit, so the tool's JSON
and the agent's system prompt are bounded by the same figures.

Stores refuse, when a rule is written, a rule that alone breaks a limit
(`check_rule_limits`: its content over ``max_rule_content_bytes``, or its own entry
too large for ``max_payload_bytes``). How many rules a project has, and their total
size, depend on the other rules and on who else writes; `effective_rules_payload`
enforces those when the rules are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from langchain_agent_rules._json_text import compact_json
from langchain_agent_rules.errors import (
    RuleValidationError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.store import RuleReader

__all__ = [
    "AgentRuleToolConfig",
    "EffectiveRules",
    "PublicRule",
    "check_rule_limits",
    "compact_json",
    "effective_rules_payload",
    "limits_config",
    "public_rule",
    "utf8_len",
]

CONTENT_LIMIT_TEMPLATE = (
    "rule {rule_id!r} has {size} bytes of content; the limit is max_rule_content_bytes={limit}"
)
RULE_PAYLOAD_LIMIT_TEMPLATE = (
    "rule {rule_id!r} alone makes a rules payload of {size} bytes; "
    "the limit is max_payload_bytes={limit}"
)


class AgentRuleToolConfig(BaseModel):
    """Size limits for rules shown to a model.

    Build it with keywords or from a plain mapping
    (``AgentRuleToolConfig.from_mapping({"max_rules": 20})``). A value that is not an
    int (a bool is not), is not positive, or an unknown key raises
    `ToolConfigurationError`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_rules: StrictInt = Field(default=100, gt=0, description="Most effective rules allowed.")
    max_rule_content_bytes: StrictInt = Field(
        default=500, gt=0, description="Most UTF-8 bytes in one rule's content."
    )
    max_payload_bytes: StrictInt = Field(
        default=64000, gt=0, description="Most UTF-8 bytes in the compact JSON payload."
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: "
                + ("unknown key" if e["type"] == "extra_forbidden" else "must be an int > 0")
                for e in error.errors()
            )
            raise ToolConfigurationError(
                f"invalid AgentRuleToolConfig ({problems}); allowed keys: "
                "max_rules, max_rule_content_bytes, max_payload_bytes, each an int > 0"
            ) from None

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> AgentRuleToolConfig:
        """Build a config from a mapping with snake_case keys."""
        if not isinstance(values, Mapping):
            raise ToolConfigurationError(
                f"AgentRuleToolConfig needs a mapping, got {type(values).__name__}"
            )
        return cls(**dict(values))


class PublicRule(TypedDict):
    """A rule as a model sees it: no metadata, timestamps or project id; its check if any."""

    id: str
    type: str
    target: str
    content: str
    priority: int
    check: NotRequired[dict[str, Any]]


class EffectiveRules(TypedDict):
    """The payload of `agent_rule`: the effective rules of one scope."""

    project_id: int | None
    count: int
    rules: list[PublicRule]


def utf8_len(text: str) -> int:
    """Length of ``text`` in UTF-8 bytes."""
    return len(text.encode("utf-8"))


def public_rule(rule: Rule) -> PublicRule:
    """The model-facing view of ``rule``, with enum names (``"REQUIREMENT"``)."""
    shown: PublicRule = {
        "id": rule.id,
        "type": rule.type.name,
        "target": rule.target.name,
        "content": rule.content,
        "priority": rule.priority,
    }
    if rule.check is not None:
        shown["check"] = rule.check.to_record()
    return shown


def _content_problem(rule: Rule, config: AgentRuleToolConfig) -> str | None:
    size = utf8_len(rule.content)
    if size <= config.max_rule_content_bytes:
        return None
    return CONTENT_LIMIT_TEMPLATE.format(
        rule_id=rule.id, size=size, limit=config.max_rule_content_bytes
    )


def check_content_size(rule: Rule, config: AgentRuleToolConfig) -> None:
    """Raise `ToolExecutionError` when ``rule.content`` exceeds the byte limit."""
    problem = _content_problem(rule, config)
    if problem is not None:
        raise ToolExecutionError(problem)


def check_rule_limits(rule: Rule, config: AgentRuleToolConfig) -> None:
    """Raise `RuleValidationError` naming the limit when ``rule`` alone breaks one.

    What stores call before they write: the content must fit ``max_rule_content_bytes``
    and a payload holding only this rule must fit ``max_payload_bytes``.
    """
    problem = _content_problem(rule, config)
    if problem is not None:
        raise RuleValidationError(problem)
    alone: EffectiveRules = {
        "project_id": rule.project_id,
        "count": 1,
        "rules": [public_rule(rule)],
    }
    size = utf8_len(compact_json(alone))
    if size > config.max_payload_bytes:
        raise RuleValidationError(
            RULE_PAYLOAD_LIMIT_TEMPLATE.format(
                rule_id=rule.id, size=size, limit=config.max_payload_bytes
            )
        )


def limits_config(limits: AgentRuleToolConfig | Mapping[str, Any] | None) -> AgentRuleToolConfig:
    """Limits from a config, a plain mapping of its keys, or None for the defaults."""
    if limits is None:
        return AgentRuleToolConfig()
    if isinstance(limits, AgentRuleToolConfig):
        return limits
    return AgentRuleToolConfig.from_mapping(limits)


def effective_rules_payload(
    reader: RuleReader, project_id: int | None, config: AgentRuleToolConfig
) -> EffectiveRules:
    """Read the effective rules of ``project_id``, highest priority first, within the limits.

    The sort is stable: rules of equal priority keep the store's order. Raises
    `ToolExecutionError` naming the figure and the limit when there are more than
    ``max_rules`` rules, a rule's content is over ``max_rule_content_bytes`` or the
    compact JSON is over ``max_payload_bytes``. Errors from ``reader`` propagate.
    """
    rules = sorted(reader.get_all_by_project(project_id), key=lambda r: -r.priority)
    if len(rules) > config.max_rules:
        raise ToolExecutionError(
            f"{len(rules)} effective rules; the limit is max_rules={config.max_rules}"
        )
    for rule in rules:
        check_content_size(rule, config)
    payload: EffectiveRules = {
        "project_id": project_id,
        "count": len(rules),
        "rules": [public_rule(rule) for rule in rules],
    }
    size = utf8_len(compact_json(payload))
    if size > config.max_payload_bytes:
        raise ToolExecutionError(
            f"the rules payload is {size} bytes; "
            f"the limit is max_payload_bytes={config.max_payload_bytes}"
        )
    return payload
