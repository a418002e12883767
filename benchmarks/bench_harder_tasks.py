"""The harder task set on the embedded model: our agent against the anchor, in one run.

Run with ``python benchmarks/bench_harder_tasks.py [--only ours|anchor] [--tasks id,id]
[--json out.json]``. The tasks (``benchmarks/harder_tasks``: an IT service desk with
departments, agents and tickets, a folder of documents and a rules file) are checked
against values computed from the data before anything runs.

Each side runs every task through the public API (``RulesAgent("local", ...)``) in a
process of its own: "ours" imports the package of this checkout, the anchor the agent as
it was at commit ``76701f2``, from a git worktree outside the repo (``--anchor-root``;
made with ``git worktree add`` when missing) put first on ``PYTHONPATH``. Tasks run in
their order in one process, so a task's figures depend on the prefix the one before it
left in the model's cache: compare whole runs, not a task run alone.

Per task and in total: right or wrong, model calls, prompt tokens evaluated (input less
cached), cached, generated, wasted tool calls (a trace status in `WASTED`), and the
seconds of ours as a ratio to the anchor's (the machine's speed varies; tokens do not).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harder_tasks.desk_data import DESK, RULES, DeskData, build_database
from harder_tasks.tasks import TASKS, Task

REPO = Path(__file__).resolve().parents[1]
ANCHOR_COMMIT = "76701f2"
DEFAULT_ANCHOR_ROOT = Path(tempfile.gettempdir()) / f"anchor-{ANCHOR_COMMIT}"
WASTED = frozenset(
    {
        "error",
        "timeout",
        "repeated",
        "repeated_failure",
        "denied",
        "invalid_args",
        "parse_error",
        "unknown_tool",
    }
)
OBSERVATION_CHARS = 300


def select_tasks(ids: str | None) -> list[Task]:
    if not ids:
        return list(TASKS)
    by_id = {task.id: task for task in TASKS}
    unknown = [name for name in ids.split(",") if name not in by_id]
    if unknown:
        sys.exit(f"unknown task ids: {', '.join(unknown)}; the ids are: {', '.join(by_id)}")
    return [by_id[name] for name in ids.split(",")]


def validate(tasks: Sequence[Task], data: DeskData) -> None:
    """Print each task's expected values; stop if the data no longer supports a task."""
    problems = []
    for task in tasks:
        print(f"{task.id:<30} {task.kind:<11} expects {task.expected(data)}")
        problems.extend(f"{task.id}: {problem}" for problem in task.problems(data))
    if problems:
        sys.exit("the data does not support these tasks:\n" + "\n".join(problems))


# The worker: runs in a process whose PYTHONPATH picks the package under test.


def run_tasks(tasks: Sequence[Task], options: dict[str, Any]) -> dict[str, Any]:
    import langchain_agent_rules
    from langchain_agent_rules import (
        AgentRulesError,
        FileReadTool,
        JsonFileRuleStore,
        RulesAgent,
        RunResult,
        SqlQueryTool,
    )

    records = []
    with tempfile.TemporaryDirectory() as folder:
        data = DeskData(build_database(Path(folder) / "helpdesk.sqlite"))
        tools = [SqlQueryTool(f"sqlite:///{data.database}"), FileReadTool(DESK)]
        rules = JsonFileRuleStore(RULES)
        for task in tasks:
            agent = RulesAgent("local", tools, rules=rules, project_id=task.project_id, **options)
            started = time.perf_counter()
            try:
                result = agent.invoke(task.question)
            except AgentRulesError as error:  # a typed end of the run: the task is failed
                result = RunResult(
                    answer=f"raised {type(error).__name__}: {error}", stop_reason=None
                )
            seconds = time.perf_counter() - started
            record = _record(task, result, data, seconds)
            records.append(record)
            print(f"  {_progress(record)}", file=sys.stderr, flush=True)
    return {"package": str(Path(langchain_agent_rules.__file__).parent), "records": records}


def _record(task: Task, result: Any, data: DeskData, seconds: float) -> dict[str, Any]:
    usage = result.usage
    failures = task.failures(result.answer, data)
    return {
        "id": task.id,
        "kind": task.kind,
        "question": task.question,
        "passed": not failures,
        "failures": failures,
        "answer": result.answer,
        "stop_reason": result.stop_reason,
        "model_calls": usage["model_calls"],
        "input_tokens": usage["input_tokens"],
        "cached_tokens": usage["cached_input_tokens"],
        "evaluated_tokens": usage["input_tokens"] - usage["cached_input_tokens"],
        "generated_tokens": usage["output_tokens"],
        "wasted_calls": sum(step["status"] in WASTED for step in result.trace),
        "purposes": [call.get("purpose") for call in getattr(result, "model_calls", [])],
        "steps": [
            {
                "tool": step["tool"],
                "status": step["status"],
                "args": step["args"],
                "observation": str(step["observation"])[:OBSERVATION_CHARS],
            }
            for step in result.trace
        ],
        "seconds": round(seconds, 2),
    }


