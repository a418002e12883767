"""``agent-rules rules``: the real console script in a subprocess, and main() in process.

Starting the interpreter costs seconds, so the subprocess tests are few; the others
call the same ``main`` the script runs, on real files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from langchain_agent_rules.cli import main
from langchain_agent_rules.rules.json_file import JsonFileRuleStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rules.json"
ADD = [
    "rules", "add", "--id", "answer_in_french", "--type", "REQUIREMENT",
    "--target", "output", "--content", "Always answer in French.", "--priority", "5",
]  # fmt: skip


def console_script() -> str:
    script = shutil.which("agent-rules", path=sysconfig.get_path("scripts"))
    assert script is not None, "the agent-rules console script is not installed"
    return script


def run_script(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def empty_store(folder: Path) -> str:
    """An empty rules file, as ``agent-rules rules init`` starts it."""
    JsonFileRuleStore(folder / "rules.json", create=True)
    return str(folder / "rules.json")


def test_the_console_script_adds_to_the_default_store(tmp_path: Path) -> None:
    empty_store(tmp_path)
    added = run_script(*ADD, "--json", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["id"] == "answer_in_french"
    stored = JsonFileRuleStore(tmp_path / "rules.json").get("answer_in_french")
    assert (stored.priority, stored.project_id) == (5, None)


def test_the_console_script_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "rules.json").write_text("[broken", encoding="utf-8")
    result = run_script("rules", "list", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "agent-rules: error: rules.json: corrupt JSON at line 1 column 2: Expecting value"
    ]


def test_list_shows_the_effective_rules_highest_priority_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_main(capsys, "rules", "list", "--store", str(EXAMPLE), "--project", "1")
    assert code == 0
    ids = ["no_secrets_in_output", "sql_select_only", "answer_in_english", "amounts_in_eur"]
    positions = [out.index(rule_id) for rule_id in ids]
    assert positions == sorted(positions)
    assert "python_type_hints" not in out  # project 2's rule


def test_list_json_of_the_global_rules(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, "rules", "list", "--store", str(EXAMPLE), "--json")
    assert code == 0
    records = json.loads(out)
    assert {r["projectId"] for r in records} == {None}
    assert [r["priority"] for r in records] == sorted(
        (r["priority"] for r in records), reverse=True
    )


def test_show_update_and_delete_one_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = empty_store(tmp_path)
    assert run_main(capsys, *ADD, "--store", store, "--project", "4")[0] == 0

    code, out, _ = run_main(capsys, "rules", "show", "answer_in_french", "--store", store, "--json")
    assert code == 0 and json.loads(out)["projectId"] == 4

    code, out, _ = run_main(
        capsys, "rules", "update", "answer_in_french", "--store", store,
        "--priority", "9", "--global", "--json",
    )  # fmt: skip
    record = json.loads(out)
    assert code == 0 and record["priority"] == 9 and record["projectId"] is None
    assert record["content"] == "Always answer in French."

    code, out, _ = run_main(capsys, "rules", "delete", "answer_in_french", "--store", store)
    assert code == 0 and "answer_in_french" in out
    assert JsonFileRuleStore(store).get_all_by_project(None) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rules", "show", "ghost_rule"], "no rule with id 'ghost_rule'"),
        (["rules", "delete", "ghost_rule"], "no rule with id 'ghost_rule'"),
        (["rules", "update", "answer_in_french"], "nothing to update"),
        (
            [
                "rules",
                "add",
                "--id",
                "Bad-Id",
                "--type",
                "wish",
                "--target",
                "agent",
                "--content",
                "long enough content",
            ],
            "invalid id 'Bad-Id'",
        ),
    ],
)
def test_bad_input_gets_one_error_line_and_exit_code_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    store = empty_store(tmp_path)
    assert run_main(capsys, *ADD, "--store", store)[0] == 0
    before = Path(store).read_bytes()
    code, out, err = run_main(capsys, *args, "--store", store)
    assert code == 1 and out == ""
    [line] = err.splitlines()
    assert line.startswith("agent-rules: error: ") and message in line
    assert Path(store).read_bytes() == before


@pytest.mark.parametrize("project", ["0", "-2", "one"])
def test_a_bad_project_id_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], project: str
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["rules", "list", "--project", project])
    assert caught.value.code == 1
    assert f"invalid project id '{project}': a positive integer" in capsys.readouterr().err


def test_add_refuses_a_duplicate_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = empty_store(tmp_path)
    run_main(capsys, *ADD, "--store", store)
    code, _, err = run_main(capsys, *ADD, "--store", store)
    assert code == 1 and "already exists" in err


CHECKED_ADD = [
    "rules", "add", "--id", "no_email", "--type", "prohibition", "--target", "output",
    "--content", "Never reveal e-mail addresses.", "--check", '{"forbid": "email"}',
]  # fmt: skip


def test_add_and_update_take_a_check_and_list_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    store = empty_store(tmp_path)
    code, out, _ = run_main(capsys, *CHECKED_ADD, "--store", store, "--json")
    assert code == 0 and json.loads(out)["check"] == {"forbid": "email"}
    run_main(capsys, *ADD, "--store", store)

    code, out, _ = run_main(capsys, "rules", "list", "--store", store)
    assert code == 0
    assert 'check: {"forbid":"email"} → redact' in out

    changed = '{"forbid": "email", "on_fail": "block"}'
    code, out, _ = run_main(
        capsys, "rules", "update", "no_email", "--store", store, "--check", changed, "--json"
    )
    assert json.loads(out)["check"] == {"forbid": "email", "on_fail": "block"}
    code, out, _ = run_main(
        capsys, "rules", "update", "no_email", "--store", store, "--check", "null", "--json"
    )
    assert "check" not in json.loads(out)
    code, out, _ = run_main(capsys, "rules", "list", "--store", store)
    assert "check" not in out and "→" not in out


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (
            '{"forbid": "email"',
            "agent-rules: error: invalid --check: not JSON (Expecting ',' delimiter); give a "
            'JSON object such as \'{"forbid": "email"}\'',
        ),
        (
            "[" * 100_000,
            "agent-rules: error: invalid --check: not JSON (too deep or too large); give a "
            'JSON object such as \'{"forbid": "email"}\'',
        ),
        (
            '{"forbid": "mail"}',
            "agent-rules: error: invalid rule: invalid check: unknown detector 'mail' in forbid; "
            "allowed: email, phone, phone:<REGION>, credit_card, iban, ipv4, ipv6, secret or "
            "regex:<pattern>",
        ),
    ],
)
def test_a_bad_check_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], check: str, message: str
) -> None:
    store = Path(empty_store(tmp_path))
    add = [*CHECKED_ADD[:-1], check]
    code, _, err = run_main(capsys, *add, "--store", str(store))
    assert (code, err.strip()) == (1, message)
    assert store.read_text(encoding="utf-8") == "[]\n"


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            ["--content", "x" * 501],
            "agent-rules: error: rule 'answer_in_french' has 501 bytes of content; the limit is "
            "max_rule_content_bytes=500",
        ),
        (
            ["--priority", str(2**64)],
            "agent-rules: error: invalid rule: invalid priority 18446744073709551616: an integer "
            "within 64 bits (higher comes first)",
        ),
    ],
)
def test_the_cli_refuses_a_rule_over_a_limit_or_beyond_64_bits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    store = Path(empty_store(tmp_path))
    code, _, err = run_main(capsys, *ADD, *option, "--store", str(store))
    assert (code, err.strip()) == (1, message)
    assert store.read_text(encoding="utf-8") == "[]\n"


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from langchain_agent_rules import __version__

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"agent-rules {__version__}"


def test_an_unknown_command_is_one_error_line_and_exit_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["rulez"])
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("agent-rules: error: argument COMMAND: invalid choice: 'rulez'")
