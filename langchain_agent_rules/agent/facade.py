"""`RulesAgent`: the agent graph behind a five-line API.

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
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer, Command, StreamMode

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.agent.state import TraceStep
from langchain_agent_rules.agent.streaming import AnswerStream
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["ApprovalHandler", "RulesAgent"]

ApprovalHandler = Callable[[Any], Any]
"""Gets an interrupt's value, for an approval ``{"type": "tool_approval", "tool", "args",
"id", "rules"}`` (``rules``: the rules whose check asks for it); returns the resume
value: ``"approve"``, ``"reject"``, ``{"action": "edit", "args": {...}}`` or
``{"action": "reject", "reason": ...}`` (for an ``interrupt()`` inside a tool, whatever
that tool expects)."""


class RulesAgent:
    """A rules-following ReAct agent with ``invoke``, ``run``, ``stream`` and ``trace``.

    Takes what `create_rules_agent` takes (the options as keywords or
    ``options=AgentOptions(...)``), plus ``approve``: the function that answers approval
    requests for the tools in ``require_approval``, for calls a rule's check sends to a
    human, and any ``interrupt()`` a tool makes (an `InMemorySaver` is used when
    ``approve`` is given and no checkpointer is). Each run gets a new thread unless
    ``thread_id`` is passed; with a checkpointer, passing the same ``thread_id``
    continues that conversation.
    """

    def __init__(
        self,
        model: BaseChatModel | str,
        tools: Sequence[BaseTool | Callable[..., Any]] = (),
        *,
        rules: RuleReader | None = None,
        approve: ApprovalHandler | None = None,
        checkpointer: Checkpointer = None,
        store: BaseStore | None = None,
        options: AgentOptions | None = None,
        **option_values: Any,
    ) -> None:
        self.options = AgentOptions.resolve(options, option_values)
        if self.options.require_approval and approve is None:
            raise AgentConfigurationError(
                "require_approval needs approve=, a function that answers each approval "
                'request with "approve", "reject" or {"action": "edit", "args": {...}}'
            )
        if approve is not None and checkpointer is None:
            checkpointer = InMemorySaver()
        self._model = model
        self._tools = tuple(tools)
        self._rules = rules
        self._approve = approve
        self._checkpointer = checkpointer
        self._store = store
        self.graph: CompiledStateGraph[Any, Any, Any, Any] = create_rules_agent(
            model, tools, rules=rules, checkpointer=checkpointer, store=store, options=self.options
        )

    def with_tools(self, tools: Sequence[BaseTool | Callable[..., Any]]) -> RulesAgent:
        """A new agent with the same model, rules and options and this tool list."""
        return RulesAgent(
            self._model,
            tools,
            rules=self._rules,
            approve=self._approve,
            checkpointer=self._checkpointer,
            store=self._store,
            options=self.options,
        )

    # --- one run -------------------------------------------------------------------------

    def _config(self, thread_id: str | None) -> tuple[RunnableConfig, str | None]:
        if self._checkpointer in (None, False):
            if thread_id is not None:
                raise AgentConfigurationError(
                    "thread_id needs a checkpointer; pass checkpointer=InMemorySaver() or "
                    "a persistent one such as SqliteSaver"
                )
            return {}, None
        thread = thread_id or uuid.uuid4().hex
        return {"configurable": {"thread_id": thread}}, thread

    def _resume(self, update: Any) -> Command[Any] | None:
        interrupts = update.get("__interrupt__")
        if not interrupts:
            return None
        if self._approve is None:
            raise AgentConfigurationError(
                f"the run paused at an interrupt ({interrupts[0].value!r:.200}) and this "
                "agent has no approve= function to answer it"
            )
        return Command(resume=self._approve(interrupts[0].value))

    @staticmethod
    def _task(task: str) -> dict[str, Any]:
        return {"messages": [HumanMessage(task)]}

    def invoke(self, task: str, *, thread_id: str | None = None) -> RunResult:
        """Run ``task`` to the end; the answer, trace, usage and rule events of this run."""
        config, thread = self._config(thread_id)
        state = self.graph.invoke(self._task(task), config)
        while (resume := self._resume(state)) is not None:
            state = self.graph.invoke(resume, config)
        return RunResult.from_state(state, thread)

    async def ainvoke(self, task: str, *, thread_id: str | None = None) -> RunResult:
        """Async `invoke`."""
        config, thread = self._config(thread_id)
        state = await self.graph.ainvoke(self._task(task), config)
        while (resume := self._resume(state)) is not None:
            state = await self.graph.ainvoke(resume, config)
        return RunResult.from_state(state, thread)

    def run(self, task: str, *, thread_id: str | None = None) -> str:
        """Run ``task`` to the end and return the answer (`invoke` returns the whole result)."""
        return self.invoke(task, thread_id=thread_id).answer

    async def arun(self, task: str, *, thread_id: str | None = None) -> str:
        """Async `run`."""
        return (await self.ainvoke(task, thread_id=thread_id)).answer

    # --- streaming -------------------------------------------------------------------------

    def stream(
        self, task: str, *, thread_id: str | None = None, answer_deltas: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Yield each trace step as its tool call finishes, then a summary of the run.

        With ``answer_deltas=True`` it also yields ``{"answer_delta": text}`` as the
        model writes its answer (with a model that streams; see `AnswerStream`). The
        last item is ``{"answer", "stop_reason", "iterations", "usage", "rule_events",
        "thread_id"}``.
        """
        config, thread = self._config(thread_id)
        run = _StreamedRun(answer_deltas)
        payload: Any = self._task(task)
        while payload is not None:
            pending = None
            for mode, chunk in self.graph.stream(payload, config, stream_mode=run.modes):
                if mode == "updates":
                    pending = pending or self._resume(chunk)
                yield from run.events(mode, chunk)
            payload = pending
        yield run.summary(thread)

    async def astream(
        self, task: str, *, thread_id: str | None = None, answer_deltas: bool = False
    ) -> AsyncIterator[dict[str, Any]]:
        """Async `stream`."""
        config, thread = self._config(thread_id)
        run = _StreamedRun(answer_deltas)
        payload: Any = self._task(task)
        while payload is not None:
            pending = None
            async for mode, chunk in self.graph.astream(payload, config, stream_mode=run.modes):
                if mode == "updates":
                    pending = pending or self._resume(chunk)
                for event in run.events(mode, chunk):
                    yield event
            payload = pending
        yield run.summary(thread)

    def trace(self, thread_id: str) -> list[TraceStep]:
        """The steps of the last run on ``thread_id``, read from the checkpointer.

        The steps of a run you just made are in its `RunResult` (``result.trace``).
        """
        config, _ = self._config(thread_id)
        state = self.graph.get_state(config)
        return list(state.values.get("trace", []))


