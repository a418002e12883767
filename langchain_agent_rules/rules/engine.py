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

A pattern that runs past `PATTERN_TIMEOUT_SECONDS` fails safe: its check counts as
failed. A forbid check that would have redacted blocks the answer instead (the matches
cannot be found, so nothing can be shown), and in an observation the whole text is
replaced by the redaction mark. A tool check that times out applies its ``on_fail``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, TypedDict

import regex

from langchain_agent_rules.rules.check import Detector, RuleCheck, compiled_value, parse_detector
from langchain_agent_rules.rules.detectors import Span, find_spans
from langchain_agent_rules.rules.language import LANGUAGE_MIN_SCORE, detect_language
from langchain_agent_rules.rules.model import Rule, RuleTarget

__all__ = [
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

PATTERN_TIMEOUT_SECONDS = 0.1

RuleEventStatus = Literal["passed", "redacted", "revised", "blocked", "denied", "approval"]

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
TIMED_OUT_DETAIL = "the {condition} check timed out after {seconds:g} s; treated as failed"

_MARKS = regex.compile(r"\[redacted: [a-z_]+\]")
_FAILURE_STATUS: dict[str, RuleEventStatus] = {
    "redact": "redacted",
    "revise": "revised",
    "block": "blocked",
    "deny": "denied",
    "approve": "approval",
}


class RuleEvent(TypedDict):
    """What one rule's check did: ``{"rule_id", "status", "detail"}``."""

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


def _by_priority(rules: Iterable[Rule]) -> list[Rule]:
    return sorted(rules, key=lambda rule: -rule.priority)


def _timed_out(check: RuleCheck) -> str:
    return TIMED_OUT_DETAIL.format(condition=check.condition, seconds=PATTERN_TIMEOUT_SECONDS)


def _redacted(text: str, spans: Sequence[Span], mark: str) -> str:
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
    spans: dict[tuple[Detector, str], list[Span]] = field(default_factory=dict)
    language: tuple[str, float] | Literal[False] | None = False

    def spans_of(self, detector: Detector) -> list[Span]:
        key = (detector, self.text)
        found = self.spans.get(key)
        if found is None:
            found = self.spans[key] = find_spans(detector, self.text, PATTERN_TIMEOUT_SECONDS)
        return found

    def detected_language(self) -> tuple[str, float] | None:
        if self.language is False:
            # Redaction marks are ours, in English: they must not sway the language.
            self.language = detect_language(_MARKS.sub(" ", self.text))
        return self.language


def _search(value: str, text: str) -> bool:
    """Whether the ``regex:<pattern>`` ``value`` is found in ``text``, within the timeout."""
    return compiled_value(value).search(text, timeout=PATTERN_TIMEOUT_SECONDS) is not None


def _judge(check: RuleCheck, answer: _Answer) -> tuple[bool, str]:
    """Whether ``answer`` passes ``check`` (not a redacting forbid), and the event detail."""
    condition = check.condition
    text = answer.text
    try:
        if condition == "forbid":
            assert check.forbid is not None
            detector = parse_detector(check.forbid)
            spans = answer.spans_of(detector)
            label = _label(detector)
            if spans:
                return False, FOUND_DETAIL.format(matches=_matches(len(spans)), detector=label)
            return True, NOT_FOUND_DETAIL.format(detector=label)
        if condition == "require":
            assert check.require is not None
            when = check.when
            if when is not None and not _search(when, text):
                return True, NOT_REQUIRED_DETAIL
            if _search(check.require, text):
                return True, REQUIRED_FOUND_DETAIL
            return False, REQUIRED_MISSING_WHEN_DETAIL if when else REQUIRED_MISSING_DETAIL
    except TimeoutError:
        return False, _timed_out(check)
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


def _answer_rules(rules: Iterable[Rule]) -> list[tuple[Rule, RuleCheck]]:
    return [
        (rule, rule.check)
        for rule in _by_priority(rules)
        if rule.check is not None
        and rule.target is RuleTarget.OUTPUT
        and rule.check.is_answer_check
    ]


def check_answer(rules: Iterable[Rule], text: str) -> AnswerVerdict:
    """Hold ``text`` to the answer checks of ``rules``; see the module docs for the order."""
    checked = _answer_rules(rules)
    events: dict[int, RuleEvent] = {}
    blocking: list[tuple[int, CheckFailure]] = []
    revising: list[tuple[int, CheckFailure]] = []
    answer = _Answer(text)
    redacted = False
    for index, (rule, check) in enumerate(checked):
        if check.condition != "forbid" or check.action != "redact":
            continue
        assert check.forbid is not None
        detector = parse_detector(check.forbid)
        try:
            spans = answer.spans_of(detector)
        except TimeoutError:
            detail = _timed_out(check)
            blocking.append((index, CheckFailure(rule, detail)))
            events[index] = RuleEvent(rule_id=rule.id, status="blocked", detail=detail)
            continue
        if not spans:
            detail = NOT_FOUND_DETAIL.format(detector=_label(detector))
            events[index] = RuleEvent(rule_id=rule.id, status="passed", detail=detail)
            continue
        answer = _Answer(_redacted(answer.text, spans, redaction_mark(detector)), answer.spans)
        redacted = True
        detail = REDACTED_DETAIL.format(matches=_matches(len(spans)), detector=_label(detector))
        events[index] = RuleEvent(rule_id=rule.id, status="redacted", detail=detail)
    for index, (rule, check) in enumerate(checked):
        if index in events:
            continue
        passed, detail = _judge(check, answer)
        if passed:
            events[index] = RuleEvent(rule_id=rule.id, status="passed", detail=detail)
            continue
        failure = CheckFailure(rule, detail)
        (blocking if check.action == "block" else revising).append((index, failure))
        events[index] = RuleEvent(
            rule_id=rule.id, status=_FAILURE_STATUS[check.action], detail=detail
        )
    ordered = tuple(events[index] for index in sorted(events))
    if blocking or revising:
        failures = tuple(failure for _, failure in sorted(blocking) + sorted(revising))
        verdict = AnswerVerdict("needs_revision", answer.text, failures, ordered)
        return verdict.as_blocked() if blocking else verdict
    return AnswerVerdict("redacted" if redacted else "passed", answer.text, (), ordered)


def _arguments_json(arguments: object) -> str | None:
    try:
        return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None


def check_tool_call(rules: Iterable[Rule], tool_name: str, arguments: object) -> ToolVerdict:
    """Hold a call of ``tool_name`` with ``arguments`` to the tool checks of ``rules``.

    A check applies when its ``tool`` is ``tool_name`` or ``"*"``; without ``args`` the
    call fails it, with ``args`` the call fails when the pattern is found in the
    arguments as compact JSON with sorted keys (``{"query":"SELECT 1"}``). Arguments that
    cannot be written as JSON count as matching. A denial wins over an approval.
    """
    events: list[RuleEvent] = []
    denying: list[CheckFailure] = []
    approving: list[CheckFailure] = []
    arguments_json: str | Literal[False] | None = False
    for rule in _by_priority(rules):
        check = rule.check
        if check is None or check.tool is None or rule.target is not RuleTarget.TOOL:
            continue
        if check.tool not in ("*", tool_name):
            continue
        if check.args is None:
            matched, detail = True, TOOL_MATCH_DETAIL.format(tool=tool_name)
        else:
            if arguments_json is False:
                arguments_json = _arguments_json(arguments)
            if arguments_json is None:
                matched, detail = True, TOOL_ARGS_UNREADABLE_DETAIL.format(tool=tool_name)
            else:
                try:
                    matched = _search(check.args, arguments_json)
                    template = TOOL_ARGS_MATCH_DETAIL if matched else TOOL_ARGS_CLEAR_DETAIL
                    detail = template.format(tool=tool_name)
                except TimeoutError:
                    matched, detail = True, _timed_out(check)
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

    Observations are always redacted, whatever ``on_fail`` says; a check that times out
    replaces the whole text with its mark. Only redactions make events.
    """
    events: list[RuleEvent] = []
    for rule in _by_priority(rules):
        check = rule.check
        if check is None or check.forbid is None or not check.covers_observations:
            continue
        if rule.target is not RuleTarget.OUTPUT:
            continue
        detector = parse_detector(check.forbid)
        mark = redaction_mark(detector)
        try:
            spans = find_spans(detector, text, PATTERN_TIMEOUT_SECONDS)
        except TimeoutError:
            text = mark
            events.append(RuleEvent(rule_id=rule.id, status="redacted", detail=_timed_out(check)))
            continue
        if spans:
            text = _redacted(text, spans, mark)
            detail = REDACTED_DETAIL.format(matches=_matches(len(spans)), detector=_label(detector))
            events.append(RuleEvent(rule_id=rule.id, status="redacted", detail=detail))
    return Redaction(text, tuple(events))
