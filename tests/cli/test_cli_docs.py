"""docs/cli.md and docs/errors.md say what the code does.

docs/cli.md: every option of every command is documented, and its shell blocks run as
written, in order, from an empty folder (commands that need a model run up to it, with
a model that cannot load). docs/errors.md: each message it quotes is produced, word for
word, by the input this test gives.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import socket
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.memory import InMemoryStore

from langchain_agent_rules import (
    FileReadTool,
    HttpGetTool,
    JsonFileRuleStore,
    Rule,
    RulesAgent,
    SqlQueryTool,
    create_rules_agent,
    open_rule_store,
    resolve_chat_model,
)
from langchain_agent_rules.cli import build_parser, main
from langchain_agent_rules.demo import demo_database_url
from langchain_agent_rules.middleware.prompts import TOOL_DENIED, TOOL_TIMEOUT, UNKNOWN_TOOL
from langchain_agent_rules.models._cpu_probe import run_probe
from langchain_agent_rules.models._llama_runner import room_for_reply
from langchain_agent_rules.models.local import _grammar_functions
from langchain_agent_rules.postgres_checkpoints import open_postgres_checkpointer
from langchain_agent_rules.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[2]
CLI_DOC = ROOT / "docs" / "cli.md"
ERRORS_DOC = ROOT / "docs" / "errors.md"
MISSING_MODEL = "local:/nonexistent.gguf"
MODEL_ERRORS = ("no GGUF model file at /nonexistent.gguf", "the local model needs llama-cpp-python")
DOC_FOLDER = "/home/me/demo"


def fenced_blocks(text: str, language: str) -> list[str]:
    """The contents of the fenced blocks tagged ``language`` ("" for untagged ones)."""
    blocks: list[str] = []
    current: list[str] | None = None
    tag = ""
    for line in text.splitlines():
        if current is None and line.startswith("```"):
            current, tag = [], line.removeprefix("```").strip()
        elif current is not None and line == "```":
            if tag == language:
                blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the console script, named by its command line."""
    todo = [("agent-rules", build_parser())]
    while todo:
        name, parser = todo.pop()
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend((f"{name} {sub}", child) for sub, child in action.choices.items())


def test_every_command_and_option_is_in_docs_cli() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    for name, parser in parsers():
        assert f"`{name}" in text or name.split()[-1] in text, name
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in text, f"{name} {option}"


def test_every_command_line_in_the_docs_is_a_bash_block() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    for language in ("python", "", "sh", "shell", "console"):
        for block in fenced_blocks(text, language):
            assert "agent-rules " not in block, block


def shell_commands(text: str) -> list[list[str]]:
    """The commands of the ```bash blocks, in order, continuations joined."""
    commands: list[str] = []
    for block in fenced_blocks(text, "bash"):
        for line in block.splitlines():
            if commands and commands[-1].endswith("\\"):
                commands[-1] = commands[-1][:-1] + line.strip()
            elif line.strip():
                commands.append(line.strip())
    return [shlex.split(command, comments=True) for command in commands]


def store_a_run(thread_id: str) -> None:
    """A run of ``thread_id`` in the default checkpoint file, for the docs' trace examples."""
    from langchain_agent_rules.cli._inputs import default_checkpoints_path

    path = default_checkpoints_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    query = "SELECT name FROM customers WHERE city = 'Lyon'"
    call = '```tool\n{"tool": "sql_query", "args": {"sql": "' + query + '"}}\n```'
    model = ScriptedChatModel([call, "FINAL: Alice Martin."])
    with sqlite3.connect(path, check_same_thread=False) as connection:
        agent = create_rules_agent(
            model,
            [SqlQueryTool(demo_database_url())],
            protocol="text",
            checkpointer=SqliteSaver(connection),
        )
        agent.invoke(
            {"messages": [HumanMessage("Lyon?")]}, {"configurable": {"thread_id": thread_id}}
        )


