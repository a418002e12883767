"""One-line descriptions of invalid rule input, shared by the rule and its check."""

from __future__ import annotations

import reprlib
from collections.abc import Mapping

import regex
from pydantic import ValidationError

from langchain_agent_rules.errors import RuleValidationError

__all__ = [
    "SURROGATE_TEMPLATE",
    "UNICODE_ALLOWED",
    "describe_validation_error",
    "refuse_surrogates",
    "short_repr",
]

UNICODE_ALLOWED = "text must be valid Unicode, without lone surrogates"
SURROGATE_TEMPLATE = "{field} holds a lone surrogate ({code}); " + UNICODE_ALLOWED
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
_REPR = reprlib.Repr()  # bounded depth and width: safe on deeply nested or huge input
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 2, 60, 60, 40


def refuse_surrogates(field: str, text: str) -> None:
    """Raise `ValueError` when ``text`` holds a lone surrogate, which no store can write."""
    found = _SURROGATE.search(text)
    if found is not None:
        code = f"\\u{ord(found.group()):04x}"
        raise ValueError(SURROGATE_TEMPLATE.format(field=field, code=code))


def short_repr(value: object) -> str:
    """``value`` for an error message: a bounded repr, cut at 60 characters."""
    text = _REPR.repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_validation_error(
    error: ValidationError,
    subject: str,
    allowed: Mapping[str, str],
    nested: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """Turn a pydantic error into one line naming each bad field and what it allows.

    ``allowed`` maps each field of ``subject`` to what it allows; ``nested`` does the same
    for fields that are models of their own (a rule's ``check``).
    """
    nested = nested or {}
    problems = []
    for item in error.errors():
        location = [str(part) for part in item["loc"]]
        if subject in nested:
            location = [subject, *location]
        field = ".".join(location) or subject
        if location[:1] and location[0] in nested and len(location) > 1:
            names = nested[location[0]]
            what = names.get(location[1])
        else:
            names, what = allowed, allowed.get(location[0]) if location else None
        if item["type"] == "extra_forbidden":
            detail = f"unknown field {field!r}; allowed fields: " + ", ".join(names)
        elif item["type"] == "missing":
            detail = f"{field} is required" + (f": {what}" if what else "")
        elif item["type"] == "value_error":
            error_object = item.get("ctx", {}).get("error")
            message = str(error_object or item["msg"])
            inner = isinstance(error_object, RuleValidationError) or field == subject
            detail = message if inner else f"invalid {field}: {message}"
        elif item["type"] == "string_unicode":
            detail = f"invalid {field}: {UNICODE_ALLOWED}"
        else:
            shown = short_repr(item.get("input"))
            detail = f"invalid {field} {shown}: " + (what or item["msg"])
        problems.append(detail)
    return f"invalid {subject}: " + "; ".join(problems)
