"""`RuleCheck`: the optional check that makes a rule hold in code, not only in the prompt.

A check has exactly one condition:

- ``forbid``: a detector (``email``, ``phone``, ``phone:<REGION>``, ``credit_card``,
  ``iban``, ``ipv4``, ``ipv6``, ``secret``) or ``regex:<pattern>``; the text must not
  contain a match.
- ``require``: ``regex:<pattern>``; the answer must match. With ``when: regex:<pattern>``
  it must match only when ``when`` matches (money amounts must carry EUR).
- ``language``: an ISO 639-1 code; the answer must be in that language.
- ``max_chars``: the answer has at most that many characters.
- ``tool``: a tool name or ``"*"``, optionally with ``args: regex:<pattern>`` searched in
  what the tool receives (each string of the arguments, keys and nested values included)
  and in the arguments as compact JSON with sorted keys; a call that matches fails.

Detectors and patterns read a text as written and as a reader reads it (`normalized`),
and a check that cannot read the whole text fails (`checked_text`).

``on_fail`` says what a failure does: ``redact`` (forbid only: each match becomes
``[redacted: <detector>]``), ``revise`` or ``block`` for answers; ``deny`` or ``approve``
for tool calls. When it is not given, `RuleCheck.action` is the condition's default:
forbid redacts, require/language/max_chars revise, tool denies. ``scope`` (forbid only)
extends the check to tool observations, which are then always redacted, so a model never
sees what it must not repeat.

Answer checks belong to OUTPUT rules and tool checks to TOOL rules; `Rule` refuses other
combinations. Everything invalid raises `RuleValidationError` naming what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Literal, get_args

import regex
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from langchain_agent_rules.errors import RuleValidationError
from langchain_agent_rules.rules._describe import describe_validation_error, refuse_surrogates
from langchain_agent_rules.rules.language import supported_languages

__all__ = [
    "ANSWER_CONDITIONS",
    "DETECTORS",
    "MAX_PATTERN_CHARS",
    "CheckCondition",
    "Detector",
    "OnFail",
    "RuleCheck",
    "compile_pattern",
    "compiled_value",
    "parse_detector",
]

CheckCondition = Literal["forbid", "require", "language", "max_chars", "tool"]
OnFail = Literal["redact", "revise", "block", "deny", "approve"]
CheckScope = Literal["answer", "answer_and_observations"]

CONDITIONS: tuple[CheckCondition, ...] = get_args(CheckCondition)
ANSWER_CONDITIONS: frozenset[str] = frozenset({"forbid", "require", "language", "max_chars"})
DETECTORS = ("email", "phone", "credit_card", "iban", "ipv4", "ipv6", "secret")
REGEX_PREFIX = "regex:"
MAX_PATTERN_CHARS = 2000
MAX_TOOL_NAME_CHARS = 128

_ON_FAIL_ALLOWED: dict[str, tuple[OnFail, ...]] = {
    "forbid": ("redact", "revise", "block"),
    "require": ("revise", "block"),
    "language": ("revise", "block"),
    "max_chars": ("revise", "block"),
    "tool": ("deny", "approve"),
}

DETECTORS_ALLOWED = (
    "email, phone, phone:<REGION>, credit_card, iban, ipv4, ipv6, secret or regex:<pattern>"
)
CONDITION_COUNT_TEMPLATE = (
    "a check needs exactly one of forbid, require, language, max_chars, tool; got {given}"
)
UNKNOWN_DETECTOR_TEMPLATE = "unknown detector {value!r} in forbid; allowed: " + DETECTORS_ALLOWED
UNKNOWN_REGION_TEMPLATE = (
    "unknown phone region {region!r} in forbid; allowed: phone:<REGION> with a region code "
    "such as FR, DE or US"
)
NOT_A_PATTERN_TEMPLATE = "{field} must be regex:<pattern>, got {value!r}"
EMPTY_PATTERN_TEMPLATE = "{field} has an empty pattern; give regex:<pattern>"
LONG_PATTERN_TEMPLATE = "the pattern in {field} has {length} characters; the limit is {limit}"
BAD_PATTERN_TEMPLATE = "invalid pattern in {field}: {error}"
MATCHES_EVERYTHING_TEMPLATE = (
    "the pattern in {field} matches an empty text, so it would match every {subject}"
)
UNKNOWN_LANGUAGE_TEMPLATE = (
    "unknown language {value!r}; allowed: a lower-case ISO 639-1 code the language "
    "detector knows, such as en, fr, de or es"
)
BAD_TOOL_TEMPLATE = (
    "invalid tool {value!r}; allowed: a tool name (1 to {limit} characters, no spaces) or *"
)
ON_FAIL_TEMPLATE = "on_fail {value!r} does not go with {condition}; allowed: {allowed}"
ONLY_WITH_TEMPLATE = "{field} goes with {condition} only"


@dataclass(frozen=True)
class Detector:
    """A parsed ``forbid`` value: a built-in detector, or ``regex`` with its pattern."""

    name: str
    pattern: str | None = None
    region: str | None = None


def _or_list(values: tuple[str, ...]) -> str:
    return ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """Compile ``pattern`` with the `regex` module (cached); raise `regex.error` if invalid."""
    return regex.compile(pattern)


@lru_cache(maxsize=4096)
def compiled_value(value: str) -> regex.Pattern[str]:
    """The compiled pattern of a validated ``regex:<pattern>`` value (cached by the value)."""
    return compile_pattern(value[len(REGEX_PREFIX) :])


def _pattern_of(field: str, value: str, subject: str | None = None) -> str:
    """The pattern of a ``regex:<pattern>`` value, compiled once to prove it is valid."""
    if not value.startswith(REGEX_PREFIX):
        raise ValueError(NOT_A_PATTERN_TEMPLATE.format(field=field, value=_cut(value)))
    pattern = value[len(REGEX_PREFIX) :]
    if not pattern:
        raise ValueError(EMPTY_PATTERN_TEMPLATE.format(field=field))
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(
            LONG_PATTERN_TEMPLATE.format(field=field, length=len(pattern), limit=MAX_PATTERN_CHARS)
        )
    try:
        compiled = compile_pattern(pattern)
    except (regex.error, OverflowError, RecursionError, ValueError) as error:
        raise ValueError(BAD_PATTERN_TEMPLATE.format(field=field, error=error)) from None
    if subject is not None and compiled.search("") is not None:
        raise ValueError(MATCHES_EVERYTHING_TEMPLATE.format(field=field, subject=subject))
    return pattern


@lru_cache(maxsize=1024)
def parse_detector(value: str) -> Detector:
    """Parse a ``forbid`` value; raise `ValueError` naming the allowed detectors."""
    if value.startswith(REGEX_PREFIX):
        return Detector("regex", pattern=_pattern_of("forbid", value, subject="text"))
    name, _, region = value.partition(":")
    if name == "phone" and region:
        import phonenumbers

        if region not in phonenumbers.SUPPORTED_REGIONS:
            raise ValueError(UNKNOWN_REGION_TEMPLATE.format(region=_cut(region)))
        return Detector("phone", region=region)
    if value not in DETECTORS:
        raise ValueError(UNKNOWN_DETECTOR_TEMPLATE.format(value=_cut(value)))
    return Detector(value)


def _cut(value: str) -> str:
    return value if len(value) <= 60 else value[:57] + "..."


CHECK_ALLOWED = {
    "forbid": "email, phone, phone:<REGION>, credit_card, iban, ipv4, ipv6, secret or "
    "regex:<pattern>",
    "require": "regex:<pattern>",
    "when": "regex:<pattern>, with require",
    "language": "an ISO 639-1 code such as fr",
    "max_chars": "a positive integer within 64 bits",
    "tool": "a tool name or *",
    "args": "regex:<pattern>, with tool",
    "on_fail": "redact, revise or block for answers; deny or approve for tool calls",
    "scope": "answer or answer_and_observations",
}
"""What each field of a check allows, as error messages say it."""


class RuleCheck(BaseModel):
    r"""The check of a rule: one condition, what a failure does, and where it applies.

    Build it with keywords or let `Rule` build it from a plain dict. Invalid values
    raise `RuleValidationError` naming what is allowed.

    Example:
        .. code-block:: python

            RuleCheck(forbid="email")                                   # redacts
            RuleCheck(require=r"regex:\bEUR\b", when=r"regex:\d+[.,]\d{2}")
            RuleCheck(language="fr", on_fail="block")
            RuleCheck(tool="sql_query", args=r"regex:(?i)\bdelete\b", on_fail="approve")
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    forbid: StrictStr | None = None
    require: StrictStr | None = None
    when: StrictStr | None = None
    language: StrictStr | None = None
    max_chars: StrictInt | None = Field(default=None, gt=0, le=2**63 - 1)
    tool: StrictStr | None = None
    args: StrictStr | None = None
    on_fail: OnFail | None = Field(
        default=None, description="What a failure does; None means the condition's default."
    )
    scope: CheckScope = "answer"

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as error:
            raise RuleValidationError(
                describe_validation_error(error, "check", CHECK_ALLOWED, {"check": CHECK_ALLOWED})
            ) from None

    @model_validator(mode="after")
    def _check_shape(self) -> RuleCheck:
        given = [name for name in CONDITIONS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                CONDITION_COUNT_TEMPLATE.format(given=", ".join(given) if given else "none")
            )
        condition = given[0]
        for field, owner in (("when", "require"), ("args", "tool")):
            if getattr(self, field) is not None and condition != owner:
                raise ValueError(ONLY_WITH_TEMPLATE.format(field=field, condition=owner))
        if self.scope != "answer" and condition != "forbid":
            raise ValueError(ONLY_WITH_TEMPLATE.format(field="scope", condition="forbid"))
        allowed = _ON_FAIL_ALLOWED[condition]
        if self.on_fail is not None and self.on_fail not in allowed:
            raise ValueError(
                ON_FAIL_TEMPLATE.format(
                    value=self.on_fail, condition=condition, allowed=_or_list(allowed)
                )
            )
        self._check_values()
        return self

    def _check_values(self) -> None:
        for name in ("forbid", "require", "when", "language", "tool", "args"):
            text = getattr(self, name)
            if text is not None:
                refuse_surrogates(name, text)
        if self.forbid is not None:
            parse_detector(self.forbid)
        if self.require is not None:
            _pattern_of("require", self.require)
        if self.when is not None:
            _pattern_of("when", self.when)
        if self.args is not None:
            _pattern_of("args", self.args, subject="call")
        if self.language is not None and self.language not in supported_languages():
            raise ValueError(UNKNOWN_LANGUAGE_TEMPLATE.format(value=_cut(self.language)))
        if self.tool is not None and not _is_tool_name(self.tool):
            raise ValueError(
                BAD_TOOL_TEMPLATE.format(value=_cut(self.tool), limit=MAX_TOOL_NAME_CHARS)
            )

    @cached_property
    def condition(self) -> CheckCondition:
        """The one condition this check has."""
        for name in CONDITIONS:
            if getattr(self, name) is not None:
                return name
        raise AssertionError("a validated check has a condition")  # pragma: no cover

    @cached_property
    def action(self) -> OnFail:
        """What a failure does: ``on_fail``, or the condition's default when it is None."""
        return self.on_fail or _ON_FAIL_ALLOWED[self.condition][0]

    @cached_property
    def is_answer_check(self) -> bool:
        """Whether the check applies to answers (forbid, require, language, max_chars)."""
        return self.condition in ANSWER_CONDITIONS

    @property
    def covers_observations(self) -> bool:
        """Whether tool observations are redacted too (``scope="answer_and_observations"``)."""
        return self.scope == "answer_and_observations"

    def to_record(self) -> dict[str, Any]:
        """The check as a JSON object with only the keys that were given a non-default value."""
        return self.model_dump(exclude_none=True, exclude_defaults=True)


def _is_tool_name(value: str) -> bool:
    return value == "*" or (
        0 < len(value) <= MAX_TOOL_NAME_CHARS and not any(c.isspace() for c in value)
    )
