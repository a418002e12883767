"""The ``run``, ``trace`` and ``demo`` commands: the agent on the command line.

``run`` answers one question with the tools its flags enable (``--db`` for ``sql_query``,
``--root`` for ``file_read``, ``--allow-host`` for ``http_get``), showing each step live
and the answer as the model writes it, and stores the run in a SQLite checkpoint file
so ``trace THREAD`` can print it later and ``--thread`` can continue it. What the rules'
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
import sqlite3
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from rich.console import Console
from rich.markup import escape
from rich.status import Status
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from langchain_agent_rules.agent.facade import RulesAgent
from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.postgres_checkpoints import (
    is_postgres_url,
    open_postgres_checkpointer,
    redacted,
)
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.cli._display import print_result, print_step, trace_table
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
from langchain_agent_rules.models.weights import cache_dir
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.open import open_rule_store
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.http_get import HttpGetTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool

__all__ = ["default_checkpoints_path", "register"]


def default_checkpoints_path() -> Path:
    """Where runs are stored when ``--checkpoints`` is not given: the cache folder."""
    return cache_dir() / "runs.sqlite"


def register(subparsers: Any) -> None:
    """Add the ``run``, ``trace`` and ``demo`` commands to the ``agent-rules`` parser."""
    run = subparsers.add_parser(
        "run",
        help="answer a question with the agent, showing each step",
        description="Answer a question with the agent, showing each step as it happens.",
    )
    run.add_argument("question", help="the question or task")
    _add_model_option(run)
    run.add_argument("--db", metavar="URL", help="SQLAlchemy URL of a database (sql_query)")
    run.add_argument("--root", metavar="DIR", help="project folder the agent may read (file_read)")
    run.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a host the agent may fetch from (http_get); repeatable, *.example.com allowed",
    )
    run.add_argument("--rules", metavar="PATH", help="a JSON rules file or a rule store URL")
    run.add_argument("--thread", metavar="ID", help="continue or name this conversation")
    _add_checkpoints_option(run)
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    add_agent_options(run)
    run.set_defaults(handler=_run_command)

    trace = subparsers.add_parser(
        "trace",
        help="print the stored trace of a run",
        description="Print the tool calls of the last run of a thread.",
    )
    trace.add_argument("thread", help="the thread id that run printed")
    _add_checkpoints_option(trace)
    trace.add_argument("--json", action="store_true", help="print the trace as JSON")
    trace.set_defaults(handler=_trace_command)

    demo = subparsers.add_parser(
        "demo",
        help="the agent on shipped example data (a shop database, files, rules)",
        description="Answer four example questions on a shipped shop database, project "
        "files and rules file, showing each step and what the rules' checks did.",
    )
    demo.add_argument(
        "--export",
        metavar="DIR",
        type=Path,
        help="write the demo data into DIR (shop.db, project/, rules.json) and stop; "
        "the examples in the docs use these files",
    )
    _add_model_option(demo)
    _add_checkpoints_option(demo)
    # Each demo question names the project whose rules apply.
    add_agent_options(demo, exclude=("project_id",))
    demo.set_defaults(handler=_demo_command)


def _add_model_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        default="local",
        help='the chat model: "local" (default, the embedded model), "local:/path/model.gguf" '
        'or "ollama:<name>"',
    )


def _add_checkpoints_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--checkpoints",
        metavar="PATH_OR_URL",
        help="SQLite file where runs are stored (default: runs.sqlite in the cache folder), "
        "or a postgresql:// URL shared by several workers",
    )


def _run_command(args: argparse.Namespace) -> int:
    # Checked before the model loads, so a typo costs no load time.
    options = agent_options(args)
    tools = _tools(args.db, args.root, args.allow_host)
    rules = _rules(args.rules)
    console = Console(highlight=False)
    with _checkpointer(args.checkpoints) as saver:
        model = _load_model(args.model, console, quiet=args.json)
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
    where = redacted(args.checkpoints) if is_postgres_url(args.checkpoints) else None
    if where is None:
        path = Path(args.checkpoints) if args.checkpoints else default_checkpoints_path()
        if not path.is_file():
            raise AgentConfigurationError(
                f"no checkpoint file at {path}; runs are stored there by agent-rules run"
            )
        where = str(path)
    with _checkpointer(args.checkpoints) as saver:
        stored = saver.get_tuple({"configurable": {"thread_id": args.thread}})
    if stored is None:
        raise AgentConfigurationError(f"no run stored for thread {args.thread!r} in {where}")
    trace = list(stored.checkpoint["channel_values"].get("trace") or [])
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
    tools: list[BaseTool] = [
        SqlQueryTool(demo_database_url(), include_schema=True),
        FileReadTool(demo_project_root()),
    ]
    rules = JsonFileRuleStore(demo_rules_path())
    console.print(
        f"[bold]Demo[/bold]: a shop database (sql_query), the project folder "
        f"{demo_project_root()} (file_read) and the rules in {demo_rules_path()}"
    )
    with _checkpointer(args.checkpoints) as saver:
        model = _load_model(args.model, console, quiet=False)
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
    try:
        files = export_demo(folder)
    except (FileExistsError, OSError) as error:
        raise AgentConfigurationError(f"cannot export the demo data: {error}") from None
    console.print(
        f"Wrote the demo data into {folder}: {files.database.name} (sqlite:///{files.database.name}"
        f"), {files.project.name}/ and {files.rules.name}"
    )
    return 0


def _tools(db: str | None, root: str | None, allowed_hosts: list[str]) -> list[BaseTool]:
    tools: list[BaseTool] = []
    if db is not None:
        _check_sqlite_file_exists(db)
        tools.append(SqlQueryTool(db, include_schema=True))
    if root is not None:
        tools.append(FileReadTool(root))
    if allowed_hosts:
        tools.append(HttpGetTool(allowed_hosts=allowed_hosts))
    return tools


def _check_sqlite_file_exists(db: str) -> None:
    """SQLite would create a missing file and the agent would see an empty database."""
    try:
        url = make_url(db)
    except ArgumentError:
        return  # SqlQueryTool reports the malformed URL
    database = url.database or ":memory:"
    if (
        url.get_backend_name() == "sqlite"
        and database != ":memory:"
        and not Path(database).is_file()
    ):
        raise AgentConfigurationError(f"--db: no SQLite database file at {url.database}")


def _rules(spec: str | None) -> RuleReader | None:
    if spec is None:
        return None
    if "://" not in spec and not Path(spec).is_file():
        raise AgentConfigurationError(f"--rules: no rules file at {spec}")
    return open_rule_store(spec)


@contextmanager
def _checkpointer(spec: str | None) -> Iterator[BaseCheckpointSaver[Any]]:
    if is_postgres_url(spec):
        with open_postgres_checkpointer(spec) as postgres_saver:
            yield postgres_saver
        return
    target = Path(spec) if spec else default_checkpoints_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(target, check_same_thread=False)
        saver = SqliteSaver(connection)
        saver.setup()
    except (OSError, sqlite3.Error) as error:
        raise AgentConfigurationError(
            f"--checkpoints: cannot use {target} as a SQLite checkpoint file: {error}"
        ) from None
    try:
        yield saver
    finally:
        connection.close()


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
        if not (isinstance(request, dict) and request.get("type") == "tool_approval"):
            return "reject"
        if self.status is not None:
            self.status.stop()
        args = json.dumps(request.get("args"), ensure_ascii=False)
        self._console.print(
            f"[bold]{escape(str(request.get('tool')))}[/bold] {escape(args)}", highlight=False
        )
        for rule in request.get("rules") or []:
            self._console.print(
                f"[yellow]asked by rule {escape(str(rule['id']))}: "
                f"{escape(str(rule['content']))}[/yellow]",
                highlight=False,
            )
        try:
            answer = input("run this tool call? [y/N] ") if sys.stdin.isatty() else ""
        except EOFError:
            answer = ""
        if self.status is not None:
            self.status.start()
        if answer.strip().lower() in ("y", "yes"):
            return "approve"
        return {"action": "reject", "reason": "refused on the command line"}


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
            if "step" in event:
                steps.append(event)
                print_step(console, event)
            elif "answer_delta" in event:
                if not shown:
                    status.stop()
                shown.append(event["answer_delta"])
                console.out(event["answer_delta"], end="", highlight=False)
            else:
                summary = event
        approval.status = None
    result = dataclasses.replace(RunResult.from_state(summary, thread_id), trace=steps)
    print_result(console, result, shown="".join(shown))
    return result
