"""A call that already failed is not run again; a run never ends on a raw tool error."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool

from langchain_agent_rules import RulesAgent
from langchain_agent_rules.middleware.prompts import REPEATED_FAILURE
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import PROTOCOLS, call_step

ERROR = "(sqlite3.OperationalError) no such table: dual"


def failing_sql(ran: list[str]) -> object:
    @tool
    def sql(query: str) -> str:
        """Run a query."""
        ran.append(query)
        raise RuntimeError(ERROR)

    return sql


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_identical_failing_call_is_answered_with_its_error_and_a_hint(protocol: str) -> None:
    ran: list[str] = []
    again = call_step(protocol, "sql", query="SELECT 240 * 0.15 FROM dual")
    other = call_step(protocol, "sql", query="SELECT 240 * 0.15")
    model = ScriptedChatModel([again, again, other, "FINAL: 36"])
    result = RulesAgent(model, [failing_sql(ran)], protocol=protocol).invoke("15% of 240?")

    assert ran == ["SELECT 240 * 0.15 FROM dual", "SELECT 240 * 0.15"]
    assert [s["status"] for s in result.trace] == ["error", "repeated_failure", "error"]
    repeated = result.trace[1]
    assert repeated["observation"] == REPEATED_FAILURE.format(
        tool="sql", observation=f"ERROR: {ERROR}"
    )
    assert repeated["error"] == ERROR
    assert result.wasted_calls == 3


def test_a_second_turn_of_repeated_failures_ends_the_run_with_an_honest_answer() -> None:
    again = call_step("native", "sql", query="SELECT * FROM dual")
    model = ScriptedChatModel([again, again, again, f"FINAL: ERROR: {ERROR}"])
    result = RulesAgent(model, [failing_sql([])]).invoke("What is in dual?")

    assert result.stop_reason == "repeated_calls"
    assert result.answer == f"I could not find the answer: the sql call failed ({ERROR})."
    summary = model.calls[-1].messages[-1].text
    assert summary.endswith(
        "If they do not answer it, say plainly what you could not find and why."
    )
    assert summary.count(ERROR) == 1  # the repeated call adds nothing to what the tools returned


@pytest.mark.parametrize("answer", [f"ERROR: {ERROR}", ERROR, f"{ERROR}."])
def test_an_answer_that_is_a_raw_tool_error_becomes_what_failed_in_words(answer: str) -> None:
    model = ScriptedChatModel([call_step("native", "sql", query="SELECT * FROM dual"), answer])
    result = RulesAgent(model, [failing_sql([])]).invoke("What is in dual?")

    assert result.answer == f"I could not find the answer: the sql call failed ({ERROR})."


def test_an_answer_that_explains_an_error_in_its_own_words_is_kept() -> None:
    explained = "The table dual does not exist in this database, so I cannot compute it there."
    model = ScriptedChatModel([call_step("native", "sql", query="SELECT * FROM dual"), explained])
    assert RulesAgent(model, [failing_sql([])]).run("What is in dual?") == explained
