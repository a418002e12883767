"""``agent-rules rules``: list, show, add, update and delete rules in a rule store.

Every subcommand takes ``--store SPEC`` (a JSON rules file or a database URL; default
``rules.json``; opened by `open_rule_store`) and ``--json`` (print JSON
records instead of a table). ``add`` and ``update`` take ``--check JSON``, the rule's
check (``'{"forbid": "email"}'``; ``null`` removes it on update).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from langchain_agent_rules.errors import RuleValidationError
from langchain_agent_rules.rules._records import rule_to_record
from langchain_agent_rules.rules.model import Rule, RuleTarget, RuleType
from langchain_agent_rules.rules.open import open_rule_store

__all__ = ["register"]

DEFAULT_STORE = "rules.json"
_TYPES = ", ".join(m.name for m in RuleType)
_TARGETS = ", ".join(m.name for m in RuleTarget)
CHECK_HELP = (
    'the check enforced in code, as JSON: {"forbid": "email"}, {"require": "regex:EUR"}, '
    '{"language": "fr"}, {"max_chars": 500} or {"tool": "sql_query"}'
)
CHECK_NOT_JSON_TEMPLATE = (
    'invalid --check: not JSON ({problem}); give a JSON object such as \'{{"forbid": "email"}}\''
)


def register(subparsers: Any) -> None:
    """Add the ``rules`` command and its subcommands to the ``agent-rules`` parser."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="SPEC",
        help="the rule store: a JSON rules file or a database URL "
        f"(postgresql://..., sqlite:///...; default: {DEFAULT_STORE})",
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")

    rules = subparsers.add_parser("rules", help="list and edit agent rules")
    actions = rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")

    listing = actions.add_parser(
        "list",
        parents=[common],
        help="the effective rules, highest priority first",
        description="List the global rules, plus project N's with --project N, "
        "highest priority first (the order a model sees).",
    )
    listing.add_argument("--project", type=_project_id, metavar="N", help="a project id")
    listing.set_defaults(handler=_list)

    show = actions.add_parser("show", parents=[common], help="one rule")
    show.add_argument("id", help="the rule id")
    show.set_defaults(handler=_show)

    add = actions.add_parser("add", parents=[common], help="create a rule")
    add.add_argument("--id", required=True, help="3 to 64 characters of a-z, 0-9 and _")
    add.add_argument("--type", required=True, help=f"one of {_TYPES}")
    add.add_argument("--target", required=True, help=f"one of {_TARGETS}")
    add.add_argument("--content", required=True, help="the instruction, 10 characters or more")
    add.add_argument("--priority", type=int, default=0, help="higher comes first (default 0)")
    add.add_argument("--project", type=_project_id, metavar="N", help="omit for a global rule")
    add.add_argument("--check", metavar="JSON", help=CHECK_HELP)
    add.set_defaults(handler=_add)

    update = actions.add_parser("update", parents=[common], help="change a rule")
    update.add_argument("id", help="the rule id")
    update.add_argument("--type", help=f"one of {_TYPES}")
    update.add_argument("--target", help=f"one of {_TARGETS}")
    update.add_argument("--content", help="the instruction, 10 characters or more")
    update.add_argument("--priority", type=int, help="higher comes first")
    update.add_argument("--check", metavar="JSON", help=CHECK_HELP + "; null removes it")
    scope = update.add_mutually_exclusive_group()
    scope.add_argument("--project", type=_project_id, metavar="N", help="move to project N")
    scope.add_argument("--global", dest="make_global", action="store_true", help="make global")
    update.set_defaults(handler=_update)

    delete = actions.add_parser("delete", parents=[common], help="remove a rule")
    delete.add_argument("id", help="the rule id")
    delete.set_defaults(handler=_delete)


def _project_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"invalid project id {text!r}: a positive integer")
    return value


def _list(args: argparse.Namespace) -> int:
    rules = open_rule_store(args.store).get_all_by_project(args.project)
    rules.sort(key=lambda rule: -rule.priority)
    _print(rules, args.json, many=True)
    return 0


def _show(args: argparse.Namespace) -> int:
    _print([open_rule_store(args.store).get(args.id)], args.json)
    return 0


def _check_of(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise RuleValidationError(CHECK_NOT_JSON_TEMPLATE.format(problem=error.msg)) from None
    except (ValueError, RecursionError):
        raise RuleValidationError(
            CHECK_NOT_JSON_TEMPLATE.format(problem="too deep or too large")
        ) from None


def _add(args: argparse.Namespace) -> int:
    rule = Rule(
        id=args.id,
        type=args.type,
        target=args.target,
        content=args.content,
        priority=args.priority,
        project_id=args.project,
        check=None if args.check is None else _check_of(args.check),
    )
    _print([open_rule_store(args.store).create(rule)], args.json)
    return 0


def _update(args: argparse.Namespace) -> int:
    changes: dict[str, Any] = {
        field: getattr(args, field)
        for field in ("type", "target", "content", "priority")
        if getattr(args, field) is not None
    }
    if args.project is not None or args.make_global:
        changes["project_id"] = args.project
    if args.check is not None:
        changes["check"] = _check_of(args.check)
    if not changes:
        raise RuleValidationError(
            "nothing to update; give any of --type, --target, --content, --priority, "
            "--check, --project N or --global"
        )
    store = open_rule_store(args.store)
    _print([store.update(store.get(args.id).with_changes(**changes))], args.json)
    return 0


def _delete(args: argparse.Namespace) -> int:
    _print([open_rule_store(args.store).delete(args.id)], args.json)
    return 0


def _print(rules: Sequence[Rule], as_json: bool, *, many: bool = False) -> None:
    console = Console(soft_wrap=True, highlight=False)
    if as_json:
        records = [rule_to_record(rule) for rule in rules]
        console.out(json.dumps(records if many else records[0], ensure_ascii=False, indent=2))
        return
    if not rules:
        console.out("No rules.")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("id", "type", "target", "prio", "scope"):
        table.add_column(column, no_wrap=True)
    table.add_column("content", overflow="fold", ratio=1)
    with_checks = any(rule.check is not None for rule in rules)
    if with_checks:
        table.add_column("check", overflow="fold", ratio=1)
    for rule in rules:
        project = "global" if rule.project_id is None else str(rule.project_id)
        row = [rule.id, rule.type.name, rule.target.name, str(rule.priority), project]
        row.append(escape(rule.content))
        if with_checks:
            row.append(escape(_check_text(rule)))
        table.add_row(*row)
    console.print(table)


def _check_text(rule: Rule) -> str:
    """The check in one line: its keys as given, then what a failure does."""
    if rule.check is None:
        return ""
    given = json.dumps(rule.check.to_record(), ensure_ascii=False, separators=(",", ":"))
    return f"{given} → {rule.check.action}"
