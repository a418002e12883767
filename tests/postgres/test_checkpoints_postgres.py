"""A thread checkpointed in PostgreSQL: paused for approval in one process, resumed in another."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .agent_workers import (
    aresume_with,
    read_thread,
    resume_with,
    start_until_approval,
)
from .processes import run_alone

pytestmark = pytest.mark.postgres
APPROVE = {"decisions": [{"type": "approve"}]}


def pause(url: str, thread_id: str) -> dict[str, Any]:
    started: dict[str, Any] = json.loads(run_alone(start_until_approval, url, thread_id))
    assert started["interrupts"] == [
        {
            "action_requests": [
                {
                    "name": "send_email",
                    "args": {"to": "ada@example.com"},
                    "description": 'Tool "send_email" needs a human\'s approval before it runs.',
                }
            ],
            "review_configs": [
                {"action_name": "send_email", "allowed_decisions": ["approve", "edit", "reject"]}
            ],
        }
    ]
    return started


def test_a_thread_paused_in_one_process_is_approved_and_finished_in_another(
    pg_search_path_url: str,
) -> None:
    started = pause(pg_search_path_url, "thread-approve")
    paused = json.loads(run_alone(read_thread, pg_search_path_url, "thread-approve"))
    assert (paused["next"], paused["trace"]) == (["tools"], [])

    resumed = json.loads(run_alone(resume_with, pg_search_path_url, "thread-approve", APPROVE))

    assert resumed["pid"] != started["pid"]
    assert resumed["answer"] == "Ada knows."
    [step] = resumed["trace"]
    assert (step["tool"], step["status"], step["approval"]) == ("send_email", "ok", "approved")
    assert step["observation"] == f"sent to ada@example.com by process {resumed['pid']}"


def test_a_third_process_reads_the_finished_trace(pg_search_path_url: str) -> None:
    pause(pg_search_path_url, "thread-read")
    resumed = json.loads(run_alone(resume_with, pg_search_path_url, "thread-read", APPROVE))

    read = json.loads(run_alone(read_thread, pg_search_path_url, "thread-read"))

    assert read["answer"] == "Ada knows."
    assert read["trace"] == resumed["trace"]
    assert read["messages"] == ["human", "ai", "tool", "ai"]
    assert read["next"] == []


def test_a_rejection_from_another_process_never_runs_the_tool(pg_search_path_url: str) -> None:
    pause(pg_search_path_url, "thread-reject")

    resumed = json.loads(
        run_alone(
            resume_with,
            pg_search_path_url,
            "thread-reject",
            {"decisions": [{"type": "reject", "message": "not yet"}]},
        )
    )

    [step] = resumed["trace"]
    assert (step["status"], step["approval"]) == ("rejected", "rejected")
    assert "sent to" not in step["observation"]


def test_an_async_worker_resumes_a_thread_paused_by_a_sync_one(pg_search_path_url: str) -> None:
    started = pause(pg_search_path_url, "thread-async")

    resumed = json.loads(run_alone(aresume_with, pg_search_path_url, "thread-async", APPROVE))

    assert resumed["pid"] != started["pid"]
    assert resumed["answer"] == "Ada knows."
    assert [step["approval"] for step in resumed["trace"]] == ["approved"]


def test_threads_do_not_see_each_other(pg_search_path_url: str) -> None:
    pause(pg_search_path_url, "thread-one")

    other = json.loads(run_alone(read_thread, pg_search_path_url, "thread-two"))

    assert other == {"answer": None, "trace": None, "messages": [], "next": []}
