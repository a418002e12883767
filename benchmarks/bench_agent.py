"""Agent loop benchmark: per-iteration cost of create_rules_agent against its peers.

Run by hand (not in CI):

    python benchmarks/bench_agent.py [--quick]

The same scripted workload (1, 6 and 25 iterations of a trivial tool, then an answer)
runs through `create_rules_agent`, `langchain.agents.create_agent`, a minimal hand-written
`StateGraph` and a plain Python loop, sync and async, with no checkpointer,
`InMemorySaver` and SQLite (`SqliteSaver` / `AsyncSqliteSaver`), all in one run. The
model is a stateless scripted model (it counts the tool results since the last user
message), so every runner gets the same replies. It prints the time per iteration (the
fastest of the repetitions, the one least disturbed by other processes) and the ratio to
`create_agent` in the same configuration, then the checkpoint bytes written to SQLite
for three 1 MB tool outputs.

With ``--anchor-root PATH`` (a checkout of an earlier commit, e.g. ``git worktree add
/tmp/anchor-76701f2 76701f2``) the same workload also runs there, in a process of its own
with that package on ``PYTHONPATH``, and its ``create_rules_agent`` is shown beside ours,
each as a ratio to the ``create_agent`` measured in its own process.

Aim (issue 16): the full stack at most 1.15x bare ``create_agent`` per iteration; three
1 MB tool results at most 100 KB of checkpoints.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_agent_rules.agent.builder import create_rules_agent

ITERATIONS = (1, 6, 25)


class CountingModel(BaseChatModel):
    """Calls ``tool_name`` ``n`` times (arguments 0..n-1), then answers ``FINAL: done``."""

    n: int
    tool_name: str = "noop"

    @property
    def _llm_type(self) -> str:
        return "counting"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[getattr(t, "name", "t") for t in tools], **kwargs)

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        done = 0
        for message in reversed(messages):
            if isinstance(message, HumanMessage) and not message.text.startswith("Observation"):
                break
            done += isinstance(message, ToolMessage)
        if done < self.n:
            call = {"name": self.tool_name, "args": {"x": done}, "id": f"c{done}"}
            message = AIMessage("", tool_calls=[call])
        else:
            message = AIMessage("FINAL: done")
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return self._reply(messages)


@tool
def noop(x: int) -> int:
    """Return x."""
    return x


@tool
def big(x: int) -> str:
    """Return one megabyte of text."""
    return str(x) * 1_000_000


# --- the four runners --------------------------------------------------------------


def ours(model: BaseChatModel, tools: list[BaseTool], checkpointer: Any, n: int) -> Any:
    return create_rules_agent(
        model, tools, protocol="native", max_iterations=n + 1, checkpointer=checkpointer
    )


def peer_create_agent(
    model: BaseChatModel, tools: list[BaseTool], checkpointer: Any, n: int
) -> Any:
    return create_agent(model, tools, checkpointer=checkpointer)


class TwinNode(Runnable[Any, Any]):
    """A node with a sync and an async body, through public langchain-core API only."""

    def __init__(self, func: Callable[..., Any], afunc: Callable[..., Any]) -> None:
        self.func, self.afunc = func, afunc

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return self.func(input)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return await self.afunc(input)


def minimal_graph(model: BaseChatModel, tools: list[BaseTool], checkpointer: Any, n: int) -> Any:
    bound = model.bind_tools(tools)
    by_name = {t.name: t for t in tools}

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    async def aagent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    def run_tools(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        return {"messages": [by_name[c["name"]].invoke(c) for c in last.tool_calls]}

    def route(state: MessagesState) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", TwinNode(agent, aagent))
    graph.add_node("tools", run_tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


class PlainLoop:
    """The loop with no framework: model.invoke, tool.invoke, repeat."""

    def __init__(self, model: BaseChatModel, tools: list[BaseTool]) -> None:
        self.bound = model.bind_tools(tools)
        self.by_name = {t.name: t for t in tools}

    def invoke(self, payload: dict[str, Any], config: Any = None) -> Any:
        messages = list(payload["messages"])
        while True:
            reply = self.bound.invoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                return messages
            messages += [self.by_name[c["name"]].invoke(c) for c in reply.tool_calls]

    async def ainvoke(self, payload: dict[str, Any], config: Any = None) -> Any:
        messages = list(payload["messages"])
        while True:
            reply = await self.bound.ainvoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                return messages
            messages += [await self.by_name[c["name"]].ainvoke(c) for c in reply.tool_calls]


RUNNERS: dict[str, Callable[..., Any]] = {
    "create_rules_agent": ours,
    "create_agent": peer_create_agent,
    "StateGraph (minimal)": minimal_graph,
}


# --- measuring ---------------------------------------------------------------------


class Timer:
    """Wall-clock and process CPU time of each repetition (CPU time ignores other processes)."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __enter__(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def __exit__(self, *exc: object) -> None:
        self.wall.append(time.perf_counter() - self._wall)
        self.cpu.append(time.process_time() - self._cpu)

    def per_iteration(self, n: int) -> tuple[float, float]:
        return min(self.wall) / n * 1000, min(self.cpu) / n * 1000


