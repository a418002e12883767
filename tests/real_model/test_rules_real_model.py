"""The demo rules' checks with the embedded model, each against a control run without them.

The control run asks the same question with the same rules, their checks taken away: the
prompt is the same, so the model's draft is the same, and the control shows the rule in
the prompt alone did not hold. The checked run shows the check made it hold.

Cost, measured with the embedded model (greedy, so every run repeats): 6 runs, 14 model
calls, 2,205 prompt tokens evaluated (of 6,315; the rest reused from the prefix cache)
and 249 tokens generated (78 of them forced by the grammar); each revision is one call of
~100 prompt and ~20 generated tokens.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.demo import DEMO_QUESTIONS, demo_rules_path
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.language import detect_language
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.store import RuleReader

from .conftest import database_value, numbers_in

pytestmark = pytest.mark.local_model

AN_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


@pytest.fixture(scope="module")
def checked_rules() -> RuleReader:
    return JsonFileRuleStore(demo_rules_path())


@pytest.fixture(scope="module")
def prompt_only_rules(checked_rules: RuleReader) -> RuleReader:
    """The demo rules with their checks taken away: text in the prompt, nothing more."""
    rules = {
        rule.id: rule
        for project_id in (1, 2)
        for rule in checked_rules.get_all_by_project(project_id)
    }
    store = InMemoryRuleStore()
    for rule in rules.values():
        store.create(rule.with_changes(check=None))
    return store


def ask(
    model: BaseChatModel,
    tools: list[BaseTool],
    rules: RuleReader,
    question: str,
    project_id: int | None = None,
) -> dict[str, Any]:
    agent = create_rules_agent(model, tools, rules=rules, project_id=project_id)
    return dict(agent.invoke({"messages": [("user", question)]}))


def ask_streamed(
    model: BaseChatModel, tools: list[BaseTool], rules: RuleReader, question: str
) -> tuple[dict[str, Any], str]:
    """The run's final state, and all the model node showed of its replies on the way.

    (A tool's result may hold an address: the demo rule covers answers, not observations.)
    """
    agent = create_rules_agent(model, tools, rules=rules)
    modes: Any = ["messages", "updates", "values"]
    shown, state = [], {}
    for mode, part in agent.stream({"messages": [("user", question)]}, stream_mode=modes):
        if mode == "messages" and part[1]["langgraph_node"] == "model":
            shown.append(part[0].text)
        elif mode == "updates" and "model" in part:
            shown.append(repr(part["model"]))
        elif mode == "values":
            state = part
    return dict(state), "\n".join(shown)


def statuses(state: dict[str, Any], rule_id: str) -> list[str]:
    return [event["status"] for event in state["rule_events"] if event["rule_id"] == rule_id]


def test_no_answer_reveals_an_email_address(
    local_model: BaseChatModel,
    demo_tools: list[BaseTool],
    checked_rules: RuleReader,
    prompt_only_rules: RuleReader,
) -> None:
    question = DEMO_QUESTIONS[3].question

    control = ask(local_model, demo_tools, prompt_only_rules, question)
    checked, streamed = ask_streamed(local_model, demo_tools, checked_rules, question)

    assert AN_ADDRESS.search(control["answer"]), control["answer"]
    assert not AN_ADDRESS.search(checked["answer"]), checked["answer"]
    # The draft held an address (the control shows it); no stream mode ever showed it.
    drafted = AN_ADDRESS.search(control["answer"])
    assert drafted is not None and drafted.group() not in streamed
    assert "[redacted: email]" in checked["answer"]
    assert statuses(checked, "no_email_addresses") == ["redacted"]


def test_money_amounts_carry_eur(
    local_model: BaseChatModel,
    demo_tools: list[BaseTool],
    demo_database: Path,
    checked_rules: RuleReader,
    prompt_only_rules: RuleReader,
) -> None:
    # From the prompt alone the model writes EUR, but not always two decimals ("60.0 EUR").
    question = "What is the price of the most expensive product?"
    price = f"{database_value(demo_database, 'SELECT MAX(price) FROM products'):.2f}"
    rule_format = re.compile(r"\d[.,]\d{2} ?EUR\b")

    control = ask(local_model, demo_tools, prompt_only_rules, question, project_id=1)
    checked = ask(local_model, demo_tools, checked_rules, question, project_id=1)

    assert float(price) in numbers_in(control["answer"]), control["answer"]
    assert not rule_format.search(control["answer"]), control["answer"]
    assert re.search(rf"{re.escape(price)} ?EUR", checked["answer"]), checked["answer"]
    assert statuses(checked, "amounts_in_eur") == ["revised", "passed"]


def test_project_2_answers_are_in_french(
    local_model: BaseChatModel,
    demo_tools: list[BaseTool],
    checked_rules: RuleReader,
    prompt_only_rules: RuleReader,
) -> None:
    question = "How many active customers do we have?"

    control = ask(local_model, demo_tools, prompt_only_rules, question, project_id=2)
    checked = ask(local_model, demo_tools, checked_rules, question, project_id=2)

    detected = detect_language(control["answer"])
    assert detected is None or detected[0] != "fr", control["answer"]
    language = detect_language(checked["answer"])
    assert language is not None and language[0] == "fr", checked["answer"]
    assert "9" in checked["answer"]
    assert statuses(checked, "answer_in_french")[-1] == "passed"
