"""`AgentRulesMiddleware`: a project's rules in the system prompt, and their checks enforced.

Each model turn reads the effective rules once. That one reading gives the rules section
of the system prompt, judges the turn's answer (OUTPUT checks: redact, revise, block;
``review="model"``), judges its tool calls (TOOL checks: a denied call is refused in the
model step, so no human and no tool ever sees it), and is kept in the state for the tool
step (``turn_rules``): calls a rule sends to a human, or tools in ``require_approval``,
wait for an approval in LangChain's HITL format (`approval`), edited arguments are judged
again, and forbid checks with ``scope="answer_and_observations"`` redact each tool result
before it is capped or stored. What each check did is a `RuleEvent` in ``rule_events``
(and in the call's trace step).

While an answer can still change, the model's reply is hidden from every stream (see
`ModelStep`): the answer a stream, a checkpoint or the state shows is the checked one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from typing import Any, cast

from langchain.agents.middleware import (
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite

from langchain_agent_rules.errors import (
    AgentConfigurationError,
    InvalidToolCallError,
    ToolExecutionError,
)
from langchain_agent_rules.middleware._answers import (
    EnforcedAnswer,
    answer_enforcement,
    is_enforced,
    reviews_answer,
)
from langchain_agent_rules.middleware._answers import (
    ModelRequest as Messages,
)
from langchain_agent_rules.middleware._step import (
    Call,
    ModelStep,
    Refusal,
    StepMiddleware,
    TurnSteps,
    Work,
)
from langchain_agent_rules.middleware._system import with_section
from langchain_agent_rules.middleware.approval import ask_approval
from langchain_agent_rules.middleware.limits import task_of
from langchain_agent_rules.middleware.prompts import APPROVAL_UNAVAILABLE, REJECTED, TOOL_DENIED
from langchain_agent_rules.middleware.state import (
    CALL_RECORD_KEY,
    ModelCallPurpose,
    RuleEvent,
    RulesState,
    ToolStatus,
)
from langchain_agent_rules.options import AgentOptions, Review
from langchain_agent_rules.rules.engine import check_tool_call, redact_observation
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.model import Rule, RuleTarget
from langchain_agent_rules.rules.prompt import RulesPrompt, aread_rules, read_rules
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.tools.agent_rule import AgentRuleTool

__all__ = ["NO_REVIEWER_DETAIL", "AgentRulesMiddleware"]

NO_REVIEWER_DETAIL = "no human can be asked: the agent has no checkpointer"

_DEFAULTS = AgentOptions()
_NO_RULES = RulesPrompt("")


def _applies_to_tools(rule: Rule) -> bool:
    check = rule.check
    if check is None:
        return False
    return (rule.target is RuleTarget.TOOL and not check.is_answer_check) or (
        check.covers_observations
    )


def _rules_of(state: Mapping[str, Any]) -> list[Rule]:
    return [Rule.model_validate(data) for data in state.get("turn_rules") or []]


def _marked(message: ToolMessage, **record: Any) -> ToolMessage:
    metadata = {**message.response_metadata, CALL_RECORD_KEY: record}
    return message.model_copy(update={"response_metadata": metadata})


def _refusal_message(
    call: dict[str, Any], text: str, status: ToolStatus, approval: str, args: dict[str, Any]
) -> ToolMessage:
    message = ToolMessage(content=text, tool_call_id=call["id"], name=call["name"], status="error")
    return _marked(message, status=status, approval=approval, args=args)


class AgentRulesMiddleware(StepMiddleware[RulesState]):
    """Put a project's effective rules into the system prompt and enforce their checks.

    Setup:
        .. code-block:: bash

            pip install langchain-agent-rules

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules import JsonFileRuleStore
            from langchain_agent_rules.middleware import AgentRulesMiddleware

            rules = AgentRulesMiddleware(JsonFileRuleStore("rules.json"), project_id=7)
            agent = create_agent(model, tools, middleware=[rules], checkpointer=saver)

    The rules are rendered as `create_rules_agent` renders them (grouped by type, highest
    priority first) after the system prompt `create_agent` was given; a rule over the
    `AgentRuleToolConfig` limits is left out of the prompt (its check still holds) and
    reported as an ``omitted`` rule event. With ``include_tool=True`` the agent also gets
    the ``agent_rule`` tool. ``enforce=False`` keeps the rules in the prompt only.

    Order: put it after LangChain's `HumanInTheLoopMiddleware` and before
    `ToolGuardMiddleware`'s inner neighbours: in `create_agent`'s list, this middleware's
    tool hook runs inside those listed before it. Approvals need a checkpointer.
    """

    state_schema = RulesState

    def __init__(
        self,
        reader: RuleReader | None = None,
        project_id: int | None = None,
        config: AgentRuleToolConfig | Mapping[str, Any] | None = None,
        include_tool: bool = False,
        enforce: bool = True,
        max_revisions: int = _DEFAULTS.max_revisions,
        review: Review = _DEFAULTS.review,
        require_approval: Sequence[str] = (),
        max_argument_bytes: int = _DEFAULTS.max_argument_bytes,
        can_ask_approval: bool = True,
    ) -> None:
        if reader is not None and not isinstance(reader, RuleReader):
            raise AgentConfigurationError(
                "AgentRulesMiddleware needs a rule reader (get_all_by_project, get), "
                f"got {type(reader).__name__}"
            )
        for name, flag in (
            ("include_tool", include_tool),
            ("enforce", enforce),
            ("can_ask_approval", can_ask_approval),
        ):
            if not isinstance(flag, bool):
                raise AgentConfigurationError(
                    f"{name} must be True or False, got {type(flag).__name__}"
                )
        if include_tool and reader is None:
            raise AgentConfigurationError("include_tool=True needs a rule reader")
        super().__init__()
        self.reader = reader
        self.options = AgentOptions(
            project_id=project_id,
            max_revisions=max_revisions,
            review=review,
            require_approval=tuple(require_approval),
            max_argument_bytes=max_argument_bytes,
        )
        self.project_id = self.options.project_id
        self.enforce = enforce
        self.can_ask_approval = can_ask_approval
        self.config = _rule_config(config)
        self.tools = [AgentRuleTool(reader, self.config)] if include_tool and reader else []

    def before_agent(self, state: RulesState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Start the run with no rule events."""
        return {"rule_events": Overwrite([])} if state.get("rule_events") else None

    async def abefore_agent(
        self, state: RulesState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async `before_agent`."""
        return self.before_agent(state, runtime)

    # --- the model step ----------------------------------------------------------------

    def _begin(
        self, request: ModelRequest[Any], step: ModelStep, rules: RulesPrompt
    ) -> ModelRequest[Any]:
        """Record what this reading of the rules means for the step; the request to send."""
        known = cast("list[RuleEvent]", request.state.get("rule_events") or [])
        step.add_events([event for event in rules.omitted if event not in known])
        if self.enforce:
            step.quiet = step.quiet or is_enforced(rules.rules, self.options.review)
            tool_rules = [rule for rule in rules.rules if _applies_to_tools(rule)]
            if tool_rules or request.state.get("turn_rules"):
                step.update["turn_rules"] = [rule.model_dump(mode="json") for rule in tool_rules]
        return request.override(system_message=with_section(request.system_message, rules.text))

    def _judge_calls(self, reply: AIMessage, rules: RulesPrompt, step: ModelStep) -> None:
        for call in reply.tool_calls:
            verdict = check_tool_call(rules.rules, call["name"], call["args"])
            if verdict.status == "denied":
                rule = verdict.failures[0].rule
                text = TOOL_DENIED.format(tool=call["name"], rule_id=rule.id, content=rule.content)
                events = verdict.events
            elif verdict.status == "approval" and not self.can_ask_approval:
                rule = verdict.failures[0].rule
                text = APPROVAL_UNAVAILABLE.format(
                    tool=call["name"], rule_id=rule.id, content=rule.content
                )
                events = tuple(
                    RuleEvent(rule_id=e["rule_id"], status="denied", detail=NO_REVIEWER_DETAIL)
                    if e["status"] == "approval"
                    else e
                    for e in verdict.events
                )
            else:
                continue
            step.add_events(events)
            step.refuse(
                Refusal(call["id"] or "", call["name"], call["args"], text, "denied", events)
            )

    def _revision(self, request: ModelRequest[Any], messages: Messages) -> ModelRequest[Any]:
        """``request`` reduced to ``messages``: no tools, history or system prompt."""
        return request.override(
            messages=cast("list[AnyMessage]", messages),
            system_message=None,
            tools=[],
            tool_choice=None,
            response_format=None,
        )

    def _checked(
        self, response: ModelResponse[Any], reply: AIMessage, text: str
    ) -> ModelResponse[Any]:
        if text == reply.text:
            return response
        result = [
            reply.model_copy(update={"content": text}) if m is reply else m for m in response.result
        ]
        return ModelResponse(result=result, structured_response=response.structured_response)

    def _needs_answer_check(
        self, reply: AIMessage | None, rules: RulesPrompt, response: ModelResponse[Any]
    ) -> bool:
        return (
            self.enforce
            and reply is not None
            and not reply.tool_calls
            and not reply.invalid_tool_calls
            and response.structured_response is None
            and is_enforced(rules.rules, self.options.review)
        )

    def _turn(self, request: ModelRequest[Any], step: ModelStep) -> TurnSteps:
        rules = step.memo.get(id(self))
        if rules is None:
            rules = step.memo[id(self)] = yield Work(self._read, self._aread)
        response: ModelResponse[Any] = yield Call(self._begin(request, step, rules))
        reply = _reply_of(response)
        if self.enforce and reply is not None and reply.tool_calls:
            self._judge_calls(reply, rules, step)
        if reply is None or not self._needs_answer_check(reply, rules, response):
            return response
        enforced = yield from self._enforce(request, step, rules, reply.text)
        step.add_events(enforced.events)
        return self._checked(response, reply, enforced.text)

    def _enforce(
        self, request: ModelRequest[Any], step: ModelStep, rules: RulesPrompt, answer: str
    ) -> Generator[Call | Work, Any, EnforcedAnswer]:
        """Drive `answer_enforcement`: each review or revision is a call without tools."""
        purposes: list[ModelCallPurpose] = (
            ["review"] if reviews_answer(rules.rules, self.options.review) else []
        )
        enforcement = answer_enforcement(
            rules.rules,
            answer,
            task=task_of(request.messages),
            max_revisions=self.options.max_revisions,
            review=self.options.review,
        )
        try:
            messages = next(enforcement)
            while True:
                reply = None
                if step.has_room():
                    purpose = purposes.pop(0) if purposes else "revision"
                    revised = yield Call(self._revision(request, messages), purpose=purpose)
                    reply = _reply_of(revised)
                messages = enforcement.send(reply)
        except StopIteration as done:
            enforced: EnforcedAnswer = done.value
            return enforced

    def _read(self) -> RulesPrompt:
        if self.reader is None:
            return _NO_RULES
        return read_rules(self.reader, self.project_id, self.config)

    async def _aread(self) -> RulesPrompt:
        if self.reader is None:
            return _NO_RULES
        return await aread_rules(self.reader, self.project_id, self.config)

    # --- the tool step -------------------------------------------------------------------

    def _approve(
        self, request: ToolCallRequest, rules: list[Rule]
    ) -> tuple[ToolCallRequest, ToolMessage | None, str | None, list[RuleEvent]]:
        """Ask a human when a rule or ``require_approval`` says so.

        Returns the request to run, or the message answering the call instead, the
        approval, and the events of the checks.
        """
        call = request.tool_call
        verdict = check_tool_call(rules, call["name"], call["args"]) if self.enforce else None
        events = list(verdict.events) if verdict else []
        by_rule = verdict is not None and verdict.status == "approval"
        if not by_rule and call["name"] not in self.options.require_approval:
            return request, None, None, events
        asking = [failure.rule for failure in verdict.failures] if verdict and by_rule else []
        decision = ask_approval(call, self.options.max_argument_bytes, asking)
        if decision.approval == "rejected":
            reason = f" ({decision.reason})" if decision.reason else ""
            text = REJECTED.format(tool=call["name"], reason=reason)
            answer = _refusal_message(dict(call), text, "rejected", "rejected", call["args"])
            return request, answer, "rejected", events
        if decision.approval == "edited":
            # A human may change the arguments, not lift a rule that denies them.
            edited = check_tool_call(rules, call["name"], decision.args)
            events += edited.events
            if edited.status == "denied":
                rule = edited.failures[0].rule
                text = TOOL_DENIED.format(tool=call["name"], rule_id=rule.id, content=rule.content)
                answer = _refusal_message(dict(call), text, "denied", "edited", decision.args)
                return request, answer, "edited", events
            request = request.override(tool_call={**call, "args": decision.args})
        return request, None, decision.approval, events

    def _after_tool(
        self,
        result: ToolMessage | Command[Any],
        rules: list[Rule],
        approval: str | None,
        events: list[RuleEvent],
        request_args: dict[str, Any],
    ) -> ToolMessage | Command[Any]:
        observation_rules = [
            r for r in rules if r.check is not None and r.check.covers_observations
        ]

        def shaped(message: ToolMessage) -> ToolMessage:
            if observation_rules and isinstance(message.content, str):
                redaction = redact_observation(observation_rules, message.content)
                if redaction.events:
                    events.extend(redaction.events)
                    message = message.model_copy(update={"content": redaction.text})
            if approval is None:
                return message
            return _marked(message, approval=approval, args=request_args)

        if isinstance(result, ToolMessage):
            message = shaped(result)
            return (
                Command(update={"messages": [message], "rule_events": events})
                if events
                else message
            )
        if result.graph is not None or not isinstance(result.update, dict):
            return result  # meant for another graph: its state has no rule events of ours
        messages = [
            shaped(m) if isinstance(m, ToolMessage) else m
            for m in result.update.get("messages") or []
        ]
        update = {**result.update, "messages": messages}
        if events:
            update["rule_events"] = [*update.get("rule_events", []), *events]
        return Command(graph=result.graph, update=update, resume=result.resume, goto=result.goto)

    def _redacted_error(self, error: Exception, rules: list[Rule]) -> Exception:
        observation_rules = [
            r for r in rules if r.check is not None and r.check.covers_observations
        ]
        if not observation_rules:
            return error
        redaction = redact_observation(observation_rules, str(error))
        if not redaction.events:
            return error
        kind = (
            InvalidToolCallError if isinstance(error, InvalidToolCallError) else ToolExecutionError
        )
        return kind(redaction.text)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Ask for approval when needed, run the call, redact its result."""
        if not self.enforce and not self.options.require_approval:
            return handler(request)
        rules = _rules_of(request.state)
        request, answer, approval, events = self._approve(request, rules)
        if answer is not None:
            return self._after_tool(answer, [], None, events, {})
        try:
            result = handler(request)
        except GraphBubbleUp:
            raise
        except Exception as error:
            redacted = self._redacted_error(error, rules)
            if redacted is error:
                raise
            raise redacted from None
        return self._after_tool(result, rules, approval, events, request.tool_call["args"])

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async `wrap_tool_call`."""
        if not self.enforce and not self.options.require_approval:
            return await handler(request)
        rules = _rules_of(request.state)
        request, answer, approval, events = self._approve(request, rules)
        if answer is not None:
            return self._after_tool(answer, [], None, events, {})
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as error:
            redacted = self._redacted_error(error, rules)
            if redacted is error:
                raise
            raise redacted from None
        return self._after_tool(result, rules, approval, events, request.tool_call["args"])


def _reply_of(response: ModelResponse[Any]) -> AIMessage | None:
    return next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)


def _rule_config(config: AgentRuleToolConfig | Mapping[str, Any] | None) -> AgentRuleToolConfig:
    if config is None:
        return AgentRuleToolConfig()
    if isinstance(config, AgentRuleToolConfig):
        return config
    return AgentRuleToolConfig.from_mapping(config)
