"""``agent-rules trace``'s table wraps arguments and observations: at 80 columns nothing is cut.

A run is stored by the agent on the scripted model in a real SQLite checkpoint file, then
printed by the command, as a user at an 80-column terminal would see it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.cli import main
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.testing import ScriptedChatModel
from langchain_agent_rules.tools.sql_query import SqlQueryTool

LONG_QUERY = (
    "SELECT name, city, email AS contact_address_for_the_newsletter FROM customers "
    "WHERE active = 1 AND city IN ('Lyon', 'Zurich', 'Prague') ORDER BY name"
)
DELETE = "DELETE FROM customers WHERE active = 0"
NO_DELETES = Rule(
    id="no_deletes",
    type="prohibition",
    target="tool",
    content="Never delete rows.",
    check={"tool": "sql_query", "args": r"regex:(?i)\bdelete\b"},
)


@pytest.fixture
def stored_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A run with a long query, a long result and a call a rule denied, in runs.sqlite."""
    monkeypatch.setenv("AGENT_RULES_CACHE_DIR", str(tmp_path))
    shop = tmp_path / "shop.db"
    with sqlite3.connect(shop) as connection:
        connection.execute("CREATE TABLE customers (name TEXT, city TEXT, email TEXT, active INT)")
        connection.executemany(
            "INSERT INTO customers VALUES (?, ?, ?, 1)",
            [(f"Customer number {n}", "Lyon", f"customer{n}@example.com") for n in range(6)],
        )
    calls = [
        '```tool\n{"tool": "sql_query", "args": {"sql": "' + sql + '"}}\n```'
        for sql in (LONG_QUERY, DELETE)
    ]
    rules = InMemoryRuleStore()
    rules.create(NO_DELETES)
    model = ScriptedChatModel([*calls, "FINAL: Six customers."])
    with sqlite3.connect(tmp_path / "runs.sqlite", check_same_thread=False) as connection:
        agent = create_rules_agent(
            model,
            [SqlQueryTool(f"sqlite:///{shop}")],
            rules=rules,
            protocol="text",
            checkpointer=SqliteSaver(connection),
        )
        state = agent.invoke(
            {"messages": [HumanMessage("Who are our active customers?")]},
            {"configurable": {"thread_id": "t-80"}},
        )
    return list(state["trace"])


def printed_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["trace", *args]) == 0
    return capsys.readouterr().out


def columns(out: str) -> dict[str, str]:
    """Each column's text, its lines joined, with all whitespace removed (wraps move it)."""
    lines = out.splitlines()
    rule = next(index for index, line in enumerate(lines) if line.startswith("─"))
    header = lines[rule - 1]
    starts = {name: header.index(name) for name in ("args", "observation")}
    body = lines[rule + 1 :]
    return {
        "left": "".join("".join(line[: starts["args"]].split()) for line in body),
        "args": "".join(
            "".join(line[starts["args"] : starts["observation"]].split()) for line in body
        ),
        "observation": "".join("".join(line[starts["observation"] :].split()) for line in body),
    }


def squeezed(text: str) -> str:
    return "".join(text.split())


def test_at_80_columns_every_argument_and_observation_is_printed_whole(
    stored_run: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = printed_at_80_columns(capsys, monkeypatch, "t-80")

    assert out.startswith("trace of thread t-80")
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    shown = columns(out)
    for step in stored_run:
        assert squeezed(json.dumps(step["args"], ensure_ascii=False)) in shown["args"]
        assert squeezed(step["observation"]) in shown["observation"]
    assert len(stored_run[0]["observation"]) > 300  # the old table cut it at 60


def test_each_call_shows_its_status_time_and_the_rule_that_stopped_it(
    stored_run: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = printed_at_80_columns(capsys, monkeypatch, "t-80")

    left = columns(out)["left"]
    first, second = stored_run
    assert f"1sql_queryok,{first['duration_ms']:.0f}ms" in left
    assert f"2sql_querydenied,{second['duration_ms']:.0f}msruleno_deletesdenied" in left
    assert left.count("no_deletes") == 1  # the check that passed is not marked


def test_control_characters_in_an_observation_never_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_RULES_CACHE_DIR", str(tmp_path))
    from langchain_core.tools import tool

    @tool
    def fetch() -> str:
        """Fetch a hostile page."""
        return "Title\x1b[2J\x9b2J\x07 end"

    model = ScriptedChatModel(['```tool\n{"tool": "fetch", "args": {}}\n```', "FINAL: ok"])
    with sqlite3.connect(tmp_path / "runs.sqlite", check_same_thread=False) as connection:
        agent = create_rules_agent(
            model, [fetch], protocol="text", checkpointer=SqliteSaver(connection)
        )
        agent.invoke({"messages": [HumanMessage("Go")]}, {"configurable": {"thread_id": "h"}})

    out = printed_at_80_columns(capsys, monkeypatch, "h")

    assert not any(character in out for character in "\x1b\x9b\x07")
    assert "Title\\x1b[2J\\x9b2J\\x07 end" in out
