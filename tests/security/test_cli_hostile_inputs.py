"""Hostile input to the ``agent-rules`` command line: one error line, nothing written.

A store that is a FIFO, a device, a folder, a socket or over the size bound; a corrupt
rules file; an argument that is not UTF-8 (a path or a rule given as raw bytes); output
into a pipe its reader closed. Each ends as the documented exit code with at most one
``agent-rules: error:`` line and no traceback, in bounded time, with every file as it
was. Most cases call the same ``main`` the console script runs; the headline ones run the
real script in a subprocess with real pipes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from langchain_agent_rules.cli import EXIT_CLOSED_OUTPUT, main
from langchain_agent_rules.rules.json_file import MAX_RULES_FILE_BYTES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs, sockets and /dev are POSIX")

MISSING_MODEL = "local:/nonexistent.gguf"
RULE = (
    '{"id": "no_emails", "type": "prohibition", "projectId": null, "target": "output", '
    '"content": "Never reveal e-mail addresses.", "priority": 100, '
    '"createdAt": "2026-03-01T09:00:00+00:00", "updatedAt": "2026-03-01T09:00:00+00:00", '
    '"metadata": null}'
)
ADD = [
    "rules", "add", "--id", "be_brief", "--type", "GUIDELINE", "--target", "OUTPUT",
    "--content", "Keep answers under five sentences.",
]  # fmt: skip
STORE_COMMANDS: dict[str, list[str]] = {
    "list": ["rules", "list"],
    "list --all --json": ["rules", "list", "--all", "--json"],
    "show": ["rules", "show", "no_emails"],
    "add": ADD,
    "update": ["rules", "update", "no_emails", "--priority", "3"],
    "delete": ["rules", "delete", "no_emails"],
    "init": ["rules", "init"],
    "suggest-checks": ["rules", "suggest-checks"],
    "suggest-checks --apply": ["rules", "suggest-checks", "--apply"],
    "run": ["run", "How many customers?", "--model", MISSING_MODEL],
}


def console_script() -> str:
    script = shutil.which("agent-rules", path=sysconfig.get_path("scripts"))
    assert script is not None, "the agent-rules console script is not installed"
    return script


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a regular file's bytes, else what kind it is."""
    seen: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            seen[name] = f"link to {os.readlink(path)}"
        elif path.is_file():
            seen[name] = path.read_bytes()
        else:
            seen[name] = "not a regular file"
    return seen


def one_error_line(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    """Run ``main``; it must exit 1 with nothing on stdout and one error line."""
    try:
        code = main(args)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, ""), (args, captured)
    [line] = captured.err.splitlines()
    assert line.startswith("agent-rules: error: "), line
    return line.removeprefix("agent-rules: error: ")


@pytest.fixture
def folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short current folder (a Unix socket's path must fit in 108 bytes)."""
    with tempfile.TemporaryDirectory(prefix="cli") as name:
        monkeypatch.chdir(name)
        monkeypatch.setenv("AGENT_RULES_CACHE_DIR", str(Path(name) / "cache"))
        yield Path(name)


# --- a store path that is not a rules file -------------------------------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))


def _dev_null(path: Path) -> None:
    path.symlink_to("/dev/null")


def _folder(path: Path) -> None:
    path.mkdir()


def _huge(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(MAX_RULES_FILE_BYTES + 1)


NOT_RULES_FILES: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "hostile.json is a FIFO (named pipe), not a rules file"),
    "socket": (_socket, "hostile.json is a socket, not a rules file"),
    "dev_null": (_dev_null, "hostile.json is a character device, not a rules file"),
    "folder": (_folder, "hostile.json is a folder; give the path of a rules file such as"),
    "huge": (_huge, "hostile.json has 16,777,217 bytes; a rules file may have at most"),
}