def per_iteration_ms(app: Any, n: int, reps: int, mode: str, threaded: bool) -> tuple[float, float]:
    def payload() -> dict[str, Any]:
        return {"messages": [HumanMessage("go")]}

    def config() -> dict[str, Any]:
        return {"configurable": {"thread_id": uuid.uuid4().hex}} if threaded else {}

    timer = Timer()
    if mode == "sync":
        app.invoke(payload(), config())
        for _ in range(reps):
            with timer:
                app.invoke(payload(), config())
    else:

        async def go() -> None:
            await app.ainvoke(payload(), config())
            for _ in range(reps):
                with timer:
                    await app.ainvoke(payload(), config())

        asyncio.run(go())
    return timer.per_iteration(n)


def sqlite_bytes(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        checkpoints = connection.execute(
            "SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0) FROM checkpoints"
        ).fetchone()[0]
        writes = connection.execute(
            "SELECT coalesce(sum(length(value)), 0) FROM writes"
        ).fetchone()[0]
    return int(checkpoints + writes)


def measure_timings(
    quick: bool, folder: Path
) -> list[tuple[str, str, str, int, tuple[float, float]]]:
    rows: list[tuple[str, str, str, int, tuple[float, float]]] = []
    reps_for = {1: 30, 6: 12, 25: 5} if not quick else {1: 5, 6: 3, 25: 2}
    for n in ITERATIONS:
        model = CountingModel(n=n)
        for mode in ("sync", "async"):
            rows.append(
                (
                    "plain Python loop",
                    mode,
                    "none",
                    n,
                    per_iteration_ms(PlainLoop(model, [noop]), n, reps_for[n], mode, False),
                )
            )
            for saver_name in ("none", "InMemorySaver", "SQLite"):
                for runner_name, build in RUNNERS.items():
                    if saver_name == "none":
                        rows.append(
                            (
                                runner_name,
                                mode,
                                saver_name,
                                n,
                                per_iteration_ms(
                                    build(model, [noop], None, n), n, reps_for[n], mode, False
                                ),
                            )
                        )
                    elif saver_name == "InMemorySaver":
                        app = build(model, [noop], InMemorySaver(), n)
                        rows.append(
                            (
                                runner_name,
                                mode,
                                saver_name,
                                n,
                                per_iteration_ms(app, n, reps_for[n], mode, True),
                            )
                        )
                    else:
                        path = folder / f"{uuid.uuid4().hex}.sqlite"
                        if mode == "sync":
                            with SqliteSaver.from_conn_string(str(path)) as saver:
                                app = build(model, [noop], saver, n)
                                rows.append(
                                    (
                                        runner_name,
                                        mode,
                                        saver_name,
                                        n,
                                        per_iteration_ms(app, n, reps_for[n], mode, True),
                                    )
                                )
                        else:
                            rows.append(
                                (
                                    runner_name,
                                    mode,
                                    saver_name,
                                    n,
                                    asyncio.run(_async_sqlite(build, model, path, n, reps_for[n])),
                                )
                            )
    return rows


async def _async_sqlite(
    build: Callable[..., Any], model: BaseChatModel, path: Path, n: int, reps: int
) -> tuple[float, float]:
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        app = build(model, [noop], saver, n)
        timer = Timer()
        for index in range(reps + 1):
            payload = {"messages": [HumanMessage("go")]}
            config = {"configurable": {"thread_id": uuid.uuid4().hex}}
            if index == 0:
                await app.ainvoke(payload, config)
                continue
            with timer:
                await app.ainvoke(payload, config)
        return timer.per_iteration(n)


def measure_checkpoint_bytes(folder: Path) -> list[tuple[str, int, int]]:
    rows = []
    model = CountingModel(n=3, tool_name="big")
    for runner_name, build in RUNNERS.items():
        path = folder / f"big-{uuid.uuid4().hex}.sqlite"
        with SqliteSaver.from_conn_string(str(path)) as saver:
            app = build(model, [big], saver, 3)
            state = app.invoke(
                {"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t"}}
            )
        in_state = sum(
            len(m.text.encode()) for m in state["messages"] if isinstance(m, ToolMessage)
        )
        rows.append((runner_name, in_state, sqlite_bytes(path)))
    return rows


