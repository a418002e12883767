"""What the tables and the chart share: cells, colours, where rule events happened, titles."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_agent_rules.agent.result import RunResult

__all__ = [
    "COLOURS",
    "NAME_WIDTH",
    "STATUS_STYLES",
    "cell",
    "colour",
    "count",
    "event_places",
    "label",
    "rule_marks",
    "shorten",
    "status_colour",
    "step_events",
    "summary",
]

STATUS_STYLES = {"ok": "green", "repeated": "yellow", "rejected": "yellow"}
"""The rich style of a tool call's status; every other status is red."""

NAME_WIDTH = 64
# Rich style -> colour in HTML and in the chart (GitHub's light palette).
COLOURS = {"green": "#1a7f37", "yellow": "#9a6700", "red": "#cf222e"}
# Control characters and lone surrogates: shown as U+FFFD, never sent to a terminal or a
# notebook file (a lone surrogate cannot be written as UTF-8).
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def cell(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` with an ellipsis, unprintables as U+FFFD."""
    return _UNPRINTABLE.sub("\ufffd", shorten(text, width))


def label(text: str, width: int) -> str:
    """A cell for the chart: a dollar sign is shown, never read as the start of math."""
    return cell(text, width).replace("$", r"\$")


def colour(style: str) -> str:
    """The colour of a rich style (``green``, ``yellow``); red for any other."""
    return COLOURS.get(style, COLOURS["red"])


def status_colour(status: str) -> str:
    """The colour of a tool call's status: green ``ok``, amber ``repeated``/``rejected``."""
    return colour(STATUS_STYLES.get(status, "red"))


def step_events(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """What the rules' checks did about one tool call (steps of older runs have none)."""
    return list(step.get("rule_events") or [])


def rule_marks(step: Mapping[str, Any]) -> str:
    """What the rules did to a tool call, as ``<rule> <status>`` (passed checks left out)."""
    return ", ".join(
        f"{event['rule_id']} {event['status']}"
        for event in step_events(step)
        if event["status"] != "passed"
    )


def event_places(run: RunResult) -> list[str]:
    """Where each of ``run.rule_events`` happened (each step's events matched once)."""
    owners: list[tuple[Mapping[str, Any], str]] = [
        (event, f"step {step['step']} ({step['tool']})")
        for step in run.trace
        for event in step_events(step)
    ]
    places = []
    for event in run.rule_events:
        owner = next((pair for pair in owners if pair[0] == event), None)
        if owner is not None:
            owners.remove(owner)
            places.append(cell(owner[1], NAME_WIDTH))
        else:
            places.append("prompt" if event["status"] == "omitted" else "answer")
    return places


def summary(run: RunResult) -> str:
    """How many model and tool calls ``run`` made, and why it stopped."""
    return (
        f"{count(run.usage['model_calls'], 'model call')}, "
        f"{count(len(run.trace), 'tool call')}, stop: {run.stop_reason}"
    )


def count(number: int, noun: str) -> str:
    """``number`` and ``noun``, plural unless one."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
