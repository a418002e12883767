"""`RulesAgent`: the agent graph behind a five-line API.

Example:
    .. code-block:: python

        agent = RulesAgent("local", tools=[sql_query], rules=store)
        print(agent.run("How many active users do we have?"))
        for step in agent.trace():
            print(step["tool"], step["status"], step["observation"][:80])
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Command

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.state import TraceStep
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["ApprovalHandler", "RulesAgent"]

ApprovalHandler = Callable[[dict[str, Any]], Any]
"""Gets ``{"type": "tool_approval", "tool", "args", "id"}``; returns ``"approve"``,
``"reject"``, ``{"action": "edit", "args": {...}}`` or ``{"action": "reject", "reason": ...}``."""


class RulesAgent:
    """A rules-following ReAct agent with ``run``, ``arun``, ``stream`` and ``trace``.

    Takes the options of `create_rules_agent`, plus ``approve``: the function that
    answers approval requests for the tools in ``require_approval`` (an `InMemorySaver`
    is used when no checkpointer is given). Each run gets a new thread unless
    ``thread_id`` is passed; with a checkpointer, passing the same ``thread_id`` continues
    that conversation.
    """

    def __init__(
        self,
        model: BaseChatModel | str,
        tools: Sequence[BaseTool | Callable[..., Any]] = (),
        *,
        rules: RuleReader | None = None,
        project_id: int | None = None,
        protocol: str = "auto",
        max_iterations: int = 6,
        tool_timeout: float = 30.0,
        max_observation_bytes: int = 8192,
        on_limit: str = "summarize",
        system_prompt: str | None = None,
        require_approval: Sequence[str] = (),
        approve: ApprovalHandler | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        store: BaseStore | None = None,
    ) -> None:
        if require_approval and approve is None:
            raise AgentConfigurationError(
                "require_approval needs approve=, a function that answers each approval "
                'request with "approve", "reject" or {"action": "edit", "args": {...}}'
            )
        if require_approval and checkpointer is None:
            checkpointer = InMemorySaver()
        self._options: dict[str, Any] = {
            "rules": rules,
            "project_id": project_id,
            "protocol": protocol,
            "max_iterations": max_iterations,
            "tool_timeout": tool_timeout,
            "max_observation_bytes": max_observation_bytes,
            "on_limit": on_limit,
            "system_prompt": system_prompt,
            "require_approval": tuple(require_approval),
            "checkpointer": checkpointer,
            "store": store,
        }
        self._model = model
        self._approve = approve
        self._checkpointer = checkpointer
        self.graph: CompiledStateGraph[Any, Any, Any, Any] = create_rules_agent(
            model, tools, **self._options
        )
        self._tools = tuple(tools)
        self._last: dict[str, Any] = {}

    def with_tools(self, tools: Sequence[BaseTool | Callable[..., Any]]) -> RulesAgent:
        """A new agent with the same model and options and this tool list."""
        return RulesAgent(self._model, tools, approve=self._approve, **self._options)

    def _config(self, thread_id: str | None) -> RunnableConfig:
        if self._checkpointer is None:
            if thread_id is not None:
                raise AgentConfigurationError(
                    "thread_id needs a checkpointer; pass checkpointer=InMemorySaver() or "
                    "a persistent one such as SqliteSaver"
                )
            return {}
        return {"configurable": {"thread_id": thread_id or uuid.uuid4().hex}}

    def _resume(self, state: dict[str, Any]) -> Command[Any] | None:
        interrupts = state.get("__interrupt__")
        if not interrupts:
            return None
        assert self._approve is not None
        return Command(resume=self._approve(dict(interrupts[0].value)))

    def run(self, task: str, *, thread_id: str | None = None) -> str:
        """Run ``task`` to the end and return the answer."""
        config = self._config(thread_id)
        state = self.graph.invoke({"messages": [HumanMessage(task)]}, config)
        while (resume := self._resume(state)) is not None:
            state = self.graph.invoke(resume, config)
        self._last = dict(state)
        return str(state["answer"])

    async def arun(self, task: str, *, thread_id: str | None = None) -> str:
        """Async `run`."""
        config = self._config(thread_id)
        state = await self.graph.ainvoke({"messages": [HumanMessage(task)]}, config)
        while (resume := self._resume(state)) is not None:
            state = await self.graph.ainvoke(resume, config)
        self._last = dict(state)
        return str(state["answer"])

    def stream(self, task: str, *, thread_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Yield each trace step as its tool call finishes, then the answer.

        The last item is ``{"answer": ..., "stop_reason": ..., "iterations": ...}``.
        """
        config = self._config(thread_id)
        payload: Any = {"messages": [HumanMessage(task)]}
        self._last = {"trace": []}
        while payload is not None:
            pending = None
            for chunk in self.graph.stream(payload, config, stream_mode="updates"):
                pending = pending or self._resume(chunk)
                yield from self._absorb(chunk)
            payload = pending
        yield self._summary()

    async def astream(
        self, task: str, *, thread_id: str | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """Async `stream`."""
        config = self._config(thread_id)
        payload: Any = {"messages": [HumanMessage(task)]}
        self._last = {"trace": []}
        while payload is not None:
            pending = None
            async for chunk in self.graph.astream(payload, config, stream_mode="updates"):
                pending = pending or self._resume(chunk)
                for event in self._absorb(chunk):
                    yield event
            payload = pending
        yield self._summary()

    def _absorb(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        new_steps: list[dict[str, Any]] = []
        for node, update in chunk.items():
            if node == "__interrupt__" or not isinstance(update, dict):
                continue
            if "trace" in update:
                known = len(self._last.get("trace", []))
                new_steps += [dict(step) for step in update["trace"][known:]]
            self._last.update(update)
        return new_steps

    def _summary(self) -> dict[str, Any]:
        return {
            "answer": self._last.get("answer"),
            "stop_reason": self._last.get("stop_reason"),
            "iterations": self._last.get("iterations", 0),
        }

    def trace(self, thread_id: str | None = None) -> list[TraceStep]:
        """The steps of the last run, or of the last run on ``thread_id`` (needs a checkpointer)."""
        if thread_id is None:
            return list(self._last.get("trace", []))
        state = self.graph.get_state(self._config(thread_id))
        return list(state.values.get("trace", []))
