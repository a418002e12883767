"""Hold an answer to the rules: a model review, the code checks, revisions, and a block.

`answer_enforcement` is the whole procedure as a generator: it yields each model request
(a list of messages, for a model without tools) and is sent the reply, or ``None`` when
no budget is left for another call; it returns an `EnforcedAnswer`. `AgentRulesMiddleware`
drives it inside the model step, the same steps for sync and async runs:

1. With ``review="model"`` and OUTPUT rules that have no check, one call asks the model
   whether the answer to the task follows them (`REVIEW_REQUEST`); a rewritten answer
   replaces it.
2. `check_answer` runs the checks of the OUTPUT rules. A redacted or passing answer is
   given; a blocked one becomes `ANSWER_BLOCKED` naming the first blocking rule.
3. An answer that needs revision gets one focused call (`REVISION_REQUEST`: the task, the
   answer, already redacted, and the failing rules' content) and is checked again. After
   ``max_revisions`` revisions, or when no budget is left, it is blocked.

Events: the first check records one `RuleEvent` per checked rule; later checks record a
rule again only when its event changed (``revised`` then ``passed``, or ``blocked``), so
a rule that kept passing appears once.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage

from langchain_agent_rules.middleware._arguments import clean_text
from langchain_agent_rules.middleware.prompts import (
    ANSWER_BLOCKED,
    REVIEW_PASSED,
    REVIEW_REQUEST,
    REVISION_REQUEST,
    RULE_CONTENT_LINE,
)
from langchain_agent_rules.options import Review
from langchain_agent_rules.rules.engine import (
    AnswerVerdict,
    RuleEvent,
    RuleEventStatus,
    check_answer,
)
from langchain_agent_rules.rules.model import Rule, RuleTarget
from langchain_agent_rules.text_protocol import extract_answer

__all__ = [
    "REVIEW_PASSED_DETAIL",
    "REVIEW_REWROTE_DETAIL",
    "REVIEW_SKIPPED_DETAIL",
    "EnforcedAnswer",
    "Enforcement",
    "ModelRequest",
    "answer_enforcement",
    "is_enforced",
    "reviews_answer",
]

REVIEW_PASSED_DETAIL = "the model's review found the answer follows it"
REVIEW_REWROTE_DETAIL = "the model's review rewrote the answer"
REVIEW_SKIPPED_DETAIL = "not reviewed: no model call is left in the budget"

ModelRequest = list[BaseMessage]
_REVIEW_PASSED = re.compile(rf"\W*{REVIEW_PASSED}\b", re.IGNORECASE)


@dataclass(frozen=True)
class EnforcedAnswer:
    """The answer to give, and the events of the rules that judged it."""

    text: str
    events: list[RuleEvent]


Enforcement = Generator[ModelRequest, BaseMessage | None, EnforcedAnswer]


def _output_rules(rules: Iterable[Rule]) -> list[Rule]:
    return sorted((r for r in rules if r.target is RuleTarget.OUTPUT), key=lambda r: -r.priority)


def _reviewed_rules(rules: Iterable[Rule], review: Review) -> list[Rule]:
    if review != "model":
        return []
    return [rule for rule in _output_rules(rules) if rule.check is None]


def reviews_answer(rules: Iterable[Rule], review: Review) -> bool:
    """Whether the model reviews an answer under ``rules`` (the first request, step 1)."""
    return bool(_reviewed_rules(rules, review))


def is_enforced(rules: Iterable[Rule], review: Review) -> bool:
    """Whether an answer under ``rules`` can change before it is given (so not streamed)."""
    output = _output_rules(rules)
    return any(r.check is not None and r.check.is_answer_check for r in output) or (
        reviews_answer(output, review)
    )


def _rule_lines(rules: Iterable[Rule]) -> str:
    return "\n".join(RULE_CONTENT_LINE.format(content=rule.content) for rule in rules)


def _request(template: str, rules: Iterable[Rule], task: str, answer: str) -> ModelRequest:
    return [HumanMessage(template.format(task=task, answer=answer, rules=_rule_lines(rules)))]


def _reply_text(reply: BaseMessage) -> str:
    return clean_text(extract_answer(reply.text))


class _Events:
    """The events recorded so far: a rule again only when its event changed."""

    def __init__(self) -> None:
        self.recorded: list[RuleEvent] = []
        self._last: dict[str, RuleEvent] = {}

    def add(self, events: Iterable[RuleEvent]) -> None:
        for event in events:
            if self._last.get(event["rule_id"]) != event:
                self.recorded.append(event)
                self._last[event["rule_id"]] = event


_Review = Generator[ModelRequest, BaseMessage | None, tuple[str, list[RuleEvent]]]


def _review(rules: Sequence[Rule], task: str, answer: str) -> _Review:
    reply = yield _request(REVIEW_REQUEST, rules, task, answer)
    status: RuleEventStatus = "passed"
    if reply is None:
        detail, text = REVIEW_SKIPPED_DETAIL, answer
    else:
        reviewed = _reply_text(reply)
        if not reviewed or _REVIEW_PASSED.match(reviewed):
            detail, text = REVIEW_PASSED_DETAIL, answer
        else:
            status, detail, text = "revised", REVIEW_REWROTE_DETAIL, reviewed
    return text, [RuleEvent(rule_id=rule.id, status=status, detail=detail) for rule in rules]


def _blocked(verdict: AnswerVerdict) -> str:
    rule = verdict.failures[0].rule
    return ANSWER_BLOCKED.format(rule_id=rule.id, content=rule.content)


def answer_enforcement(
    rules: Sequence[Rule],
    answer: str,
    *,
    task: str,
    max_revisions: int,
    review: Review = "off",
) -> Enforcement:
    """The steps that hold ``answer`` (to ``task``) to ``rules`` (see the module docs)."""
    events = _Events()
    reviewed = _reviewed_rules(rules, review)
    if reviewed:
        answer, review_events = yield from _review(reviewed, task, answer)
        events.add(review_events)
    verdict = check_answer(rules, answer)
    events.add(verdict.events)
    revisions = 0
    while verdict.status == "needs_revision":
        reply = None
        if revisions < max_revisions:
            failing = [failure.rule for failure in verdict.failures]
            reply = yield _request(REVISION_REQUEST, failing, task, verdict.text)
        if reply is None:
            verdict = verdict.as_blocked()
            events.add(verdict.events)
            break
        revisions += 1
        verdict = check_answer(rules, _reply_text(reply) or verdict.text)
        events.add(verdict.events)
    if verdict.status == "blocked":
        return EnforcedAnswer(_blocked(verdict), events.recorded)
    return EnforcedAnswer(verdict.text, events.recorded)
