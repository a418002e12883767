"""`AgentRulesMiddleware`: a project's effective rules in the system prompt of every model call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
)

from langchain_agent_rules.agent.rules_prompt import aread_rules_prompt, read_rules_prompt
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware._system import with_section
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.tools.agent_rule import AgentRuleTool

__all__ = ["AgentRulesMiddleware"]


class AgentRulesMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Put the effective rules of a project into the system prompt at every model call.

    The rules are read afresh before each model call, so a rule added or changed during a
    run is followed from the next call on. They are rendered exactly as in
    `create_rules_agent` (grouped by type, highest priority first) and appended to the
    system prompt `create_agent` was given. The `AgentRuleToolConfig` limits apply: a store
    over them fails the model call with `ToolExecutionError`, naming the figure and the
    limit. The async path reads through the reader's ``aget_all_by_project`` when it has one.

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
        if project_id is not None and (
            isinstance(project_id, bool) or not isinstance(project_id, int)
        ):
            raise AgentConfigurationError(
                f"project_id must be an int or None, got {type(project_id).__name__}"
            )
        if not isinstance(include_tool, bool):
            raise AgentConfigurationError(
                f"include_tool must be True or False, got {type(include_tool).__name__}"
            )
        super().__init__()
        self.reader = reader
        self.project_id = project_id
        self.config = _rule_config(config)
        self.tools = [AgentRuleTool(reader, self.config)] if include_tool else []

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Call the model with the rules appended to the system prompt."""
        rules = read_rules_prompt(self.reader, self.project_id, self.config)
        return handler(request.override(system_message=with_section(request.system_message, rules)))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async `wrap_model_call`; the rules are read without blocking the event loop."""
        rules = await aread_rules_prompt(self.reader, self.project_id, self.config)
        return await handler(
            request.override(system_message=with_section(request.system_message, rules))
        )


def _rule_config(config: AgentRuleToolConfig | Mapping[str, Any] | None) -> AgentRuleToolConfig:
    if config is None:
        return AgentRuleToolConfig()
    if isinstance(config, AgentRuleToolConfig):
        return config
    return AgentRuleToolConfig.from_mapping(config)
