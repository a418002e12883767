"""The check engine: pure functions that hold answers and tool calls to the rules' checks.

- `check_answer` runs the answer checks of OUTPUT rules and returns an `AnswerVerdict`:
  ``passed``, ``redacted`` (the text with matches replaced), ``needs_revision`` (the
  failing rules, for one focused revision) or ``blocked`` (the rule that blocks it).
- `check_tool_call` runs the tool checks of TOOL rules and returns a `ToolVerdict`:
  ``allowed``, ``denied`` or ``approval`` (a human must approve the call first).
- `redact_observation` redacts a tool observation for the forbid checks whose scope is
  ``answer_and_observations``.

Each returns ``events``: one `RuleEvent` (``{"rule_id", "status", "detail"}``) per rule
whose check applied, in priority order. Details never quote the text they judge.

Rules without a check, and checks that do not apply (a tool check for an answer), are
skipped, so callers pass the effective rules as they are. Rules are taken highest
priority first; rules of equal priority keep their order.

Order of work for an answer: forbid checks that redact run first, one after the other;
every other check then judges the redacted text, which is what would leave. A blocking
failure wins over a revision, a revision over a redaction.

Detectors and patterns read each text as written and as a reader reads it (NFKC,
invisible characters removed, look-alikes folded: `checked_text`, `normalized`); a match
in either counts, and a redaction removes everything the match was read from.

Checks fail closed: a check that cannot read the whole text (over `MAX_CHECKED_CHARS`,
past `PATTERN_TIMEOUT_SECONDS` for one search or `CHECK_BUDGET_SECONDS` for one call, or
the phone detector's limits) counts as failed, and its event says why. A forbid check
that would have redacted blocks the answer instead (the matches cannot be found, so
nothing can be shown), and in an observation the whole text is replaced by the
redaction mark. A tool check that cannot read the arguments applies its ``on_fail``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from operator import attrgetter
from typing import Literal, cast

import regex
from typing_extensions import TypedDict

from langchain_agent_rules.rules.arguments import argument_texts
from langchain_agent_rules.rules.check import Detector, RuleCheck, compiled_value, parse_detector
from langchain_agent_rules.rules.checked_text import (
    CHECK_BUDGET_SECONDS,
    MAX_CHECKED_CHARS,
    PATTERN_TIMEOUT_SECONDS,
    Budget,
    CheckedText,
)
from langchain_agent_rules.rules.detectors import IncompleteScan, Span
from langchain_agent_rules.rules.language import LANGUAGE_MIN_SCORE, detect_language
from langchain_agent_rules.rules.model import Rule, RuleTarget
from langchain_agent_rules.rules.screen import Screen, screen_of

__all__ = [
    "CHECK_BUDGET_SECONDS",
    "MAX_CHECKED_CHARS",
    "PATTERN_TIMEOUT_SECONDS",
    "AnswerVerdict",
    "CheckFailure",
    "Redaction",
    "RuleEvent",
    "RuleEventStatus",
    "ToolVerdict",
    "check_answer",
    "check_tool_call",
    "redact_observation",
    "redaction_mark",
]

RuleEventStatus = Literal[
    "passed", "redacted", "revised", "blocked", "denied", "approval", "omitted"
]

REDACTION_MARK_TEMPLATE = "[redacted: {detector}]"
NOT_FOUND_DETAIL = "no match of {detector}"
FOUND_DETAIL = "found {matches} of {detector}"
REDACTED_DETAIL = "redacted {matches} of {detector}"
REQUIRED_FOUND_DETAIL = "the required pattern matched"
REQUIRED_MISSING_DETAIL = "the required pattern did not match"
NOT_REQUIRED_DETAIL = "not required: the when pattern did not match"
REQUIRED_MISSING_WHEN_DETAIL = "the when pattern matched but the required pattern did not"
LANGUAGE_MATCH_DETAIL = "written in {expected} (score {score:.2f})"
LANGUAGE_OTHER_DETAIL = "detected {found} (score {score:.2f}); expected {expected}"
LANGUAGE_NONE_DETAIL = "no language detected; expected {expected}"
LENGTH_WITHIN_DETAIL = "{length} characters, within max_chars={limit}"
LENGTH_OVER_DETAIL = "{length} characters; the limit is max_chars={limit}"
TOOL_MATCH_DETAIL = "the call to {tool} is covered by the check"
TOOL_ARGS_MATCH_DETAIL = "the arguments of {tool} match the pattern"
TOOL_ARGS_CLEAR_DETAIL = "the arguments of {tool} do not match the pattern"
TOOL_ARGS_UNREADABLE_DETAIL = (
    "the arguments of {tool} cannot be written as JSON; treated as matching"
)
INCOMPLETE_DETAIL = "the {condition} check {reason}; treated as failed"

_MARKS = regex.compile(r"\[redacted: [a-z_]+\]")
_FAILURE_STATUS: dict[str, RuleEventStatus] = {
    "redact": "redacted",
    "revise": "revised",
    "block": "blocked",
    "deny": "denied",
    "approve": "approval",
}


class RuleEvent(TypedDict):
    """What the agent did about one rule in a run: ``{"rule_id", "status", "detail"}``.

    ``omitted``: the stored rule did not fit the configured limits and was left out of
    the prompt (``detail`` names the limit); every other status is what its check did.
    """

    rule_id: str
    status: RuleEventStatus
    detail: str


@dataclass(frozen=True)
class CheckFailure:
    """A rule whose check failed, and why (``detail`` never quotes the checked text)."""

    rule: Rule
    detail: str


@dataclass(frozen=True)
class AnswerVerdict:
    """The outcome of `check_answer`.

    ``text`` is the answer after redaction (the original when nothing was redacted).
    ``failures`` are the rules to revise for (``needs_revision``) or the rules that
    block it (``blocked``), highest priority first; empty otherwise.
    """

    status: Literal["passed", "redacted", "needs_revision", "blocked"]
    text: str
    failures: tuple[CheckFailure, ...] = ()
    events: tuple[RuleEvent, ...] = ()

    def as_blocked(self) -> AnswerVerdict:
        """The same verdict, blocked: what a caller records when revisions ran out."""
        events = tuple(
            RuleEvent(rule_id=e["rule_id"], status="blocked", detail=e["detail"])
            if e["status"] == "revised"
            else e
            for e in self.events
        )
        return replace(self, status="blocked", events=events)


@dataclass(frozen=True)
class ToolVerdict:
    """The outcome of `check_tool_call`; ``failures`` are the denying or approving rules."""

    status: Literal["allowed", "denied", "approval"]
    failures: tuple[CheckFailure, ...] = ()
    events: tuple[RuleEvent, ...] = ()


@dataclass(frozen=True)
class Redaction:
    """The outcome of `redact_observation`: the text to show and one event per redaction."""

    text: str
    events: tuple[RuleEvent, ...] = ()


def redaction_mark(detector: Detector) -> str:
    """What a match becomes: ``[redacted: email]``, ``[redacted: regex]``."""
    return REDACTION_MARK_TEMPLATE.format(detector=detector.name)


def _label(detector: Detector) -> str:
    return f"{detector.name}:{detector.region}" if detector.region else detector.name


def _matches(count: int) -> str:
    return f"{count} match" if count == 1 else f"{count} matches"


@lru_cache(maxsize=1024)
def _not_found(forbid: str) -> str:
    return NOT_FOUND_DETAIL.format(detector=_label(parse_detector(forbid)))


_PRIORITY = attrgetter("priority")


def _rule_priority(pair: tuple[Rule, object]) -> int:
    return pair[0].priority


def _by_priority(rules: Iterable[Rule]) -> list[Rule]:
    # Stable, like sorting by -priority: rules of equal priority keep their order.
    return sorted(rules, key=_PRIORITY, reverse=True)


def _incomplete(check: RuleCheck, scan: IncompleteScan) -> str:
    return INCOMPLETE_DETAIL.format(condition=check.condition, reason=scan)


def _redacted(text: str, spans: Sequence[Span], mark: str) -> str:
    """``text`` with each span (in order, none overlapping) replaced by ``mark``."""
    pieces, end = [], 0
    for start, stop in spans:
        pieces.append(text[end:start])
        pieces.append(mark)
        end = stop
    pieces.append(text[end:])
    return "".join(pieces)


@dataclass
class _Answer:
    """One answer being checked, with what was computed about it so far."""

    text: str
    budget: Budget
    spans: dict[tuple[str, str], list[Span]] = field(default_factory=dict)
    language: tuple[str, float] | Literal[False] | None = False
    checked: CheckedText | None = None

    def read(self) -> CheckedText:
        if self.checked is None:
            self.checked = CheckedText(self.text, self.budget)
        return self.checked

    def spans_of(self, forbid: str) -> list[Span]:
        key = (forbid, self.text)
        found = self.spans.get(key)
        if found is None:
            found = self.spans[key] = self.read().spans(parse_detector(forbid))
        return found

    def detected_language(self) -> tuple[str, float] | None:
        if self.language is False:
            # Redaction marks are ours, in English: they must not sway the language.
            self.language = detect_language(_MARKS.sub(" ", self.text))
        return self.language


@dataclass(frozen=True, slots=True)
class _Search:
    """A ``regex:<pattern>`` value ready to search: its compiled pattern and its screen."""

    pattern: regex.Pattern[str]
    screen: Screen | None

    @classmethod
    def of(cls, value: str) -> _Search:
        return cls(compiled_value(value), screen_of(value[len("regex:") :]))

    def found(self, text: CheckedText) -> bool:
        """Whether the pattern is found in ``text``; `IncompleteScan` if that is unknown."""
        return text.found(self.pattern, self.screen)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What holding an answer to one check needs, worked out once per check object."""

    check: RuleCheck
    condition: str
    forbid: str | None
    redacts: bool
    require: _Search | None
    when: _Search | None
    failure: RuleEventStatus
    blocks: bool

    @classmethod
    def of(cls, check: RuleCheck) -> _Plan:
        return cls(
            check=check,
            condition=check.condition,
            forbid=check.forbid,
            redacts=check.condition == "forbid" and check.action == "redact",
            require=None if check.require is None else _Search.of(check.require),
            when=None if check.when is None else _Search.of(check.when),
            failure=_FAILURE_STATUS[check.action],
            blocks=check.action == "block",
        )


