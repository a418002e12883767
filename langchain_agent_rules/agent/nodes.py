"""The model-side nodes: start, agent, limit, repeated_calls and check_answer, and routers.

Every node has a sync and an async body, takes the state and returns a state update, so
it can be tested alone. The history in the state is protocol-neutral
(``AIMessage.tool_calls`` plus one ``ToolMessage`` per call); the text protocol renders
it for the model at call time. The nodes hold configuration only: everything a run
learns (usage, model calls, rule events, the trace) lives in its state. Every model call
is counted in ``usage`` and timed in ``model_calls`` (`count_call`). The tools node is
in `tools_node`.

Every answer (the model's, the limit's, the repeated-calls one) is written as the
state's private ``draft`` and becomes the run's ``answer`` (and its last message) only in
``check_answer``, after the rules' checks (`answer_checks`). While an answer can still
change there, the model calls that may write it are tagged ``nostream``: no stream mode
shows an answer that was not checked.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.constants import TAG_NOSTREAM

from langchain_agent_rules.agent.answer_checks import (
    EnforcedAnswer,
    Enforcement,
    ModelRequest,
    aenforce_answer,
    answer_enforcement,
    enforce_answer,
    is_enforced,
    reviews_answer,
)
from langchain_agent_rules.agent.arguments import argument_problem, clean_text
from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.prompts import (
    BUDGET_ANSWERS,
    BUDGET_SPENT,
    DEFAULT_SYSTEM_PROMPT,
    NO_OBSERVATIONS,
    REPEATED_CALLS_ANSWER,
    REPEATED_CALLS_REQUEST,
    SUMMARIZE_REQUEST,
)
from langchain_agent_rules.agent.protocol import Protocol, ProtocolChoice
from langchain_agent_rules.agent.rules_prompt import RulesPrompt, aread_rules, read_rules
from langchain_agent_rules.agent.state import (
    AgentState,
    Draft,
    GraphState,
    ModelCall,
    ModelCallPurpose,
    RuleEvent,
    StopReason,
    Usage,
)
from langchain_agent_rules.agent.streaming import TEXT_REPLY_TAG
from langchain_agent_rules.agent.usage import (
    Stopwatch,
    add_reply,
    count_call,
    no_usage,
    total_tokens,
)
from langchain_agent_rules.errors import IterationLimitError
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.text_protocol import (
    OBSERVATION_PART,
    extract_answer,
    parse_tool_reply,
    render_tools_prompt,
    to_text_messages,
)

__all__ = ["AgentNodes", "Budget", "is_refused_call", "new_call_id"]

Budget = Literal["max_iterations", "max_model_calls", "max_total_tokens"]
_NO_RULES = RulesPrompt("")
_MAX_NAME_CHARS = 200


def new_call_id() -> str:
    """A fresh id for a tool call the agent read from text."""
    return f"call_{uuid.uuid4().hex[:24]}"


def is_refused_call(call: InvalidToolCall) -> bool:
    """Whether ``call`` was refused for its arguments (it names a tool but has no text)."""
    return call.get("name") is not None and call.get("args") is None


def _strip_final(text: str) -> str:
    """Drop a leading ``FINAL:`` from a native reply (tool blocks are not removed there)."""
    stripped = text.strip()
    if stripped[:6].upper() == "FINAL:":
        return stripped[6:].strip()
    return stripped


def _short(text: str | None) -> str | None:
    return None if text is None else clean_text(text)[:_MAX_NAME_CHARS]


class AgentNodes:
    """The model-side nodes and routers of one agent, sharing its model, tools and options."""

    def __init__(
        self,
        model: BaseChatModel,
        tools: Sequence[BaseTool],
        protocol: ProtocolChoice,
        options: AgentOptions,
        rules: RuleReader | None = None,
        rule_config: AgentRuleToolConfig | None = None,
    ) -> None:
        self.model = model
        self.protocol = protocol
        self.options = options
        self.rules = rules
        self.rule_config = rule_config or AgentRuleToolConfig()
        self._tools_prompt = render_tools_prompt(tools) if tools else ""

    # --- start: reset the per-run fields -------------------------------------------------

    def start(self, state: AgentState) -> dict[str, Any]:
        """Reset every per-run field for a new run."""
        return {
            "answer": None,
            "stop_reason": None,
            "iterations": 0,
            "trace": [],
            "usage": no_usage(),
            "model_calls": [],
            "rule_events": [],
            "draft": None,
        }

    async def astart(self, state: AgentState) -> dict[str, Any]:
        """Async `start`."""
        return self.start(state)

    # --- the prompt --------------------------------------------------------------------

    def _system_message(self, rules_text: str, protocol: Protocol) -> SystemMessage:
        parts = [self.options.system_prompt or DEFAULT_SYSTEM_PROMPT, rules_text]
        if protocol == "text":
            parts.append(self._tools_prompt)
        return SystemMessage("\n\n".join(p for p in parts if p))

    def _rules(self) -> RulesPrompt:
        if self.rules is None:
            return _NO_RULES
        return read_rules(self.rules, self.options.project_id, self.rule_config)

    async def _arules(self) -> RulesPrompt:
        if self.rules is None:
            return _NO_RULES
        return await aread_rules(self.rules, self.options.project_id, self.rule_config)

    def _model_input(
        self, protocol: Protocol, rules_text: str, messages: Sequence[AnyMessage]
    ) -> list[BaseMessage]:
        system = self._system_message(rules_text, protocol)
        if protocol == "text":
            return [system, *to_text_messages(messages)]
        return [system, *messages]

    def _call_config(
        self, config: RunnableConfig | None, protocol: Protocol, rules: RulesPrompt
    ) -> RunnableConfig:
        tags = []
        if protocol == "text":
            # Marks the call's streamed tokens as text-protocol replies (see `AnswerStream`).
            tags.append(TEXT_REPLY_TAG)
        if is_enforced(rules.rules, self.options.review):
            tags.append(TAG_NOSTREAM)
        return _tagged(config, tags)

    # --- agent: one model turn -------------------------------------------------------

    def agent(self, state: AgentState, config: RunnableConfig | None = None) -> dict[str, Any]:
        """Call the model with the rules read now; record its tool calls or its answer."""
        rules = self._rules()
        protocol = self.protocol.resolve()
        messages = state["messages"]
        runnable = self.protocol.bound if protocol == "native" else self.protocol.text_bound
        stopwatch = Stopwatch()
        try:
            reply = runnable.invoke(
                self._model_input(protocol, rules.text, messages),
                self._call_config(config, protocol, rules),
            )
        except Exception as error:
            if protocol != "native" or not self.protocol.fall_back_to_text(error):
                raise
            protocol = "text"
            reply = self.protocol.text_bound.invoke(
                self._model_input(protocol, rules.text, messages),
                self._call_config(config, protocol, rules),
            )
        return self._after_reply(protocol, reply, state, rules, stopwatch.call("turn"))

    async def aagent(
        self, state: AgentState, config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Async `agent`."""
        rules = await self._arules()
        protocol = await self.protocol.aresolve()
        messages = state["messages"]
        runnable = self.protocol.bound if protocol == "native" else self.protocol.text_bound
        stopwatch = Stopwatch()
        try:
            reply = await runnable.ainvoke(
                self._model_input(protocol, rules.text, messages),
                self._call_config(config, protocol, rules),
            )
        except Exception as error:
            if protocol != "native" or not self.protocol.fall_back_to_text(error):
                raise
            protocol = "text"
            reply = await self.protocol.text_bound.ainvoke(
                self._model_input(protocol, rules.text, messages),
                self._call_config(config, protocol, rules),
            )
        return self._after_reply(protocol, reply, state, rules, stopwatch.call("turn"))

    def _after_reply(
        self,
        protocol: Protocol,
        reply: BaseMessage,
        state: AgentState,
        rules: RulesPrompt,
        call: ModelCall,
    ) -> dict[str, Any]:
        message = reply if isinstance(reply, AIMessage) else AIMessage(content=reply.content)
        if protocol == "text":
            message = self._from_text(message)
        message = self._checked(message)
        update: dict[str, Any] = {
            **count_call(state, reply, call),
            **_rule_events(state, rules.omitted),
        }
        if message.tool_calls or message.invalid_tool_calls:
            return {**update, "messages": [message], "iterations": state.get("iterations", 0) + 1}
        answer = message.text if protocol == "text" else _strip_final(message.text)
        return {**update, "draft": _draft(answer, "final", message)}

    def _from_text(self, reply: AIMessage) -> AIMessage:
        parsed = parse_tool_reply(reply.text)
        kept = {"id": reply.id, "usage_metadata": reply.usage_metadata}
        if parsed.final_answer is not None:
            return AIMessage(content=parsed.final_answer, **kept)
        # Only the parsed calls go into the history, never the prose around them.
        return AIMessage(
            content="",
            tool_calls=[
                {"name": c.name, "args": c.args, "id": new_call_id(), "type": "tool_call"}
                for c in parsed.tool_calls
            ],
            invalid_tool_calls=[
                {
                    "name": None,
                    "args": e.raw,
                    "id": new_call_id(),
                    "error": e.problem,
                    "type": "invalid_tool_call",
                }
                for e in parsed.errors
            ],
            **kept,
        )

    def _checked(self, message: AIMessage) -> AIMessage:
        """``message`` safe to store: bad arguments refused, text without lone surrogates.

        A call whose arguments `argument_problem` refuses becomes an invalid tool call
        with the tool's name, no arguments and the problem as its error; the tools node
        answers it with an ``invalid_args`` observation.
        """
        limit = self.options.max_argument_bytes
        calls: list[ToolCall] = []
        invalid: list[InvalidToolCall] = []
        for call in message.tool_calls:
            name, call_id = _short(call["name"]) or "", _short(call["id"])
            problem = argument_problem(call["args"], limit)
            if problem is None:
                calls.append({**call, "name": name, "id": call_id})
            else:
                invalid.append(_invalid(name, None, call_id, problem))
        for bad in message.invalid_tool_calls:
            raw = bad.get("args")
            text = None if raw is None else clean_text(raw[: limit + 1])
            invalid.append(
                _invalid(_short(bad.get("name")), text, _short(bad.get("id")), bad.get("error"))
            )
        content = message.content
        if isinstance(content, str):
            content = clean_text(content)
        return message.model_copy(
            update={"content": content, "tool_calls": calls, "invalid_tool_calls": invalid}
        )

    def route_after_agent(self, state: GraphState) -> Literal["tools", "check_answer"]:
        """``"check_answer"`` when the last turn gave a draft answer, else ``"tools"``."""
        return "check_answer" if state.get("draft") else "tools"

    # --- budgets -------------------------------------------------------------------------

    def spent_budget(self, state: AgentState) -> Budget | None:
        """The first budget this run has spent, or None.

        With ``on_limit="summarize"`` the model-call budget counts as spent one call
        early, so the summary is the last call it allows.
        """
        options = self.options
        usage = state.get("usage") or no_usage()
        if state.get("iterations", 0) >= options.max_iterations:
            return "max_iterations"
        if options.max_model_calls is not None:
            reserved = 1 if options.on_limit == "summarize" else 0
            if usage["model_calls"] + reserved >= options.max_model_calls:
                return "max_model_calls"
        if options.max_total_tokens is not None and (
            total_tokens(usage) >= options.max_total_tokens
        ):
            return "max_total_tokens"
        return None

    def route_after_tools(self, state: AgentState) -> Literal["agent", "limit", "repeated_calls"]:
        """Where to go after the tools ran: ``agent``, ``limit`` or ``repeated_calls``.

        ``limit`` once a budget is spent; ``repeated_calls`` when every call of the last
        turn repeated an earlier one. Budgets come first, so ``on_limit`` keeps its
        meaning on the last iteration.
        """
        if self.spent_budget(state) is not None:
            return "limit"
        iteration = state.get("iterations", 0)
        statuses = {s["status"] for s in state.get("trace", []) if s["iteration"] == iteration}
        if statuses == {"repeated"}:
            return "repeated_calls"
        return "agent"

    # --- limit: what happens when a budget is spent ---------------------------------------

    def _budget_values(self, state: AgentState) -> dict[str, Any]:
        return {
            "max_iterations": self.options.max_iterations,
            "max_model_calls": self.options.max_model_calls,
            "max_total_tokens": self.options.max_total_tokens,
        }

    def _limit_plan(self, state: AgentState) -> tuple[Budget, bool]:
        """The spent budget, and whether a summary call is allowed."""
        budget = self.spent_budget(state) or "max_iterations"
        if self.options.on_limit == "raise":
            raise IterationLimitError(_limit_error(budget, self.options, state))
        calls = (state.get("usage") or no_usage())["model_calls"]
        room = self.options.max_model_calls is None or calls < self.options.max_model_calls
        return budget, self.options.on_limit == "summarize" and room

    def _summary_input(
        self, rules_text: str, state: AgentState, template: str, **values: Any
    ) -> list[BaseMessage]:
        # One compact message instead of the tool-call history: shown its own tool blocks,
        # a small model tends to call the tool once more instead of answering.
        task = _task_of(state["messages"])
        observations = "\n\n".join(
            OBSERVATION_PART.format(tool=step["tool"] or "tool", observation=step["observation"])
            for step in state.get("trace", [])
            if step["status"] != "repeated"
        )
        request = template.format(task=task, observations=observations or NO_OBSERVATIONS, **values)
        return [self._system_message(rules_text, "native"), HumanMessage(request)]

    @staticmethod
    def _finish(
        state: AgentState,
        answer: str,
        stop_reason: StopReason,
        timed_reply: tuple[BaseMessage, ModelCall] | None = None,
    ) -> dict[str, Any]:
        update: dict[str, Any] = {"draft": _draft(answer, stop_reason, AIMessage(content=answer))}
        if timed_reply is not None:
            update.update(count_call(state, *timed_reply))
        return update

    def _fixed_answer(self, state: AgentState, budget: Budget) -> dict[str, Any]:
        answer = BUDGET_ANSWERS[budget].format(**self._budget_values(state))
        return self._finish(state, answer, budget)

    def _limit_request(self, state: AgentState, rules: RulesPrompt, budget: Budget) -> Any:
        spent = BUDGET_SPENT[budget].format(**self._budget_values(state))
        return self._summary_input(rules.text, state, SUMMARIZE_REQUEST, budget=spent)

    def _after_summary(
        self,
        state: AgentState,
        rules: RulesPrompt,
        budget: Budget,
        reply: BaseMessage,
        call: ModelCall,
    ) -> dict[str, Any]:
        fallback = BUDGET_ANSWERS[budget].format(**self._budget_values(state))
        answer = clean_text(extract_answer(reply.text)) or fallback
        return {
            **self._finish(state, answer, budget, (reply, call)),
            **_rule_events(state, rules.omitted),
        }

    def limit(self, state: AgentState, config: RunnableConfig | None = None) -> dict[str, Any]:
        """Raise, end with a fixed answer, or ask the model (without tools) for its best answer."""
        budget, summarize = self._limit_plan(state)
        if not summarize:
            return self._fixed_answer(state, budget)
        rules = self._rules()
        request = self._limit_request(state, rules, budget)
        stopwatch = Stopwatch()
        reply = self.model.invoke(request, self._call_config(config, "text", rules))
        return self._after_summary(state, rules, budget, reply, stopwatch.call("summary"))

    async def alimit(
        self, state: AgentState, config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Async `limit`."""
        budget, summarize = self._limit_plan(state)
        if not summarize:
            return self._fixed_answer(state, budget)
        rules = await self._arules()
        request = self._limit_request(state, rules, budget)
        stopwatch = Stopwatch()
        reply = await self.model.ainvoke(request, self._call_config(config, "text", rules))
        return self._after_summary(state, rules, budget, reply, stopwatch.call("summary"))

    # --- repeated_calls: a turn that only repeated earlier calls ----------------------------

    def _after_repeated(
        self, state: AgentState, rules: RulesPrompt, reply: BaseMessage, call: ModelCall
    ) -> dict[str, Any]:
        answer = clean_text(extract_answer(reply.text)) or REPEATED_CALLS_ANSWER
        return {
            **self._finish(state, answer, "repeated_calls", (reply, call)),
            **_rule_events(state, rules.omitted),
        }

    def repeated_calls(
        self, state: AgentState, config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Ask the model, without tools, for its answer from what the tools returned.

        Not a budget, so ``on_limit`` does not apply: the model always gets this one
        call, and an empty reply gives the fixed `REPEATED_CALLS_ANSWER`.
        """
        rules = self._rules()
        request = self._summary_input(rules.text, state, REPEATED_CALLS_REQUEST)
        stopwatch = Stopwatch()
        reply = self.model.invoke(request, self._call_config(config, "text", rules))
        return self._after_repeated(state, rules, reply, stopwatch.call("summary"))

    async def arepeated_calls(
        self, state: AgentState, config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Async `repeated_calls`."""
        rules = await self._arules()
        request = self._summary_input(rules.text, state, REPEATED_CALLS_REQUEST)
        stopwatch = Stopwatch()
        reply = await self.model.ainvoke(request, self._call_config(config, "text", rules))
        return self._after_repeated(state, rules, reply, stopwatch.call("summary"))

    # --- check_answer: the answer held to the rules before it leaves the graph ------------

    def _has_room(self, usage: Usage) -> bool:
        """Whether the budgets allow one more model call (for a review or a revision)."""
        options = self.options
        if options.max_model_calls is not None and usage["model_calls"] >= options.max_model_calls:
            return False
        return options.max_total_tokens is None or total_tokens(usage) < options.max_total_tokens

    def _after_check(
        self,
        state: GraphState,
        draft: Draft,
        enforced: EnforcedAnswer | None = None,
        calls: _CheckCalls | None = None,
    ) -> dict[str, Any]:
        """The run's answer, last message and stop reason, from the draft as checked."""
        [message] = messages_from_dict([draft["message"]])
        answer = draft["answer"]
        update: dict[str, Any] = {"draft": None, "stop_reason": draft["stop_reason"]}
        if enforced is not None and calls is not None:
            update["usage"] = calls.usage
            update["model_calls"] = calls.timed
            update["rule_events"] = [*(state.get("rule_events") or []), *enforced.events]
            if enforced.text != answer:
                answer = enforced.text
                message = message.model_copy(update={"content": answer})
        return {**update, "answer": answer, "messages": [message]}

    def check_answer(
        self, state: GraphState, config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Give the draft answer, held to the checks of the OUTPUT rules (`answer_checks`)."""
        draft = state.get("draft")
        if draft is None:
            return {}
        rules = self._rules()
        if not is_enforced(rules.rules, self.options.review):
            return self._after_check(state, draft)
        calls = self._check_calls(state, rules)
        quiet = _tagged(config, [TAG_NOSTREAM])

        def call(request: ModelRequest) -> BaseMessage | None:
            if not self._has_room(calls.usage):
                return None
            stopwatch = Stopwatch()
            reply = self.model.invoke(request, quiet)
            calls.add(reply, stopwatch)
            return reply

        enforced = enforce_answer(self._enforcement(state, rules, draft["answer"]), call)
        return self._after_check(state, draft, enforced, calls)

    async def acheck_answer(
        self, state: GraphState, config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Async `check_answer`."""
        draft = state.get("draft")
        if draft is None:
            return {}
        rules = await self._arules()
        if not is_enforced(rules.rules, self.options.review):
            return self._after_check(state, draft)
        calls = self._check_calls(state, rules)
        quiet = _tagged(config, [TAG_NOSTREAM])

        async def call(request: ModelRequest) -> BaseMessage | None:
            if not self._has_room(calls.usage):
                return None
            stopwatch = Stopwatch()
            reply = await self.model.ainvoke(request, quiet)
            calls.add(reply, stopwatch)
            return reply

        enforced = await aenforce_answer(self._enforcement(state, rules, draft["answer"]), call)
        return self._after_check(state, draft, enforced, calls)

    def _check_calls(self, state: GraphState, rules: RulesPrompt) -> _CheckCalls:
        first: ModelCallPurpose = (
            "review" if reviews_answer(rules.rules, self.options.review) else "revision"
        )
        return _CheckCalls(
            state.get("usage") or no_usage(), list(state.get("model_calls") or []), first
        )

    def _enforcement(self, state: GraphState, rules: RulesPrompt, answer: str) -> Enforcement:
        return answer_enforcement(
            rules.rules,
            answer,
            task=_task_of(state["messages"]),
            max_revisions=self.options.max_revisions,
            review=self.options.review,
        )


class _CheckCalls:
    """The usage and timed model calls of a run while its answer is checked.

    The enforcement's first request is a review when the rules are reviewed by the
    model (`reviews_answer`); every other request is a revision.
    """

    def __init__(self, usage: Usage, timed: list[ModelCall], first: ModelCallPurpose) -> None:
        self.usage = usage
        self.timed = timed
        self._next: ModelCallPurpose = first

    def add(self, reply: BaseMessage, stopwatch: Stopwatch) -> None:
        self.usage = add_reply(self.usage, reply)
        self.timed.append(stopwatch.call(self._next))
        self._next = "revision"


def _task_of(messages: Sequence[BaseMessage]) -> str:
    """The task of the run: the last human message."""
    return next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), "")


def _draft(answer: str, stop_reason: StopReason, message: AIMessage) -> Draft:
    return {"answer": answer, "stop_reason": stop_reason, "message": message_to_dict(message)}


def _tagged(config: RunnableConfig | None, tags: Sequence[str]) -> RunnableConfig:
    if not tags:
        return config or {}
    return {**(config or {}), "tags": [*((config or {}).get("tags") or ()), *tags]}


def _invalid(
    name: str | None, args: str | None, call_id: str | None, error: str | None
) -> InvalidToolCall:
    return {
        "name": name,
        "args": args,
        "id": call_id or new_call_id(),
        "error": None if error is None else clean_text(error),
        "type": "invalid_tool_call",
    }


def _rule_events(state: AgentState, omitted: list[RuleEvent]) -> dict[str, Any]:
    """A ``rule_events`` update with the events not yet recorded in this run, or nothing."""
    known = state.get("rule_events") or []
    new = [event for event in omitted if event not in known]
    return {"rule_events": [*known, *new]} if new else {}


def _limit_error(budget: Budget, options: AgentOptions, state: AgentState) -> str:
    advice = f"raise {budget} or use on_limit='summarize' or 'end'"
    if budget == "max_iterations":
        spent = f"used all max_iterations={options.max_iterations} tool iterations"
    elif budget == "max_model_calls":
        spent = f"made max_model_calls={options.max_model_calls} model calls"
    else:
        used = total_tokens(state.get("usage"))
        spent = f"used {used} tokens (max_total_tokens={options.max_total_tokens})"
    return f"the agent {spent} without a final answer; {advice}"
