"""The agent's nodes: start, agent (the model turn), tools, limit and repeated_calls.

Every node has a sync and an async body.

Each node takes the state and returns a state update, so it can be tested alone. The
history in the state is protocol-neutral (``AIMessage.tool_calls`` plus one
``ToolMessage`` per call); the text protocol renders it for the model at call time.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.types import interrupt

from langchain_agent_rules.agent.prompts import (
    DEFAULT_SYSTEM_PROMPT,
    LIMIT_REACHED_ANSWER,
    NO_OBSERVATIONS,
    OBSERVATION_PART,
    PARSE_ERROR,
    REJECTED,
    REPEATED_CALL,
    REPEATED_CALLS_ANSWER,
    REPEATED_CALLS_REQUEST,
    SUMMARIZE_REQUEST,
)
from langchain_agent_rules.agent.protocol import Protocol, ProtocolChoice
from langchain_agent_rules.agent.rules_prompt import aread_rules_prompt, read_rules_prompt
from langchain_agent_rules.agent.state import AgentState, StopReason, TraceStep
from langchain_agent_rules.agent.text_protocol import (
    extract_answer,
    parse_tool_reply,
    render_tools_prompt,
    to_text_messages,
)
from langchain_agent_rules.agent.tool_runner import (
    ToolOutcome,
    arun_tool_calls,
    run_tool_calls,
    truncate_observation,
)
from langchain_agent_rules.errors import AgentConfigurationError, IterationLimitError
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["AgentNodes", "AgentSettings", "OnLimit"]

OnLimit = Literal["summarize", "end", "raise"]
_APPROVAL_FORMS = (
    '"approve", "reject", {"action": "approve"}, {"action": "edit", "args": {...}} '
    'or {"action": "reject", "reason": "..."}'
)


@dataclass(frozen=True)
class AgentSettings:
    """The validated options of one agent."""

    max_iterations: int
    tool_timeout: float
    max_observation_bytes: int
    on_limit: OnLimit
    system_prompt: str | None
    require_approval: frozenset[str]
    rules: RuleReader | None
    project_id: int | None
    rule_config: AgentRuleToolConfig


@dataclass(frozen=True)
class _Decision:
    args: dict[str, Any]
    approval: str | None
    reason: str = ""


def _strip_final(text: str) -> str:
    """Drop a leading ``FINAL:`` from a native reply (tool blocks are not removed there)."""
    stripped = text.strip()
    if stripped[:6].upper() == "FINAL:":
        return stripped[6:].strip()
    return stripped


class AgentNodes:
    """The nodes and routers of one agent, sharing its model, tools and settings."""

    def __init__(
        self,
        model: BaseChatModel,
        tools: Sequence[BaseTool],
        protocol: ProtocolChoice,
        settings: AgentSettings,
    ) -> None:
        self.model = model
        self.tools_by_name = {tool.name: tool for tool in tools}
        self.protocol = protocol
        self.settings = settings
        self._tools_prompt = render_tools_prompt(tools) if tools else ""
        self._system_cache: tuple[tuple[str, Protocol], SystemMessage] | None = None

    # --- start: reset the per-run fields -------------------------------------------------

    def start(self, state: AgentState) -> dict[str, Any]:
        """Reset ``answer``, ``stop_reason``, ``iterations`` and ``trace`` for a new run."""
        return {"answer": None, "stop_reason": None, "iterations": 0, "trace": []}

    async def astart(self, state: AgentState) -> dict[str, Any]:
        """Async `start`."""
        return self.start(state)

    # --- agent: one model turn -------------------------------------------------------

    def _system_message(self, rules_text: str, protocol: Protocol) -> SystemMessage:
        # The same rules give the same message object, so the prompt prefix stays stable.
        key = (rules_text, protocol)
        if self._system_cache is None or self._system_cache[0] != key:
            parts = [self.settings.system_prompt or DEFAULT_SYSTEM_PROMPT, rules_text]
            if protocol == "text":
                parts.append(self._tools_prompt)
            self._system_cache = (key, SystemMessage("\n\n".join(p for p in parts if p)))
        return self._system_cache[1]

    def _rules_text(self) -> str:
        reader = self.settings.rules
        if reader is None:
            return ""
        return read_rules_prompt(reader, self.settings.project_id, self.settings.rule_config)

    async def _arules_text(self) -> str:
        reader = self.settings.rules
        if reader is None:
            return ""
        return await aread_rules_prompt(reader, self.settings.project_id, self.settings.rule_config)

    def _model_input(
        self, protocol: Protocol, rules_text: str, messages: Sequence[AnyMessage]
    ) -> list[BaseMessage]:
        system = self._system_message(rules_text, protocol)
        if protocol == "text":
            return [system, *to_text_messages(messages)]
        return [system, *messages]

    def agent(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Call the model with the rules read now; record its tool calls or its answer."""
        rules_text = self._rules_text()
        protocol = self.protocol.resolve()
        messages = state["messages"]
        runnable = self.protocol.bound if protocol == "native" else self.protocol.text_bound
        try:
            reply = runnable.invoke(self._model_input(protocol, rules_text, messages), config)
        except Exception as error:
            if protocol != "native" or not self.protocol.fall_back_to_text(error):
                raise
            protocol = "text"
            reply = self.protocol.text_bound.invoke(
                self._model_input(protocol, rules_text, messages), config
            )
        return self._after_reply(protocol, reply, state)

    async def aagent(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Async `agent`."""
        rules_text = await self._arules_text()
        protocol = await self.protocol.aresolve()
        messages = state["messages"]
        runnable = self.protocol.bound if protocol == "native" else self.protocol.text_bound
        try:
            reply = await runnable.ainvoke(
                self._model_input(protocol, rules_text, messages), config
            )
        except Exception as error:
            if protocol != "native" or not self.protocol.fall_back_to_text(error):
                raise
            protocol = "text"
            reply = await self.protocol.text_bound.ainvoke(
                self._model_input(protocol, rules_text, messages), config
            )
        return self._after_reply(protocol, reply, state)

    def _after_reply(
        self, protocol: Protocol, reply: BaseMessage, state: AgentState
    ) -> dict[str, Any]:
        message = reply if isinstance(reply, AIMessage) else AIMessage(content=reply.content)
        if protocol == "text":
            message = self._from_text(message)
        if message.tool_calls or message.invalid_tool_calls:
            return {"messages": [message], "iterations": state.get("iterations", 0) + 1}
        answer = message.text if protocol == "text" else _strip_final(message.text)
        return {"messages": [message], "answer": answer, "stop_reason": "final"}

    def _from_text(self, reply: AIMessage) -> AIMessage:
        parsed = parse_tool_reply(reply.text)
        if parsed.final_answer is not None:
            return AIMessage(content=parsed.final_answer, id=reply.id)
        # Only the parsed calls go into the history, never the prose around them.
        return AIMessage(
            content="",
            id=reply.id,
            tool_calls=[
                {"name": c.name, "args": c.args, "id": _new_call_id(), "type": "tool_call"}
                for c in parsed.tool_calls
            ],
            invalid_tool_calls=[
                {
                    "name": None,
                    "args": e.raw,
                    "id": _new_call_id(),
                    "error": e.problem,
                    "type": "invalid_tool_call",
                }
                for e in parsed.errors
            ],
        )

    def route_after_agent(self, state: AgentState) -> str:
        """``"tools"`` when the last turn asked for tools, else the end."""
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
            return "tools"
        return "__end__"

    # --- tools: run the calls of the last turn -------------------------------------------

    def _decisions(self, calls: Sequence[ToolCall]) -> list[_Decision]:
        # Every interrupt happens before any tool runs: on resume LangGraph re-runs this
        # node from the top, and no tool may run twice.
        return [
            self._ask_approval(call)
            if call["name"] in self.settings.require_approval
            else _Decision(call["args"], None)
            for call in calls
        ]

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
            return _Decision(dict(answer["args"]), "edited")
        raise AgentConfigurationError(
            f"an approval answer must be one of {_APPROVAL_FORMS}; got {answer!r}"
        )

    def _plan(
        self, state: AgentState
    ) -> tuple[list[ToolCall], list[_Decision], dict[int, ToolOutcome], AIMessage]:
        message = state["messages"][-1]
        assert isinstance(message, AIMessage)
        calls = list(message.tool_calls)
        decisions = self._decisions(calls)
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
        return calls, decisions, settled, message

    def _settled(
        self, call: ToolCall, args: dict[str, Any], observation: str, status: Any
    ) -> ToolOutcome:
        text, truncated = truncate_observation(observation, self.settings.max_observation_bytes)
        return ToolOutcome(call["id"] or "", call["name"], args, text, status, 0.0, truncated)

    def _update(
        self,
        state: AgentState,
        message: AIMessage,
        decisions: list[_Decision],
        outcomes: list[ToolOutcome],
    ) -> dict[str, Any]:
        for invalid in message.invalid_tool_calls:
            problem = invalid.get("error") or "the arguments are not valid JSON"
            outcomes.append(
                ToolOutcome(
                    call_id=invalid.get("id") or _new_call_id(),
                    tool=invalid.get("name") or "",
                    args={},
                    observation=truncate_observation(
                        PARSE_ERROR.format(problem=problem), self.settings.max_observation_bytes
                    )[0],
                    status="parse_error",
                    duration_ms=0.0,
                    error=problem,
                )
            )
        approvals = [d.approval for d in decisions] + [None] * len(message.invalid_tool_calls)
        trace = list(state.get("trace", []))
        iteration = state.get("iterations", 0)
        for outcome, approval in zip(outcomes, approvals, strict=True):
            trace.append(_trace_step(len(trace) + 1, iteration, outcome, approval))
        return {"messages": [o.to_message() for o in outcomes], "trace": trace}

    def tools(self, state: AgentState) -> dict[str, Any]:
        """Run the last turn's calls (after approval) and record one observation each."""
        calls, decisions, settled, message = self._plan(state)
        to_run = [i for i in range(len(calls)) if i not in settled]
        ran = run_tool_calls(
            self.tools_by_name,
            [{**calls[i], "args": decisions[i].args} for i in to_run],
            self.settings.tool_timeout,
            self.settings.max_observation_bytes,
        )
        outcomes = _merge(len(calls), settled, to_run, ran)
        return self._update(state, message, decisions, outcomes)

    async def atools(self, state: AgentState) -> dict[str, Any]:
        """Async `tools`."""
        calls, decisions, settled, message = self._plan(state)
        to_run = [i for i in range(len(calls)) if i not in settled]
        ran = await arun_tool_calls(
            self.tools_by_name,
            [{**calls[i], "args": decisions[i].args} for i in to_run],
            self.settings.tool_timeout,
            self.settings.max_observation_bytes,
        )
        outcomes = _merge(len(calls), settled, to_run, ran)
        return self._update(state, message, decisions, outcomes)

    def route_after_tools(self, state: AgentState) -> str:
        """Where to go after the tools ran: ``agent``, ``limit`` or ``repeated_calls``.

        ``limit`` once ``max_iterations`` turns used tools; ``repeated_calls`` when every
        call of the last turn repeated an earlier one. The limit comes first, so
        ``on_limit`` keeps its meaning on the last iteration.
        """
        iteration = state.get("iterations", 0)
        if iteration >= self.settings.max_iterations:
            return "limit"
        statuses = {s["status"] for s in state.get("trace", []) if s["iteration"] == iteration}
        if statuses == {"repeated"}:
            return "repeated_calls"
        return "agent"

    # --- limit: what happens after max_iterations --------------------------------------

    def _limit_answer(self) -> str:
        return LIMIT_REACHED_ANSWER.format(max_iterations=self.settings.max_iterations)

    def _check_raise(self) -> None:
        if self.settings.on_limit == "raise":
            raise IterationLimitError(
                f"the agent used all max_iterations={self.settings.max_iterations} tool "
                "iterations without a final answer; raise max_iterations or use "
                "on_limit='summarize' or 'end'"
            )

    def _summary_input(
        self, rules_text: str, state: AgentState, template: str
    ) -> list[BaseMessage]:
        # One compact message instead of the tool-call history: shown its own tool blocks,
        # a small model tends to call the tool once more instead of answering.
        task = next(
            (m.text for m in reversed(state["messages"]) if isinstance(m, HumanMessage)), ""
        )
        observations = "\n\n".join(
            OBSERVATION_PART.format(tool=step["tool"] or "tool", observation=step["observation"])
            for step in state.get("trace", [])
            if step["status"] != "repeated"
        )
        request = template.format(
            task=task,
            observations=observations or NO_OBSERVATIONS,
            max_iterations=self.settings.max_iterations,
        )
        return [self._system_message(rules_text, "native"), HumanMessage(request)]

    @staticmethod
    def _finish(answer: str, fallback: str, stop_reason: StopReason) -> dict[str, Any]:
        answer = answer or fallback
        return {
            "messages": [AIMessage(content=answer)],
            "answer": answer,
            "stop_reason": stop_reason,
        }

    def _finish_limit(self, answer: str) -> dict[str, Any]:
        return self._finish(answer, self._limit_answer(), "max_iterations")

    def limit(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Raise, end with a fixed answer, or ask the model (without tools) for its best answer."""
        self._check_raise()
        if self.settings.on_limit == "end":
            return self._finish_limit("")
        request = self._summary_input(self._rules_text(), state, SUMMARIZE_REQUEST)
        reply = self.model.invoke(request, config)
        return self._finish_limit(extract_answer(reply.text))

    async def alimit(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Async `limit`."""
        self._check_raise()
        if self.settings.on_limit == "end":
            return self._finish_limit("")
        request = self._summary_input(await self._arules_text(), state, SUMMARIZE_REQUEST)
        reply = await self.model.ainvoke(request, config)
        return self._finish_limit(extract_answer(reply.text))

    # --- repeated_calls: a turn that only repeated earlier calls ----------------------------

    def repeated_calls(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Ask the model, without tools, for its answer from what the tools returned.

        Not the iteration limit, so ``on_limit`` does not apply: the model always gets
        this one call, and an empty reply gives the fixed `REPEATED_CALLS_ANSWER`.
        """
        request = self._summary_input(self._rules_text(), state, REPEATED_CALLS_REQUEST)
        reply = self.model.invoke(request, config)
        return self._finish(extract_answer(reply.text), REPEATED_CALLS_ANSWER, "repeated_calls")

    async def arepeated_calls(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Async `repeated_calls`."""
        request = self._summary_input(await self._arules_text(), state, REPEATED_CALLS_REQUEST)
        reply = await self.model.ainvoke(request, config)
        return self._finish(extract_answer(reply.text), REPEATED_CALLS_ANSWER, "repeated_calls")


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _merge(
    count: int, settled: dict[int, ToolOutcome], to_run: list[int], ran: list[ToolOutcome]
) -> list[ToolOutcome]:
    by_index = {**settled, **dict(zip(to_run, ran, strict=True))}
    return [by_index[i] for i in range(count)]


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