# Plans by the id of their check (a plan holds its check, so the id stays that check's):
# a store that keeps its rule objects between reads pays for each plan once.
_PLANS: dict[int, _Plan] = {}
_MAX_PLANS = 4096
_OUTPUT = RuleTarget.OUTPUT


def _plan_of(check: RuleCheck) -> _Plan:
    plan = _PLANS.get(id(check))
    if plan is None or plan.check is not check:
        plan = _Plan.of(check)
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        _PLANS[id(check)] = plan
    return plan


def _judge(plan: _Plan, answer: _Answer) -> tuple[bool, str]:
    """Whether ``answer`` passes ``plan`` (not a redacting forbid), and the event detail."""
    condition = plan.condition
    text = answer.text
    try:
        if condition == "forbid":
            forbid = plan.forbid
            assert forbid is not None
            spans = answer.spans_of(forbid)
            if spans:
                label = _label(parse_detector(forbid))
                return False, FOUND_DETAIL.format(matches=_matches(len(spans)), detector=label)
            return True, _not_found(forbid)
        if condition == "require":
            assert plan.require is not None
            when = plan.when
            if when is not None and not when.found(answer.read()):
                return True, NOT_REQUIRED_DETAIL
            if plan.require.found(answer.read()):
                return True, REQUIRED_FOUND_DETAIL
            return False, REQUIRED_MISSING_WHEN_DETAIL if when else REQUIRED_MISSING_DETAIL
    except IncompleteScan as scan:
        return False, _incomplete(plan.check, scan)
    check = plan.check
    if condition == "language":
        expected = check.language
        detected = answer.detected_language()
        if detected is None:
            return False, LANGUAGE_NONE_DETAIL.format(expected=expected)
        found, score = detected
        if found == expected and score >= LANGUAGE_MIN_SCORE:
            return True, LANGUAGE_MATCH_DETAIL.format(expected=expected, score=score)
        return False, LANGUAGE_OTHER_DETAIL.format(found=found, score=score, expected=expected)
    assert check.max_chars is not None
    length = len(text)
    if length <= check.max_chars:
        return True, LENGTH_WITHIN_DETAIL.format(length=length, limit=check.max_chars)
    return False, LENGTH_OVER_DETAIL.format(length=length, limit=check.max_chars)