def test_the_shell_examples_run_as_written_from_an_empty_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENT_RULES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    store_a_run("lyon")
    ran = 0
    for command in shell_commands(CLI_DOC.read_text(encoding="utf-8")):
        if next(word for word in command if "=" not in word) == "pip":  # after VAR=value
            continue
        if command[0] == "cd":
            monkeypatch.chdir(command[1])
            continue
        assert command[0] == "agent-rules", command
        args = command[1:]
        needs_model = args[0] == "run" or (args[0] == "demo" and "--export" not in args)
        if needs_model:
            args = [*args, "--model", MISSING_MODEL]
        try:
            code = main(args)
        except SystemExit as exit_:  # --help, --version
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        shown = shlex.join(command)
        if needs_model:
            assert code == 1, shown
            assert captured.err.removeprefix("agent-rules: error: ").startswith(MODEL_ERRORS), (
                shown,
                captured.err,
            )
        else:
            assert (code, captured.err) == (0, ""), shown
        ran += 1
    assert ran >= 20


# --- docs/errors.md -------------------------------------------------------------------


def quoted_messages() -> set[str]:
    text = ERRORS_DOC.read_text(encoding="utf-8")
    return {line for block in fenced_blocks(text, "text") for line in block.splitlines()}


def error_of(action: Callable[[], Any]) -> str:
    try:
        action()
    except Exception as error:
        return str(error)
    raise AssertionError("no error")


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENT_RULES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--export", "demo"]) == 0
    monkeypatch.chdir(tmp_path / "demo")
    (tmp_path / "demo" / "bad.json").write_text("[{,]")
    return tmp_path / "demo"


