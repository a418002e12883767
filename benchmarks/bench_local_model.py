"""The embedded model by hand: load time, prompt and generation speed, seconds per demo task.

Run with ``python benchmarks/bench_local_model.py [--threads N]`` on an otherwise idle
machine (two threads slow down badly when another process is busy). Prints one table:
the raw llama.cpp figures, then each demo task through ``create_rules_agent`` with the
share of its time spent in the model versus in this package (prompt rendering, parsing,
tools, graph).
"""

from __future__ import annotations

import argparse
import time
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.demo import (
    DEMO_QUESTIONS,
    demo_database_url,
    demo_project_root,
    demo_rules_path,
)
from langchain_agent_rules.models.local import ChatLocalLlama
from langchain_agent_rules.models.weights import embedded_model_path
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool

EXTRA_TASKS = [
    ("What is 12 times 7?", None),
    ("How many products do we sell?", 2),
    (
        "Read docs/notes.md to find who owns the next release, then look up that customer's "
        "city in the database.",
        None,
    ),
]


class ModelTimer(BaseCallbackHandler):
    """Adds up the wall time of every chat model call in a run."""

    def __init__(self) -> None:
        self.started: dict[UUID, float] = {}
        self.seconds = 0.0
        self.calls = 0

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, **_: Any
    ) -> None:
        self.started[run_id] = time.perf_counter()

    def on_llm_end(self, response: Any, *, run_id: UUID, **_: Any) -> None:
        self.seconds += time.perf_counter() - self.started.pop(run_id)
        self.calls += 1


def raw_speed(threads: int) -> dict[str, float]:
    import llama_cpp

    path = str(embedded_model_path())
    started = time.perf_counter()
    llama = llama_cpp.Llama(
        model_path=path, n_ctx=4096, n_threads=threads, n_threads_batch=threads, verbose=False
    )
    load = time.perf_counter() - started
    prompt = "Summarise this list of order amounts in one sentence: " + ", ".join(
        f"{n}.50 EUR" for n in range(120)
    )
    tokens = llama.tokenize(prompt.encode())
    started = time.perf_counter()
    first = None
    generated = 0
    for _ in llama.create_completion(
        prompt, max_tokens=96, temperature=0, repeat_penalty=1.0, stream=True
    ):
        generated += 1
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    assert first is not None
    return {
        "load_s": load,
        "prompt_tokens": len(tokens),
        "prompt_tok_s": len(tokens) / (first - started),
        "gen_tok_s": (generated - 1) / (end - first),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    speed = raw_speed(args.threads)
    print(f"threads: {args.threads}")
    print(f"load: {speed['load_s']:.2f} s")
    print(
        f"prompt: {speed['prompt_tok_s']:.0f} tokens/s ({speed['prompt_tokens']} tokens), "
        f"generation: {speed['gen_tok_s']:.1f} tokens/s"
    )

    model = ChatLocalLlama(n_threads=args.threads)
    tools = [
        SqlQueryTool(demo_database_url(), include_schema=True),
        FileReadTool(demo_project_root()),
    ]
    rules = JsonFileRuleStore(demo_rules_path())
    tasks = [(q.question, q.project_id) for q in DEMO_QUESTIONS] + EXTRA_TASKS
    print()
    print(f"{'task':<62} {'s':>6} {'model %':>8} {'calls':>5} {'tools':>5}  stop")
    totals = [0.0, 0.0]
    for question, project_id in tasks:
        agent = create_rules_agent(model, tools, rules=rules, project_id=project_id)
        timer = ModelTimer()
        started = time.perf_counter()
        state = agent.invoke({"messages": [HumanMessage(question)]}, {"callbacks": [timer]})
        seconds = time.perf_counter() - started
        totals[0] += seconds
        totals[1] += timer.seconds
        print(
            f"{question[:62]:<62} {seconds:6.1f} {100 * timer.seconds / seconds:7.1f}% "
            f"{timer.calls:5d} {len(state['trace']):5d}  {state['stop_reason']}"
        )
    print(
        f"{'all tasks':<62} {totals[0]:6.1f} {100 * totals[1] / totals[0]:7.1f}%   "
        f"(package share: {100 * (1 - totals[1] / totals[0]):.2f}%)"
    )


if __name__ == "__main__":
    main()
