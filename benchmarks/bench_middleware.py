"""What our create_agent middleware costs, and what ToolGuardMiddleware saves in checkpoints.

Run by hand (not in CI):

    python benchmarks/bench_middleware.py [--quick]

1. Time per iteration of `langchain.agents.create_agent` running a trivial tool N times,
   plain and with each of our middleware (ToolGuardMiddleware, AgentRulesMiddleware over
   an in-memory rule store, TextToolProtocolMiddleware with a model that writes fenced
   calls), sync and async, no checkpointer. The fastest of the repetitions is printed (the
   one least disturbed by other processes) with its ratio to plain create_agent.
2. Bytes written to a SQLite checkpoint file by a run whose three tool calls each return
   1 MB, plain create_agent against create_agent + ToolGuardMiddleware (8 KB cap).

Every figure comes from this run; nothing is compared with numbers measured elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_agent_rules.middleware import (
    AgentRulesMiddleware,
    TextToolProtocolMiddleware,
    ToolGuardMiddleware,
)
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule

QUICK = "--quick" in sys.argv
ITERATIONS = 10 if QUICK else 25
REPETITIONS = 3 if QUICK else 7
ONE_MB = 1_000_000


@tool
def ping(n: int) -> str:
    """Return pong and the number."""
    return f"pong {n}"


@tool
def megabyte(n: int) -> str:
    """Return one megabyte of text."""
    return "x" * ONE_MB


class LoopModel(BaseChatModel):
    """Calls ``tool_name`` until it has seen ``iterations`` results, then answers.

    Stateless (it counts the tool results after the last user message), so one agent can
    be run many times. ``fenced`` writes the calls as text-protocol blocks instead of
    native tool calls, for TextToolProtocolMiddleware.
    """

    iterations: int
    tool_name: str = "ping"
    fenced: bool = False

    @property
    def _llm_type(self) -> str:
        return "loop"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
        if self.fenced:
            # Text-protocol results come back as user turns: count our own turns instead.
            seen = sum(isinstance(m, AIMessage) for m in messages[humans[0] + 1 :])
        else:
            seen = sum(isinstance(m, ToolMessage) for m in messages[humans[-1] + 1 :])
        if seen >= self.iterations:
            return AIMessage("FINAL: done" if self.fenced else "done")
        if self.fenced:
            block = json.dumps({"tool": self.tool_name, "args": {"n": seen}})
            return AIMessage(f"```tool\n{block}\n```")
        call = {"name": self.tool_name, "args": {"n": seen}, "id": f"c{seen}"}
        return AIMessage("", tool_calls=[call])

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        return self._generate(messages)


def rules_store() -> InMemoryRuleStore:
    store = InMemoryRuleStore()
    store.create(
        Rule(id="eur", type="requirement", target="output", content="Write amounts with EUR.")
    )
    store.create(
        Rule(id="no_mail", type="prohibition", target="output", content="Never show emails.")
    )
    return store


CONFIGURATIONS: dict[str, Callable[[], tuple[bool, list[AgentMiddleware[Any, Any, Any]]]]] = {
    "create_agent": lambda: (False, []),
    "+ ToolGuardMiddleware": lambda: (False, [ToolGuardMiddleware()]),
    "+ AgentRulesMiddleware": lambda: (False, [AgentRulesMiddleware(rules_store())]),
    "+ TextToolProtocolMiddleware": lambda: (True, [TextToolProtocolMiddleware()]),
    "+ all three": lambda: (
        True,
        [AgentRulesMiddleware(rules_store()), TextToolProtocolMiddleware(), ToolGuardMiddleware()],
    ),
}


def per_iteration_ms(agent: Any, use_async: bool) -> float:
    state = {"messages": [HumanMessage("go")]}
    best = float("inf")
    for _ in range(REPETITIONS):
        started = time.perf_counter()
        if use_async:
            asyncio.run(agent.ainvoke(state))
        else:
            agent.invoke(state)
        best = min(best, time.perf_counter() - started)
    return best / ITERATIONS * 1000


def timing_table() -> None:
    print(f"Per iteration, {ITERATIONS} iterations, best of {REPETITIONS} (ms; ratio to plain)")
    print(f"{'configuration':32} {'sync':>14} {'async':>14}")
    baseline: dict[bool, float] = {}
    for name, build in CONFIGURATIONS.items():
        fenced, middleware = build()
        model = LoopModel(iterations=ITERATIONS, fenced=fenced)
        agent = create_agent(model, [ping], middleware=middleware)
        cells = []
        for use_async in (False, True):
            ms = per_iteration_ms(agent, use_async)
            baseline.setdefault(use_async, ms)
            cells.append(f"{ms:7.3f} ({ms / baseline[use_async]:.2f}x)")
        print(f"{name:32} {cells[0]:>14} {cells[1]:>14}")


def checkpoint_bytes(middleware: list[AgentMiddleware[Any, Any, Any]]) -> int:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "checkpoints.sqlite"
        connection = sqlite3.connect(path, check_same_thread=False)
        try:
            saver = SqliteSaver(connection)
            model = LoopModel(iterations=3, tool_name="megabyte")
            tools: list[BaseTool] = [megabyte]
            agent = create_agent(model, tools, middleware=middleware, checkpointer=saver)
            config = {"configurable": {"thread_id": uuid.uuid4().hex}}
            agent.invoke({"messages": [HumanMessage("go")]}, config)
            connection.commit()
        finally:
            connection.close()
        return path.stat().st_size


def checkpoint_table() -> None:
    plain = checkpoint_bytes([])
    guarded = checkpoint_bytes([ToolGuardMiddleware()])
    print("\nSQLite checkpoint file after three 1 MB tool results")
    print(f"{'create_agent':32} {plain / 1e6:8.2f} MB")
    print(f"{'+ ToolGuardMiddleware':32} {guarded / 1e6:8.2f} MB ({plain / guarded:.0f}x smaller)")


if __name__ == "__main__":
    timing_table()
    checkpoint_table()
