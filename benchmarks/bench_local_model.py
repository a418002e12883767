"""The embedded model: our agent next to a plain text-protocol loop over the same model and tools.

Run with ``python benchmarks/bench_local_model.py [--threads N]`` on an otherwise idle
machine (two threads slow down badly when another process is busy); seconds are only
compared within one run, as ratios.

The anchor reproduces the agent as it ran before prefix reuse and the grammar: the same
system prompt (prompt, rules, tools), the history as the text protocol renders it, no
grammar, and llama.cpp's own prompt cache, reset between conversations and reused within
one. It runs on its own ``llama_cpp.Llama`` over the same GGUF file with the same
settings. Per task both print model calls, prompt tokens evaluated (not taken from a
cache), tokens generated (ours: ``+N`` of them forced by the grammar, appended without a
decode step of their own) and seconds; the last columns are ours / anchor.

Ours starts cold (its saved prefixes go to a temporary folder). Last, a one-query
``agent-rules run`` in a new process, twice: cold, then warm from the prefixes the first
process saved on disk.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import LLMResult
from langchain_core.tools import BaseTool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.demo import (
    DEMO_QUESTIONS,
    demo_database_url,
    demo_project_root,
    demo_rules_path,
)
from langchain_agent_rules.middleware.prompts import (
    DEFAULT_SYSTEM_PROMPT,
    PARSE_ERROR,
    UNKNOWN_TOOL,
)
from langchain_agent_rules.models.local import PREFIX_CACHE_DIR_ENV, ChatLocalLlama
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.prompt import read_rules_prompt
from langchain_agent_rules.text_protocol import (
    parse_tool_reply,
    render_tools_prompt,
    to_text_messages,
)
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool

EXTRA_TASKS = [
    ("What does SQL stand for?", None),
    ("In which city does Elena Rossi live?", None),
    ("How many products do we sell?", 2),
    (
        "Read docs/notes.md to find who owns the next release, then look up that customer's "
        "city in the database.",
        None,
    ),
]
MAX_MODEL_CALLS = 6


@dataclass
class Figures:
    """What one task cost."""

    calls: int = 0
    evaluated: int = 0
    generated: int = 0
    forced: int = 0
    seconds: float = 0.0
    answer: str = ""
    tools: list[str] = field(default_factory=list)


class UsageSum(BaseCallbackHandler):
    """Adds up the usage our model reports for every call of a run."""

    def __init__(self) -> None:
        self.figures = Figures()

    def on_llm_end(self, response: LLMResult, **_: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                usage = generation.message.usage_metadata  # type: ignore[attr-defined]
                self.figures.calls += 1
                cached = usage.get("input_token_details", {}).get("cache_read", 0)
                self.figures.evaluated += usage["input_tokens"] - cached
                self.figures.generated += usage["output_tokens"]
                metadata = generation.message.response_metadata  # type: ignore[attr-defined]
                self.figures.forced += metadata["forced_tokens"]


def ours(
    model: ChatLocalLlama, tools: list[BaseTool], rules: Any, task: tuple[str, Any]
) -> Figures:
    question, project_id = task
    agent = create_rules_agent(model, tools, rules=rules, project_id=project_id)
    usage = UsageSum()
    started = time.perf_counter()
    state = agent.invoke({"messages": [HumanMessage(question)]}, {"callbacks": [usage]})
    usage.figures.seconds = time.perf_counter() - started
    usage.figures.answer = state["answer"] or ""
    usage.figures.tools = [step["tool"] for step in state["trace"]]
    return usage.figures


class Anchor:
    """A plain text-protocol loop on its own llama.cpp model, as the agent ran before."""

    def __init__(self, model_path: str, threads: int) -> None:
        import llama_cpp

        self.llama_cpp = llama_cpp
        started = time.perf_counter()
        self.llama = llama_cpp.Llama(
            model_path=model_path,
            n_ctx=4096,
            n_threads=threads,
            n_threads_batch=threads,
            seed=0,
            verbose=False,
        )
        self.load_seconds = time.perf_counter() - started

    def run(self, tools: list[BaseTool], rules: Any, task: tuple[str, Any]) -> Figures:
        question, project_id = task
        parts = [
            DEFAULT_SYSTEM_PROMPT,
            read_rules_prompt(rules, project_id, AgentRuleToolConfig()),
            render_tools_prompt(tools),
        ]
        system = SystemMessage("\n\n".join(part for part in parts if part))
        by_name = {tool.name: tool for tool in tools}
        history: list[BaseMessage] = [HumanMessage(question)]
        figures = Figures()
        started = time.perf_counter()
        self.llama.reset()  # no reuse across conversations, as before
        while figures.calls < MAX_MODEL_CALLS:
            text = self._complete([system, *to_text_messages(history)], figures)
            parsed = parse_tool_reply(text)
            if parsed.final_answer is not None:
                figures.answer = parsed.final_answer
                break
            calls = [
                {"name": call.name, "args": call.args, "id": f"c{figures.calls}-{index}"}
                for index, call in enumerate(parsed.tool_calls)
            ]
            history.append(AIMessage("", tool_calls=calls))
            for call in calls:
                figures.tools.append(call["name"])
                history.append(ToolMessage(self._observe(by_name, call), tool_call_id=call["id"]))
            if parsed.errors and not calls:
                history.append(AIMessage(text))
                history.append(HumanMessage(PARSE_ERROR.format(problem=parsed.errors[0].problem)))
        figures.seconds = time.perf_counter() - started
        return figures

    def _complete(self, messages: list[BaseMessage], figures: Figures) -> str:
        roles = {"system": "system", "human": "user", "ai": "assistant"}
        before = self.llama_cpp.llama_perf_context(self.llama.ctx)
        response = self.llama.create_chat_completion(
            messages=[{"role": roles[m.type], "content": m.text} for m in messages],
            temperature=0.0,
            repeat_penalty=1.0,
            max_tokens=512,
            seed=0,
        )
        after = self.llama_cpp.llama_perf_context(self.llama.ctx)
        generated = response["usage"]["completion_tokens"]
        # llama.cpp counts every evaluated token; the generated ones were evaluated singly.
        evaluated = (after.n_p_eval - before.n_p_eval) + (after.n_eval - before.n_eval)
        figures.calls += 1
        figures.generated += generated
        figures.evaluated += evaluated - generated
        return str(response["choices"][0]["message"]["content"] or "")

    @staticmethod
    def _observe(by_name: dict[str, BaseTool], call: dict[str, Any]) -> str:
        tool = by_name.get(call["name"])
        if tool is None:
            return UNKNOWN_TOOL.format(tool=call["name"], available=", ".join(by_name))
        try:
            return str(tool.invoke(call["args"]))
        except Exception as error:  # a plain loop shows the error to the model
            return f"ERROR: {error}"

    def raw_speed(self) -> tuple[int, float, float]:
        """Prompt tokens, prompt tokens/s and generated tokens/s of one plain completion."""
        prompt = "Summarise this list of order amounts in one sentence: " + ", ".join(
            f"{n}.50 EUR" for n in range(120)
        )
        self.llama.reset()
        before = self.llama_cpp.llama_perf_context(self.llama.ctx)
        self.llama.create_completion(prompt, max_tokens=96, temperature=0, repeat_penalty=1.0)
        after = self.llama_cpp.llama_perf_context(self.llama.ctx)
        prompt_tokens = after.n_p_eval - before.n_p_eval
        generated = after.n_eval - before.n_eval
        return (
            prompt_tokens,
            1000 * prompt_tokens / (after.t_p_eval_ms - before.t_p_eval_ms),
            1000 * generated / (after.t_eval_ms - before.t_eval_ms),
        )


def _ratio(ours: float, anchor: float) -> str:
    return f"{ours / anchor:5.2f}" if anchor else "    -"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    prefixes = tempfile.TemporaryDirectory()
    model = ChatLocalLlama(n_threads=args.threads, prefix_cache_dir=prefixes.name)
    assert model.model_path is not None
    anchor = Anchor(model.model_path, args.threads)
    prompt_tokens, prompt_speed, generation_speed = anchor.raw_speed()
    print(f"threads: {args.threads}, load: {anchor.load_seconds:.2f} s")
    print(
        f"prompt: {prompt_speed:.0f} tokens/s ({prompt_tokens} tokens), "
        f"generation: {generation_speed:.1f} tokens/s"
    )

    tools: list[BaseTool] = [
        SqlQueryTool(demo_database_url(), include_schema=True),
        FileReadTool(demo_project_root()),
    ]
    rules = JsonFileRuleStore(demo_rules_path())
    tasks = [(q.question, q.project_id) for q in DEMO_QUESTIONS] + EXTRA_TASKS
    print()
    print(
        f"{'task':<44} {'ours: calls eval gen+forced s':>31}  {'anchor: calls eval gen s':>26}  "
        "ratio: eval sampled s"
    )
    totals = {"ours": Figures(), "anchor": Figures()}
    for task in tasks:
        base = anchor.run(tools, rules, task)
        mine = ours(model, tools, rules, task)
        for name, figures in (("ours", mine), ("anchor", base)):
            total = totals[name]
            total.calls += figures.calls
            total.evaluated += figures.evaluated
            total.generated += figures.generated
            total.forced += figures.forced
            total.seconds += figures.seconds
        print(_row(task[0][:44], mine, base))
        print(f"{'':<44} ours: {mine.answer[:60]!r} {mine.tools}")
        print(f"{'':<44} anchor: {base.answer[:60]!r} {base.tools}")
    print(_row("all tasks", totals["ours"], totals["anchor"]))
    prefixes.cleanup()
    print()
    new_processes(DEMO_QUESTIONS[0].question)


def new_processes(question: str) -> None:
    """``agent-rules run`` in a new process, cold and then warm from the disk cache."""
    print(f"agent-rules run {question!r}, a new process each time (CLI defaults):")
    with tempfile.TemporaryDirectory() as folder:
        environment = {**os.environ, PREFIX_CACHE_DIR_ENV: str(Path(folder) / "prefix")}
        for label in ("cold", "warm from disk"):
            started = time.perf_counter()
            run = subprocess.run(
                [
                    str(Path(sys.executable).with_name("agent-rules")),
                    "run",
                    question,
                    "--db",
                    demo_database_url(),
                    "--root",
                    str(demo_project_root()),
                    "--store",
                    str(demo_rules_path()),
                    "--checkpoints",
                    str(Path(folder) / "runs.sqlite"),
                    "--json",
                ],
                capture_output=True,
                text=True,
                check=True,
                env=environment,
            )
            seconds = time.perf_counter() - started
            usage = json.loads(run.stdout)["usage"]
            evaluated = usage["input_tokens"] - usage["cached_input_tokens"]
            print(
                f"  {label:<15} {usage['model_calls']} calls, prompt {usage['input_tokens']} "
                f"tokens: {evaluated} evaluated, {usage['cached_input_tokens']} cached; "
                f"{usage['output_tokens']} generated; {seconds:.1f} s with the model's load"
            )


def _row(label: str, mine: Figures, base: Figures) -> str:
    return (
        f"{label:<44} {mine.calls:5d} {mine.evaluated:6d} "
        f"{mine.generated - mine.forced:5d}+{mine.forced:<5d} "
        f"{mine.seconds:6.1f}  {base.calls:7d} {base.evaluated:6d} {base.generated:5d} "
        f"{base.seconds:6.1f}  {_ratio(mine.evaluated, base.evaluated)} "
        f"{_ratio(mine.generated - mine.forced, base.generated)} "
        f"{_ratio(mine.seconds, base.seconds)}"
    )


if __name__ == "__main__":
    main()
