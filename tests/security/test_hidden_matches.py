"""Hidden matches: invisible characters, look-alikes, Unicode spaces and decoys.

Every case of the corpus hides one match of a detector in an answer. The redaction must
leave exactly the text around it, so nothing of what a reader would read as the match
stays, invisible characters inside it included; a blocking rule must block it; a tool
result is redacted the same way.
"""

from __future__ import annotations

from operator import attrgetter

import pytest

from langchain_agent_rules.rules.engine import check_answer, redact_observation
from langchain_agent_rules.rules.model import Rule

from .corpus import (
    ANSWER_CASES,
    DECOY_CASES,
    GAPS,
    PREFIX,
    SUFFIX,
    AnswerCase,
)


def forbidding(forbid: str, **check: str) -> Rule:
    return Rule(
        id="hidden",
        type="prohibition",
        target="output",
        content="Never show what this detector finds.",
        check={"forbid": forbid, **check},
    )


def answer(case: AnswerCase) -> str:
    return f"{PREFIX}{case.text}{SUFFIX}"


@pytest.mark.parametrize("case", ANSWER_CASES, ids=attrgetter("id"))
def test_a_hidden_match_is_redacted_exactly(case: AnswerCase) -> None:
    verdict = check_answer([forbidding(case.forbid)], answer(case))
    assert (verdict.status, verdict.text) == ("redacted", case.expected)


@pytest.mark.parametrize("case", ANSWER_CASES, ids=attrgetter("id"))
def test_a_hidden_match_blocks_a_blocking_rule(case: AnswerCase) -> None:
    verdict = check_answer([forbidding(case.forbid, on_fail="block")], answer(case))
    assert verdict.status == "blocked"
    assert verdict.events[0]["detail"].startswith("found 1 match of ")


@pytest.mark.parametrize("case", ANSWER_CASES[::3], ids=attrgetter("id"))
def test_a_hidden_match_is_redacted_from_a_tool_result(case: AnswerCase) -> None:
    rule = forbidding(case.forbid, scope="answer_and_observations")
    assert redact_observation([rule], answer(case)).text == case.expected


@pytest.mark.parametrize(
    ("case", "expected"), DECOY_CASES, ids=[case.id for case, _ in DECOY_CASES]
)
def test_decoys_next_to_a_match_do_not_hide_it(case: AnswerCase, expected: str) -> None:
    verdict = check_answer([forbidding(case.forbid)], answer(case))
    assert (verdict.status, verdict.text) == ("redacted", expected)


@pytest.mark.parametrize("case", GAPS, ids=attrgetter("id"))
def test_the_documented_gaps_are_not_caught(case: AnswerCase) -> None:
    # docs/rules.md lists these as not covered; catching one is a change to document.
    assert check_answer([forbidding(case.forbid)], answer(case)).status == "passed"


def test_the_corpus_is_large_enough() -> None:
    assert len(ANSWER_CASES) + len(DECOY_CASES) >= 200
    assert len({case.id for case in ANSWER_CASES}) == len(ANSWER_CASES)
    assert all(SUFFIX not in case.text for case in ANSWER_CASES)