def _argument(name: str) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def measure(quick: bool) -> tuple[list[Any], list[Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        return measure_timings(quick, folder), measure_checkpoint_bytes(folder)


def measure_anchor(root: Path, quick: bool) -> tuple[list[Any], list[Any]]:
    """The same workload on the package under ``root``: its agent and its create_agent."""
    label = f"create_rules_agent, own graph ({root.name})"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "anchor.json"
        command = [sys.executable, __file__, "--worker", str(out), *(["--quick"] if quick else [])]
        subprocess.run(command, env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, check=True)
        rows, byte_rows = json.loads(out.read_text())
    renamed = {"create_rules_agent": label, "create_agent": f"create_agent ({root.name})"}
    return (
        [(renamed.get(r[0], r[0]), r[1], r[2], r[3], tuple(r[4])) for r in rows],
        [(renamed.get(r[0], r[0]), r[1], r[2]) for r in byte_rows],
    )


def main() -> None:
    quick = "--quick" in sys.argv
    worker = _argument("--worker")
    if worker:
        RUNNERS.pop("StateGraph (minimal)")
        Path(worker).write_text(json.dumps(measure(quick)))
        return
    rows, byte_rows = measure(quick)
    anchor = _argument("--anchor-root")
    anchor_names: set[str] = set()
    if anchor:
        anchor_rows, anchor_bytes = measure_anchor(Path(anchor), quick)
        anchor_names = {row[0] for row in anchor_rows}
        rows += anchor_rows
        byte_rows += anchor_bytes
    baseline = {(mode, saver, n): ms for name, mode, saver, n, ms in rows if name == "create_agent"}
    anchor_baseline = {
        (mode, saver, n): ms
        for name, mode, saver, n, ms in rows
        if name in anchor_names and name.startswith("create_agent")
    }
    print(
        "| runner | mode | checkpointer | "
        + " | ".join(f"{n} it: wall / CPU ms per it (x create_agent)" for n in ITERATIONS)
        + " |"
    )
    print("|---|---|---|" + "---|" * len(ITERATIONS))
    keys = sorted(
        {(name, mode, saver) for name, mode, saver, _, _ in rows},
        key=lambda k: (k[2] != "none", k[2], k[1], k[0] != "create_rules_agent", k[0]),
    )
    for name, mode, saver in keys:
        cells = []
        for n in ITERATIONS:
            ms = next(
                v
                for r_name, r_mode, r_saver, r_n, v in rows
                if (r_name, r_mode, r_saver, r_n) == (name, mode, saver, n)
            )
            table = anchor_baseline if name in anchor_names else baseline
            base = table.get((mode, saver, n)) or table[(mode, "none", n)]
            cells.append(
                f"{ms[0]:.2f} ({ms[0] / base[0]:.2f}x) / {ms[1]:.2f} ({ms[1] / base[1]:.2f}x)"
            )
        print(f"| {name} | {mode} | {saver} | " + " | ".join(cells) + " |")
    print()
    print("| runner | tool output kept in state | checkpoint bytes in SQLite |")
    print("|---|---|---|")
    for name, in_state, written in byte_rows:
        print(f"| {name} | {in_state:,} B | {written:,} B |")


if __name__ == "__main__":
    main()
