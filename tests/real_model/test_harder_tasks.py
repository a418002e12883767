"""A few of the harder tasks (``benchmarks/harder_tasks``), end to end with the embedded model.

The task set is an IT service desk unlike the demo's shop; ``benchmarks/bench_harder_tasks.py``
runs all of it. Here: two tasks of kinds the agent at 76701f2 got wrong (a person who is
not in the data, a month of dates stored as text) and two it got right (the agent who
closed the most tickets, a join with grouping; the reports of a manager, a self-join),
each judged by the task's own checks against values computed from the data.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from langchain_agent_rules import FileReadTool, JsonFileRuleStore, RulesAgent, SqlQueryTool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
desk_data: Any = importlib.import_module("harder_tasks.desk_data")
TASKS = {task.id: task for task in importlib.import_module("harder_tasks.tasks").TASKS}


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("desk")
    return desk_data.DeskData(desk_data.build_database(folder / "helpdesk.sqlite"))


@pytest.fixture(scope="module")
def desk_tools(desk: Any) -> list[BaseTool]:
    return [SqlQueryTool(f"sqlite:///{desk.database}"), FileReadTool(desk_data.DESK)]


def failures_of(task_id: str, model: BaseChatModel, tools: list[BaseTool], desk: Any) -> list[str]:
    """Run one task as the benchmark does; what its checks found wrong, with the trace."""
    task = TASKS[task_id]
    rules = JsonFileRuleStore(desk_data.RULES)
    result = RulesAgent(model, tools, rules=rules, project_id=task.project_id).invoke(task.question)
    failures = task.failures(result.answer, desk)
    steps = [(step["tool"], step["status"], step["args"]) for step in result.trace]
    return [*failures, f"answer: {result.answer!r}", f"steps: {steps}"] if failures else []


def test_every_task_is_supported_by_the_data(desk: Any) -> None:
    # A "most" that became a tie, an absent person added to the data, a file value that
    # no longer matches: the task would judge against the wrong thing.
    assert len(TASKS) >= 20
    assert {task_id: task.problems(desk) for task_id, task in TASKS.items()} == {
        task_id: [] for task_id in TASKS
    }


def test_the_checks_reject_the_wrong_answers_seen_on_the_embedded_model(desk: Any) -> None:
    wrong = {
        "absent_agent_rate": "Marta Kowalski's hourly rate is 20.00.",
        "agent_manager": "Amara Okafor's manager is Amara Okafor's manager.",
        "department_manager": "The manager of the Business Applications department is Agent 4.",
        "percent_of_hours": "The database rejected the query: no such table: dual",
        "hourly_rate_in_chf": "Yuki Tanaka's hourly rate is 109 CHF.",
        "manager_contact_without_email": "Priya Nair: priya.nair@calderfinch.example",
    }
    assert all(TASKS[task_id].failures(answer, desk) for task_id, answer in wrong.items())
    right = {
        "absent_agent_rate": "The query returned 0 rows: there is no agent named Marta Kowalski.",
        "agent_manager": "Amara Okafor reports to Tomas Berg.",
        "department_manager": "Kenji Watanabe manages Business Applications.",
        "percent_of_hours": "15% of 240 hours is 36 hours.",
        "hourly_rate_in_chf": "Yuki Tanaka's hourly rate is 109.00 CHF.",
        "manager_contact_without_email": "Priya Nair manages Security ([redacted: email]).",
    }
    assert {
        task_id: TASKS[task_id].failures(answer, desk) for task_id, answer in right.items()
    } == {task_id: [] for task_id in right}


@pytest.mark.local_model
def test_a_person_who_is_not_in_the_data_is_said_to_be_absent(
    local_model: BaseChatModel, desk_tools: list[BaseTool], desk: Any
) -> None:
    assert failures_of("absent_agent_rate", local_model, desk_tools, desk) == []


@pytest.mark.local_model
def test_a_month_of_dates_stored_as_text_is_counted_right(
    local_model: BaseChatModel, desk_tools: list[BaseTool], desk: Any
) -> None:
    assert failures_of("opened_in_march", local_model, desk_tools, desk) == []


@pytest.mark.local_model
def test_the_agent_who_closed_the_most_tickets_comes_from_a_join_and_a_count(
    local_model: BaseChatModel, desk_tools: list[BaseTool], desk: Any
) -> None:
    assert failures_of("most_closed", local_model, desk_tools, desk) == []


@pytest.mark.local_model
def test_the_reports_of_a_manager_come_from_the_self_join(
    local_model: BaseChatModel, desk_tools: list[BaseTool], desk: Any
) -> None:
    assert failures_of("reports_of_manager", local_model, desk_tools, desk) == []


@pytest.mark.local_model
def test_a_bare_manager_id_is_answered_with_the_name_it_refers_to(
    local_model: BaseChatModel, desk_tools: list[BaseTool], desk: Any
) -> None:
    assert failures_of("department_manager", local_model, desk_tools, desk) == []


@pytest.mark.local_model
def test_arithmetic_sent_to_sql_from_dual_still_gets_its_answer(
    local_model: BaseChatModel, desk_tools: list[BaseTool], desk: Any
) -> None:
    assert failures_of("percent_of_hours", local_model, desk_tools, desk) == []


@pytest.mark.local_model
def test_not_in_over_a_column_with_nulls_still_finds_the_agents_without_tickets(
    local_model: BaseChatModel, desk_tools: list[BaseTool], desk: Any
) -> None:
    assert failures_of("agents_without_tickets", local_model, desk_tools, desk) == []
