"""`AgentRulesMiddleware`: a project's effective rules in the system prompt of every model call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NotRequired, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import ExtendedModelResponse
from langgraph.runtime import Runtime
from langgraph.types import Command

from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.rules_prompt import RulesPrompt, aread_rules, read_rules
from langchain_agent_rules.agent.state import RuleEvent
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware._system import with_section
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.tools.agent_rule import AgentRuleTool

__all__ = ["AgentRulesMiddleware", "RulesMiddlewareState"]


class RulesMiddlewareState(AgentState[Any]):
    """`create_agent`'s state plus the run's ``rule_events`` (as in `create_rules_agent`)."""

    rule_events: NotRequired[list[RuleEvent]]


class AgentRulesMiddleware(AgentMiddleware[RulesMiddlewareState, Any, Any]):
    """Put the effective rules of a project into the system prompt at every model call.

    The rules are read afresh before each model call, so a rule added or changed during a
    run is followed from the next call on. They are rendered exactly as in
    `create_rules_agent` (grouped by type, highest priority first) and appended to the
    system prompt `create_agent` was given. The `AgentRuleToolConfig` limits apply as in
    `create_rules_agent`: a rule over them is left out (the others still apply, in
    priority order) and reported in the state's ``rule_events`` (``{"rule_id", "status":
    "omitted", "detail"}``, reset at the start of each run). The async path reads through
    the reader's ``aget_all_by_project`` when it has one.

    Setup:
        .. code-block:: bash

            pip install "langchain-agent-rules[langchain]"

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules import JsonFileRuleStore
            from langchain_agent_rules.middleware import AgentRulesMiddleware

            rules = AgentRulesMiddleware(JsonFileRuleStore("rules.json"), project_id=7)
            agent = create_agent(model, tools, middleware=[rules])

    Tool calling:
        With ``include_tool=True`` the agent also gets the ``agent_rule`` tool, so the model
        can look the rules up again (for another project, say).
    """

    state_schema = RulesMiddlewareState

    def __init__(
        self,
        reader: RuleReader,
        project_id: int | None = None,
        config: AgentRuleToolConfig | Mapping[str, Any] | None = None,
        include_tool: bool = False,
    ) -> None:
        if not isinstance(reader, RuleReader):
            raise AgentConfigurationError(
                "AgentRulesMiddleware needs a rule reader (get_all_by_project, get), "
                f"got {type(reader).__name__}"
            )
        if not isinstance(include_tool, bool):
            raise AgentConfigurationError(
                f"include_tool must be True or False, got {type(include_tool).__name__}"
            )
        super().__init__()
        self.reader = reader
        self.project_id = AgentOptions(project_id=project_id).project_id
        self.config = _rule_config(config)
        self.tools = [AgentRuleTool(reader, self.config)] if include_tool else []

    def before_agent(
        self, state: RulesMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Start the run with no rule events."""
        return {"rule_events": []} if state.get("rule_events") else None

    async def abefore_agent(
        self, state: RulesMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async `before_agent`."""
        return self.before_agent(state, runtime)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Call the model with the rules appended to the system prompt."""
        rules = read_rules(self.reader, self.project_id, self.config)
        return _with_events(request, rules, handler(_with_rules(request, rules)))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async `wrap_model_call`; the rules are read without blocking the event loop."""
        rules = await aread_rules(self.reader, self.project_id, self.config)
        return _with_events(request, rules, await handler(_with_rules(request, rules)))


def _with_rules(request: ModelRequest[Any], rules: RulesPrompt) -> ModelRequest[Any]:
    return request.override(system_message=with_section(request.system_message, rules.text))


def _with_events(
    request: ModelRequest[Any], rules: RulesPrompt, response: ModelResponse[Any]
) -> ModelCallResult[Any]:
    known = cast("list[RuleEvent]", request.state.get("rule_events") or [])
    new = [event for event in rules.omitted if event not in known]
    if not new:
        return response
    return ExtendedModelResponse(
        model_response=response, command=Command(update={"rule_events": [*known, *new]})
    )


def _rule_config(config: AgentRuleToolConfig | Mapping[str, Any] | None) -> AgentRuleToolConfig:
    if config is None:
        return AgentRuleToolConfig()
    if isinstance(config, AgentRuleToolConfig):
        return config
    return AgentRuleToolConfig.from_mapping(config)
