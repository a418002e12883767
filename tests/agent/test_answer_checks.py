"""Every answer passes the OUTPUT checks before it leaves the graph: redact, revise, block."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.facade import RulesAgent
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import call_step, run

MODES = ["sync", "async"]

NO_EMAILS = Rule(
    id="no_emails",
    type="prohibition",
    target="output",
    content="Never reveal e-mail addresses.",
    priority=100,
    check={"forbid": "email"},
)
EUROS = Rule(
    id="amounts_in_eur",
    type="requirement",
    target="output",
    content="Write money amounts with two decimals and EUR, for example 12.50 EUR.",
    priority=50,
    check={"require": r"regex:\d[.,]\d{2} ?EUR\b", "when": r"regex:\d[.,]\d"},
)
FRENCH = Rule(
    id="in_french",
    type="requirement",
    target="output",
    content="Answer in French.",
    priority=90,
    check={"language": "fr"},
)
SHORT = Rule(
    id="short",
    type="constraint",
    target="output",
    content="Answer in at most 40 characters.",
    priority=80,
    check={"max_chars": 40, "on_fail": "block"},
)
NO_CODES = Rule(
    id="no_codes",
    type="prohibition",
    target="output",
    content="Never write internal codes such as X-1234.",
    priority=70,
    check={"forbid": r"regex:\bX-\d{4}\b", "on_fail": "revise"},
)
POLITE = Rule(
    id="polite",
    type="guideline",
    target="output",
    content="Thank the user at the end of every answer.",
    priority=10,
)


def store_with(*rules: Rule) -> InMemoryRuleStore:
    store = InMemoryRuleStore()
    for rule in rules:
        store.create(rule)
    return store


def agent_with(model: ScriptedChatModel, *rules: Rule, **options: Any) -> Any:
    return create_rules_agent(model, [lookup], rules=store_with(*rules), **options)


@tool
def lookup(key: str) -> str:
    """Look a value up."""
    return f"value of {key}"


def revision_request(task: str, answer: str, rules: str) -> str:
    return (
        f"Task: {task}\nAnswer: {answer}\n\n"
        f"Rewrite the answer so that it follows these rules, keeping its facts:\n{rules}\n\n"
        "Reply with FINAL: followed by the rewritten answer."
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_forbidden_match_is_redacted_in_the_answer_and_the_history(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: Write to alice.martin@example.com today."])
    result = run(agent_with(model, NO_EMAILS), "Alice's address?", mode)

    assert result["answer"] == "Write to [redacted: email] today."
    assert result["messages"][-1].content == "Write to [redacted: email] today."
    assert all("alice.martin@" not in message.text for message in result["messages"])
    assert result["rule_events"] == [
        {"rule_id": "no_emails", "status": "redacted", "detail": "redacted 1 match of email"}
    ]
    assert len(model.calls) == 1


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_that_passes_is_given_as_it_is_with_passed_events(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: The total is 626.25 EUR."])
    result = run(agent_with(model, NO_EMAILS, EUROS), "Total?", mode)

    assert result["answer"] == "The total is 626.25 EUR."
    assert result["rule_events"] == [
        {"rule_id": "no_emails", "status": "passed", "detail": "no match of email"},
        {"rule_id": "amounts_in_eur", "status": "passed", "detail": "the required pattern matched"},
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_missing_requirement_gets_one_focused_revision_without_tools(mode: str) -> None:
    model = ScriptedChatModel(
        ["FINAL: The teapot costs 45.0", "FINAL: The teapot costs 45.00 EUR."]
    )
    result = run(agent_with(model, EUROS), "Price of the teapot?", mode)

    assert result["answer"] == "The teapot costs 45.00 EUR."
    revision = model.calls[1]
    assert revision.tools == []
    assert [type(m) for m in revision.messages] == [HumanMessage]
    assert revision.messages[0].text == revision_request(
        "Price of the teapot?",
        "The teapot costs 45.0",
        "- Write money amounts with two decimals and EUR, for example 12.50 EUR.",
    )
    assert [(e["rule_id"], e["status"]) for e in result["rule_events"]] == [
        ("amounts_in_eur", "revised"),
        ("amounts_in_eur", "passed"),
    ]
    assert result["usage"]["model_calls"] == 2


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_in_the_wrong_language_is_revised_into_the_right_one(mode: str) -> None:
    model = ScriptedChatModel(
        ["FINAL: We have nine active customers.", "FINAL: Nous avons neuf clients actifs."]
    )
    result = run(agent_with(model, FRENCH), "How many?", mode)

    assert result["answer"] == "Nous avons neuf clients actifs."
    first, second = result["rule_events"]
    assert (first["status"], second["status"]) == ("revised", "passed")
    assert first["detail"].startswith("detected en")


@pytest.mark.parametrize("mode", MODES)
def test_a_forbidden_pattern_that_revises_is_rewritten(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: Use X-1234 to log in.", "FINAL: Use your internal code."])
    result = run(agent_with(model, NO_CODES), "How do I log in?", mode)

    assert result["answer"] == "Use your internal code."
    assert [e["status"] for e in result["rule_events"]] == ["revised", "passed"]


@pytest.mark.parametrize("mode", MODES)
def test_a_blocking_rule_replaces_the_answer_and_calls_no_model(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: " + "a long answer " * 10])
    result = run(agent_with(model, SHORT), "Tell me everything.", mode)

    assert result["answer"] == (
        "I can't give that answer: it would break rule short: Answer in at most 40 characters."
    )
    assert result["messages"][-1].content == result["answer"]
    assert result["rule_events"] == [
        {
            "rule_id": "short",
            "status": "blocked",
            "detail": "139 characters; the limit is max_chars=40",
        }
    ]
    assert len(model.calls) == 1


@pytest.mark.parametrize("mode", MODES)
def test_revisions_that_never_fix_the_answer_end_blocked(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: It costs 45.0", "FINAL: It costs 45.0", "FINAL: 45.0 !"])
    result = run(agent_with(model, EUROS), "Price?", mode)

    assert result["answer"] == (
        "I can't give that answer: it would break rule amounts_in_eur: Write money amounts "
        "with two decimals and EUR, for example 12.50 EUR."
    )
    assert len(model.calls) == 3  # the answer and max_revisions=2 revisions
    assert [e["status"] for e in result["rule_events"]] == ["revised", "blocked"]
    assert result["usage"]["model_calls"] == 3


def test_max_revisions_zero_blocks_at_once() -> None:
    model = ScriptedChatModel(["FINAL: It costs 45.0"])
    result = run(agent_with(model, EUROS, max_revisions=0), "Price?", "sync")

    assert result["answer"].startswith("I can't give that answer: it would break rule amounts")
    assert len(model.calls) == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_revision_counts_against_the_model_call_budget(mode: str) -> None:
    # One call is left after the answer: one revision, then the budget blocks the second.
    model = ScriptedChatModel(["FINAL: It costs 45.0", "FINAL: It is 45.0"])
    result = run(agent_with(model, EUROS, max_model_calls=2), "Price?", mode)

    assert len(model.calls) == 2
    assert result["usage"]["model_calls"] == 2
    assert result["answer"].startswith("I can't give that answer")


def test_a_revision_counts_against_the_token_budget() -> None:
    spent = AIMessage(
        "FINAL: It costs 45.0",
        usage_metadata={"input_tokens": 90, "output_tokens": 10, "total_tokens": 100},
    )
    model = ScriptedChatModel([spent])
    result = run(agent_with(model, EUROS, max_total_tokens=100), "Price?", "sync")

    assert len(model.calls) == 1
    assert result["answer"].startswith("I can't give that answer")


@pytest.mark.parametrize("mode", MODES)
def test_a_revision_that_writes_a_forbidden_match_is_redacted(mode: str) -> None:
    model = ScriptedChatModel(
        ["FINAL: It costs 45.0", "FINAL: It costs 45.00 EUR; ask bob@example.org."]
    )
    result = run(agent_with(model, NO_EMAILS, EUROS), "Price?", mode)

    assert result["answer"] == "It costs 45.00 EUR; ask [redacted: email]."
    assert [(e["rule_id"], e["status"]) for e in result["rule_events"]] == [
        ("no_emails", "passed"),
        ("amounts_in_eur", "revised"),
        ("no_emails", "redacted"),
        ("amounts_in_eur", "passed"),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_the_revision_sees_the_answer_already_redacted(mode: str) -> None:
    model = ScriptedChatModel(
        ["FINAL: Alice (alice@example.com) paid 45.0", "FINAL: Alice paid 45.00 EUR."]
    )
    run(agent_with(model, NO_EMAILS, EUROS), "Who paid?", mode)

    assert "alice@example.com" not in model.calls[1].messages[0].text
    assert "Alice ([redacted: email]) paid 45.0" in model.calls[1].messages[0].text


@pytest.mark.parametrize("mode", MODES)
def test_the_limit_answer_is_checked_too(mode: str) -> None:
    model = ScriptedChatModel(
        [call_step("native", "lookup", key="a"), "FINAL: Reach carol@example.net."]
    )
    result = run(agent_with(model, NO_EMAILS, max_iterations=1), "Contact?", mode)

    assert result["stop_reason"] == "max_iterations"
    assert result["answer"] == "Reach [redacted: email]."
    assert result["rule_events"][-1]["status"] == "redacted"


def test_the_fixed_limit_answer_is_checked_too() -> None:
    model = ScriptedChatModel([call_step("native", "lookup", key="a")])
    result = run(agent_with(model, SHORT, max_iterations=1, on_limit="end"), "x", "sync")

    assert result["stop_reason"] == "max_iterations"
    assert result["answer"].startswith("I can't give that answer: it would break rule short")


@pytest.mark.parametrize("mode", MODES)
def test_the_repeated_calls_answer_is_checked_too(mode: str) -> None:
    model = ScriptedChatModel(
        [
            call_step("native", "lookup", key="a"),
            call_step("native", "lookup", key="a"),
            "FINAL: Reach dan@example.com.",
        ]
    )
    result = run(agent_with(model, NO_EMAILS), "Contact?", mode)

    assert result["stop_reason"] == "repeated_calls"
    assert result["answer"] == "Reach [redacted: email]."


def test_rules_without_a_check_stay_prompt_only() -> None:
    model = ScriptedChatModel(["FINAL: alice@example.com"])
    result = run(agent_with(model, POLITE), "x", "sync")

    assert result["answer"] == "alice@example.com"
    assert result["rule_events"] == []


def test_the_next_turn_of_a_thread_sees_only_the_checked_answer() -> None:
    model = ScriptedChatModel(["FINAL: It is erin@example.com", "FINAL: Done."])
    agent = create_rules_agent(
        model, [lookup], rules=store_with(NO_EMAILS), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [("user", "Address?")]}, config)
    agent.invoke({"messages": [("user", "Thanks")]}, config)

    assert all("erin@" not in message.text for message in model.calls[1].messages)


def test_a_checked_answer_is_not_streamed_before_the_check() -> None:
    model = ScriptedChatModel(["FINAL: Write to frank@example.com now."])
    agent = RulesAgent(model, rules=store_with(NO_EMAILS), protocol="text")

    events = list(agent.stream("Address?", answer_deltas=True))

    deltas = "".join(e["text"] for e in events if e["type"] == "answer_delta")
    assert "frank@" not in deltas
    assert events[-1]["answer"] == "Write to [redacted: email] now."


def test_without_answer_checks_the_answer_streams() -> None:
    model = ScriptedChatModel(["FINAL: Write to frank@example.com now."])
    agent = RulesAgent(model, rules=store_with(POLITE), protocol="text")

    events = list(agent.stream("Address?", answer_deltas=True))

    deltas = "".join(e["text"] for e in events if e["type"] == "answer_delta")
    assert deltas == "Write to frank@example.com now."


@pytest.mark.parametrize("mode", MODES)
def test_review_off_makes_no_extra_call(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: 42"])
    result = run(agent_with(model, POLITE), "x", mode)

    assert (len(model.calls), result["rule_events"]) == (1, [])


@pytest.mark.parametrize("mode", MODES)
def test_review_asks_the_model_about_the_rules_without_a_check(mode: str) -> None:
    model = ScriptedChatModel(["FINAL: The answer is 42.", "OK"])
    result = run(agent_with(model, POLITE, NO_EMAILS, review="model"), "x", mode)

    assert result["answer"] == "The answer is 42."
    review = model.calls[1]
    assert review.tools == []
    assert review.messages[0].text == (
        "Task: x\nAnswer: The answer is 42.\n\nDoes the answer follow these rules?\n"
        "- Thank the user at the end of every answer.\n\nIf it does, reply with OK only. "
        "Otherwise reply with FINAL: followed by the answer rewritten to follow them, keeping "
        "its facts."
    )
    assert result["rule_events"] == [
        {
            "rule_id": "polite",
            "status": "passed",
            "detail": "the model's review found the answer follows it",
        },
        {"rule_id": "no_emails", "status": "passed", "detail": "no match of email"},
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_review_that_rewrites_gives_the_rewritten_answer_checked(mode: str) -> None:
    model = ScriptedChatModel(
        ["FINAL: The answer is 42.", "FINAL: The answer is 42. Thank you! (gus@example.com)"]
    )
    result = run(agent_with(model, POLITE, NO_EMAILS, review="model"), "x", mode)

    assert result["answer"] == "The answer is 42. Thank you! ([redacted: email])"
    assert [(e["rule_id"], e["status"]) for e in result["rule_events"]] == [
        ("polite", "revised"),
        ("no_emails", "redacted"),
    ]


def test_review_without_budget_is_skipped_and_said() -> None:
    model = ScriptedChatModel(["FINAL: 42"])
    result = run(agent_with(model, POLITE, review="model", max_model_calls=1), "x", "sync")

    assert result["answer"] == "42"
    assert result["rule_events"][0]["detail"] == "not reviewed: no model call is left in the budget"


@pytest.mark.parametrize("protocol", ["native", "text"])
def test_no_stream_mode_shows_the_answer_before_its_check(protocol: str) -> None:
    model = ScriptedChatModel(
        [call_step(protocol, "lookup", key="a"), "FINAL: Write to hal@example.com."]
    )
    agent = create_rules_agent(model, [lookup], rules=store_with(NO_EMAILS), protocol=protocol)

    chunks = list(
        agent.stream(
            {"messages": [("user", "Contact?")]}, stream_mode=["updates", "values", "messages"]
        )
    )

    assert "hal@" not in repr(chunks)
    final = [chunk for mode, chunk in chunks if mode == "values"][-1]
    assert final["answer"] == "Write to [redacted: email]."
    assert "draft" not in final


def test_the_draft_is_private_to_the_graph() -> None:
    agent = create_rules_agent(ScriptedChatModel([]))

    assert "draft" not in agent.get_output_jsonschema()["properties"]
    assert "answer" in agent.get_output_jsonschema()["properties"]
