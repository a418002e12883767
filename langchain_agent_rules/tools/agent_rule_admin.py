"""The `agent_rule_admin` tool: create, update and delete rules, within the size limits.

Like `agent_rule`, its content is compact JSON and its artifact the same payload as a
dict (``response_format="content_and_artifact"``). A rule may carry a check
(``rule.check``), validated like every other field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal, TypedDict

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from langchain_agent_rules.errors import (
    DuplicateRuleError,
    InvalidToolCallError,
    RuleNotFoundError,
    RuleValidationError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.rules.limits import (
    AgentRuleToolConfig,
    PublicRule,
    check_rule_limits,
    compact_json,
    limits_config,
    public_rule,
)
from langchain_agent_rules.rules.model import RULE_ID_PATTERN, Rule, RuleTarget, RuleType
from langchain_agent_rules.rules.store import RuleStore
from langchain_agent_rules.tools._arguments import (
    call_async_or_thread,
    parse_arguments,
    tool_json_schema,
)

__all__ = [
    "AGENT_RULE_ADMIN_TOOL_DESCRIPTION",
    "AGENT_RULE_ADMIN_TOOL_NAME",
    "AGENT_RULE_ADMIN_TOOL_TAGS",
    "AgentRuleAdminArguments",
    "AgentRuleAdminResult",
    "AgentRuleAdminTool",
]

AGENT_RULE_ADMIN_TOOL_NAME = "agent_rule_admin"
AGENT_RULE_ADMIN_TOOL_DESCRIPTION = (
    "Creates, updates or deletes one agent rule in the injected rule store. "
    "create needs rule.id, rule.type, rule.target and rule.content (rule.priority defaults "
    "to 0; project_id null or absent makes a global rule). update needs rule.id and any of "
    "type, target, content, priority, check; a project_id key moves the rule to that project, "
    "its absence keeps the scope. delete needs rule.id only. rule.check (optional) is enforced "
    'in code, for example {"forbid": "email"}; null removes it.'
)
AGENT_RULE_ADMIN_TOOL_TAGS = ("agent:rules", "rules", "agent:admin")

MISSING_FIELDS_TEMPLATE = "invalid agent_rule_admin arguments: {action} needs rule.{fields}"
NOTHING_TO_UPDATE = (
    "invalid agent_rule_admin arguments: update needs at least one of rule.type, "
    "rule.target, rule.content, rule.priority, rule.check or a project_id key"
)
CHECK_DESCRIPTION = (
    "A check enforced in code: exactly one of forbid (email, phone, credit_card, iban, ipv4, "
    "ipv6, secret or regex:<pattern>), require (regex:<pattern>, with an optional when), "
    "language (an ISO 639-1 code), max_chars (an integer) or tool (a tool name or *, with an "
    "optional args regex); optional on_fail and scope. null: no check."
)
DELETE_EXTRA_TEMPLATE = (
    "invalid agent_rule_admin arguments: delete takes rule.id only, got {fields}"
)
NULL_FIELD_TEMPLATE = "invalid agent_rule_admin arguments: rule.{field} may not be null"

_TYPES = ", ".join(m.name for m in RuleType)
_TARGETS = ", ".join(m.name for m in RuleTarget)
_ALLOWED = {
    "action": "one of create, update, delete",
    "rule": "a JSON object with id and, for create/update, type, target, content, priority",
    "project_id": "null (a global rule) or a positive integer",
    "rule.id": "3 to 64 characters of a-z, 0-9 and _ (for example 'rule_1')",
    "rule.type": f"one of {_TYPES} (or the lower-case value)",
    "rule.target": f"one of {_TARGETS} (or the lower-case value)",
    "rule.content": "a string of at least 10 characters",
    "rule.priority": "an integer (higher comes first)",
    "rule.check": "null or a JSON object with one of forbid, require, language, max_chars, tool",
}
_CHANGEABLE = ("type", "target", "content", "priority", "check")


class AgentRuleAdminRuleArgument(BaseModel):
    """The ``rule`` argument of `agent_rule_admin`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: StrictStr = Field(pattern=RULE_ID_PATTERN, description="The rule id.")
    type: RuleType | None = Field(default=None, description=f"One of {_TYPES}.")
    target: RuleTarget | None = Field(default=None, description=f"One of {_TARGETS}.")
    content: StrictStr | None = Field(default=None, description="The instruction text.")
    priority: StrictInt | None = Field(default=None, description="Higher comes first.")
    check: dict[str, Any] | None = Field(default=None, description=CHECK_DESCRIPTION)


