"""``rules --help`` and each action's help: a description, examples that run, help on every option.

Usage errors are one ``agent-rules: error:`` line naming the help to read, exit 1.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
from pathlib import Path

import pytest

from langchain_agent_rules.cli import main
from langchain_agent_rules.cli.rules import register

ACTIONS = ["init", "list", "show", "add", "update", "suggest-checks", "delete"]


def rules_parsers() -> dict[str, argparse.ArgumentParser]:
    """The ``rules`` parser and one parser per action, by name."""

    def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(action.choices)

    top = argparse.ArgumentParser(prog="agent-rules")
    register(top.add_subparsers())
    rules = subcommands(top)["rules"]
    return {"rules": rules, **subcommands(rules)}


def help_of(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as caught:
        main([*args, "--help"])
    assert caught.value.code == 0
    return capsys.readouterr().out


def examples_in(help_text: str) -> list[list[str]]:
    """The command lines under "examples:", continuation lines joined, comments dropped."""
    _, _, section = help_text.partition("examples:\n")
    commands: list[str] = []
    for line in section.splitlines():
        if not line.startswith("  "):
            break
        if commands and commands[-1].endswith("\\"):
            commands[-1] = commands[-1][:-1] + line.strip()
        else:
            commands.append(line.strip())
    return [shlex.split(command, comments=True) for command in commands]


@pytest.mark.parametrize("name", ["rules", *ACTIONS])
def test_each_help_page_has_a_description_and_examples(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    args = ["rules"] if name == "rules" else ["rules", name]
    parser = rules_parsers()[name]

    help_text = help_of(capsys, *args)

    assert parser.description and parser.description.split("\n")[0] in help_text
    examples = examples_in(help_text)
    assert examples and all(example[:2] == ["agent-rules", "rules"] for example in examples)


@pytest.mark.parametrize("name", ["rules", *ACTIONS])
def test_each_help_page_fits_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    args = ["rules"] if name == "rules" else ["rules", name]

    help_text = help_of(capsys, *args)

    assert max(len(line) for line in help_text.splitlines()) <= 80


@pytest.mark.parametrize("name", ["rules", *ACTIONS])
def test_every_option_and_argument_has_help(name: str) -> None:
    parser = rules_parsers()[name]
    for action in parser._actions:
        assert action.help, f"{name}: {action.option_strings or action.dest} has no help"


def test_the_check_help_shows_an_example_json(capsys: pytest.CaptureFixture[str]) -> None:
    for action in ("add", "update"):
        help_text = " ".join(help_of(capsys, "rules", action).split())
        assert '--check JSON the check enforced in code, as JSON, such as {"forbid": "email"}' in (
            help_text
        )


@pytest.fixture
def folder_after_the_add_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A folder where every example of ``rules add --help`` has run."""
    folder = tmp_path / "after_add"
    folder.mkdir()
    monkeypatch.chdir(folder)
    for example in examples_in(help_of(capsys, "rules", "add")):
        assert main(example[1:]) == 0, capsys.readouterr().err
    return folder


@pytest.mark.parametrize("name", ["rules", "init", "add"])
def test_the_examples_run_as_written_in_an_empty_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["rules"] if name == "rules" else ["rules", name]
    for example in examples_in(help_of(capsys, *args)):
        code, err = main(example[1:]), capsys.readouterr().err
        assert (code, err) == (0, ""), shlex.join(example)


@pytest.mark.parametrize("name", ["list", "show", "update", "suggest-checks", "delete"])
def test_the_examples_run_as_written_after_the_add_examples(
    folder_after_the_add_examples: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    folder = tmp_path / name
    shutil.copytree(folder_after_the_add_examples, folder)
    monkeypatch.chdir(folder)
    for example in examples_in(help_of(capsys, "rules", name)):
        code, err = main(example[1:]), capsys.readouterr().err
        assert (code, err) == (0, ""), shlex.join(example)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["rules", "list", "--project", "0"],
            "argument --project: invalid project id '0': a positive integer "
            "(see agent-rules rules list --help)",
        ),
        (
            ["rules", "add", "--id", "no_emails"],
            "the following arguments are required: --type, --target, --content "
            "(see agent-rules rules add --help)",
        ),
        (
            ["rules", "update", "no_emails", "--priority", "high"],
            "argument --priority: invalid int value: 'high' (see agent-rules rules update --help)",
        ),
        (
            ["rules", "update", "no_emails", "--project", "2", "--global"],
            "argument --global: not allowed with argument --project "
            "(see agent-rules rules update --help)",
        ),
        (
            ["rules", "show"],
            "the following arguments are required: id (see agent-rules rules show --help)",
        ),
    ],
)
def test_a_usage_error_is_one_line_naming_the_help_to_read(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as caught:
        main(args)

    assert caught.value.code == 1
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"agent-rules: error: {message}\n")
    assert list(tmp_path.iterdir()) == []
