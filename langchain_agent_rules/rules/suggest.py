"""`suggest_checks`: the checks that rules written as plain text ask for.

Most rules files (every adachsoft/agent-rule file) hold rules that are only prompt text,
which a small model may ignore. This reads each ``OUTPUT`` rule that has no check and
proposes the check its wording asks for:

- a prohibition of e-mail addresses, phone numbers, card numbers, IBANs, IP addresses or
  secrets (passwords, API keys, tokens, private keys) -> ``forbid`` with that detector;
- "answer in French", "respond in German" -> ``language``;
- "amounts with the currency code EUR", "prices in CHF" -> ``require`` the code after a
  number, ``when`` the answer holds a decimal number;
- "at most 600 characters", "no more than 280 characters" -> ``max_chars``.

It reads English wording, clause by clause, and stays quiet when unsure: a clause with an
exception ("unless", "except"), a condition ("if", "when"), two languages, or a limit on a
part of the answer (a title, a line, words) gets no suggestion, since a missed check
leaves the rule as it was while a wrong one changes answers. A rule holds one check; when
its wording asks for more, the first is suggested and the others are listed in ``also``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import regex

from langchain_agent_rules.errors import RuleValidationError
from langchain_agent_rules.rules.check import RuleCheck
from langchain_agent_rules.rules.language import supported_languages
from langchain_agent_rules.rules.model import Rule, RuleTarget, RuleType

__all__ = ["CheckSuggestion", "suggest_checks"]


@dataclass(frozen=True)
class CheckSuggestion:
    """A check proposed for a rule that has none, and the words that asked for it.

    ``because`` is the clause of the rule's content that asked for ``check``; ``also``
    holds further checks the content asks for, which one rule cannot hold (split the rule
    to have them checked too).
    """

    rule: Rule
    check: RuleCheck
    because: str
    also: tuple[RuleCheck, ...] = ()

    @property
    def checked_rule(self) -> Rule:
        """The rule with the suggested check attached."""
        return self.rule.with_changes(check=self.check)


def suggest_checks(rules: Iterable[Rule]) -> list[CheckSuggestion]:
    """The checks proposed for the ``OUTPUT`` rules among ``rules`` that have no check.

    Pure and deterministic: nothing is written; rules that already have a check, rules
    of other targets and rules whose wording asks for no check get no suggestion.

    Example:
        .. code-block:: python

            rule = Rule(id="no_emails", type="prohibition", target="output",
                        content="Never reveal customer e-mail addresses.")
            [suggestion] = suggest_checks([rule])
            suggestion.check  # RuleCheck(forbid="email")
    """
    suggestions = []
    for rule in rules:
        if rule.check is None and rule.target is RuleTarget.OUTPUT:
            suggestion = _suggestion_for(rule)
            if suggestion is not None:
                suggestions.append(suggestion)
    return suggestions


# --- how a rule is read ---------------------------------------------------------------

_FLAGS = regex.IGNORECASE | regex.VERSION1

# A clause ends at a sentence's end or a semicolon, and before ", but" or ", never":
# "Answer in French, never with a bare number" is two clauses.
_CLAUSE_BREAK = regex.compile(
    r"[.!?]+(?=\s+[\p{Lu}\"“(]|\s*$)|;|,\s*(?=(?:but|never|not|do not|don't)\b)", _FLAGS
)
_EXCEPTION = regex.compile(
    r"\b(?:unless|except|excepting|apart from|other than|only if|only when|as they write)\b",
    _FLAGS,
)
_CONDITION = regex.compile(r"(?<!\beven )\b(?:if|when|whenever|where)\b", _FLAGS)
_NEGATION = regex.compile(
    r"\b(?:never|not|no|without|avoid|refrain|forbidden|prohibited)\b|n't\b", _FLAGS
)
_DISCLOSE = regex.compile(
    r"\b(?:reveal|share|disclose|print|show|include|expose|output|repeat|mention|leak|"
    r"display|give|list|write|send|quote|echo|return|provide|paste|tell|appear|contain|hand)\w*"
    r"|\bin (?:an? |the |any |every )?(?:answers?|repl(?:y|ies)|responses?|output|chat)\b"
    r"|\bout of\b",
    _FLAGS,
)
_HIDE = regex.compile(
    r"\b(?:hide|hidden|mask|masked|redact|redacted|withhold|obfuscate|anonymi[sz]e|censor|"
    r"confidential|private|secret)\b|\b(?:stays?|kept|keep \w+) internal\b|\boff[- ]limits\b",
    _FLAGS,
)

_DETECTORS: tuple[tuple[tuple[str, ...], regex.Pattern[str]], ...] = (
    (("email",), regex.compile(r"\be-?mails?\b|\bmail address", _FLAGS)),
    (
        ("phone",),
        regex.compile(
            r"\b(?:tele)?phones?\b|\b(?:mobile|cell(?:phone)?) (?:phone )?numbers?\b", _FLAGS
        ),
    ),
    (
        ("credit_card",),
        regex.compile(
            r"(?i:\b(?:credit|debit|payment|bank)[ -]?cards?\b|\bcard numbers?\b)|\bPANs?\b",
            regex.VERSION1,
        ),
    ),
    (("iban",), regex.compile(r"\bIBANs?\b|\bbank account (?:numbers?|details)\b", _FLAGS)),
    (("ipv6",), regex.compile(r"\bIPv6\b", _FLAGS)),
    (("ipv4",), regex.compile(r"\bIPv4\b", _FLAGS)),
    (("ipv4", "ipv6"), regex.compile(r"\bIP(?: address(?:es)?|s)\b", _FLAGS)),
    (
        ("secret",),
        regex.compile(
            r"\b(?:passwords?|passphrases?|api[- ]?keys?|access keys?|secret keys?|"
            r"private keys?|secrets|credentials|jwts?|"
            r"(?:access|auth|api|bearer|session|refresh) tokens?)\b",
            _FLAGS,
        ),
    ),
)
# A bare "tokens" is a secret only beside another secret ("passwords, API keys or tokens"),
# not in "at most 2000 tokens".
_BARE_TOKENS = regex.compile(r"\btokens?\b", _FLAGS)
_OTHER_SECRETS = regex.compile(r"\b(?:passwords?|keys?|secrets|credentials)\b", _FLAGS)

_LANGUAGE_NAMES = {
    "arabic": "ar", "bulgarian": "bg", "catalan": "ca", "chinese": "zh", "croatian": "hr",
    "czech": "cs", "danish": "da", "dutch": "nl", "english": "en", "estonian": "et",
    "finnish": "fi", "french": "fr", "german": "de", "greek": "el", "hebrew": "he",
    "hindi": "hi", "hungarian": "hu", "indonesian": "id", "irish": "ga", "italian": "it",
    "japanese": "ja", "korean": "ko", "latvian": "lv", "lithuanian": "lt", "norwegian": "no",
    "persian": "fa", "polish": "pl", "portuguese": "pt", "romanian": "ro", "russian": "ru",
    "serbian": "sr", "slovak": "sk", "slovenian": "sl", "spanish": "es", "swedish": "sv",
    "thai": "th", "turkish": "tr", "ukrainian": "uk", "vietnamese": "vi", "welsh": "cy",
}  # fmt: skip
"""English names of the languages a ``language`` check is suggested for."""

_LANGUAGE = regex.compile(
    r"\b(?:in|into|using)\s+(?:\w+\s+)?(" + "|".join(_LANGUAGE_NAMES) + r")\b", _FLAGS
)
_ANY_LANGUAGE = regex.compile(r"\b(?:" + "|".join(_LANGUAGE_NAMES) + r")\b", _FLAGS)

_AMOUNT_WORDS = (
    r"(?i:\b(?:amounts?|prices?|totals?|sums?|costs?|money|balances?|figures|fees?|"
    r"estimates?|currency)\b)"
)
# The code itself is matched case-sensitively: three capitals.
_CURRENCY = regex.compile(
    r"(?i:\bcurrency(?: code)?)\s+(?P<code>[A-Z]{3})\b"
    r"|" + _AMOUNT_WORDS + r"[^.;]{0,60}?(?i:\b(?:in|with|as)\s+(?:the\s+)?"
    r"(?:currency(?: code)?\s+)?)(?P<code>[A-Z]{3})\b"
    r"|\d[.,]\d{2}\s?(?P<code>[A-Z]{3})\b",
    regex.VERSION1,
)
_CURRENCY_CONTEXT = regex.compile(_AMOUNT_WORDS, regex.VERSION1)
_TWO_DECIMALS = regex.compile(r"(?i:\b(?:two|2) decimal)|\d[.,]\d{2}\s?[A-Z]{3}\b", regex.V1)

_NUMBER = r"(?P<n>\d{1,3}(?:[,\u00a0 ]\d{3})+|\d+)"
_CHARACTERS = r"\s*(?:characters|chars|letters)\b"
_MAX_CHARS = regex.compile(
    r"\b(?P<bound>at most|no more than|not more than|up to|(?:a )?maximum(?: of)?|max\.?|"
    r"within|limited to|limit(?: \w+)? to|(?:not|never) exceed|"
    r"(?:no|not|cannot be|can't be|must not be|mustn't be) longer than|"
    r"shorter than|under|below|fewer than|less than)\s+" + _NUMBER + _CHARACTERS
    + r"|" + _NUMBER + _CHARACTERS + r"\s+(?P<bound>or (?:less|fewer)|at most|max(?:imum)?)\b",
    _FLAGS,
)  # fmt: skip
_STRICT_BOUNDS = frozenset({"shorter than", "under", "below", "fewer than", "less than"})
_ANSWER_WORDS = regex.compile(
    r"\b(?:answers?|repl(?:y|ies)|responses?|outputs?|messages?|summar(?:y|ies)|texts?|"
    r"updates?|posts?|keep|limit)\b",
    _FLAGS,
)
_PART_WORDS = regex.compile(
    r"\b(?:titles?|headlines?|headings?|subject(?: lines?)?|lines?|sentences?|paragraphs?|"
    r"bullets?|items?|fields?|columns?|names?|codes?|ids?|identifiers?|words?)\b",
    _FLAGS,
)


@dataclass(frozen=True)
class _Found:
    check: RuleCheck
    clause: str
    place: tuple[int, int]  # the clause's index, then where in it: the order a reader meets


def _suggestion_for(rule: Rule) -> CheckSuggestion | None:
    found = [
        item
        for index, clause in enumerate(_clauses(rule.content))
        for item in _found_in(clause, index, rule.type)
    ]
    unique: list[_Found] = []
    for item in sorted(found, key=lambda item: item.place):
        if all(item.check != kept.check for kept in unique):
            unique.append(item)
    if not unique:
        return None
    first, *rest = unique
    return CheckSuggestion(
        rule=rule, check=first.check, because=first.clause, also=tuple(i.check for i in rest)
    )


def _clauses(content: str) -> list[str]:
    parts = (part.strip(" ,-\u2013\u2014") for part in _CLAUSE_BREAK.split(content))
    return [part for part in parts if part]


def _found_in(clause: str, index: int, rule_type: RuleType) -> list[_Found]:
    if _EXCEPTION.search(clause):
        return []
    conditional = _CONDITION.search(clause) is not None
    negated = _NEGATION.search(clause) is not None
    found = []
    if not conditional:
        found += _forbidden(clause, index, negated or rule_type is RuleType.PROHIBITION)
        found += _max_chars(clause, index)
        if not negated:
            found += _language(clause, index)
    if not negated:
        found += _currency(clause, index)
    return found


def _found(clause: str, index: int, position: int, **check: object) -> list[_Found]:
    try:
        built = RuleCheck(**check)
    except RuleValidationError:
        return []
    return [_Found(built, clause, (index, position))]


def _forbidden(clause: str, index: int, negative: bool) -> list[_Found]:
    hides = _HIDE.search(clause) is not None
    if not (hides or (negative and _DISCLOSE.search(clause) is not None)):
        return []
    found: list[_Found] = []
    for detectors, pattern in _DETECTORS:
        match = pattern.search(clause)
        if match is None and detectors == ("secret",) and _OTHER_SECRETS.search(clause):
            match = _BARE_TOKENS.search(clause)
        if match is not None:
            for offset, detector in enumerate(detectors):
                found += _found(clause, index, match.start() + offset, forbid=detector)
    return found


def _language(clause: str, index: int) -> list[_Found]:
    match = _LANGUAGE.search(clause)
    named = {name.lower() for name in _ANY_LANGUAGE.findall(clause)}
    if match is None or len(named) != 1:
        return []
    code = _LANGUAGE_NAMES[match.group(1).lower()]
    if code not in supported_languages():
        return []
    return _found(clause, index, match.start(), language=code)


def _currency(clause: str, index: int) -> list[_Found]:
    match = _CURRENCY.search(clause)
    if match is None or _CURRENCY_CONTEXT.search(clause) is None:
        return []
    amount = r"\d[.,]\d{2}" if _TWO_DECIMALS.search(clause) else r"\d"
    return _found(
        clause,
        index,
        match.start(),
        require=rf"regex:{amount} ?{match.group('code')}\b",
        when=r"regex:\d[.,]\d",
    )


def _max_chars(clause: str, index: int) -> list[_Found]:
    match = _MAX_CHARS.search(clause)
    if match is None or _PART_WORDS.search(clause) or _ANSWER_WORDS.search(clause) is None:
        return []
    limit = int(regex.sub(r"\D", "", match.group("n")))
    if match.group("bound").lower() in _STRICT_BOUNDS:
        limit -= 1
    return _found(clause, index, match.start(), max_chars=limit)
