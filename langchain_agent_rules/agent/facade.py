"""`RulesAgent`: the rules agent behind a five-line API.

Example:
    .. code-block:: python

        agent = RulesAgent("local", tools=[sql_query], rules=store)
        result = agent.invoke("How many active users do we have?")
        print(result.answer)
        for step in result.trace:
            print(step["tool"], step["status"], step["observation"][:80])

An agent holds its configuration only; every run returns its own `RunResult`, so one
agent serves concurrent runs (threads or asyncio tasks) safely.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer, Command, Interrupt, StreamMode

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.agent.streaming import AnswerStream, EndEvent, StepEvent, StreamEvent
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware.state import TraceStep
from langchain_agent_rules.options import AgentOptions
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["ApprovalHandler", "RulesAgent", "Task"]

ApprovalHandler = Callable[[Any], Any]
"""Gets an interrupt's value and returns the value to resume with. For an approval the
value is LangChain's `HITLRequest` (``action_requests``: the call's name, arguments and a
description naming the rules that asked; ``review_configs``) and the answer is one
decision — ``{"type": "approve"}``, ``{"type": "edit", "edited_action": {"name", "args"}}``,
``{"type": "reject", "message": "..."}``, or just ``"approve"`` / ``"reject"`` — or
LangChain's `HITLResponse` ``{"decisions": [decision]}``; for an ``interrupt()`` inside a
tool, whatever that tool expects."""

Task = str | Sequence[BaseMessage | tuple[str, str] | dict[str, Any]]
"""A run's task: the question as text, or the messages to add to the conversation."""


def _is_approval(value: Any) -> bool:
    return isinstance(value, Mapping) and "action_requests" in value


def _as_response(answer: Any) -> Any:
    """An approval handler's answer as LangChain's `HITLResponse`."""
    if answer in ("approve", "reject"):
        return {"decisions": [{"type": answer}]}
    if isinstance(answer, Mapping) and "decisions" in answer:
        return dict(answer)
    if isinstance(answer, Mapping) and "type" in answer:
        return {"decisions": [dict(answer)]}
    return answer


