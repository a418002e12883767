"""`RunLimitsMiddleware`: budgets that always end with an answer, and the run's record.

Before each model turn it checks the run's budgets (``max_iterations``,
``max_model_calls``, ``max_total_tokens``): once one is spent, ``on_limit`` decides —
``"summarize"`` turns the call into one last request without tools (the task and what
the tools returned, as one message), ``"end"`` gives a fixed answer, ``"raise"`` raises
`IterationLimitError`. A turn after one whose calls only repeated calls already made is a
summary too (stop reason ``repeated_calls``): a small model otherwise repeats them until
the limit. The summary's answer goes through the other middleware like any answer (the
rules' checks included).

It keeps the run's record in the state: ``answer`` and ``stop_reason`` once the model
answers, ``iterations`` (model turns that used tools), ``usage`` and ``model_calls``
(every model call of the step, revisions and reviews included). It resets them when a
run starts, and repairs a thread whose last run ended with tool calls that never got a
result (cancelled, crashed, abandoned at an approval): each gets an error result before
the model is called, so no provider is sent an unanswered call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from langchain_agent_rules.errors import IterationLimitError
from langchain_agent_rules.middleware._replies import answer_text
from langchain_agent_rules.middleware._step import (
    Call,
    ModelStep,
    StepMiddleware,
    TurnSteps,
)
from langchain_agent_rules.middleware.prompts import (
    BUDGET_ANSWERS,
    BUDGET_SPENT,
    NO_OBSERVATIONS,
    NOT_RUN,
    REPEATED_CALLS_ANSWER,
    REPEATED_CALLS_REQUEST,
    SUMMARIZE_REQUEST,
    TOOL_FAILURES_ANSWER,
)
from langchain_agent_rules.middleware.state import (
    LimitsState,
    StopReason,
    TraceStep,
    add_usage,
    no_usage,
)
from langchain_agent_rules.middleware.usage import total_tokens, usage_of
from langchain_agent_rules.options import AgentOptions, OnLimit
from langchain_agent_rules.text_protocol import OBSERVATION_PART

__all__ = ["Budget", "RunLimitsMiddleware", "task_of"]

Budget = Literal["max_iterations", "max_model_calls", "max_total_tokens"]
_DEFAULTS = AgentOptions()


def task_of(messages: Sequence[AnyMessage]) -> str:
    """The task of the run: the last human message."""
    return next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), "")


def _open_calls_answered(messages: Sequence[AnyMessage]) -> list[AnyMessage] | None:
    """The history with an error result for every tool call that has none, or None."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    repaired: list[AnyMessage] = []
    changed = False
    for message in messages:
        repaired.append(message)
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            if call["id"] not in answered:
                changed = True
                repaired.append(
                    ToolMessage(
                        NOT_RUN.format(tool=call["name"]),
                        tool_call_id=call["id"] or "",
                        name=call["name"],
                        status="error",
                    )
                )
    return repaired if changed else None