@pytest.fixture
def studio() -> ModuleType:
    spec = importlib.util.spec_from_file_location("studio_graph_docs", ROOT / "graphs/agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_every_api_message_in_docs_errors_is_the_real_one(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedChatModel
    sql = SqlQueryTool("sqlite:///shop.db", handle_tool_error=False)
    files = FileReadTool("project", handle_tool_error=False)
    port = closed_port()
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{port}")
    store = JsonFileRuleStore("rules.json")
    call = '```tool\n{"tool": "sql_query", "args": {"sql": "SELECT 1"}}\n```'
    actions: list[Callable[[], Any]] = [
        lambda: sql.invoke({"sql": "DELETE FROM customers"}),
        lambda: sql.invoke({"sql": "SELECT 1; SELECT 2"}),
        lambda: sql.invoke({"query": "SELECT 1"}),
        lambda: sql.invoke({"sql": "SELECT nope FROM customers"}),
        lambda: files.invoke({"path": "../shop.db"}),
        lambda: files.invoke({"path": "nope.md"}),
        lambda: files.invoke({"path": ".env"}),
        lambda: HttpGetTool(["api.example.com"], handle_tool_error=False).invoke(
            {"url": "https://evil.example.org/"}
        ),
        lambda: HttpGetTool(handle_tool_error=False).invoke({"url": "http://127.0.0.1/"}),
        lambda: HttpGetTool(handle_tool_error=False).invoke({"url": "file:///etc/passwd"}),
        lambda: RulesAgent(model([]), max_iterations=0),
        lambda: RulesAgent(model([]), max_iteration=3),
        lambda: create_rules_agent(model([]), [sql], require_approval=["send_email"]),
        lambda: create_rules_agent(model([]), [sql], require_approval=["sql_query"]),
        lambda: RulesAgent(model(["FINAL: x"])).invoke("Hi", thread_id="t"),
        lambda: resolve_chat_model("gpt4all-nonsense"),
        lambda: _grammar_functions([], "any"),
        lambda: SqlQueryTool("sqlite:///shop.db", max_rows=0),
        lambda: SqlQueryTool("sqlite:///missing.db"),
        lambda: SqlQueryTool("shop.db"),
        lambda: FileReadTool("missing"),
        lambda: HttpGetTool(allowed_hosts=["*"]),
        lambda: Rule(id="x", type="rule", target="output", content="short"),
        lambda: Rule(
            id="no_mail",
            type="prohibition",
            target="output",
            content="Never reveal addresses.",
            check={"forbid": "mail"},
        ),
        lambda: Rule(
            id="no_mail",
            type="prohibition",
            target="tool",
            content="Never reveal addresses.",
            check={"forbid": "email"},
        ),
        lambda: store.create(
            Rule(id="long_rule", type="guideline", target="output", content="x" * 600)
        ),
        lambda: RulesAgent(
            model([call] * 3), [sql], protocol="text", max_iterations=1, on_limit="raise"
        ).invoke("Hi"),
        lambda: room_for_reply(5012, 4096),
        lambda: run_probe([sys.executable, "-c", "import os; os.kill(os.getpid(), 4)"]),
        lambda: resolve_chat_model("ollama:qwen2.5:7b"),
        lambda: open_rule_store("nope.json"),
        lambda: JsonFileRuleStore("nope.json"),
        lambda: (os.mkfifo("pipe.json"), JsonFileRuleStore("pipe.json")),
        lambda: open_rule_store("mongodb://x/y"),
        lambda: JsonFileRuleStore("bad.json").get_all(),
        lambda: store.get("nope"),
        lambda: store.create(store.get("no_email_addresses")),
        lambda: open_postgres_checkpointer("postgresql://agent:s3cret@[::1/db").__enter__(),
    ]
    quoted = quoted_messages()
    for action in actions:
        message = error_of(action)
        message = message.replace(str(demo), DOC_FOLDER)
        message = message.replace(f"127.0.0.1:{port}", "127.0.0.1:11434")
        assert all(line in quoted for line in message.splitlines()), message


def test_every_observation_template_in_docs_errors_is_the_real_one() -> None:
    quoted = quoted_messages()
    assert UNKNOWN_TOOL.format(tool="sql", available="sql_query, file_read") in quoted
    assert TOOL_TIMEOUT.format(tool="http_get", seconds=30.0) in quoted
    denied = TOOL_DENIED.format(
        rule_id="no_deletes", tool="sql_query", content="Never delete rows."
    )
    assert denied.splitlines()[0] in quoted


CLI_CASES = [
    ["run", "Hi", "--project-id", "0"],
    ["run", "Hi", "--allow-host", "*"],
    ["run", "Hi", "--db", "shop.db"],
    ["run", "Hi", "--db", "mysql://u@127.0.0.1/shop"],
    ["run", "Hi", "--db", "sqlite:///missing.db"],
    ["run", "Hi", "--root", "missing"],
    ["run", "Hi", "--store", "missing.json"],
    ["run", "Hi", "--checkpoints", "foo://bar"],
    ["run", "Hi", "--checkpoints", "project"],
    ["demo", "--export", "."],
    ["run", "Hi", "--max-iterations", "many"],
    ["rules", "list", "--store", "r\udcffules.json"],
]


def test_every_command_line_message_in_docs_errors_is_the_real_one(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quoted = quoted_messages()
    for args in CLI_CASES:
        if args[0] == "run":
            args = [*args, "--model", MISSING_MODEL]
        try:
            assert main(args) == 1
        except SystemExit as exit_:
            assert exit_.code == 1
        line = capsys.readouterr().err.rstrip("\n").replace(str(demo), DOC_FOLDER)
        assert line in quoted, line


def test_every_studio_message_in_docs_errors_is_the_real_one(studio: ModuleType) -> None:
    quoted = quoted_messages()
    contexts: list[dict[str, Any]] = [
        {"max_iterations": "many"},
        {"rules": "/missing/rules.json"},
        {"file_root": "/missing"},
        {"allowed_hosts": ["*"]},
        {"model": "gpt4all-nonsense"},
    ]
    for context in contexts:
        scripted = {} if "model" in context else {"scripted_replies": []}
        message = error_of(
            lambda context=context, scripted=scripted: studio.build_agent(
                studio.parse_context({**scripted, **context}), InMemoryStore()
            )
        )
        assert all(line in quoted for line in message.splitlines()), message


def test_the_tree_in_docs_errors_is_the_one_in_the_errors_module() -> None:
    from langchain_agent_rules import errors

    [tree] = [
        block
        for block in fenced_blocks(ERRORS_DOC.read_text(encoding="utf-8"), "text")
        if block.startswith("AgentRulesError")
    ]
    assert errors.__doc__ is not None
    docstring_tree = "\n".join(
        line.removeprefix("    ")
        for line in errors.__doc__.splitlines()
        if line.startswith("    ") and ("AgentRulesError" in line or line.lstrip()[:1] in "│├└")
    )
    assert tree == docstring_tree
    names = {word for word in tree.split() if word.endswith("Error") and word[0].isupper()}
    assert names == set(errors.__all__)


def test_the_python_blocks_of_docs_errors_run(capsys: pytest.CaptureFixture[str]) -> None:
    for block in fenced_blocks(ERRORS_DOC.read_text(encoding="utf-8"), "python"):
        exec(compile(block, str(ERRORS_DOC), "exec"), {})
    assert capsys.readouterr().out == (
        "invalid agent options (max_iterations: Input should be greater than or equal to 1, "
        "got 0)\n"
    )