class _StreamedRun:
    """What one streamed run has shown so far (it lives only as long as the stream)."""

    def __init__(self, answer_deltas: bool) -> None:
        self.modes: list[StreamMode] = ["updates", "messages"] if answer_deltas else ["updates"]
        self._answer = AnswerStream()
        self._values: dict[str, Any] = {"trace": []}

    def events(self, mode: str, chunk: Any) -> list[dict[str, Any]]:
        if mode == "messages":
            delta = self._answer.feed(*chunk)
            return [{"answer_delta": delta}] if delta else []
        new_steps: list[dict[str, Any]] = []
        for node, output in chunk.items():
            if node == "__interrupt__":
                continue
            for update in output if isinstance(output, list) else [output]:
                if not isinstance(update, dict):
                    continue
                if "trace" in update:
                    known = len(self._values.get("trace", []))
                    new_steps += [dict(step) for step in update["trace"][known:]]
                self._values.update(update)
        return new_steps

    def summary(self, thread_id: str | None) -> dict[str, Any]:
        result = RunResult.from_state(self._values, thread_id)
        return {
            "answer": self._values.get("answer"),
            "stop_reason": result.stop_reason,
            "iterations": result.iterations,
            "usage": result.usage,
            "rule_events": result.rule_events,
            "thread_id": thread_id,
        }
