"""After tools ran, an answer states only what the tools, the task or the rules say."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool

from langchain_agent_rules import RulesAgent
from langchain_agent_rules.middleware.grounding import ungrounded_claims
from langchain_agent_rules.middleware.prompts import GROUNDING_REQUEST, UNGROUNDED_ANSWER
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import call_step


@tool
def salaries(name: str) -> str:
    """Look a salary up."""
    return "0 rows: no row matched WHERE name = 'Zoe Park'"


@pytest.mark.parametrize(
    ("answer", "sources", "claims"),
    [
        ("Zoe earns 50,000 EUR.", ["0 rows"], ["50,000"]),
        ("It is 626.25 EUR.", ['{"total": 626.250}'], []),
        ("15% of 240 is 36.", ["What is 15% of 240?"], []),
        ("The share is 33.33%.", ["count 40", "total 120"], []),
        ("Ann Lee runs it with 3 people.", ['[{"name": "ann lee"}]'], []),
        ("The manager is John Smith.", ['[{"name": "Ann Lee"}]'], ["John Smith"]),
        ("The Research department has 12 agents.", ["research", "12"], []),
        ("We have 9 customers.", ["n: 9"], []),
        ("There are 1,234 tickets.", ["1234"], []),
    ],
)
def test_numbers_and_names_must_come_from_a_source(
    answer: str, sources: list[str], claims: list[str]
) -> None:
    assert ungrounded_claims(answer, sources) == claims


def test_an_invented_answer_is_revised_with_what_the_tools_returned() -> None:
    model = ScriptedChatModel(
        [
            call_step("native", "salaries", name="Zoe Park"),
            "Zoe Park earns 50,000 EUR.",
            "FINAL: I could not find Zoe Park: the query returned 0 rows.",
        ]
    )
    result = RulesAgent(model, [salaries], grounded_answers=True).invoke("What does Zoe Park earn?")

    assert result.answer == "I could not find Zoe Park: the query returned 0 rows."
    assert [c["purpose"] for c in result.model_calls] == ["turn", "turn", "revision"]
    assert model.calls[2].messages[-1].text == GROUNDING_REQUEST.format(
        task="What does Zoe Park earn?",
        answer="Zoe Park earns 50,000 EUR.",
        observations="[salaries]\n0 rows: no row matched WHERE name = 'Zoe Park'",
        claims="50,000",
    )


def test_a_revision_that_still_invents_says_it_could_not_find_it() -> None:
    model = ScriptedChatModel(
        [call_step("native", "salaries", name="Zoe"), "She earns 50,000.", "FINAL: About 48,000."]
    )
    agent = RulesAgent(model, [salaries], grounded_answers=True)
    assert agent.run("Zoe's salary?") == UNGROUNDED_ANSWER


def test_without_tool_results_or_with_the_option_off_nothing_is_checked() -> None:
    no_tools = ScriptedChatModel(["Paris has 2,100,000 people."])
    agent = RulesAgent(no_tools, grounded_answers=True)
    assert agent.run("Paris?") == "Paris has 2,100,000 people."
    model = ScriptedChatModel([call_step("native", "salaries", name="Zoe"), "She earns 50,000."])
    assert RulesAgent(model, [salaries]).run("Zoe's salary?") == "She earns 50,000."