def _answer_plans(rules: Iterable[Rule]) -> list[tuple[Rule, _Plan]]:
    checked = [
        (rule, _plan_of(check))
        for rule in rules
        if (check := rule.check) is not None and rule.target is _OUTPUT and check.is_answer_check
    ]
    checked.sort(key=_rule_priority, reverse=True)
    return checked


def _event(rule: Rule, status: RuleEventStatus, detail: str) -> RuleEvent:
    return {"rule_id": rule.id, "status": status, "detail": detail}


def check_answer(rules: Iterable[Rule], text: str) -> AnswerVerdict:
    """Hold ``text`` to the answer checks of ``rules``; see the module docs for the order."""
    checked = _answer_plans(rules)
    events: list[RuleEvent | None] = [None] * len(checked)
    blocking: list[tuple[int, CheckFailure]] = []
    revising: list[tuple[int, CheckFailure]] = []
    answer = _Answer(text, Budget())
    redacted = False
    for index, (rule, plan) in enumerate(checked):
        if not plan.redacts:
            continue
        forbid = cast(str, plan.forbid)
        try:
            spans = answer.spans_of(forbid)
        except IncompleteScan as scan:
            detail = _incomplete(plan.check, scan)
            blocking.append((index, CheckFailure(rule, detail)))
            events[index] = _event(rule, "blocked", detail)
            continue
        if not spans:
            events[index] = _event(rule, "passed", _not_found(forbid))
            continue
        detector = parse_detector(forbid)
        redacted_text = _redacted(answer.text, spans, redaction_mark(detector))
        answer = _Answer(redacted_text, answer.budget, answer.spans)
        redacted = True
        detail = REDACTED_DETAIL.format(matches=_matches(len(spans)), detector=_label(detector))
        events[index] = _event(rule, "redacted", detail)
    for index, (rule, plan) in enumerate(checked):
        if events[index] is not None:
            continue
        passed, detail = _judge(plan, answer)
        if passed:
            events[index] = _event(rule, "passed", detail)
            continue
        (blocking if plan.blocks else revising).append((index, CheckFailure(rule, detail)))
        events[index] = _event(rule, plan.failure, detail)
    ordered = cast(tuple[RuleEvent, ...], tuple(events))
    if blocking or revising:
        failures = tuple(failure for _, failure in sorted(blocking) + sorted(revising))
        verdict = AnswerVerdict("needs_revision", answer.text, failures, ordered)
        return verdict.as_blocked() if blocking else verdict
    return AnswerVerdict("redacted" if redacted else "passed", answer.text, (), ordered)