class AgentRuleAdminArguments(BaseModel):
    """Arguments of `agent_rule_admin`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Literal["create", "update", "delete"]
    rule: AgentRuleAdminRuleArgument
    project_id: StrictInt | None = Field(
        default=None,
        gt=0,
        description="Project of the rule; null for a global rule.",
    )


class AgentRuleAdminResult(TypedDict):
    """The payload of `agent_rule_admin`: the rule written (or removed) and its scope."""

    action: str
    rule: PublicRule
    project_id: int | None


class AgentRuleAdminTool(BaseTool):
    """Let a model create, update and delete rules in a rule store.

    Setup:
        .. code-block:: python

            from langchain_agent_rules import AgentRuleAdminTool, JsonFileRuleStore

    Instantiate:
        .. code-block:: python

            # create=True starts an empty rules.json when there is none yet
            tool = AgentRuleAdminTool(JsonFileRuleStore("rules.json", create=True))

    Invoke:
        .. code-block:: python

            tool.invoke({"action": "create", "project_id": 1, "rule": {
                "id": "answer_in_french", "type": "REQUIREMENT", "target": "OUTPUT",
                "content": "Always answer in French."}})

    The writer must also read (a `RuleStore`): ``update`` starts from the stored rule.
    Invalid input (a bad check included) raises `InvalidToolCallError`; a rule over a
    limit (``max_rule_content_bytes``, ``max_payload_bytes``, this tool's or the store's)
    raises `ToolExecutionError`; an unknown or duplicate id raises `InvalidToolCallError`
    (caused by the store's `RuleNotFoundError` or `DuplicateRuleError`); in every case nothing
    is written. With the default ``handle_tool_error=True`` the tool returns these messages as
    its result, so the model reads them; other store errors (a corrupt file, a lost server)
    propagate.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = AGENT_RULE_ADMIN_TOOL_NAME
    description: str = AGENT_RULE_ADMIN_TOOL_DESCRIPTION
    tags: list[str] | None = list(AGENT_RULE_ADMIN_TOOL_TAGS)
    args_schema: Any = tool_json_schema(AgentRuleAdminArguments)
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    # As for every tool of this package: a refused call is a result the model can read.
    handle_tool_error: bool | str | Callable[[ToolException], str] | None = True
    writer: Any
    config: AgentRuleToolConfig

    def __init__(
        self,
        writer: RuleStore,
        config: AgentRuleToolConfig | Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(writer, RuleStore):
            raise ToolConfigurationError(
                "AgentRuleAdminTool needs a rule store (get_all_by_project, get, create, "
                f"update, delete), got {type(writer).__name__}"
            )
        super().__init__(writer=writer, config=limits_config(config), **kwargs)

    def _run(self, *args: Any, **kwargs: Any) -> tuple[str, AgentRuleAdminResult]:
        arguments = self._arguments(args, kwargs)
        rule_id = arguments.rule.id
        with _store_refusals_as_tool_errors():
            if arguments.action == "create":
                stored = self.writer.create(_new_rule(arguments, self.config))
            elif arguments.action == "update":
                current = self.writer.get(rule_id)
                stored = self.writer.update(_changed_rule(current, arguments, self.config))
            else:
                stored = self.writer.delete(rule_id)
        return _result(arguments.action, stored)

    async def _arun(self, *args: Any, **kwargs: Any) -> tuple[str, AgentRuleAdminResult]:
        arguments = self._arguments(args, kwargs)
        rule_id = arguments.rule.id
        writer = self.writer
        with _store_refusals_as_tool_errors():
            if arguments.action == "create":
                created = _new_rule(arguments, self.config)
                stored = await call_async_or_thread(writer, "create", created)
            elif arguments.action == "update":
                current = await call_async_or_thread(writer, "get", rule_id)
                changed = _changed_rule(current, arguments, self.config)
                stored = await call_async_or_thread(writer, "update", changed)
            else:
                stored = await call_async_or_thread(writer, "delete", rule_id)
        return _result(arguments.action, stored)

    def _arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AgentRuleAdminArguments:
        arguments = parse_arguments(AgentRuleAdminArguments, args, kwargs, self.name, _ALLOWED)
        _check_shape(arguments)
        return arguments


def _check_shape(arguments: AgentRuleAdminArguments) -> None:
    """Check what each action needs, beyond the types the schema checks."""
    given = arguments.rule.model_fields_set - {"id"}
    for field in sorted(given - {"check"}):  # a null check means "no check"
        if getattr(arguments.rule, field) is None:
            raise InvalidToolCallError(NULL_FIELD_TEMPLATE.format(field=field))
    if arguments.action == "create":
        missing = [f for f in ("type", "target", "content") if f not in given]
        if missing:
            raise InvalidToolCallError(
                MISSING_FIELDS_TEMPLATE.format(action="create", fields=", rule.".join(missing))
            )
    elif arguments.action == "update":
        if not given and "project_id" not in arguments.model_fields_set:
            raise InvalidToolCallError(NOTHING_TO_UPDATE)
    else:
        extra = sorted(f"rule.{f}" for f in given)
        if arguments.project_id is not None:
            extra.append("project_id")
        if extra:
            raise InvalidToolCallError(DELETE_EXTRA_TEMPLATE.format(fields=", ".join(extra)))


def _new_rule(arguments: AgentRuleAdminArguments, config: AgentRuleToolConfig) -> Rule:
    given = arguments.rule
    rule = _validated(
        lambda: Rule(
            id=given.id,
            type=given.type,
            target=given.target,
            content=given.content,
            priority=given.priority if given.priority is not None else 0,
            project_id=arguments.project_id,
            check=given.check,
        )
    )
    _check_limits(rule, config)
    return rule


def _changed_rule(
    current: Rule, arguments: AgentRuleAdminArguments, config: AgentRuleToolConfig
) -> Rule:
    given = arguments.rule
    changes: dict[str, Any] = {
        field: getattr(given, field) for field in _CHANGEABLE if field in given.model_fields_set
    }
    if "project_id" in arguments.model_fields_set:
        changes["project_id"] = arguments.project_id
    rule = _validated(lambda: current.with_changes(**changes))
    _check_limits(rule, config)
    return rule


def _check_limits(rule: Rule, config: AgentRuleToolConfig) -> None:
    try:
        check_rule_limits(rule, config)
    except RuleValidationError as error:
        raise ToolExecutionError(str(error)) from None


@contextmanager
def _store_refusals_as_tool_errors() -> Iterator[None]:
    # A store refuses a rule over its own limits, an unknown id or a duplicate one: the
    # model's call was wrong, and the model reads why.
    try:
        yield
    except RuleValidationError as error:
        raise ToolExecutionError(str(error)) from None
    except (RuleNotFoundError, DuplicateRuleError) as error:
        raise InvalidToolCallError(str(error)) from error


def _validated(build: Callable[[], Rule]) -> Rule:
    try:
        return build()
    except RuleValidationError as error:
        raise InvalidToolCallError(f"invalid agent_rule_admin arguments: {error}") from None


def _result(action: str, rule: Rule) -> tuple[str, AgentRuleAdminResult]:
    payload: AgentRuleAdminResult = {
        "action": action,
        "rule": public_rule(rule),
        "project_id": rule.project_id,
    }
    return compact_json(payload), payload