class RunLimitsMiddleware(StepMiddleware[LimitsState]):
    """Bound a run by iterations, model calls and tokens, and record its result and usage.

    Setup:
        .. code-block:: bash

            pip install langchain-agent-rules

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules.middleware import RunLimitsMiddleware

            limits = RunLimitsMiddleware(max_iterations=4, on_limit="summarize")
            agent = create_agent(model, tools, middleware=[limits])

    Defaults and checks are those of `AgentOptions`. Put it after `AgentRulesMiddleware`
    (so the summary answer is checked) and before `ToolProtocolMiddleware`.
    """

    state_schema = LimitsState

    def __init__(
        self,
        max_iterations: int = _DEFAULTS.max_iterations,
        max_model_calls: int | None = _DEFAULTS.max_model_calls,
        max_total_tokens: int | None = _DEFAULTS.max_total_tokens,
        on_limit: OnLimit = _DEFAULTS.on_limit,
    ) -> None:
        self.options = AgentOptions(
            max_iterations=max_iterations,
            max_model_calls=max_model_calls,
            max_total_tokens=max_total_tokens,
            on_limit=on_limit,
        )
        super().__init__()
        self.tools = []

    # --- a new run -------------------------------------------------------------------

    def before_agent(self, state: LimitsState, runtime: Runtime[Any]) -> dict[str, Any]:
        """Reset the run's record; answer tool calls a previous run left open."""
        update: dict[str, Any] = {"answer": None, "stop_reason": None, "iterations": 0}
        # An Overwrite must never be a channel's first value: LangGraph would store it as is.
        if state.get("usage"):
            update["usage"] = Overwrite(no_usage())
        if state.get("model_calls"):
            update["model_calls"] = Overwrite([])
        repaired = _open_calls_answered(state["messages"])
        if repaired is not None:
            update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *repaired]
        return update

    async def abefore_agent(self, state: LimitsState, runtime: Runtime[Any]) -> dict[str, Any]:
        """Async `before_agent`."""
        return self.before_agent(state, runtime)

    # --- budgets ---------------------------------------------------------------------

    def _usage(self, step: ModelStep) -> Any:
        return add_usage(step.state.get("usage") or no_usage(), usage_of(r for r, _ in step.calls))

    def spent_budget(self, step: ModelStep) -> Budget | None:
        """The first budget the run has spent, or None.

        With ``on_limit="summarize"`` the model-call budget counts as spent one call
        early, so the summary is the last call it allows.
        """
        options = self.options
        usage = self._usage(step)
        iterations = int(step.state.get("iterations") or 0) + step.refused_turns
        if iterations >= options.max_iterations:
            return "max_iterations"
        if options.max_model_calls is not None:
            reserved = 1 if options.on_limit == "summarize" else 0
            if usage["model_calls"] + reserved >= options.max_model_calls:
                return "max_model_calls"
        if options.max_total_tokens is not None and total_tokens(usage) >= options.max_total_tokens:
            return "max_total_tokens"
        return None

    def _has_room(self, step: ModelStep) -> bool:
        """Whether the budgets allow one more model call (a review or a revision)."""
        options, usage = self.options, self._usage(step)
        if options.max_model_calls is not None and usage["model_calls"] >= options.max_model_calls:
            return False
        return options.max_total_tokens is None or total_tokens(usage) < options.max_total_tokens

    def _budget_values(self) -> dict[str, Any]:
        return {
            "max_iterations": self.options.max_iterations,
            "max_model_calls": self.options.max_model_calls,
            "max_total_tokens": self.options.max_total_tokens,
        }

    def _limit_error(self, budget: Budget, step: ModelStep) -> str:
        options = self.options
        advice = f"raise {budget} or use on_limit='summarize' or 'end'"
        if budget == "max_iterations":
            spent = f"used all max_iterations={options.max_iterations} tool iterations"
        elif budget == "max_model_calls":
            spent = f"made max_model_calls={options.max_model_calls} model calls"
        else:
            used = total_tokens(self._usage(step))
            spent = f"used {used} tokens (max_total_tokens={options.max_total_tokens})"
        return f"the agent {spent} without a final answer; {advice}"

    # --- the turn ----------------------------------------------------------------------

    def _summary(
        self, request: ModelRequest[Any], template: str, **values: Any
    ) -> ModelRequest[Any]:
        # One compact message instead of the tool-call history: shown its own tool blocks,
        # a small model tends to call the tool once more instead of answering.
        trace = cast("list[TraceStep]", request.state.get("trace") or [])
        observations = "\n\n".join(
            OBSERVATION_PART.format(tool=step["tool"] or "tool", observation=step["observation"])
            for step in trace
            if step["status"] not in ("repeated", "repeated_failure")
        )
        message = template.format(
            task=task_of(request.messages), observations=observations or NO_OBSERVATIONS, **values
        )
        return request.override(
            messages=[HumanMessage(message)], tools=[], tool_choice=None, response_format=None
        )

    def _plan(
        self, request: ModelRequest[Any], step: ModelStep
    ) -> ModelRequest[Any] | AIMessage | None:
        """The summary request or fixed answer this turn gets, or None for a normal turn."""
        step.turn_limit = None  # the budgets bound the turns
        step.has_room = lambda: self._has_room(step)
        step.on_finish(self._record)
        if step.purpose != "turn":
            return None
        budget = self.spent_budget(step)
        if budget is not None:
            if self.options.on_limit == "raise":
                raise IterationLimitError(self._limit_error(budget, step))
            step.stop_reason = budget
            calls, most = self._usage(step)["model_calls"], self.options.max_model_calls
            if self.options.on_limit == "end" or (most is not None and calls >= most):
                fixed = AIMessage(BUDGET_ANSWERS[budget].format(**self._budget_values()))
                return step.answered_without_model(fixed)
            spent = BUDGET_SPENT[budget].format(**self._budget_values())
            return self._summary(request, SUMMARIZE_REQUEST, budget=spent)
        if self._repeated_only(request.state) and not step.refused_turns:
            step.stop_reason = "repeated_calls"
            return self._summary(request, REPEATED_CALLS_REQUEST)
        return None

    @staticmethod
    def _repeated_only(state: Mapping[str, Any]) -> bool:
        """Whether the last turn only repeated earlier calls (then the run is summarised).

        A first turn of repeated failures gets one more turn: the model was just told to
        change its approach.
        """
        iteration = int(state.get("iterations") or 0)
        trace = cast("list[TraceStep]", state.get("trace") or [])
        statuses = {s["status"] for s in trace if s["iteration"] == iteration}
        if not statuses or not statuses <= {"repeated", "repeated_failure"}:
            return False
        told_before = any(
            s["status"] == "repeated_failure" for s in trace if s["iteration"] < iteration
        )
        return "repeated" in statuses or told_before

    def _answer(
        self, step: ModelStep, reply: AIMessage, state: Mapping[str, Any]
    ) -> ModelResponse[Any]:
        fallback = (
            REPEATED_CALLS_ANSWER
            if step.stop_reason == "repeated_calls"
            else BUDGET_ANSWERS[step.stop_reason].format(**self._budget_values())  # type: ignore[index]
        )
        text = honest_answer(answer_text(reply), state)
        answer = AIMessage(
            content=text or fallback,
            id=reply.id,
            usage_metadata=reply.usage_metadata,
            response_metadata=reply.response_metadata,
        )
        return ModelResponse(result=[answer if text else step.answered_without_model(answer)])

    def _turn(self, request: ModelRequest[Any], step: ModelStep) -> TurnSteps:
        plan = self._plan(request, step)
        if plan is None:
            return _honest((yield Call(request)), step, request.state)
        if isinstance(plan, AIMessage):
            return ModelResponse(result=[plan])
        response = yield Call(plan, purpose="summary")
        return self._answer(step, _reply_of(response), request.state)

    def _record(self, step: ModelStep, reply: AIMessage) -> dict[str, Any]:
        """The step's writes: usage, model calls, iterations, and the answer if it is one."""
        update: dict[str, Any] = {
            "usage": usage_of(r for r, _ in step.calls),
            "model_calls": [call for _, call in step.calls],
        }
        iterations = int(step.state.get("iterations") or 0) + step.refused_turns
        if reply.tool_calls or reply.invalid_tool_calls:
            iterations += 1
        else:
            reason: StopReason = step.stop_reason or "final"  # type: ignore[assignment]
            update.update(answer=reply.text, stop_reason=reason)
        update["iterations"] = iterations
        return update