def check_tool_call(rules: Iterable[Rule], tool_name: str, arguments: object) -> ToolVerdict:
    """Hold a call of ``tool_name`` with ``arguments`` to the tool checks of ``rules``.

    A check applies when its ``tool`` is ``tool_name`` or ``"*"``; without ``args`` the
    call fails it, with ``args`` the call fails when the pattern is found in what the
    tool receives: any string of the arguments (keys and values, nested ones included),
    as written or as read (see `checked_text`), or the arguments as compact JSON with
    sorted keys (``{"query":"SELECT 1"}``). Arguments that cannot be written as JSON, or
    that cannot be read whole, count as matching. A denial wins over an approval.
    """
    events: list[RuleEvent] = []
    denying: list[CheckFailure] = []
    approving: list[CheckFailure] = []
    texts: list[CheckedText] | Literal[False] | None = False
    budget = Budget()
    for rule in _by_priority(rules):
        check = rule.check
        if check is None or check.tool is None or rule.target is not RuleTarget.TOOL:
            continue
        if check.tool not in ("*", tool_name):
            continue
        if check.args is None:
            matched, detail = True, TOOL_MATCH_DETAIL.format(tool=tool_name)
        else:
            if texts is False:
                strings = argument_texts(arguments)
                texts = None if strings is None else [CheckedText(s, budget) for s in strings]
            if texts is None:
                matched, detail = True, TOOL_ARGS_UNREADABLE_DETAIL.format(tool=tool_name)
            else:
                search = _Search.of(check.args)
                try:
                    matched = any(search.found(text) for text in texts)
                    template = TOOL_ARGS_MATCH_DETAIL if matched else TOOL_ARGS_CLEAR_DETAIL
                    detail = template.format(tool=tool_name)
                except IncompleteScan as scan:
                    matched, detail = True, _incomplete(check, scan)
        if not matched:
            events.append(RuleEvent(rule_id=rule.id, status="passed", detail=detail))
            continue
        (denying if check.action == "deny" else approving).append(CheckFailure(rule, detail))
        events.append(
            RuleEvent(rule_id=rule.id, status=_FAILURE_STATUS[check.action], detail=detail)
        )
    if denying:
        denied = tuple(
            RuleEvent(rule_id=e["rule_id"], status="denied", detail=e["detail"])
            if e["status"] == "approval"
            else e
            for e in events
        )
        return ToolVerdict("denied", tuple(denying), denied)
    if approving:
        return ToolVerdict("approval", tuple(approving), tuple(events))
    return ToolVerdict("allowed", (), tuple(events))


def redact_observation(rules: Iterable[Rule], text: str) -> Redaction:
    """Redact ``text`` for the forbid checks with ``scope="answer_and_observations"``.

    Observations are always redacted, whatever ``on_fail`` says; a check that cannot
    read the whole text replaces it with its mark. Only redactions make events.
    """
    events: list[RuleEvent] = []
    checked = CheckedText(text, Budget())
    for rule in _by_priority(rules):
        check = rule.check
        if check is None or check.forbid is None or not check.covers_observations:
            continue
        if rule.target is not RuleTarget.OUTPUT:
            continue
        detector = parse_detector(check.forbid)
        mark = redaction_mark(detector)
        try:
            spans = checked.spans(detector)
        except IncompleteScan as scan:
            text = mark
            checked = checked.of(text)
            detail = _incomplete(check, scan)
            events.append(RuleEvent(rule_id=rule.id, status="redacted", detail=detail))
            continue
        if spans:
            text = _redacted(text, spans, mark)
            checked = checked.of(text)
            detail = REDACTED_DETAIL.format(matches=_matches(len(spans)), detector=_label(detector))
            events.append(RuleEvent(rule_id=rule.id, status="redacted", detail=detail))
    return Redaction(text, tuple(events))
