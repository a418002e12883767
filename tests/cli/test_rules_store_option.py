"""``--store``: one option every ``rules`` action honours, and one error line per bad store."""

from __future__ import annotations

import os
import socket
import subprocess
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_agent_rules.cli import main
from langchain_agent_rules.rules.json_file import JsonFileRuleStore

ADD = [
    "rules", "add", "--id", "no_emails", "--type", "PROHIBITION", "--target", "OUTPUT",
    "--content", "Never reveal e-mail addresses.",
]  # fmt: skip
ACTIONS = ["init", "list", "show", "add", "update", "suggest-checks", "delete"]
STORE_ACTIONS = [
    ["rules", "list"],
    ["rules", "list", "--all"],
    ["rules", "show", "no_emails"],
    ADD,
    ["rules", "update", "no_emails", "--priority", "3"],
    ["rules", "suggest-checks", "--apply"],
    ["rules", "delete", "no_emails"],
]


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def files_in(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@pytest.fixture
def in_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_action_uses_rules_json_in_the_current_folder_by_default(
    in_empty_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_main(capsys, "rules", "init") == (
        0,
        "created an empty rule store at rules.json\n",
        "",
    )
    assert run_main(capsys, *ADD)[0] == 0
    assert JsonFileRuleStore(in_empty_folder / "rules.json").get("no_emails").priority == 0

    assert "no_emails" in run_main(capsys, "rules", "list")[1]
    assert "no_emails" in run_main(capsys, "rules", "list", "--all")[1]
    assert "no_emails" in run_main(capsys, "rules", "show", "no_emails")[1]
    assert run_main(capsys, "rules", "update", "no_emails", "--priority", "7")[0] == 0
    assert JsonFileRuleStore(in_empty_folder / "rules.json").get("no_emails").priority == 7
    assert run_main(capsys, "rules", "delete", "no_emails")[0] == 0
    assert JsonFileRuleStore(in_empty_folder / "rules.json").get_all() == []


@pytest.mark.parametrize("action", ACTIONS)
def test_every_action_names_the_store_option_and_its_default_in_its_help(
    capsys: pytest.CaptureFixture[str], action: str
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["rules", action, "--help"])
    assert caught.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--store PATH_OR_URL" in help_text
    assert "default: rules.json in the current folder" in help_text


@pytest.mark.parametrize("args", STORE_ACTIONS, ids=" ".join)
@pytest.mark.parametrize("store", ["rules.json", "sub/rules.json"])
def test_a_missing_rules_file_is_one_error_line_and_nothing_is_created(
    in_empty_folder: Path, capsys: pytest.CaptureFixture[str], args: list[str], store: str
) -> None:
    code, out, err = run_main(capsys, *args, "--store", store)

    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"agent-rules: error: no rules file at {store}; give the path of an existing rules "
        f"file or a database URL, or start an empty one with: agent-rules rules init --store "
        f"{store}"
    ]
    assert files_in(in_empty_folder) == []


@pytest.mark.parametrize("args", STORE_ACTIONS, ids=" ".join)
def test_a_missing_sqlite_database_is_one_error_line_and_is_not_created(
    in_empty_folder: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    code, out, err = run_main(capsys, *args, "--store", "sqlite:///rules.db")

    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "agent-rules: error: no SQLite database file at rules.db; give the path of an "
        "existing database or a rules file, or start an empty one with: agent-rules rules "
        "init --store sqlite:///rules.db"
    ]
    assert files_in(in_empty_folder) == []


@pytest.mark.parametrize("store", ["rules.json", "sub/rules.json", "sqlite:///rules.db"])
def test_init_starts_an_empty_store_once_and_then_leaves_it_as_it_is(
    in_empty_folder: Path, capsys: pytest.CaptureFixture[str], store: str
) -> None:
    assert run_main(capsys, "rules", "init", "--store", store) == (
        0,
        f"created an empty rule store at {store}\n",
        "",
    )
    assert run_main(capsys, *ADD, "--store", store)[0] == 0
    files = {name: (in_empty_folder / name).read_bytes() for name in files_in(in_empty_folder)
             if (in_empty_folder / name).is_file()}  # fmt: skip

    assert run_main(capsys, "rules", "init", "--store", store) == (
        0,
        f"{store} already exists with 1 rule(s); nothing was overwritten\n",
        "",
    )
    assert {name: (in_empty_folder / name).read_bytes() for name in files} == files


def test_init_refuses_a_corrupt_rules_file_and_leaves_it_alone(
    in_empty_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (in_empty_folder / "rules.json").write_text("[broken", encoding="utf-8")

    code, out, err = run_main(capsys, "rules", "init")

    assert (code, out) == (1, "")
    assert (
        err == "agent-rules: error: rules.json: corrupt JSON at line 1 column 2: Expecting value\n"
    )
    assert (in_empty_folder / "rules.json").read_text(encoding="utf-8") == "[broken"


@pytest.mark.parametrize("args", [*STORE_ACTIONS, ["rules", "init"]], ids=" ".join)
def test_an_unsupported_url_names_the_supported_ones_and_creates_nothing(
    in_empty_folder: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    code, out, err = run_main(capsys, *args, "--store", "foo://user:secret@bar/rules")

    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "agent-rules: error: unsupported rule store URL scheme 'foo'; give a postgresql://, "
        "postgres:// or sqlite:/// URL, or the path of a JSON rules file"
    ]
    assert files_in(in_empty_folder) == []


def test_a_folder_is_not_a_rules_file_and_nothing_is_written_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()

    code, out, err = run_main(capsys, *ADD, "--store", str(folder))

    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"agent-rules: error: {folder} is a folder; give the path of a rules file such as "
        f"{folder / 'rules.json'}"
    ]
    assert files_in(tmp_path) == ["rules"]


@pytest.fixture
def refused_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback port that accepts connections and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield int(server.getsockname()[1])


def test_an_unreachable_postgresql_store_is_one_error_line(
    refused_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"postgresql://agent:secret@127.0.0.1:{refused_port}/rules"

    code, out, err = run_main(capsys, "rules", "list", "--store", url)

    assert (code, out) == (1, "")
    [line] = err.splitlines()
    assert line.startswith(
        f"agent-rules: error: cannot read rules in postgresql+psycopg://agent:***@127.0.0.1:{refused_port}/rules"
    )
    assert "Connection refused" in line and "secret" not in line


def test_a_postgresql_server_that_never_answers_is_given_up_after_the_connect_timeout(
    silent_server: int, tmp_path: Path
) -> None:
    script = Path(sysconfig.get_path("scripts")) / "agent-rules"
    url = f"postgresql://agent@127.0.0.1:{silent_server}/rules"

    # Without a connect timeout this would wait for ever: the subprocess timeout fails it.
    result = subprocess.run(
        [str(script), "rules", "list", "--store", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )

    assert (result.returncode, result.stdout) == (1, "")
    [line] = result.stderr.splitlines()
    assert line.startswith("agent-rules: error: cannot read rules in postgresql+psycopg://")
    assert line.endswith("connection timeout expired")