@pytest.mark.parametrize("command", list(STORE_COMMANDS))
@pytest.mark.parametrize("kind", list(NOT_RULES_FILES))
def test_a_store_that_is_not_a_rules_file_is_one_error_line_naming_it(
    folder: Path, capsys: pytest.CaptureFixture[str], kind: str, command: str
) -> None:
    make, message = NOT_RULES_FILES[kind]
    make(folder / "hostile.json")
    before = snapshot(folder)

    shown = one_error_line(capsys, [*STORE_COMMANDS[command], "--store", "hostile.json"])

    assert message in shown
    assert snapshot(folder) == before


# --- a corrupt rules file ---------------------------------------------------------------


def array(*records: str) -> bytes:
    return ("[\n" + ",\n".join(records) + "\n]\n").encode("utf-8")


CORRUPT_FILES: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "corrupt JSON at line 1 column 1"),
    "cut": (b"[" + RULE.encode()[:40], "corrupt JSON"),
    "object": (b"{}", "the top level must be a JSON array of rules, got dict"),
    "number entry": (b"[1]", "entry 0"),
    "bad id": (array(RULE.replace("no_emails", "No Emails")), "entry 0"),
    "duplicate": (array(RULE, RULE), "already used by entry 0"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "rules.json"),
    "huge number": (b"[1" + b"0" * 5000 + b"]", "rules.json"),
    "nan": (array(RULE.replace("100", "NaN")), "entry 0"),
    "bom": (b"\xef\xbb\xbf[]", "corrupt JSON"),
    "utf-16": ("[]".encode("utf-16"), "not UTF-8 text"),
    "latin-1": ('["caf\u00e9"]'.encode("latin-1"), "not UTF-8 text"),
    "nul": (b"[\x00]", "corrupt JSON"),
    "surrogate escape": (array(RULE.replace("Never", "\\ud800Never")), "entry 0"),
}


@pytest.mark.parametrize("command", ["list", "add", "init", "suggest-checks --apply", "run"])
@pytest.mark.parametrize("corruption", list(CORRUPT_FILES))
def test_a_corrupt_rules_file_is_one_error_line_and_is_never_overwritten(
    folder: Path, capsys: pytest.CaptureFixture[str], corruption: str, command: str
) -> None:
    content, message = CORRUPT_FILES[corruption]
    (folder / "rules.json").write_bytes(content)
    before = snapshot(folder)

    shown = one_error_line(capsys, [*STORE_COMMANDS[command], "--store", "rules.json"])

    assert "rules.json" in shown and message in shown, shown
    assert snapshot(folder) == before


# --- arguments that are not UTF-8 -----------------------------------------------------

RAW = "r\udcffules.json"  # the bytes b"r\xffules.json", as Python decodes a raw argv
NOT_UTF8_ARGS: dict[str, list[str]] = {
    "store of list": ["rules", "list", "--store", RAW],
    "store of add": [*ADD, "--store", RAW],
    "store of init": ["rules", "init", "--store", RAW],
    "store of suggest-checks": ["rules", "suggest-checks", "--apply", "--store", RAW],
    "store given with =": ["rules", "list", f"--store={RAW}"],
    "id of add": ["rules", "add", "--id", "be_\udcffbrief", *ADD[4:]],
    "content of add": [*ADD[:-1], "Keep answers \udce9 short."],
    "type of add": ["rules", "add", "--id", "be_brief", "--type", "GUIDE\udcc3", *ADD[6:]],
    "check of add": [*ADD, "--check", '{"forbid": "\udcffemail"}'],
    "id of show": ["rules", "show", "no_\udcffemails"],
    "content of update": ["rules", "update", "no_emails", "--content", "Never \udcff reveal."],
    "id of delete": ["rules", "delete", "no_emails\udcff"],
    "question of run": ["run", "How many \udcff?", "--model", MISSING_MODEL],
    "db of run": ["run", "Hi", "--db", "sqlite:///sh\udcffop.db", "--model", MISSING_MODEL],
    "root of run": ["run", "Hi", "--root", "proj\udcffect", "--model", MISSING_MODEL],
    "store of run": ["run", "Hi", "--store", RAW, "--model", MISSING_MODEL],
    "host of run": ["run", "Hi", "--allow-host", "api.\udcff.com", "--model", MISSING_MODEL],
    "thread of trace": ["trace", "thr\udcffead"],
    "export of demo": ["demo", "--export", "de\udcffmo"],
    "lone surrogate": ["rules", "add", "--id", "be_brief", *ADD[4:-1], "Keep \ud800 short."],
    "an unknown option": ["rules", "list", "--st\udcffore", "rules.json"],
}


