"""The rules' checks around `create_agent`'s model and tool calls, for `AgentRulesMiddleware`.

The same steps as the agent graph's (`answer_checks`, `check_tool_call`,
`redact_observation`, `ask_approval`), fitted to middleware requests and responses: a
revision or review is one more call through the model handler, without tools, history
or system prompt; a denied or rejected tool call is answered with an error
`ToolMessage`; a tool's result is redacted before `create_agent` stores it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain.agents.middleware import ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolCall, ToolMessage
from langgraph.types import Command

from langchain_agent_rules.agent.answer_checks import ModelRequest as Messages
from langchain_agent_rules.agent.approval import ask_approval
from langchain_agent_rules.agent.prompts import REJECTED, TOOL_DENIED
from langchain_agent_rules.rules.engine import (
    CheckFailure,
    RuleEvent,
    check_tool_call,
    redact_observation,
)
from langchain_agent_rules.rules.model import Rule

__all__ = [
    "ToolPlan",
    "answer_of",
    "plan_tool_call",
    "redacted_result",
    "reply_of",
    "revision_request",
    "with_answer",
    "with_events",
]


def answer_of(response: ModelResponse[Any]) -> AIMessage | None:
    """The reply that ends the run (no tool calls, no structured output), or None."""
    if response.structured_response is not None or not response.result:
        return None
    reply = response.result[-1]
    if not isinstance(reply, AIMessage) or reply.tool_calls or reply.invalid_tool_calls:
        return None
    return reply


def revision_request(request: ModelRequest[Any], messages: Messages) -> ModelRequest[Any]:
    """``request`` reduced to ``messages``: no tools, no system prompt, no structured output."""
    return request.override(
        messages=cast("list[AnyMessage]", messages),
        system_message=None,
        tools=[],
        tool_choice=None,
        response_format=None,
    )


def reply_of(response: ModelResponse[Any]) -> BaseMessage:
    """The model's reply in a handler's response."""
    return next(m for m in reversed(response.result) if isinstance(m, AIMessage))


def with_answer(response: ModelResponse[Any], reply: AIMessage, text: str) -> ModelResponse[Any]:
    """``response`` with ``reply`` (its last message) holding ``text`` instead."""
    if text == reply.text:
        return response
    checked = reply.model_copy(update={"content": text})
    return ModelResponse(
        result=[*response.result[:-1], checked],
        structured_response=response.structured_response,
    )


@dataclass(frozen=True)
class ToolPlan:
    """What to do with one tool call: answer it at once, or run ``request``."""

    request: ToolCallRequest
    answer: ToolMessage | None = None
    events: list[RuleEvent] = field(default_factory=list)


def _refusal(call: ToolCall, failure: CheckFailure) -> ToolMessage:
    rule = failure.rule
    return ToolMessage(
        content=TOOL_DENIED.format(tool=call["name"], rule_id=rule.id, content=rule.content),
        tool_call_id=call["id"],
        name=call["name"],
        status="error",
    )


def plan_tool_call(
    request: ToolCallRequest, rules: Sequence[Rule], max_argument_bytes: int
) -> ToolPlan:
    """Hold the call to the TOOL checks; ask a human (an ``interrupt``) when a rule says so.

    Unlike the agent graph, a middleware cannot tell whether the agent has a
    checkpointer, so it always asks; without one the run stops at the interrupt and the
    call never runs.
    """
    call = request.tool_call
    verdict = check_tool_call(rules, call["name"], call["args"])
    events = list(verdict.events)
    if verdict.status == "denied":
        answer = _refusal(call, verdict.failures[0])
        return ToolPlan(request, answer, events)
    if verdict.status == "allowed":
        return ToolPlan(request, None, events)
    asking = [failure.rule for failure in verdict.failures]
    decision = ask_approval(call, max_argument_bytes, asking)
    if decision.approval == "rejected":
        reason = f" ({decision.reason})" if decision.reason else ""
        answer = ToolMessage(
            content=REJECTED.format(tool=call["name"], reason=reason),
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )
        return ToolPlan(request, answer, events)
    if decision.approval == "edited":
        # A human may change the arguments, not lift a rule that denies them.
        edited = check_tool_call(rules, call["name"], decision.args)
        if edited.status == "denied":
            answer = _refusal(call, edited.failures[0])
            return ToolPlan(request, answer, [*events, *edited.events])
        request = request.override(tool_call={**call, "args": decision.args})
    return ToolPlan(request, None, events)


def _redacted_message(
    message: ToolMessage, rules: Sequence[Rule], events: list[RuleEvent]
) -> ToolMessage:
    if not isinstance(message.content, str):
        return message  # provider content blocks are passed on as they are
    redaction = redact_observation(rules, message.content)
    if not redaction.events:
        return message
    events.extend(redaction.events)
    return message.model_copy(update={"content": redaction.text})


def redacted_result(
    result: ToolMessage | Command[Any], rules: Sequence[Rule], events: list[RuleEvent]
) -> ToolMessage | Command[Any]:
    """``result`` with its tool messages redacted; the redactions are added to ``events``."""
    if isinstance(result, ToolMessage):
        return _redacted_message(result, rules, events)
    if not isinstance(result.update, dict) or not result.update.get("messages"):
        return result
    messages = [
        _redacted_message(m, rules, events) if isinstance(m, ToolMessage) else m
        for m in result.update["messages"]
    ]
    return Command(
        graph=result.graph,
        update={**result.update, "messages": messages},
        resume=result.resume,
        goto=result.goto,
    )


def with_events(
    result: ToolMessage | Command[Any], events: list[RuleEvent]
) -> ToolMessage | Command[Any]:
    """``result`` carrying ``events`` into the state's ``rule_events`` (a `Command`)."""
    if not events:
        return result
    if isinstance(result, ToolMessage):
        return Command(update={"messages": [result], "rule_events": events})
    if result.graph is not None or not isinstance(result.update, dict):
        return result  # meant for another graph: its state has no rule events of ours
    return Command(
        graph=result.graph,
        update={**result.update, "rule_events": events},
        resume=result.resume,
        goto=result.goto,
    )
