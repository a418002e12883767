"""Bad input to ``run``, ``demo`` and ``trace``: one error line, exit 1, nothing written.

Each case asks for a model that cannot load (``local:/nonexistent.gguf``): a model load
would end with its own error, so the exact message of the flag shows that the flag was
checked first. The folder the command runs in, with the cache folder inside it, must be
the same afterwards: no checkpoint file, no folder made from a URL.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_agent_rules.cli import main

MISSING_MODEL = "local:/nonexistent.gguf"
HOST_FORMS = (
    "give host names such as api.example.com, *.example.com for every subdomain of "
    "example.com, or IP addresses"
)
DATABASE_FORMS = "give sqlite:///PATH for a SQLite file, or postgresql://user:password@host/db"
AGENT_RULES = str(Path(sys.executable).with_name("agent-rules"))


@pytest.fixture
def folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    """An empty folder with the demo data exported into ``demo/``; the cache inside it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENT_RULES_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["demo", "--export", "demo"]) == 0
    (tmp_path / "notes.txt").write_text("not a database\n")
    capsys.readouterr()
    return tmp_path


def files_in(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def one_error_line(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    try:
        code = main(list(args))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    assert code == 1, captured
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("agent-rules: error: ")
    return lines[0].removeprefix("agent-rules: error: ")


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections and never says a word."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield int(server.getsockname()[1])


BAD_RUN_FLAGS = [
    (
        ["--project-id", "0"],
        "invalid agent options (--project-id: Input should be greater than or equal to 1, got 0)",
    ),
    (
        ["--project-id", "-3"],
        "invalid agent options (--project-id: Input should be greater than or equal to 1, got -3)",
    ),
    (["--allow-host", "*"], f"--allow-host: '*' would allow every host; {HOST_FORMS}"),
    (
        ["--allow-host", "api.example.com", "--allow-host", "https://api.example.com"],
        f"--allow-host: 'https://api.example.com' is a URL, not a host name; {HOST_FORMS}",
    ),
    (
        ["--allow-host", "api.example.com:443"],
        "--allow-host: 'api.example.com:443' has a port (every port of an allowed host may be "
        f"fetched); {HOST_FORMS}",
    ),
    (
        ["--allow-host", "api.*.com"],
        f"--allow-host: 'api.*.com' has a * that does not start a *. pattern; {HOST_FORMS}",
    ),
    (
        ["--db", "sqlite:///missing.db"],
        "--db: The SQLite database file 'missing.db' does not exist; sql_query never creates "
        "one. Check the path (a relative one starts from '{folder}').",
    ),
    (["--db", "demo/shop.db"], f"--db: 'demo/shop.db' is not a database URL; {DATABASE_FORMS}"),
    (
        ["--db", "mysql://shop@127.0.0.1/shop"],
        f"--db: sql_query cannot query mysql:// databases; {DATABASE_FORMS}",
    ),
    (
        ["--db", "postgresql://agent:s3cret@127.0.0.1:five/shop"],
        f"--db: malformed postgresql:// URL (an invalid port); {DATABASE_FORMS}",
    ),
    (
        ["--db", "sqlite:///notes.txt"],
        "--db: sql_query could not read the tables of sqlite:///notes.txt: "
        "(sqlite3.DatabaseError) file is not a database; give the URL of a database it can "
        "connect to and read.",
    ),
    (
        ["--root", "missing"],
        "--root: no folder at missing; give the folder whose files the agent may read",
    ),
    (
        ["--root", "demo/rules.json"],
        "--root: no folder at demo/rules.json; give the folder whose files the agent may read",
    ),
    (
        ["--store", "missing.json"],
        "--store: no rules file at missing.json; give the path of an existing rules file or a "
        "database URL, or start an empty one with: agent-rules rules init --store missing.json",
    ),
    (
        ["--rules", "missing.json"],
        "--store: no rules file at missing.json; give the path of an existing rules file or a "
        "database URL, or start an empty one with: agent-rules rules init --store missing.json",
    ),
    (
        ["--store", "demo"],
        "--store: demo is a folder; give the path of a rules file such as demo/rules.json",
    ),
    (
        ["--store", "foo://bar"],
        "--store: unsupported rule store URL scheme 'foo'; give a postgresql://, postgres:// or "
        "sqlite:/// URL, or the path of a JSON rules file",
    ),
    (
        ["--store", "sqlite:///missing.db"],
        "--store: no SQLite database file at missing.db; give the path of an existing database "
        "or a rules file, or start an empty one with: agent-rules rules init --store "
        "sqlite:///missing.db",
    ),
    (
        ["--store", "notes.txt"],
        "--store: notes.txt: corrupt JSON at line 1 column 1: Expecting value",
    ),
    (
        ["--checkpoints", "foo://bar"],
        "--checkpoints: unsupported URL scheme 'foo'; give the path of a SQLite file or a "
        "postgresql:// URL",
    ),
    (
        ["--checkpoints", "demo"],
        "--checkpoints: demo is a folder; give the path of a SQLite file such as demo/runs.sqlite",
    ),
    (
        ["--checkpoints", "notes.txt/runs.sqlite"],
        "--checkpoints: cannot create notes.txt/runs.sqlite: notes.txt is not a folder; give "
        "the path of a SQLite file or a postgresql:// URL",
    ),
    (
        ["--checkpoints", "notes.txt"],
        "--checkpoints: notes.txt is not a SQLite database (file is not a database); give the "
        "path of a new file or of a checkpoint file agent-rules wrote",
    ),
]


@pytest.mark.parametrize(
    ("flags", "message"), BAD_RUN_FLAGS, ids=[" ".join(flags) for flags, _ in BAD_RUN_FLAGS]
)
def test_a_bad_run_flag_is_one_line_before_the_model_and_writes_nothing(
    folder: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    before = files_in(folder)

    shown = one_error_line(capsys, "run", "How many?", "--model", MISSING_MODEL, *flags)

    assert shown == message.format(folder=folder)
    assert files_in(folder) == before


def test_an_unreachable_database_is_one_line_without_its_password(
    folder: Path, capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    url = f"postgresql://agent:s3cret@127.0.0.1:{closed_port}/shop"
    before = files_in(folder)

    shown = one_error_line(capsys, "run", "How many?", "--model", MISSING_MODEL, "--db", url)

    assert shown.startswith(
        f"--db: sql_query could not read the tables of postgresql+psycopg://agent:***@127.0.0.1:"
        f"{closed_port}/shop: (psycopg.OperationalError) connection failed: "
    )
    assert shown.endswith("; give the URL of a database it can connect to and read.")
    assert "s3cret" not in shown
    assert files_in(folder) == before


@pytest.mark.parametrize("flag", ["--checkpoints", "--store"])
def test_an_unreachable_store_or_checkpointer_is_one_line_without_its_password(
    folder: Path, capsys: pytest.CaptureFixture[str], closed_port: int, flag: str
) -> None:
    url = f"postgresql://agent:s3cret@127.0.0.1:{closed_port}/runs"
    before = files_in(folder)

    shown = one_error_line(capsys, "run", "How many?", "--model", MISSING_MODEL, flag, url)

    assert shown.startswith(f"{flag}: cannot ")
    assert "Connection refused" in shown
    assert "s3cret" not in shown
    assert files_in(folder) == before


@pytest.mark.parametrize("flag", ["--db", "--checkpoints"])
def test_a_server_that_never_answers_is_an_error_in_bounded_time(
    folder: Path, silent_port: int, flag: str
) -> None:
    # A subprocess with a timeout: without a connect timeout this would wait for ever.
    url = f"postgresql://agent@127.0.0.1:{silent_port}/runs"
    result = subprocess.run(
        [AGENT_RULES, "run", "How many?", "--model", MISSING_MODEL, flag, url],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "AGENT_RULES_CACHE_DIR": str(folder / "cache")},
    )

    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"agent-rules: error: {flag}: ")
    assert "timeout" in line


def test_good_flags_reach_the_model_and_a_model_that_cannot_load_writes_nothing(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = files_in(folder)

    shown = one_error_line(
        capsys,
        "run",
        "How many customers?",
        "--model",
        MISSING_MODEL,
        "--db",
        "sqlite:///demo/shop.db",
        "--root",
        "demo/project",
        "--store",
        "demo/rules.json",
        "--allow-host",
        "*.example.com",
        "--project-id",
        "1",
    )

    # The model's own error: with llama-cpp-python, the missing file; without it, the extra.
    assert shown.startswith(
        ("no GGUF model file at /nonexistent.gguf", "the local model needs llama-cpp-python")
    )
    assert files_in(folder) == before
    assert not (folder / "cache" / "runs.sqlite").exists()


def test_demo_checks_its_checkpoints_before_the_model(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = files_in(folder)

    shown = one_error_line(capsys, "demo", "--model", MISSING_MODEL, "--checkpoints", "foo://bar")

    assert shown == (
        "--checkpoints: unsupported URL scheme 'foo'; give the path of a SQLite file or a "
        "postgresql:// URL"
    )
    assert files_in(folder) == before


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("notes.txt", "--export: notes.txt is a file; give a folder (it is created if missing)"),
        (
            "demo",
            "--export: shop.db, project, rules.json already in demo; export into an empty "
            "folder or remove them first",
        ),
    ],
)
def test_demo_export_never_writes_over_anything(
    folder: Path, capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    before = files_in(folder)

    assert one_error_line(capsys, "demo", "--export", target) == message
    assert files_in(folder) == before


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            [],
            "no checkpoint file at {folder}/cache/runs.sqlite; runs are stored there by "
            "agent-rules run (give --checkpoints the file or URL that run used)",
        ),
        (
            ["--checkpoints", "demo"],
            "no checkpoint file at demo; runs are stored there by agent-rules run (give "
            "--checkpoints the file or URL that run used)",
        ),
        (
            ["--checkpoints", "notes.txt"],
            "--checkpoints: notes.txt is not a SQLite database (file is not a database); give "
            "the path of a new file or of a checkpoint file agent-rules wrote",
        ),
        (
            ["--checkpoints", "foo://bar"],
            "--checkpoints: unsupported URL scheme 'foo'; give the path of a SQLite file or a "
            "postgresql:// URL",
        ),
    ],
)
def test_trace_of_missing_or_bad_checkpoints_is_one_line_and_writes_nothing(
    folder: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    before = files_in(folder)

    assert one_error_line(capsys, "trace", "abc", *flags) == message.format(folder=folder)
    assert files_in(folder) == before
