"""The ``run``, ``trace`` and ``demo`` commands: the agent on the command line.

``run`` answers one question with the tools its flags enable (``--db`` for ``sql_query``,
``--root`` for ``file_read``, ``--allow-host`` for ``http_get``), showing each step live
and the answer as the model writes it, and stores the run in a checkpoint file (or a
PostgreSQL database) so ``trace THREAD`` can print it later and ``--thread`` can continue
it. Every flag is checked before the model loads (`cli._inputs`). What the rules'
checks did is shown after the answer (one line per rule event) and beside each tool
call. ``demo`` runs the four example questions on the shipped demo data. Both take every
`AgentOptions` field as a flag (``--max-iterations``, ``--max-total-tokens``, ...); a tool
named in ``--require-approval``, or a call a rule's check sends to a human, asks on the
terminal before it runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import uuid
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from rich.console import Console
from rich.markup import escape
from rich.status import Status

from langchain_agent_rules.agent.facade import RulesAgent
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.cli._display import print_result, print_step, trace_table
from langchain_agent_rules.cli._inputs import (
    checkpoint_target,
    open_checkpointer,
    rule_store,
    run_tools,
    stored_checkpoints,
)
from langchain_agent_rules.cli._options import add_agent_options, agent_options
from langchain_agent_rules.demo import (
    DEMO_QUESTIONS,
    demo_database_url,
    demo_project_root,
    demo_rules_path,
    export_demo,
)
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.models.resolve import resolve_chat_model
from langchain_agent_rules.options import AgentOptions
from langchain_agent_rules.postgres_checkpoints import redacted
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.testing import ScriptedChatModel
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool

__all__ = ["register"]


RUN_DESCRIPTION = """\
Answer a question with the agent, showing each tool call as it happens and the
answer as the model writes it. The flags give it its tools: --db a database
(sql_query), --root a folder (file_read), --allow-host the hosts it may fetch
from (http_get); --store gives it rules. Each run is stored (--checkpoints):
agent-rules trace THREAD prints it later, --thread continues it.

Every flag is checked before the model loads: a wrong value is one error line,
exit code 1, and nothing is written."""
RUN_EPILOG = """\
examples (in the folder agent-rules demo --export demo writes; cd demo first):
  agent-rules run "How many active customers do we have?" --db sqlite:///shop.db
  agent-rules run "When does the next release ship?" --root project
  agent-rules run "What is the total amount of all orders?" \\
      --db sqlite:///shop.db --store rules.json --project-id 1
  agent-rules run "Which customers live in Lyon?" --db sqlite:///shop.db \\
      --thread lyon --require-approval sql_query
  agent-rules run "And in Paris?" --db sqlite:///shop.db --thread lyon
  agent-rules run "How many products are there?" --db sqlite:///shop.db --json

