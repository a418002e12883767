"""The `agent_rule` tool: the effective rules of a project, within hard size limits.

The tool's content is compact JSON (what a `ToolMessage` carries to the model) and its
artifact is the same payload as a dict (``response_format="content_and_artifact"``), so
``tool.invoke({"project_id": 1})`` returns the compact JSON string and a tool call
returns a `ToolMessage` whose ``artifact`` is the `EffectiveRules` dict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from langchain_agent_rules.errors import RuleNotFoundError, ToolConfigurationError
from langchain_agent_rules.rules.limits import (
    AgentRuleToolConfig,
    EffectiveRules,
    compact_json,
    effective_rules_payload,
    limits_config,
)
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.tools._arguments import (
    call_async_or_thread,
    parse_arguments,
    tool_json_schema,
)

__all__ = [
    "AGENT_RULE_TOOL_DESCRIPTION",
    "AGENT_RULE_TOOL_NAME",
    "AGENT_RULE_TOOL_TAGS",
    "AgentRuleArguments",
    "AgentRuleTool",
    "aeffective_rules_payload",
]

AGENT_RULE_TOOL_NAME = "agent_rule"
AGENT_RULE_TOOL_DESCRIPTION = "Returns effective agent rules resolved by the injected rule reader."
AGENT_RULE_TOOL_TAGS = ("agent:rules", "rules", "agent:general")
PROJECT_ID_ALLOWED = "null (the global rules only) or a positive integer"


class AgentRuleArguments(BaseModel):
    """Arguments of `agent_rule`: an optional project id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    project_id: StrictInt | None = Field(
        default=None,
        gt=0,
        description="Project whose rules apply in addition to the global ones; "
        "null or absent for the global rules only.",
    )


_ALLOWED = {"project_id": PROJECT_ID_ALLOWED}


class _FetchedRules:
    """A reader over rules already fetched, so the sync limits apply to an async read."""

    def __init__(self, rules: list[Rule]) -> None:
        self._rules = rules

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        return self._rules

    def get(self, rule_id: str) -> Rule:
        raise RuleNotFoundError(f"rule {rule_id!r} was not fetched")


async def aeffective_rules_payload(
    reader: RuleReader, project_id: int | None, config: AgentRuleToolConfig
) -> EffectiveRules:
    """Async `effective_rules_payload`.

    Awaits ``reader.aget_all_by_project`` when the reader has it (e.g.
    `LangGraphRuleStore`), else runs the sync read in a worker thread.
    """
    rules = await call_async_or_thread(reader, "get_all_by_project", project_id)
    return effective_rules_payload(_FetchedRules(list(rules)), project_id, config)


class AgentRuleTool(BaseTool):
    """Give a model the effective rules of a project, highest priority first.

    Setup:
        .. code-block:: python

            from langchain_agent_rules import AgentRuleTool, JsonFileRuleStore

    Instantiate:
        .. code-block:: python

            tool = AgentRuleTool(JsonFileRuleStore("rules.json"), config={"max_rules": 50})

    Invoke:
        .. code-block:: python

            tool.invoke({"project_id": 1})
            # '{"project_id":1,"count":2,"rules":[{"id":"answer_in_french",...}]}'

    Invalid arguments raise `InvalidToolCallError` without reading the store; a breached
    limit raises `ToolExecutionError` giving the figure and the limit. Errors of the
    reader propagate unchanged.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = AGENT_RULE_TOOL_NAME
    description: str = AGENT_RULE_TOOL_DESCRIPTION
    tags: list[str] | None = list(AGENT_RULE_TOOL_TAGS)
    args_schema: Any = tool_json_schema(AgentRuleArguments)
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    # As for every tool of this package: a refused call is a result the model can read.
    handle_tool_error: bool | str | Callable[[ToolException], str] | None = True
    reader: Any
    config: AgentRuleToolConfig

    def __init__(
        self,
        reader: RuleReader,
        config: AgentRuleToolConfig | Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(reader, RuleReader):
            raise ToolConfigurationError(
                f"AgentRuleTool needs a rule reader (get_all_by_project, get), "
                f"got {type(reader).__name__}"
            )
        super().__init__(reader=reader, config=limits_config(config), **kwargs)

    def _run(self, *args: Any, **kwargs: Any) -> tuple[str, EffectiveRules]:
        project_id = self._project_id(args, kwargs)
        payload = effective_rules_payload(self.reader, project_id, self.config)
        return compact_json(payload), payload

    async def _arun(self, *args: Any, **kwargs: Any) -> tuple[str, EffectiveRules]:
        project_id = self._project_id(args, kwargs)
        payload = await aeffective_rules_payload(self.reader, project_id, self.config)
        return compact_json(payload), payload

    def _project_id(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
        arguments = parse_arguments(AgentRuleArguments, args, kwargs, self.name, _ALLOWED)
        return arguments.project_id
