"""Command-line flags for `AgentOptions`, derived from its fields.

Each field becomes a flag (``max_iterations`` -> ``--max-iterations``) whose type,
choices, default and help text come from the field itself, so a new agent option shows
up on the command line, documented, without touching the commands.
"""

from __future__ import annotations

import argparse
import types
import typing
from collections.abc import Collection
from typing import Any, Literal

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.options import AgentOptions

__all__ = ["add_agent_options", "agent_options", "flag_of"]

_METAVARS = {int: "N", float: "N", str: "TEXT"}


def flag_of(field: str) -> str:
    """The command-line flag of an `AgentOptions` field."""
    return "--" + field.replace("_", "-")


def _unwrap(annotation: Any) -> Any:
    """The annotation without ``None``, ``Annotated`` or strictness markers."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _unwrap(options[0]) if len(options) == 1 else annotation
    return annotation


def add_agent_options(parser: argparse.ArgumentParser, *, exclude: Collection[str] = ()) -> None:
    """Add one flag per `AgentOptions` field (but ``exclude``) to ``parser``."""
    group = parser.add_argument_group("agent options")
    for name, field in AgentOptions.model_fields.items():
        if name in exclude:
            continue
        kind = _unwrap(field.annotation)
        default = field.get_default(call_default_factory=True)
        shown = ", ".join(default) if isinstance(default, tuple) else default
        help_text = f"{field.description} (default: {shown if shown not in (None, '') else 'none'})"
        keywords: dict[str, Any] = {"dest": name, "default": None, "help": help_text}
        if typing.get_origin(kind) is Literal:
            keywords["choices"] = list(typing.get_args(kind))
        elif kind is bool:
            keywords["action"] = argparse.BooleanOptionalAction
        elif typing.get_origin(kind) is tuple:
            keywords.update(action="append", metavar="NAME")
            keywords["help"] = f"{field.description} Repeatable."
        else:
            keywords.update(type=kind, metavar=_METAVARS.get(kind, "VALUE"))
        group.add_argument(flag_of(name), **keywords)


def agent_options(args: argparse.Namespace, **fixed: Any) -> AgentOptions:
    """The `AgentOptions` the flags in ``args`` ask for (unset flags keep the defaults).

    A wrong value raises `AgentConfigurationError` naming the flag.
    """
    values = {
        name: getattr(args, name)
        for name in AgentOptions.model_fields
        if getattr(args, name, None) is not None
    }
    try:
        return AgentOptions(**{**values, **fixed})
    except AgentConfigurationError as error:
        message = str(error)
        for name in values:
            message = message.replace(f"({name}: ", f"({flag_of(name)}: ")
            message = message.replace(f"; {name}: ", f"; {flag_of(name)}: ")
        raise AgentConfigurationError(message) from None
