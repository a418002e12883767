"""The embedded model on tasks that failed for want of a useful observation, before and after.

Run with ``python benchmarks/bench_observations.py [--threads N] [--tasks 1,3]`` (the
real model, a few minutes on 2 cores). Each task runs twice on the same office database:
with ``sql_query`` as it is (example values and foreign keys in the description,
observations that name what exists, notes on empty results) and with a ``plain`` stand-in
that answers as the tool did before (the columns only, the database's words only, no
note). Per run it prints whether the answer is right, model calls, prompt tokens
evaluated and the queries the model sent. ``--sizes`` only prints the description sizes
(bytes and the model's tokens) of the demo database, before and after, without a run.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage
from langchain_core.outputs import LLMResult

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.demo import demo_database_url
from langchain_agent_rules.errors import InvalidToolCallError, ToolExecutionError
from langchain_agent_rules.tools.sql_query import SqlQueryTool

OFFICE = """
CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                          manager_id INTEGER REFERENCES employees (id));
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT,
                        dept_id INTEGER REFERENCES departments (id), hired TEXT, salary REAL);
CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT, opened TEXT, closed_at TEXT);
INSERT INTO departments VALUES (1, 'Sales', 3), (2, 'Research', 2), (3, 'Support', 4);
INSERT INTO employees VALUES
    (1, 'Ann Lee', 'ann.lee@example.com', 2, '2021-04-12', 5200.0),
    (2, 'Bo Chen', 'bo.chen@example.com', 1, '2019-09-01', 6100.0),
    (3, 'Cy Diaz', NULL, 1, '2023-01-16', 4300.0),
    (4, 'Di Wong', 'di.wong@example.com', 3, '2022-06-30', 4800.0);
INSERT INTO tickets VALUES
    (1, 'Printer jam', '2026-02-27', '2026-02-28 09:15:00'),
    (2, 'VPN down', '2026-03-02', '2026-03-02 17:40:00'),
    (3, 'New laptop', '2026-03-18', NULL),
    (4, 'Password reset', '2026-04-01', '2026-04-01 10:05:00');
"""


def _has(*words: str) -> Callable[[str], bool]:
    return lambda answer: all(word.lower() in answer.lower() for word in words)


def _says_not_found(answer: str) -> bool:
    invented = re.search(r"\d{3,}", answer.replace("2026", ""))
    return (
        invented is None and re.search(r"\b(no|not|n't|none|unknown)\b", answer, re.I) is not None
    )


@dataclass(frozen=True)
class Task:
    """A question and how to tell a right answer."""

    question: str
    is_right: Callable[[str], bool]


TASKS = [
    Task("What is 15% of 240? Use the database to compute it.", _has("36")),
    Task("What is the salary of Zoe Park?", _says_not_found),
    Task("How many tickets were opened in March 2026?", _has("2")),
    # Bo Chen manages Research but works in Sales: joining on dept_id gives Ann Lee.
    Task("Who is the manager of the Research department?", _has("Bo Chen")),
    Task("In which department does Cy Diaz work?", _has("Sales")),
    Task("Which ticket was closed on 2026-03-02? Give its title.", _has("VPN down")),
]


class PlainSqlQuery(SqlQueryTool):
    """``sql_query`` answering as before: columns only, the database's words, no note."""

    def __init__(self, url: str) -> None:
        super().__init__(url, example_values=0)
        self.description = self.description.split(" Foreign keys: ")[0]
        if not self.description.endswith("."):
            self.description += "."

    def _run(self, *args: Any, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        try:
            _content, output = super()._run(*args, **kwargs)
        except (InvalidToolCallError, ToolExecutionError) as error:
            raise type(error)(str(error).split("\n")[0]) from None
        output.pop("note", None)
        from langchain_agent_rules._json_text import compact_json

        return compact_json(output), output


@dataclass
class Run:
    """What one task cost and what came of it."""

    calls: int = 0
    evaluated: int = 0
    answer: str = ""
    queries: list[str] = field(default_factory=list)


class Usage(BaseCallbackHandler):
    """Adds up model calls and evaluated prompt tokens."""

    def __init__(self) -> None:
        self.run = Run()

    def on_llm_end(self, response: LLMResult, **_: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                usage = generation.message.usage_metadata  # type: ignore[attr-defined]
                cached = usage.get("input_token_details", {}).get("cache_read", 0)
                self.run.calls += 1
                self.run.evaluated += usage["input_tokens"] - cached


def run_task(model: Any, tool: SqlQueryTool, task: Task) -> Run:
    agent = create_rules_agent(model, [tool])
    usage = Usage()
    state = agent.invoke({"messages": [HumanMessage(task.question)]}, {"callbacks": [usage]})
    usage.run.answer = state["answer"] or ""
    usage.run.queries = [str(step["args"].get("sql", "")) for step in state["trace"]]
    return usage.run


def sizes(threads: int) -> None:
    import llama_cpp

    from langchain_agent_rules.models.local import ChatLocalLlama

    path = ChatLocalLlama(n_threads=threads).model_path
    vocab = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    url = demo_database_url()
    for label, tool in (("before", PlainSqlQuery(url)), ("after", SqlQueryTool(url))):
        text = tool.description
        tokens = len(vocab.tokenize(text.encode(), add_bos=False))
        print(f"{label:>6}: {len(text.encode())} bytes, {tokens} tokens")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tasks", default="", help="comma-separated task numbers (1-based)")
    parser.add_argument("--sizes", action="store_true", help="only print description sizes")
    parser.add_argument("--only", choices=["plain", "steering"], help="run one variant only")
    args = parser.parse_args()
    if args.sizes:
        sizes(args.threads)
        return

    from langchain_agent_rules.models.local import ChatLocalLlama

    chosen = [int(n) for n in args.tasks.split(",") if n] or list(range(1, len(TASKS) + 1))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "office.db"
        with sqlite3.connect(path) as connection:
            connection.executescript(OFFICE)
        url = f"sqlite:///{path}"
        model = ChatLocalLlama(n_threads=args.threads)
        tools = {"plain": PlainSqlQuery(url), "steering": SqlQueryTool(url)}
        if args.only:
            tools = {args.only: tools[args.only]}
        totals = {name: [0, 0, 0] for name in tools}
        for number in chosen:
            task = TASKS[number - 1]
            print(f"\n{number}. {task.question}")
            for name, tool in tools.items():
                run = run_task(model, tool, task)
                right = task.is_right(run.answer)
                total = totals[name]
                total[0] += right
                total[1] += run.calls
                total[2] += run.evaluated
                print(
                    f"  {name:>8}: {'right' if right else 'WRONG'}  calls {run.calls}  "
                    f"evaluated {run.evaluated}  answer {run.answer[:90]!r}"
                )
                for sql in run.queries:
                    print(f"{'':>12}{sql[:110]}")
        print()
        for name, (right, calls, evaluated) in totals.items():
            print(
                f"{name:>8}: {right}/{len(chosen)} right, {calls} model calls, "
                f"{evaluated} prompt tokens evaluated"
            )


if __name__ == "__main__":
    main()