_RAW_ERROR_SLACK = 60
"""Characters an answer may add around a tool's error message and still be that error."""


def honest_answer(text: str, state: Mapping[str, Any]) -> str:
    """``text``, or what failed in words when ``text`` is a tool's raw error message."""
    failed = [
        step
        for step in cast("list[TraceStep]", state.get("trace") or [])
        if step["status"] not in ("ok", "repeated") and step["error"]
    ]
    stripped = text.strip()
    for step in reversed(failed):
        error = str(step["error"])
        first_line = error.splitlines()[0] if error.strip() else error
        quoted = first_line and first_line in stripped
        if stripped.upper().startswith("ERROR:") or (
            quoted and len(stripped) <= len(first_line) + _RAW_ERROR_SLACK
        ):
            return TOOL_FAILURES_ANSWER.format(tool=step["tool"], error=first_line[:200])
    return text


def _honest(
    response: ModelResponse[Any], step: ModelStep, state: Mapping[str, Any]
) -> ModelResponse[Any]:
    """A turn's answer that is a tool's raw error, replaced by what failed in words."""
    reply = _reply_of(response)
    if step.purpose != "turn" or reply.tool_calls or reply.invalid_tool_calls:
        return response
    text = honest_answer(reply.text, state)
    if text == reply.text:
        return response
    return ModelResponse(
        result=[reply.model_copy(update={"content": text})],
        structured_response=response.structured_response,
    )


def _reply_of(response: ModelResponse[Any]) -> AIMessage:
    return next(
        (m for m in reversed(response.result) if isinstance(m, AIMessage)), AIMessage(content="")
    )