where rules and runs live:
  --store         rules.json, sqlite:///rules.db or postgresql://user:pw@host/db
  --checkpoints   runs.sqlite or postgresql://user:pw@host/db
                  (default: runs.sqlite in the cache folder)"""

TRACE_DESCRIPTION = """\
Print the tool calls of a thread's last run: each call's arguments, status,
time, what it returned and what the rules' checks did to it. Runs are read
from where agent-rules run stored them (--checkpoints, the same default)."""
TRACE_EPILOG = """\
examples:
  agent-rules trace lyon          the last run of the thread named "lyon"
  agent-rules trace lyon --json   its steps as JSON"""

DEMO_DESCRIPTION = """\
Answer four example questions on shipped demo data: a shop database (sql_query),
a project folder (file_read) and a rules file whose checks redact e-mail
addresses, require EUR amounts in project 1 and French in project 2. Shows each
step and what the rules' checks did. --export writes the same data into a
folder of yours, for the examples of run and of the docs."""
DEMO_EPILOG = """\
examples:
  agent-rules demo                            on the embedded model
  agent-rules demo --model ollama:qwen2.5:7b  on an Ollama model
  agent-rules demo --export demo              writes the demo data into demo/"""

MODEL_HELP = (
    'the chat model: "local" (the embedded model, default), "local:/path/model.gguf" '
    'or "ollama:<name>"'
)
CHECKPOINTS_HELP = (
    "where runs are stored: a SQLite file (default: runs.sqlite in the cache folder) "
    "or a postgresql:// URL shared by several workers"
)
STORE_HELP = (
    "the rules to follow: a JSON rules file, or a database URL such as sqlite:///rules.db "
    "or postgresql://user:password@host/db (default: no rules)"
)
EXPORT_EXISTS_TEMPLATE = "--export: {folder} is a file; give a folder (it is created if missing)"


def register(subparsers: Any) -> None:
    """Add the ``run``, ``trace`` and ``demo`` commands to the ``agent-rules`` parser."""
    run = subparsers.add_parser(
        "run",
        help="answer a question with the agent, showing each step",
        description=RUN_DESCRIPTION,
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("question", help="the question or task, in quotes")
    _add_model_option(run)
    run.add_argument(
        "--db",
        metavar="URL",
        help="the database sql_query may read: sqlite:///PATH or "
        "postgresql://user:password@host/db",
    )
    run.add_argument("--root", metavar="DIR", help="the folder whose files file_read may read")
    run.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a host http_get may fetch from, such as api.example.com or *.example.com "
        "(its subdomains); repeatable",
    )
    run.add_argument("--store", "--rules", dest="store", metavar="PATH_OR_URL", help=STORE_HELP)
    run.add_argument(
        "--thread",
        metavar="ID",
        help="continue this conversation, or name a new one (default: a new random id)",
    )
    _add_checkpoints_option(run)
    run.add_argument(
        "--json", action="store_true", help="print the run's result as JSON, nothing live"
    )
    add_agent_options(run)
    run.set_defaults(handler=_run_command)

    trace = subparsers.add_parser(
        "trace",
        help="print the tool calls of a stored run",
        description=TRACE_DESCRIPTION,
        epilog=TRACE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    trace.add_argument("thread", help="the thread id agent-rules run printed after its answer")
    _add_checkpoints_option(trace)
    trace.add_argument("--json", action="store_true", help="print the steps as JSON")
    trace.set_defaults(handler=_trace_command)

    demo = subparsers.add_parser(
        "demo",
        help="the agent on shipped example data (a shop database, files, rules)",
        description=DEMO_DESCRIPTION,
        epilog=DEMO_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--export",
        metavar="DIR",
        type=Path,
        help="write the demo data into DIR (shop.db, project/, rules.json; never over "
        "existing files) and stop",
    )
    _add_model_option(demo)
    _add_checkpoints_option(demo)
    # Each demo question names the project whose rules apply.
    add_agent_options(demo, exclude=("project_id",))
    demo.set_defaults(handler=_demo_command)


def _add_model_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="local", metavar="MODEL", help=MODEL_HELP)


def _add_checkpoints_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkpoints", metavar="PATH_OR_URL", help=CHECKPOINTS_HELP)


def _run_command(args: argparse.Namespace) -> int:
    # Everything is checked before the model loads, so a typo costs no load time.
    options = agent_options(args)
    tools = run_tools(args.db, args.root, args.allow_host)
    rules = None if args.store is None else rule_store(args.store, options.project_id)
    checkpoints = checkpoint_target(args.checkpoints)
    console = Console(highlight=False)
    model = _load_model(args.model, console, quiet=args.json)
    with open_checkpointer(checkpoints) as saver:
        approval = _TerminalApproval()
        agent = RulesAgent(
            model, tools, rules=rules, approve=approval, checkpointer=saver, options=options
        )
        thread_id = args.thread or uuid.uuid4().hex[:12]
        result = _ask(agent, args.question, thread_id, console, approval, live=not args.json)
    if args.json:
        print(json.dumps(dataclasses.asdict(result), ensure_ascii=False))
    return 0


def _trace_command(args: argparse.Namespace) -> int:
    checkpoints = stored_checkpoints(args.checkpoints)
    config: RunnableConfig = {"configurable": {"thread_id": args.thread}}
    with open_checkpointer(checkpoints) as saver:
        # The trace is a delta channel: the agent's graph reads it back from the checkpoints.
        reader = RulesAgent(ScriptedChatModel(), checkpointer=saver)
        stored = saver.get_tuple(config)
        trace = reader.trace(args.thread) if stored is not None else []
    if stored is None:
        where = redacted(checkpoints) if isinstance(checkpoints, str) else checkpoints
        raise AgentConfigurationError(f"no run stored for thread {args.thread!r} in {where}")
    if args.json:
        print(json.dumps(trace, ensure_ascii=False))
    elif not trace:
        print(f"thread {args.thread}: the last run called no tools")
    else:
        Console(highlight=False).print(trace_table(args.thread, trace))
    return 0


def _demo_command(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    if args.export is not None:
        return _export_demo(args.export, console)
    options = agent_options(args)
    checkpoints = checkpoint_target(args.checkpoints)
    tools: list[BaseTool] = [
        SqlQueryTool(demo_database_url(), include_schema=True),
        FileReadTool(demo_project_root()),
    ]
    rules = JsonFileRuleStore(demo_rules_path())
    console.print(
        f"[bold]Demo[/bold]: a shop database (sql_query), the project folder "
        f"{demo_project_root()} (file_read) and the rules in {demo_rules_path()}"
    )
    model = _load_model(args.model, console, quiet=False)
    with open_checkpointer(checkpoints) as saver:
        approval = _TerminalApproval()
        for demo in DEMO_QUESTIONS:
            agent = RulesAgent(
                model,
                tools,
                rules=rules,
                approve=approval,
                checkpointer=saver,
                options=AgentOptions.resolve(options, {"project_id": demo.project_id}),
            )
            scope = "global rules" if demo.project_id is None else f"project {demo.project_id}"
            console.rule(f"{demo.question} [dim]({scope})[/dim]")
            thread_id = uuid.uuid4().hex[:12]
            _ask(agent, demo.question, thread_id, console, approval, live=True)
    return 0


def _export_demo(folder: Path, console: Console) -> int:
    if folder.exists() and not folder.is_dir():
        raise AgentConfigurationError(EXPORT_EXISTS_TEMPLATE.format(folder=folder))
    try:
        files = export_demo(folder)
    except OSError as error:
        raise AgentConfigurationError(f"--export: {error}") from None
    console.print(
        f"Wrote the demo data into {folder}: {files.database.name} (sqlite:///{files.database.name}"
        f"), {files.project.name}/ and {files.rules.name}"
    )
    return 0


def _load_model(spec: str, console: Console, *, quiet: bool) -> BaseChatModel:
    status = nullcontext() if quiet else console.status(f"loading model {spec}…")
    with status:
        return resolve_chat_model(spec)


class _TerminalApproval:
    """Answers approval requests on the terminal (``--require-approval``)."""

    def __init__(self) -> None:
        self.status: Status | None = None
        self._console = Console(stderr=True, highlight=False)

    def __call__(self, request: Any) -> Any:
        if not (isinstance(request, dict) and request.get("action_requests")):
            return "reject"
        if self.status is not None:
            self.status.stop()
        [action] = request["action_requests"]
        args = json.dumps(action.get("args"), ensure_ascii=False)
        self._console.print(
            f"[bold]{escape(str(action.get('name')))}[/bold] {escape(args)}", highlight=False
        )
        for line in str(action.get("description") or "").splitlines()[1:]:
            self._console.print(f"[yellow]{escape(line)}[/yellow]", highlight=False)
        try:
            answer = input("run this tool call? [y/N] ") if sys.stdin.isatty() else ""
        except EOFError:
            answer = ""
        if self.status is not None:
            self.status.start()
        if answer.strip().lower() in ("y", "yes"):
            return "approve"
        return {"type": "reject", "message": "refused on the command line"}


def _ask(
    agent: RulesAgent,
    question: str,
    thread_id: str,
    console: Console,
    approval: _TerminalApproval,
    *,
    live: bool,
) -> RunResult:
    """Run one question; when ``live``, show each tool call and the answer as they come."""
    if not live:
        return agent.invoke(question, thread_id=thread_id)
    steps: list[Any] = []
    shown: list[str] = []
    summary: dict[str, Any] = {}
    with console.status("thinking…") as status:
        approval.status = status
        for event in agent.stream(question, thread_id=thread_id, answer_deltas=True):
            if event["type"] == "step":
                steps.append(event["step"])
                print_step(console, event["step"])
            elif event["type"] == "answer_delta":
                if not shown:
                    status.stop()
                shown.append(event["text"])
                console.out(event["text"], end="", highlight=False)
            else:
                summary = dict(event)
        approval.status = None
    result = dataclasses.replace(RunResult.from_state(summary, thread_id), trace=steps)
    print_result(console, result, shown="".join(shown))
    return result
