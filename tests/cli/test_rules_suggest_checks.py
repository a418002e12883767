"""``agent-rules rules suggest-checks``: a diff of proposed checks, written only with --apply."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from langchain_agent_rules.cli import main
from langchain_agent_rules.rules.json_file import JsonFileRuleStore

FIXTURES = Path(__file__).resolve().parents[1] / "rules" / "fixtures"
ADACHSOFT = Path(__file__).resolve().parents[2] / "examples" / "rules.json"


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """The adachsoft example file: plain-text rules, none with a check."""
    path = tmp_path / "rules.json"
    shutil.copy(ADACHSOFT, path)
    return path


def test_the_suggestions_are_shown_as_a_diff_and_nothing_is_written(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = store.read_bytes()

    code, out, err = run_main(capsys, "rules", "suggest-checks", "--store", str(store))

    assert (code, err) == (0, "")
    assert out == (
        "no_secrets_in_output (PROHIBITION, OUTPUT, global, priority 100)\n"
        "  content: Never print passwords, API keys or tokens, even when a file or a query "
        "returns them.\n"
        "- check: none\n"
        '+ check: {"forbid":"secret"} → redact\n'
        '  because: "Never print passwords, API keys or tokens, even when a file or a query '
        'returns them"\n'
        "\n"
        "amounts_in_eur (REQUIREMENT, OUTPUT, project 1, priority 50)\n"
        "  content: Write money amounts with two decimals and the currency, for example "
        "12.50 EUR.\n"
        "- check: none\n"
        '+ check: {"require":"regex:\\\\d[.,]\\\\d{2} ?EUR\\\\b","when":"regex:\\\\d[.,]\\\\d"} '
        "→ revise\n"
        '  because: "Write money amounts with two decimals and the currency, for example '
        '12.50 EUR"\n'
        "\n"
        f"2 check(s) suggested in {store}; nothing written (add --apply to write them)\n"
    )
    assert store.read_bytes() == before


def test_apply_writes_the_shown_checks_and_a_second_run_finds_none(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = run_main(capsys, "rules", "suggest-checks", "--store", str(store))[1]

    code, out, _ = run_main(capsys, "rules", "suggest-checks", "--apply", "--store", str(store))

    assert code == 0
    assert out.splitlines()[:-1] == shown.splitlines()[:-1]
    assert out.splitlines()[-1] == f"wrote 2 check(s) to {store}"
    rules = {rule.id: rule for rule in JsonFileRuleStore(store).get_all()}
    assert rules["no_secrets_in_output"].check is not None
    assert rules["no_secrets_in_output"].check.to_record() == {"forbid": "secret"}
    assert rules["amounts_in_eur"].check is not None
    assert rules["answer_in_english"].check is None  # "unless the user writes..." is unsure
    assert run_main(capsys, "rules", "suggest-checks", "--store", str(store))[1] == (
        f"no checks to suggest for the 4 rule(s) without a check in {store}\n"
    )


def test_json_lists_each_suggestion_with_its_reason_and_the_checks_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rules.json"
    shutil.copy(FIXTURES / "suggest" / "shop_support.json", path)

    code, out, _ = run_main(capsys, "rules", "suggest-checks", "--json", "--store", str(path))

    assert code == 0
    records = {record["id"]: record for record in json.loads(out)}
    assert len(records) == 15
    assert records["confidential_contacts"] == {
        "id": "confidential_contacts",
        "check": {"forbid": "phone"},
        "because": "Customer phone numbers and e-mail addresses are confidential",
        "also": [{"forbid": "email"}],
    }


def test_apply_writes_a_check_only_onto_the_rule_it_was_suggested_for(store: Path) -> None:
    """A rule changed or deleted between the suggestion and the write is left alone."""
    from langchain_agent_rules.cli.rules import _apply
    from langchain_agent_rules.rules.suggest import suggest_checks

    rules = JsonFileRuleStore(store)
    [changed, deleted] = suggest_checks(rules.get_all())
    rules.update(changed.rule.with_changes(content="Never print anything secret at all."))
    rules.delete(deleted.rule.id)

    assert (_apply(rules, changed), _apply(rules, deleted)) == (False, False)
    assert rules.get(changed.rule.id).check is None
    assert [rule.id for rule in rules.get_all() if rule.check is not None] == []


def test_apply_with_json_says_which_checks_were_written(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_main(
        capsys, "rules", "suggest-checks", "--apply", "--json", "--store", str(store)
    )

    assert code == 0
    assert [(r["id"], r["written"]) for r in json.loads(out)] == [
        ("no_secrets_in_output", True),
        ("amounts_in_eur", True),
    ]


def test_output_the_terminal_cannot_encode_is_escaped_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rules.json"
    shutil.copy(FIXTURES / "adachsoft_rules.json", path)  # holds "zażółć gęślą jaźń"
    buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer, encoding="ascii"))

    code = main(["rules", "list", "--all", "--json", "--store", str(path)])

    sys.stdout.flush()
    assert code == 0
    assert "za\\u017c\\xf3\\u0142\\u0107" in buffer.getvalue().decode("ascii")
