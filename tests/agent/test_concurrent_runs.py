"""One RulesAgent serves concurrent runs: each run gets its own answer, trace and usage."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from langchain_agent_rules.agent.facade import RulesAgent

RUNS = 6


class LookupModel(BaseChatModel):
    """Looks up the task with the ``lookup`` tool, then answers with what it returned.

    Stateless, so concurrent runs cannot share replies: each answer depends only on the
    messages of its own run.
    """

    @property
    def _llm_type(self) -> str:
        return "lookup"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(**kwargs)

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            message = AIMessage(f"FINAL: {last.text}", usage_metadata=_tokens(len(messages)))
        else:
            task = next(m.text for m in messages if isinstance(m, HumanMessage))
            message = AIMessage(
                "",
                tool_calls=[{"name": "lookup", "args": {"key": task}, "id": f"id-{task}"}],
                usage_metadata=_tokens(1),
            )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        return self._reply(messages)


def _tokens(n: int) -> Any:
    return {"input_tokens": n, "output_tokens": 1, "total_tokens": n + 1}


def make_agent() -> RulesAgent:
    # Every run waits in the tool until all runs are inside it, so they truly overlap.
    barrier = threading.Barrier(RUNS, timeout=20)

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        barrier.wait()
        return f"value of {key}"

    return RulesAgent(LookupModel(), [lookup], protocol="native")


def check(result: Any, task: str) -> None:
    assert result.answer == f"value of {task}"
    assert [(s["args"], s["observation"]) for s in result.trace] == [
        ({"key": task}, f"value of {task}")
    ]
    assert result.usage["model_calls"] == 2
    assert result.usage["input_tokens"] == 1 + 4  # system, task, call, result


def test_concurrent_runs_in_threads_each_get_their_own_result() -> None:
    agent = make_agent()
    tasks = [f"task {i}" for i in range(RUNS)]
    with ThreadPoolExecutor(RUNS) as pool:
        results = list(pool.map(agent.invoke, tasks))
    for result, task in zip(results, tasks, strict=True):
        check(result, task)


def test_concurrent_asyncio_runs_each_get_their_own_result() -> None:
    agent = make_agent()
    tasks = [f"task {i}" for i in range(RUNS)]

    async def main() -> list[Any]:
        return list(await asyncio.gather(*(agent.ainvoke(task) for task in tasks)))

    for result, task in zip(asyncio.run(main()), tasks, strict=True):
        check(result, task)


def test_concurrent_streams_each_get_their_own_steps() -> None:
    agent = make_agent()
    tasks = [f"task {i}" for i in range(RUNS)]
    with ThreadPoolExecutor(RUNS) as pool:
        streams = list(pool.map(lambda task: list(agent.stream(task)), tasks))
    for events, task in zip(streams, tasks, strict=True):
        *steps, summary = events
        assert [s["step"]["args"] for s in steps] == [{"key": task}]  # type: ignore[typeddict-item]
        assert summary["answer"] == f"value of {task}"  # type: ignore[typeddict-item]
