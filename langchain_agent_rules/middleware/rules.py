"""`AgentRulesMiddleware`: a project's effective rules in the system prompt of every model call.

With ``enforce=True`` it also holds `create_agent` to the rules' checks, as the agent graph
does: answers, tool calls and tool observations (see `_enforcement`).
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, NotRequired, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite

from langchain_agent_rules.agent.answer_checks import (
    Enforcement,
    aenforce_answer,
    answer_enforcement,
    enforce_answer,
    is_enforced,
)
from langchain_agent_rules.agent.answer_checks import (
    ModelRequest as Messages,
)
from langchain_agent_rules.agent.options import AgentOptions, Review
from langchain_agent_rules.agent.rules_prompt import (
    RulesPrompt,
    aread_effective_rules,
    aread_rules,
    read_effective_rules,
    read_rules,
)
from langchain_agent_rules.agent.state import RuleEvent
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware._enforcement import (
    answer_of,
    plan_tool_call,
    redacted_result,
    reply_of,
    revision_request,
    with_answer,
    with_events,
)
from langchain_agent_rules.middleware._system import with_section
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.tools.agent_rule import AgentRuleTool

__all__ = ["AgentRulesMiddleware", "RulesMiddlewareState"]


class RulesMiddlewareState(AgentState[Any]):
    """`create_agent`'s state plus the run's ``rule_events`` (as in `create_rules_agent`).

    Events are added (tool calls of one turn run in parallel, each adding its own).
    """

    rule_events: NotRequired[Annotated[list[RuleEvent], operator.add]]


_DEFAULTS = AgentOptions()


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

    Enforce:
        With ``enforce=True`` the rules' checks hold as in `create_rules_agent`: a reply
        without tool calls (the answer) passes the OUTPUT checks (``redact``; ``revise``:
        one more call through the model handler without tools, history or system
        prompt, at most ``max_revisions`` times; ``block``), with ``review="model"``
        after one review call; every tool call passes the TOOL checks (``deny`` answers
        it with an error ``ToolMessage``, ``approve`` interrupts the run with the same
        request as the agent's approval, so a checkpointer is needed); forbid checks with
        ``scope="answer_and_observations"`` redact tool results. Put this middleware
        before `TextToolProtocolMiddleware` (so it sees parsed replies) and after
        `ToolGuardMiddleware` (so it redacts a tool's whole output before the cap).

        .. code-block:: python

            rules = AgentRulesMiddleware(store, project_id=7, enforce=True)
            agent = create_agent(model, tools, middleware=[ToolGuardMiddleware(), rules])
    """

    state_schema = RulesMiddlewareState

    def __init__(
        self,
        reader: RuleReader,
        project_id: int | None = None,
        config: AgentRuleToolConfig | Mapping[str, Any] | None = None,
        include_tool: bool = False,
        enforce: bool = False,
        max_revisions: int = _DEFAULTS.max_revisions,
        review: Review = _DEFAULTS.review,
    ) -> None:
        if not isinstance(reader, RuleReader):
            raise AgentConfigurationError(
                "AgentRulesMiddleware needs a rule reader (get_all_by_project, get), "
                f"got {type(reader).__name__}"
            )
        for name, flag in (("include_tool", include_tool), ("enforce", enforce)):
            if not isinstance(flag, bool):
                raise AgentConfigurationError(
                    f"{name} must be True or False, got {type(flag).__name__}"
                )
        super().__init__()
        self.reader = reader
        self.options = AgentOptions(
            project_id=project_id, max_revisions=max_revisions, review=review
        )
        self.project_id = self.options.project_id
        self.enforce = enforce
        self.config = _rule_config(config)
        self.tools = [AgentRuleTool(reader, self.config)] if include_tool else []

    def before_agent(
        self, state: RulesMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Start the run with no rule events."""
        return {"rule_events": Overwrite([])} if state.get("rule_events") else None

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
        """Call the model with the rules appended to the system prompt; check an answer."""
        rules = read_rules(self.reader, self.project_id, self.config)
        response = handler(_with_rules(request, rules))
        reply = answer_of(response) if self.enforce else None
        if reply is None or not is_enforced(rules.rules, self.options.review):
            return _with_events(request, rules, response)

        def call(messages: Messages) -> BaseMessage:
            return reply_of(handler(revision_request(request, messages)))

        enforced = enforce_answer(self._enforcement(request, rules, reply.text), call)
        checked = with_answer(response, reply, enforced.text)
        return _with_events(request, rules, checked, enforced.events)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async `wrap_model_call`; the rules are read without blocking the event loop."""
        rules = await aread_rules(self.reader, self.project_id, self.config)
        response = await handler(_with_rules(request, rules))
        reply = answer_of(response) if self.enforce else None
        if reply is None or not is_enforced(rules.rules, self.options.review):
            return _with_events(request, rules, response)

        async def call(messages: Messages) -> BaseMessage:
            return reply_of(await handler(revision_request(request, messages)))

        enforced = await aenforce_answer(self._enforcement(request, rules, reply.text), call)
        checked = with_answer(response, reply, enforced.text)
        return _with_events(request, rules, checked, enforced.events)

    def _enforcement(
        self, request: ModelRequest[Any], rules: RulesPrompt, answer: str
    ) -> Enforcement:
        task = next((m.text for m in reversed(request.messages) if m.type == "human"), "")
        return answer_enforcement(
            rules.rules,
            answer,
            task=task,
            max_revisions=self.options.max_revisions,
            review=self.options.review,
        )

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """With ``enforce``: check the call, ask for approval if a rule says so, redact."""
        if not self.enforce:
            return handler(request)
        rules = read_effective_rules(self.reader, self.project_id)
        plan = plan_tool_call(request, rules, _DEFAULTS.max_argument_bytes)
        if plan.answer is not None:
            return with_events(plan.answer, plan.events)
        events = list(plan.events)
        result = redacted_result(handler(plan.request), rules, events)
        return with_events(result, events)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async `wrap_tool_call`."""
        if not self.enforce:
            return await handler(request)
        rules = await aread_effective_rules(self.reader, self.project_id)
        plan = plan_tool_call(request, rules, _DEFAULTS.max_argument_bytes)
        if plan.answer is not None:
            return with_events(plan.answer, plan.events)
        events = list(plan.events)
        result = redacted_result(await handler(plan.request), rules, events)
        return with_events(result, events)


def _with_rules(request: ModelRequest[Any], rules: RulesPrompt) -> ModelRequest[Any]:
    return request.override(system_message=with_section(request.system_message, rules.text))


def _with_events(
    request: ModelRequest[Any],
    rules: RulesPrompt,
    response: ModelResponse[Any],
    checks: list[RuleEvent] | None = None,
) -> ModelCallResult[Any]:
    known = cast("list[RuleEvent]", request.state.get("rule_events") or [])
    new = [event for event in rules.omitted if event not in known] + (checks or [])
    if not new:
        return response
    return ExtendedModelResponse(
        model_response=response, command=Command(update={"rule_events": new})
    )


def _rule_config(config: AgentRuleToolConfig | Mapping[str, Any] | None) -> AgentRuleToolConfig:
    if config is None:
        return AgentRuleToolConfig()
    if isinstance(config, AgentRuleToolConfig):
        return config
    return AgentRuleToolConfig.from_mapping(config)
