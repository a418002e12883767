"""Strict argument checking shared by the rule tools.

The tools publish a JSON schema (``args_schema`` as a dict) generated from a strict
pydantic model, so LangChain hands the model's raw arguments through unchanged and every
invalid call (a string for an int, ``true``, ``1.0``, an unknown key) reaches one place
that raises `InvalidToolCallError` before the store is touched.
"""

from __future__ import annotations

import asyncio
import json
import reprlib
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from langchain_agent_rules.errors import InvalidToolCallError

_Model = TypeVar("_Model", bound=BaseModel)
_BOUNDED = reprlib.Repr()
_BOUNDED.maxlevel, _BOUNDED.maxstring, _BOUNDED.maxother, _BOUNDED.maxlong = 2, 60, 60, 40

NOT_AN_OBJECT_TEMPLATE = "{tool} takes a JSON object of arguments, got {kind}"
INVALID_ARGUMENTS_TEMPLATE = "invalid {tool} arguments: {problems}"


def tool_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model sees for ``model``: no title, no extra keys allowed."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema["additionalProperties"] = False
    return schema


def parse_arguments(
    model: type[_Model],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    tool: str,
    allowed: Mapping[str, str],
) -> _Model:
    """Validate raw tool arguments with ``model``, raising `InvalidToolCallError`.

    ``allowed`` maps each argument path (``"rule.priority"``) to what it accepts, so the
    message tells the model how to correct the call.
    """
    if args:
        kind = type(args[0]).__name__
        raise InvalidToolCallError(NOT_AN_OBJECT_TEMPLATE.format(tool=tool, kind=kind))
    try:
        return model.model_validate(dict(kwargs))
    except ValidationError as error:
        raise InvalidToolCallError(
            INVALID_ARGUMENTS_TEMPLATE.format(tool=tool, problems=_describe(error, allowed))
        ) from None


def _describe(error: ValidationError, allowed: Mapping[str, str]) -> str:
    problems = []
    for item in error.errors():
        path = ".".join(str(part) for part in item["loc"] if not isinstance(part, int))
        if item["type"] == "extra_forbidden":
            parent = path.rsplit(".", 1)[0] + "." if "." in path else ""
            known = [
                name.removeprefix(parent)
                for name in allowed
                if name.startswith(parent) and "." not in name.removeprefix(parent)
            ]
            problems.append(f"unknown key {path!r}; allowed keys: {', '.join(known)}")
            continue
        # Union members add their type name to the location; keep the argument path only.
        while path and path not in allowed and "." in path:
            path = path.rsplit(".", 1)[0]
        if item["type"] == "missing":
            problems.append(f"{path} is required: {allowed.get(path, item['msg'])}")
        else:
            shown = _shown(item.get("input"))
            problems.append(f"invalid {path} {shown}: {allowed.get(path, item['msg'])}")
    return "; ".join(dict.fromkeys(problems))


def _shown(value: object) -> str:
    try:
        shown = json.dumps(value, ensure_ascii=False, default=repr)
    except (RecursionError, ValueError):  # deeply nested, or an int too long to print
        shown = _BOUNDED.repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


async def call_async_or_thread(target: object, method: str, *args: Any) -> Any:
    """Await ``target.a<method>(*args)`` when it exists, else run the sync one in a thread."""
    twin = getattr(target, f"a{method}", None)
    if callable(twin):
        return await twin(*args)
    return await asyncio.to_thread(getattr(target, method), *args)
