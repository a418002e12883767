"""The tools node: approval, repeated-call detection, then the calls of one model turn.

Order matters. Every approval request (an ``interrupt``) is made before any tool runs:
on resume LangGraph re-runs the node from the top, and no tool may run twice for one
decision. Then the calls that are neither rejected nor repeats of a call that already
succeeded in this run go to the tool runner (timeouts, size caps, one observation per
call) with LangGraph's tool contracts: injected state, store and runtime, ``interrupt()``
inside a tool, and a `Command` returned by a tool, which is applied to the state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Command, interrupt

from langchain_agent_rules.agent.arguments import argument_problem
from langchain_agent_rules.agent.injection import Injections, inject, injections_of
from langchain_agent_rules.agent.nodes import is_refused_call, new_call_id
from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.prompts import INVALID_ARGS, PARSE_ERROR, REJECTED, REPEATED_CALL
from langchain_agent_rules.agent.state import AgentState, TraceStep
from langchain_agent_rules.agent.tool_runner import (
    PrepareCall,
    ToolOutcome,
    ToolStatus,
    arun_tool_calls,
    run_tool_calls,
    truncate_observation,
)
from langchain_agent_rules.errors import AgentConfigurationError

__all__ = ["ToolsNode"]

_APPROVAL_FORMS = (
    '"approve", "reject", {"action": "approve"}, {"action": "edit", "args": {...}} '
    'or {"action": "reject", "reason": "..."}'
)


@dataclass(frozen=True)
class _Decision:
    args: dict[str, Any]
    approval: str | None
    reason: str = ""


@dataclass(frozen=True)
class _Plan:
    message: AIMessage
    calls: list[ToolCall]
    decisions: list[_Decision]
    settled: dict[int, ToolOutcome]

    @property
    def to_run(self) -> list[int]:
        return [i for i in range(len(self.calls)) if i not in self.settled]

    def runnable_calls(self) -> list[ToolCall]:
        return [{**self.calls[i], "args": self.decisions[i].args} for i in self.to_run]


class ToolsNode:
    """Runs the tool calls of the last model turn and records one trace step each."""

    def __init__(self, tools: Sequence[BaseTool], options: AgentOptions) -> None:
        self._tool_list = list(tools)
        self.tools_by_name = {tool.name: tool for tool in tools}
        self.options = options
        self._injections: dict[str, Injections] = {
            tool.name: found for tool in tools if (found := injections_of(tool)) is not None
        }

    # --- approval and planning -------------------------------------------------------

    def _ask_approval(self, call: ToolCall) -> _Decision:
        answer = interrupt(
            {"type": "tool_approval", "tool": call["name"], "args": call["args"], "id": call["id"]}
        )
        action = answer if isinstance(answer, str) else None
        if isinstance(answer, Mapping):
            action = answer.get("action")
        if action == "approve":
            return _Decision(call["args"], "approved")
        if action == "reject":
            reason = answer.get("reason", "") if isinstance(answer, Mapping) else ""
            return _Decision(call["args"], "rejected", str(reason or ""))
        if (
            action == "edit"
            and isinstance(answer, Mapping)
            and isinstance(answer.get("args"), dict)
        ):
            problem = argument_problem(answer["args"], self.options.max_argument_bytes)
            if problem is not None:
                raise AgentConfigurationError(f"the edited arguments were refused: {problem}")
            return _Decision(dict(answer["args"]), "edited")
        raise AgentConfigurationError(
            f"an approval answer must be one of {_APPROVAL_FORMS}; got {answer!r:.200}"
        )

    def _plan(self, state: AgentState) -> _Plan:
        message = state["messages"][-1]
        assert isinstance(message, AIMessage)
        calls = list(message.tool_calls)
        decisions = [
            self._ask_approval(call)
            if call["name"] in self.options.require_approval
            else _Decision(call["args"], None)
            for call in calls
        ]
        done = [step for step in state.get("trace", []) if step["status"] == "ok"]
        settled: dict[int, ToolOutcome] = {}
        for index, (call, decision) in enumerate(zip(calls, decisions, strict=True)):
            if decision.approval == "rejected":
                reason = f" ({decision.reason})" if decision.reason else ""
                observation = REJECTED.format(tool=call["name"], reason=reason)
                settled[index] = self._settled(call, decision.args, observation, "rejected")
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
        return _Plan(message, calls, decisions, settled)

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
        """Run the last turn's calls (after approval) and record one observation each."""
        plan = self._plan(state)
        ran = run_tool_calls(
            self.tools_by_name,
            plan.runnable_calls(),
            self.options.tool_timeout,
            self.options.max_observation_bytes,
            self._prepare(plan, state, config),
        )
        return self._update(state, plan, ran)

    async def atools(
        self, state: AgentState, config: RunnableConfig | None = None
    ) -> dict[str, Any] | list[Any]:
        """Async `tools`."""
        plan = self._plan(state)
        ran = await arun_tool_calls(
            self.tools_by_name,
            plan.runnable_calls(),
            self.options.tool_timeout,
            self.options.max_observation_bytes,
            self._prepare(plan, state, config),
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
        outcomes = [by_index[i] for i in range(len(plan.calls))]
        outcomes += self._invalid_outcomes(plan.message)
        approvals = [d.approval for d in plan.decisions]
        approvals += [None] * len(plan.message.invalid_tool_calls)
        trace = list(state.get("trace", []))
        iteration = state.get("iterations", 0)
        for outcome, approval in zip(outcomes, approvals, strict=True):
            trace.append(_trace_step(len(trace) + 1, iteration, outcome, approval))
        commands: list[Command[Any]] = [o.command for o in outcomes if o.command is not None]
        update = {
            "messages": [o.to_message() for o in outcomes if o.command is None],
            "trace": trace,
        }
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
        "duration_ms": outcome.duration_ms,
        "truncated": outcome.truncated,
        "error": outcome.error,
        "approval": approval,
    }