@pytest.mark.parametrize("case", list(NOT_UTF8_ARGS))
def test_an_argument_that_is_not_utf8_is_one_error_line_and_nothing_is_written(
    folder: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    (folder / "rules.json").write_text(f"[\n{RULE}\n]\n", encoding="utf-8")
    before = snapshot(folder)

    shown = one_error_line(capsys, NOT_UTF8_ARGS[case])

    assert shown.startswith("argument '") and shown.endswith(
        "' is not valid UTF-8; give paths and text as UTF-8"
    )
    assert "\\xff" in shown or "\\xe9" in shown or "\\xc3" in shown or "\\ud800" in shown
    assert snapshot(folder) == before


def test_the_console_script_refuses_a_raw_byte_store_path_before_writing(folder: Path) -> None:
    """The old failure: the rule was written, then printing the path raised a traceback."""
    (folder / "rules.json").write_text("[]\n", encoding="utf-8")
    before = snapshot(folder)
    argv = [os.fsencode(console_script()), *(os.fsencode(a) for a in ADD[:-2])]
    argv += [b"--content", b"Keep answers short.", b"--store", b"r\xffules.json"]

    result = subprocess.run(
        argv,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
    )

    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr.splitlines() == [
        b"agent-rules: error: argument 'r\\xffules.json' is not valid UTF-8; "
        b"give paths and text as UTF-8"
    ]
    assert snapshot(folder) == before


# --- a FIFO never hangs the console script ----------------------------------------------


def test_the_console_script_refuses_a_fifo_store_in_bounded_time(folder: Path) -> None:
    os.mkfifo(folder / "rules.json")

    # Before the fix this waited for a writer for ever; the timeout fails the test.
    result = subprocess.run(
        [console_script(), "rules", "list"], capture_output=True, text=True, timeout=120
    )

    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        "agent-rules: error: rules.json is a FIFO (named pipe), not a rules file; give the "
        "path of a regular JSON file"
    ]


# --- output into a closed pipe ------------------------------------------------------------


@pytest.fixture
def many_rules(folder: Path) -> Path:
    """1,500 plain-text rules, in the adachsoft format: far more than a pipe holds."""
    records = [
        json.loads(RULE)
        | {"id": f"rule_{index:04d}", "content": f"Keep answer number {index} polite."}
        for index in range(1500)
    ]
    path = folder / "rules.json"
    path.write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["rules", "list", "--all", "--json"],
        ["rules", "list", "--all"],
        ["rules", "show", "rule_0001"],
    ],
    ids=" ".join,
)
def test_output_into_a_closed_pipe_ends_quietly_with_the_documented_code(
    many_rules: Path, args: list[str]
) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before a byte is written: every write fails
    try:
        result = subprocess.run(
            [console_script(), *args], stdout=writer, stderr=subprocess.PIPE, timeout=120
        )
    finally:
        os.close(writer)

    assert (result.returncode, result.stderr) == (EXIT_CLOSED_OUTPUT, b"")


def test_list_all_json_into_head_shows_the_first_lines_and_no_traceback(
    many_rules: Path,
) -> None:
    result = subprocess.run(
        ["bash", "-c", f"{console_script()} rules list --all --json | head -2; "
         "echo \"exit ${PIPESTATUS[0]}\""],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip

    lines = result.stdout.splitlines()
    assert lines[:2] == ["[", "  {"]
    # Whether the writer met the closed pipe depends on timing; either way it is quiet.
    assert lines[2] in ("exit 0", f"exit {EXIT_CLOSED_OUTPUT}")
    assert result.stderr == ""
