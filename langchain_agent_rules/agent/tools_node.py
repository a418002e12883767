"""The tools node: rule checks, approval, repeated-call detection, then the calls of one turn.

Order matters. Every call first passes the TOOL checks of the effective rules
(`check_tool_call`): a denied call is answered with an error observation naming the rule
(status ``denied``) and never asks for approval; a call a rule sends to a human is
asked like a tool in ``require_approval``. Every approval request (an ``interrupt``) is
made before any tool runs: on resume LangGraph re-runs the node from the top, and no
tool may run twice for one decision. Then the calls that are neither denied, rejected
nor repeats of a call that already succeeded in this run go to the tool runner
(timeouts, size caps, one observation per call, redaction for forbid checks with
``scope="answer_and_observations"``) with LangGraph's tool contracts: injected state,
store and runtime, ``interrupt()`` inside a tool, and a `Command` returned by a tool,
which is applied to the state. Each trace step keeps the rule events of its call; the
run's ``rule_events`` get them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.messages import AIMessage, ToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Command

from langchain_agent_rules.agent.approval import ApprovalDecision, ask_approval
from langchain_agent_rules.agent.injection import Injections, inject, injections_of
from langchain_agent_rules.agent.nodes import is_refused_call, new_call_id
from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.prompts import (
    APPROVAL_UNAVAILABLE,
    INVALID_ARGS,
    PARSE_ERROR,
    REJECTED,
    REPEATED_CALL,
    TOOL_DENIED,
)
from langchain_agent_rules.agent.rules_prompt import aread_effective_rules, read_effective_rules
from langchain_agent_rules.agent.state import AgentState, TraceStep
from langchain_agent_rules.agent.tool_runner import (
    ObservationFilter,
    PrepareCall,
    ToolOutcome,
    ToolStatus,
    arun_tool_calls,
    run_tool_calls,
    truncate_observation,
)
from langchain_agent_rules.rules.engine import (
    CheckFailure,
    Redaction,
    RuleEvent,
    check_tool_call,
    redact_observation,
)
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["ToolsNode"]

NO_REVIEWER_DETAIL = "no human can be asked: the agent has no checkpointer"


@dataclass(frozen=True)
class _Plan:
    message: AIMessage
    calls: list[ToolCall]
    decisions: list[ApprovalDecision]
    settled: dict[int, ToolOutcome]
    events: list[tuple[RuleEvent, ...]]
    rules: Sequence[Rule]

    @property
    def to_run(self) -> list[int]:
        return [i for i in range(len(self.calls)) if i not in self.settled]

    def runnable_calls(self) -> list[ToolCall]:
        return [{**self.calls[i], "args": self.decisions[i].args} for i in self.to_run]

    def redact(self) -> ObservationFilter | None:
        """The filter for forbid checks that cover observations, or None without any."""
        rules = [r for r in self.rules if r.check is not None and r.check.covers_observations]
        if not rules:
            return None

        def redact(text: str) -> Redaction:
            return redact_observation(rules, text)

        return redact


class ToolsNode:
    """Checks and runs the tool calls of the last model turn and records one trace step each."""

    def __init__(
        self,
        tools: Sequence[BaseTool],
        options: AgentOptions,
        rules: RuleReader | None = None,
        *,
        can_ask_approval: bool = True,
    ) -> None:
        self._tool_list = list(tools)
        self.tools_by_name = {tool.name: tool for tool in tools}
        self.options = options
        self.rules = rules
        self.can_ask_approval = can_ask_approval
        self._injections: dict[str, Injections] = {
            tool.name: found for tool in tools if (found := injections_of(tool)) is not None
        }

    # --- rules, approval and planning ---------------------------------------------------

    def _rules(self) -> list[Rule]:
        if self.rules is None:
            return []
        return read_effective_rules(self.rules, self.options.project_id)

    async def _arules(self) -> list[Rule]:
        if self.rules is None:
            return []
        return await aread_effective_rules(self.rules, self.options.project_id)

    def _denied(
        self, call: ToolCall, args: dict[str, Any], failure: CheckFailure, template: str
    ) -> ToolOutcome:
        rule = failure.rule
        observation = template.format(tool=call["name"], rule_id=rule.id, content=rule.content)
        return self._settled(call, args, observation, "denied")

    def _decide(
        self, call: ToolCall, rules: Sequence[Rule]
    ) -> tuple[ApprovalDecision, ToolOutcome | None, tuple[RuleEvent, ...]]:
        """The rules' verdict on ``call``, the human's when one is needed, and the events."""
        verdict = check_tool_call(rules, call["name"], call["args"])
        events = verdict.events
        undecided = ApprovalDecision(call["args"], None)
        if verdict.status == "denied":
            return (
                undecided,
                self._denied(call, call["args"], verdict.failures[0], TOOL_DENIED),
                events,
            )
        by_rule = verdict.status == "approval"
        if by_rule and not self.can_ask_approval:
            failure = verdict.failures[0]
            events = tuple(
                RuleEvent(rule_id=e["rule_id"], status="denied", detail=NO_REVIEWER_DETAIL)
                if e["status"] == "approval"
                else e
                for e in events
            )
            return (
                undecided,
                self._denied(call, call["args"], failure, APPROVAL_UNAVAILABLE),
                events,
            )
        if not by_rule and call["name"] not in self.options.require_approval:
            return undecided, None, events
        asking = [failure.rule for failure in verdict.failures]
        decision = ask_approval(call, self.options.max_argument_bytes, asking)
        if decision.approval == "rejected":
            reason = f" ({decision.reason})" if decision.reason else ""
            observation = REJECTED.format(tool=call["name"], reason=reason)
            return decision, self._settled(call, decision.args, observation, "rejected"), events
        if decision.approval == "edited":
            # A human may change the arguments, not lift a rule that denies them.
            edited = check_tool_call(rules, call["name"], decision.args)
            if edited.status == "denied":
                outcome = self._denied(call, decision.args, edited.failures[0], TOOL_DENIED)
                return decision, outcome, events + edited.events
        return decision, None, events

    def _plan(self, state: AgentState, rules: Sequence[Rule]) -> _Plan:
        message = state["messages"][-1]
        assert isinstance(message, AIMessage)
        calls = list(message.tool_calls)
        decided = [self._decide(call, rules) for call in calls]
        decisions = [decision for decision, _, _ in decided]
        done = [step for step in state.get("trace", []) if step["status"] == "ok"]
        settled: dict[int, ToolOutcome] = {}
        for index, (call, (decision, outcome, _)) in enumerate(zip(calls, decided, strict=True)):
            if outcome is not None:
                settled[index] = outcome
                continue
            previous = next(
                (s for s in done if s["tool"] == call["name"] and s["args"] == decision.args),
                None,
            )
            if previous is not None:
                observation = REPEATED_CALL.format(
                    tool=call["name"], observation=previous["observation"]
                )
                settled[index] = self._settled(call, decision.args, observation, "repeated")
        events = [call_events for _, _, call_events in decided]
        return _Plan(message, calls, decisions, settled, events, rules)

    def _settled(
        self, call: ToolCall, args: dict[str, Any], observation: str, status: ToolStatus
    ) -> ToolOutcome:
        text, truncated = truncate_observation(observation, self.options.max_observation_bytes)
        return ToolOutcome(call["id"] or "", call["name"], args, text, status, 0.0, truncated)

    def _prepare(
        self, plan: _Plan, state: AgentState, config: RunnableConfig | None
    ) -> PrepareCall | None:
        """What injects the graph's values into the calls of tools that take them."""
        if not any(call["name"] in self._injections for call in plan.runnable_calls()):
            return None
        runtime = _current_runtime()

        def prepare(call: ToolCall) -> ToolCall:
            injections = self._injections.get(call["name"])
            if injections is None:
                return call
            return inject(call, injections, state, config, runtime, self._tool_list)

        return prepare

    # --- running -----------------------------------------------------------------------

    def tools(
        self, state: AgentState, config: RunnableConfig | None = None
    ) -> dict[str, Any] | list[Any]:
        """Check the last turn's calls, run those allowed and record one observation each."""
        plan = self._plan(state, self._rules())
        ran = run_tool_calls(
            self.tools_by_name,
            plan.runnable_calls(),
            self.options.tool_timeout,
            self.options.max_observation_bytes,
            self._prepare(plan, state, config),
            plan.redact(),
        )
        return self._update(state, plan, ran)

    async def atools(
        self, state: AgentState, config: RunnableConfig | None = None
    ) -> dict[str, Any] | list[Any]:
        """Async `tools`."""
        plan = self._plan(state, await self._arules())
        ran = await arun_tool_calls(
            self.tools_by_name,
            plan.runnable_calls(),
            self.options.tool_timeout,
            self.options.max_observation_bytes,
            self._prepare(plan, state, config),
            plan.redact(),
        )
        return self._update(state, plan, ran)

    def _invalid_outcomes(self, message: AIMessage) -> list[ToolOutcome]:
        outcomes = []
        for invalid in message.invalid_tool_calls:
            problem = invalid.get("error") or "the arguments are not valid JSON"
            status: ToolStatus = "invalid_args" if is_refused_call(invalid) else "parse_error"
            tool = invalid.get("name") or ""
            observation = (
                INVALID_ARGS.format(tool=tool, message=problem)
                if status == "invalid_args"
                else PARSE_ERROR.format(problem=problem)
            )
            text, truncated = truncate_observation(observation, self.options.max_observation_bytes)
            call_id = invalid.get("id") or new_call_id()
            outcomes.append(ToolOutcome(call_id, tool, {}, text, status, 0.0, truncated, problem))
        return outcomes

    def _update(
        self, state: AgentState, plan: _Plan, ran: list[ToolOutcome]
    ) -> dict[str, Any] | list[Any]:
        by_index = {**plan.settled, **dict(zip(plan.to_run, ran, strict=True))}
        outcomes = [
            replace(by_index[i], rule_events=plan.events[i] + by_index[i].rule_events)
            for i in range(len(plan.calls))
        ]
        outcomes += self._invalid_outcomes(plan.message)
        approvals = [d.approval for d in plan.decisions]
        approvals += [None] * len(plan.message.invalid_tool_calls)
        trace = list(state.get("trace", []))
        iteration = state.get("iterations", 0)
        for outcome, approval in zip(outcomes, approvals, strict=True):
            trace.append(_trace_step(len(trace) + 1, iteration, outcome, approval))
        commands: list[Command[Any]] = [o.command for o in outcomes if o.command is not None]
        update: dict[str, Any] = {
            "messages": [o.to_message() for o in outcomes if o.command is None],
            "trace": trace,
        }
        events = [event for outcome in outcomes for event in outcome.rule_events]
        if events:
            update["rule_events"] = [*(state.get("rule_events") or []), *events]
        # A tool's Command carries the ToolMessage for its call and updates the state.
        return [update, *commands] if commands else update


def _current_runtime() -> Runtime[Any] | None:
    try:
        return get_runtime()
    except RuntimeError:  # the node called on its own, outside a graph run
        return None


def _trace_step(step: int, iteration: int, outcome: ToolOutcome, approval: str | None) -> TraceStep:
    return {
        "step": step,
        "iteration": iteration,
        "tool": outcome.tool,
        "args": outcome.args,
        "observation": outcome.observation,
        "status": outcome.status,
        "started_at": outcome.started_at,
        "duration_ms": outcome.duration_ms,
        "truncated": outcome.truncated,
        "error": outcome.error,
        "approval": approval,
        "rule_events": list(outcome.rule_events),
    }
