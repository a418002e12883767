"""Kinds of task, end to end with the embedded model on the demo data.

Each test asserts behaviour: the right tool ran, the number in the answer is the one
the database holds, the rule was followed. Not wording.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from .conftest import RunTask, database_value, numbers_in, tools_called

pytestmark = pytest.mark.local_model


def test_reading_a_file_answers_from_its_content(run_task: RunTask) -> None:
    state = run_task("According to docs/notes.md, when does the next release ship?")
    # A re-read of the same file is answered from the first read (status "repeated").
    assert tools_called(state)[0] == ("file_read", "ok")
    assert {tool for tool, _ in tools_called(state)} == {"file_read"}
    assert state["trace"][0]["args"]["path"] == "docs/notes.md"
    assert re.search(r"14 March 2026|March 14, 2026", state["answer"])


def test_a_two_step_question_uses_the_file_then_the_database(run_task: RunTask) -> None:
    state = run_task(
        "Read docs/notes.md to find who owns the next release, then look up that "
        "customer's city in the database."
    )
    ok_tools = [tool for tool, status in tools_called(state) if status == "ok"]
    assert ok_tools[:2] == ["file_read", "sql_query"]
    assert "Nantes" in state["answer"]


@pytest.mark.parametrize("protocol", ["auto", "text"])
def test_a_question_that_needs_no_data_calls_no_tool(run_task: RunTask, protocol: str) -> None:
    # "What is 12 times 7?" and "What is the capital of France?" made this model call a
    # tool under the demo's "do not guess" guideline, with and without the grammar.
    state = run_task("What does SQL stand for?", protocol=protocol)
    assert state["trace"] == []
    assert len([m for m in state["messages"] if isinstance(m, AIMessage)]) == 1
    assert "structured query language" in state["answer"].lower()


def test_a_column_named_only_in_the_schema_is_queried(run_task: RunTask) -> None:
    state = run_task("In which city does Elena Rossi live?")
    assert tools_called(state) == [("sql_query", "ok")]
    assert "city" in state["trace"][0]["args"]["sql"].lower()
    assert "Milan" in state["answer"]


def test_a_project_rule_on_money_amounts_is_followed(
    run_task: RunTask, demo_database: Path
) -> None:
    # Project 1 requires "two decimals and the currency, for example 12.50 EUR"; the same
    # question without the project's rules is the control. Both sum a column right.
    question = "What is the total amount of all orders?"
    with_rule = run_task(question, project_id=1)
    without_rule = run_task(question)
    total = database_value(demo_database, "SELECT SUM(amount) FROM orders")
    assert tools_called(with_rule) == [("sql_query", "ok")]
    assert tools_called(without_rule) == [("sql_query", "ok")]
    assert total in numbers_in(without_rule["answer"])
    assert re.search(rf"{total:.2f} ?EUR", with_rule["answer"]), with_rule["answer"]
    assert "EUR" not in without_rule["answer"], without_rule["answer"]