class RulesAgent:
    """A rules-following ReAct agent with ``invoke``, ``run``, ``stream`` and ``trace``.

    Takes what `create_rules_agent` takes (the options as keywords or
    ``options=AgentOptions(...)``, your own ``middleware``), plus ``approve``: the
    function that answers approval requests (tools in ``require_approval``, calls a
    rule's check sends to a human) and any ``interrupt()`` a tool makes (an
    `InMemorySaver` is used when ``approve`` is given and no checkpointer is). Each run
    gets a new thread unless ``thread_id`` is passed; with a checkpointer, the same
    ``thread_id`` continues that conversation. ``config`` (callbacks, tags, metadata,
    ``recursion_limit``) reaches every model and tool call, as in any LangChain runnable.
    """

    def __init__(
        self,
        model: BaseChatModel | str,
        tools: Sequence[BaseTool | Callable[..., Any]] = (),
        *,
        rules: RuleReader | None = None,
        approve: ApprovalHandler | None = None,
        middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
        checkpointer: Checkpointer = None,
        store: BaseStore | None = None,
        options: AgentOptions | None = None,
        **option_values: Any,
    ) -> None:
        self.options = AgentOptions.resolve(options, option_values)
        if self.options.require_approval and approve is None:
            raise AgentConfigurationError(
                "require_approval needs approve=, a function that answers each approval "
                'request with a decision such as {"type": "approve"}'
            )
        if approve is not None and checkpointer is None:
            checkpointer = InMemorySaver()
        self._model = model
        self._rules = rules
        self._approve = approve
        self._middleware = tuple(middleware)
        self._checkpointer = checkpointer
        self._store = store
        self.graph: CompiledStateGraph[Any, Any, Any, Any] = create_rules_agent(
            model,
            tools,
            rules=rules,
            middleware=middleware,
            checkpointer=checkpointer,
            store=store,
            options=self.options,
        )

    def with_tools(self, tools: Sequence[BaseTool | Callable[..., Any]]) -> RulesAgent:
        """A new agent with the same model, rules, middleware and options and these tools."""
        return RulesAgent(
            self._model,
            tools,
            rules=self._rules,
            approve=self._approve,
            middleware=self._middleware,
            checkpointer=self._checkpointer,
            store=self._store,
            options=self.options,
        )

    # --- one run -------------------------------------------------------------------------

    def _config(
        self, thread_id: str | None, config: RunnableConfig | None
    ) -> tuple[RunnableConfig, str | None]:
        base: dict[str, Any] = dict(config or {})
        configurable = dict(base.get("configurable") or {})
        thread_id = thread_id or configurable.get("thread_id")
        if self._checkpointer in (None, False):
            if thread_id is not None:
                raise AgentConfigurationError(
                    "thread_id needs a checkpointer; pass checkpointer=InMemorySaver() or "
                    "a persistent one such as SqliteSaver"
                )
            return base, None  # type: ignore[return-value]
        thread = str(thread_id or uuid.uuid4().hex)
        base["configurable"] = {**configurable, "thread_id": thread}
        return base, thread  # type: ignore[return-value]

    @staticmethod
    def _task(task: Task) -> dict[str, Any]:
        if isinstance(task, str):
            return {"messages": [HumanMessage(task)]}
        if isinstance(task, Sequence) and task:
            return {"messages": list(task)}
        raise AgentConfigurationError(
            "task must be the question as text or a non-empty list of messages, "
            f"got {type(task).__name__}"
        )

    def _resume(self, interrupts: Sequence[Interrupt]) -> Command[Any] | None:
        if not interrupts:
            return None
        if self._approve is None:
            raise AgentConfigurationError(
                f"the run paused at an interrupt ({interrupts[0].value!r:.200}) and this "
                "agent has no approve= function to answer it"
            )
        answers = {}
        for pending in interrupts:
            answer = self._approve(pending.value)
            if answer is None:
                raise AgentConfigurationError(
                    f"approve= returned None for the interrupt {pending.value!r:.200}; the run "
                    'still waits: return a decision such as {"type": "approve"}'
                )
            answers[pending.id] = _as_response(answer) if _is_approval(pending.value) else answer
        return Command(resume=answers)

    def invoke(
        self, task: Task, *, thread_id: str | None = None, config: RunnableConfig | None = None
    ) -> RunResult:
        """Run ``task`` to the end; the answer, trace, usage and rule events of this run."""
        run_config, thread = self._config(thread_id, config)
        payload: Any = self._task(task)
        while True:
            state = self.graph.invoke(payload, run_config)
            payload = self._resume(state.get("__interrupt__") or ())
            if payload is None:
                return RunResult.from_state(state, thread)

    async def ainvoke(
        self, task: Task, *, thread_id: str | None = None, config: RunnableConfig | None = None
    ) -> RunResult:
        """Async `invoke`."""
        run_config, thread = self._config(thread_id, config)
        payload: Any = self._task(task)
        while True:
            state = await self.graph.ainvoke(payload, run_config)
            payload = self._resume(state.get("__interrupt__") or ())
            if payload is None:
                return RunResult.from_state(state, thread)

    def run(
        self, task: Task, *, thread_id: str | None = None, config: RunnableConfig | None = None
    ) -> str:
        """Run ``task`` to the end and return the answer (`invoke` returns the whole result)."""
        return self.invoke(task, thread_id=thread_id, config=config).answer

    async def arun(
        self, task: Task, *, thread_id: str | None = None, config: RunnableConfig | None = None
    ) -> str:
        """Async `run`."""
        return (await self.ainvoke(task, thread_id=thread_id, config=config)).answer

    # --- streaming -------------------------------------------------------------------------

    def stream(
        self,
        task: Task,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        answer_deltas: bool = False,
    ) -> Iterator[StreamEvent]:
        """Yield a ``"step"`` event as each tool call finishes, then an ``"end"`` event.

        With ``answer_deltas=True`` it also yields ``"answer_delta"`` events as the model
        writes its answer (with a model that streams, and only an answer no rule may
        still change; a checked answer comes as one delta once its checks passed).
        """
        run_config, thread = self._config(thread_id, config)
        run = _StreamedRun(answer_deltas)
        payload: Any = self._task(task)
        while payload is not None:
            for mode, chunk in self.graph.stream(payload, run_config, stream_mode=run.modes):
                yield from run.events(mode, chunk)
            payload = self._resume(run.take_interrupts())
        yield run.end(thread)

    async def astream(
        self,
        task: Task,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        answer_deltas: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        """Async `stream`."""
        run_config, thread = self._config(thread_id, config)
        run = _StreamedRun(answer_deltas)
        payload: Any = self._task(task)
        while payload is not None:
            async for mode, chunk in self.graph.astream(payload, run_config, stream_mode=run.modes):
                for event in run.events(mode, chunk):
                    yield event
            payload = self._resume(run.take_interrupts())
        yield run.end(thread)

    def trace(self, thread_id: str) -> list[TraceStep]:
        """The steps of the last run on ``thread_id``, read from the checkpointer.

        The steps of a run you just made are in its `RunResult` (``result.trace``).
        """
        config, _ = self._config(thread_id, None)
        state = self.graph.get_state(config)
        return list(state.values.get("trace", []))


class _StreamedRun:
    """What one streamed run has shown so far (it lives only as long as the stream)."""

    def __init__(self, answer_deltas: bool) -> None:
        self.modes: list[StreamMode] = ["updates", "values"]
        if answer_deltas:
            self.modes.append("messages")
        self._answer = AnswerStream()
        self._values: dict[str, Any] = {}
        self._interrupts: list[Interrupt] = []
        self._steps = 0

    def take_interrupts(self) -> list[Interrupt]:
        interrupts, self._interrupts = self._interrupts, []
        return interrupts

    def events(self, mode: str, chunk: Any) -> list[StreamEvent]:
        if mode == "messages":
            text = self._answer.feed(*chunk)
            return [{"type": "answer_delta", "text": text}] if text else []
        if mode == "values":
            self._values = chunk
            return []
        events: list[StreamEvent] = []
        for node, output in chunk.items():
            if node == "__interrupt__":
                self._interrupts.extend(output)
                continue
            for update in output if isinstance(output, list) else [output]:
                steps = update.get("trace") if isinstance(update, dict) else None
                for step in steps if isinstance(steps, list) else []:
                    self._steps += 1
                    numbered = cast("TraceStep", {**step, "step": self._steps})
                    event: StepEvent = {"type": "step", "step": numbered}
                    events.append(event)
        return events

    def end(self, thread_id: str | None) -> EndEvent:
        result = RunResult.from_state(self._values, thread_id)
        return {
            "type": "end",
            "answer": result.answer,
            "stop_reason": result.stop_reason,
            "iterations": result.iterations,
            "usage": result.usage,
            "rule_events": result.rule_events,
            "thread_id": thread_id,
        }