def _progress(record: dict[str, Any]) -> str:
    verdict = "ok  " if record["passed"] else "FAIL"
    return (
        f"{record['id']:<30} {verdict} calls {record['model_calls']} "
        f"eval {record['evaluated_tokens']} wasted {record['wasted_calls']} "
        f"{record['answer'][:70]!r}"
    )


# The parent: one worker per side, then the table.


def anchor_root(path: Path) -> Path:
    if not path.exists():
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), ANCHOR_COMMIT],
            check=True,
        )
    return path


def run_side(
    name: str, root: Path, tasks: Sequence[Task], options: dict[str, Any] | None = None
) -> dict[str, Any]:
    print(f"\n{name}: {root} {options or ''}", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "records.json"
        command = [sys.executable, __file__, "--worker", str(out)]
        command += ["--tasks", ",".join(task.id for task in tasks)]
        command += ["--options-json", json.dumps(options or {})]
        subprocess.run(command, env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, check=True)
        side = json.loads(out.read_text(encoding="utf-8"))
    if Path(side["package"]).resolve() != (root / "langchain_agent_rules").resolve():
        sys.exit(f"{name} imported {side['package']}, not the package under {root}")
    side["commit"] = _git(root, "rev-parse", "HEAD")
    side["dirty"] = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    return side


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


FIGURES = ("model_calls", "evaluated_tokens", "cached_tokens", "generated_tokens", "wasted_calls")
HEADER = "ok calls  eval cached  gen wasted"


def _cells(records: Sequence[dict[str, Any]]) -> str:
    passed = sum(record["passed"] for record in records)
    ok = f"{passed}/{len(records)}" if len(records) > 1 else ("ok" if passed else "--")
    calls, evaluated, cached, generated, wasted = (
        sum(record[key] for record in records) for key in FIGURES
    )
    return f"{ok:>5} {calls:5d} {evaluated:5d} {cached:6d} {generated:4d} {wasted:6d}"


def print_table(tasks: Sequence[Task], sides: dict[str, dict[str, Any]]) -> None:
    names = list(sides)
    print()
    header = f"{'task':<30} {'kind':<11}" + "".join(f" | {name:>6}: {HEADER}" for name in names)
    if len(names) == 2:
        header += " | s ours/anchor"
    print(header)
    by_side = {name: {r["id"]: r for r in side["records"]} for name, side in sides.items()}
    for task in tasks:
        row = f"{task.id:<30} {task.kind:<11}"
        row += "".join(f" | {'':>6}  {_cells([by_side[name][task.id]])}" for name in names)
        if len(names) == 2:
            row += f" | {_ratio(*(by_side[name][task.id]['seconds'] for name in names))}"
        print(row)
    total = f"{'all tasks':<30} {'':<11}"
    total += "".join(f" | {'':>6}  {_cells(sides[name]['records'])}" for name in names)
    if len(names) == 2:
        total += f" | {_ratio(*(sum(r['seconds'] for r in sides[n]['records']) for n in names))}"
    print(total)
    for name in names:
        for record in sides[name]["records"]:
            if not record["passed"]:
                print(f"\n{name} {record['id']}: {'; '.join(record['failures'])}")
                print(f"  answer: {record['answer'][:200]!r}")
                for step in record["steps"]:
                    print(f"  {step['tool']} {step['status']} {json.dumps(step['args'])[:150]}")


def _ratio(ours: float, anchor: float) -> str:
    return f"{ours / anchor:13.2f}" if anchor else f"{'-':>13}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["ours", "anchor"], help="run one side only")
    parser.add_argument("--tasks", help="comma-separated task ids (default: all)")
    parser.add_argument("--json", type=Path, help="write every figure and answer here")
    parser.add_argument("--anchor-root", type=Path, default=DEFAULT_ANCHOR_ROOT)
    parser.add_argument(
        "--ours-option",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="an AgentOptions field for our side only, e.g. grounded_answers=false",
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--options-json", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    tasks = select_tasks(args.tasks)

    if args.worker:
        side = run_tasks(tasks, json.loads(args.options_json))
        args.worker.write_text(json.dumps(side, default=str), encoding="utf-8")
        return

    with tempfile.TemporaryDirectory() as folder:
        validate(tasks, DeskData(build_database(Path(folder) / "helpdesk.sqlite")))
    sides = {}
    if args.only in (None, "ours"):
        options = {
            name: json.loads(value)
            for name, _, value in (option.partition("=") for option in args.ours_option)
        }
        sides["ours"] = run_side("ours", REPO, tasks, options)
    if args.only in (None, "anchor"):
        sides["anchor"] = run_side("anchor", anchor_root(args.anchor_root), tasks)
    print_table(tasks, sides)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        report = {"anchor_commit": ANCHOR_COMMIT, "sides": sides}
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
