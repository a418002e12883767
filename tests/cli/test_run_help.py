"""``run``, ``trace`` and ``demo`` help: a description, examples that work, help on every option.

The examples are run as written in the folder ``agent-rules demo --export demo`` writes:
``trace``'s and ``demo --export``'s to the end; ``run``'s and ``demo``'s up to the model,
with a model that cannot load, so every flag of theirs is shown to pass its checks.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.cli import build_parser, main
from langchain_agent_rules.testing import ScriptedChatModel
from langchain_agent_rules.tools.sql_query import SqlQueryTool

COMMANDS = ["run", "trace", "demo"]
MISSING_MODEL = "local:/nonexistent.gguf"
MODEL_ERRORS = ("no GGUF model file at /nonexistent.gguf", "the local model needs llama-cpp-python")


def parser_of(command: str) -> argparse.ArgumentParser:
    [subcommands] = [
        action
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    parser: argparse.ArgumentParser = subcommands.choices[command]
    return parser


def help_of(capsys: pytest.CaptureFixture[str], command: str) -> str:
    with pytest.raises(SystemExit) as caught:
        main([command, "--help"])
    assert caught.value.code == 0
    return capsys.readouterr().out


def examples_in(help_text: str) -> list[list[str]]:
    """The command lines under "examples", continuations joined, comments (after 2 spaces) cut."""
    _, _, section = help_text.partition("\nexamples")
    commands: list[str] = []
    for line in section.splitlines()[1:]:
        if not line.startswith("  "):
            break
        if commands and commands[-1].endswith("\\"):
            commands[-1] = commands[-1][:-1] + line.strip()
        else:
            commands.append(re.split(r"\s{2,}", line.strip())[0])
    return [shlex.split(command) for command in commands]


@pytest.mark.parametrize("command", COMMANDS)
def test_each_help_page_has_a_description_and_examples_of_its_command(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    help_text = help_of(capsys, command)

    description = parser_of(command).description
    assert description and description.split("\n")[0] in help_text
    examples = examples_in(help_text)
    assert examples and all(example[:2] == ["agent-rules", command] for example in examples)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_help_page_fits_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv("COLUMNS", "80")

    help_text = help_of(capsys, command)

    assert max(len(line) for line in help_text.splitlines()) <= 80


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_and_argument_has_help(command: str) -> None:
    for action in parser_of(command)._actions:
        assert action.help, f"{command}: {action.option_strings or action.dest} has no help"


def test_the_rules_option_is_called_store_as_in_the_rules_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    help_text = " ".join(help_of(capsys, "run").split())

    assert "--store PATH_OR_URL, --rules PATH_OR_URL the rules to follow" in help_text


@pytest.fixture
def demo_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    """The folder the examples start in: the demo data exported, a run of thread "lyon" stored."""
    monkeypatch.setenv("AGENT_RULES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--export", "demo"]) == 0
    monkeypatch.chdir(tmp_path / "demo")
    (tmp_path / "cache").mkdir()
    query = "SELECT name FROM customers WHERE city = 'Lyon'"
    call = '```tool\n{"tool": "sql_query", "args": {"sql": "' + query + '"}}\n```'
    model = ScriptedChatModel([call, "FINAL: Alice Martin lives in Lyon."])
    tools = [SqlQueryTool("sqlite:///shop.db")]
    with sqlite3.connect(tmp_path / "cache" / "runs.sqlite", check_same_thread=False) as db:
        agent = create_rules_agent(model, tools, protocol="text", checkpointer=SqliteSaver(db))
        agent.invoke(
            {"messages": [HumanMessage("Which customers live in Lyon?")]},
            {"configurable": {"thread_id": "lyon"}},
        )
    capsys.readouterr()
    return tmp_path / "demo"


def test_the_run_examples_pass_every_check_on_the_exported_demo_data(
    demo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = examples_in(help_of(capsys, "run"))
    assert len(examples) >= 5
    for example in examples:
        assert main([*example[1:], "--model", MISSING_MODEL]) == 1
        error = capsys.readouterr().err
        assert error.removeprefix("agent-rules: error: ").startswith(MODEL_ERRORS), (
            shlex.join(example),
            error,
        )


def test_the_trace_examples_print_the_stored_run(
    demo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for example in examples_in(help_of(capsys, "trace")):
        assert main(example[1:]) == 0, shlex.join(example)
        captured = capsys.readouterr()
        assert captured.err == ""
        assert "Martin" in captured.out


def test_the_demo_examples_export_the_data_or_reach_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENT_RULES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    for example in examples_in(help_of(capsys, "demo")):
        if "--export" in example:
            assert main(example[1:]) == 0
            assert sorted(path.name for path in (tmp_path / "demo").iterdir()) == [
                "project",
                "rules.json",
                "shop.db",
            ]
        else:
            assert main([*example[1:], "--model", MISSING_MODEL]) == 1
            error = capsys.readouterr().err
            assert error.removeprefix("agent-rules: error: ").startswith(MODEL_ERRORS)
