"""``agent-rules rules``: list, show, add, update and delete rules in a rule store.

Every action takes ``--store PATH_OR_URL`` (a JSON rules file or a database URL,
opened by `open_rule_store`; default ``rules.json`` in the current folder) and
``--json`` (print the records instead of text). Only ``add`` creates a store; the
others refuse a missing one. ``add``, ``update`` and ``delete`` print what they
changed. Bad input is one error line and exit code 1, with nothing written.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console

from langchain_agent_rules.cli._display import rule_changes, rule_summary, rules_table
from langchain_agent_rules.cli._parser import OneLineErrorParser
from langchain_agent_rules.errors import RuleValidationError
from langchain_agent_rules.rules._records import rule_to_record
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.open import open_rule_store, shown_store

__all__ = ["register"]

DEFAULT_STORE = "rules.json"

RULES_DESCRIPTION = """\
List and edit the rules an agent follows. A rule has a type (REQUIREMENT,
PROHIBITION, GUIDELINE or CONSTRAINT), a target (AGENT, TOOL, CODE or OUTPUT),
its content, a priority (higher comes first) and a scope: global, or one
project. A rule with --check is also enforced in code, not only prompted.

Rules live in a JSON rules file (the adachsoft/agent-rule format) or in a
database: every action takes --store PATH_OR_URL, by default rules.json in
the current folder."""
RULES_EPILOG = """\
examples:
  agent-rules rules add --id no_emails --type PROHIBITION --target OUTPUT \\
      --content "Never reveal e-mail addresses." --check '{"forbid": "email"}'
  agent-rules rules list --all
  agent-rules rules update no_emails --priority 10
  agent-rules rules delete no_emails"""

LIST_DESCRIPTION = """\
List rules, highest priority first (the order a model reads them): the global
rules; with --project N, the global rules and project N's (what that project's
agent sees); with --all, every rule, global first, then project by project."""
LIST_EPILOG = """\
examples:
  agent-rules rules list                  # the global rules
  agent-rules rules list --project 2      # what project 2's agent sees
  agent-rules rules list --all            # every rule, global first
  agent-rules rules list --all --json     # the records, as in a rules file"""

SHOW_DESCRIPTION = "Show one rule, with its check if it has one."
SHOW_EPILOG = """\
examples:
  agent-rules rules show no_emails
  agent-rules rules show no_emails --json"""

ADD_DESCRIPTION = """\
Add a rule. Without --project it is global: every project's agent follows it.
A rules file that does not exist yet is created by its first rule."""
ADD_EPILOG = """\
examples:
  agent-rules rules add --id no_emails --type PROHIBITION --target OUTPUT \\
      --content "Never reveal e-mail addresses." --check '{"forbid": "email"}'
  agent-rules rules add --id answer_in_french --type REQUIREMENT \\
      --target OUTPUT --content "Always answer in French." --project 2

checks (--check JSON: one condition; "on_fail" defaults to the first listed):
  {"forbid": "email"}      or phone, credit_card, iban, ipv4, ipv6, secret,
                           regex:<pattern>; on_fail redact, revise or block
  {"require": "regex:EUR", "when": "regex:[0-9]"}  on_fail revise or block
  {"language": "fr"}   {"max_chars": 500}          on_fail revise or block
  {"tool": "sql_query", "args": "regex:DELETE"}    on_fail deny or approve
answer checks need --target OUTPUT, tool checks --target TOOL."""

UPDATE_DESCRIPTION = """\
Change some fields of a rule; the others keep their values. Prints each change
(old -> new), or that nothing changed."""
UPDATE_EPILOG = """\
examples:
  agent-rules rules update no_emails --priority 10
  agent-rules rules update no_emails \\
      --check '{"forbid": "email", "on_fail": "block"}'
  agent-rules rules update answer_in_french --global
  agent-rules rules update no_emails --check null     # prompt only, no check"""

DELETE_DESCRIPTION = "Delete a rule; prints what was deleted."
DELETE_EPILOG = """\
examples:
  agent-rules rules delete answer_in_french"""

STORE_HELP = (
    "the rule store: a JSON rules file, or a database URL such as sqlite:///rules.db "
    f"or postgresql://user:password@host/db (default: {DEFAULT_STORE} in the current folder)"
)
CHECK_HELP = (
    'the check enforced in code, as JSON, such as {"forbid": "email"}, '
    '{"require": "regex:EUR"}, {"language": "fr"}, {"max_chars": 500} or '
    '{"tool": "sql_query"}'
)
CHECK_NOT_JSON_TEMPLATE = (
    'invalid --check: not JSON ({problem}); give a JSON object such as \'{{"forbid": "email"}}\''
)
NOTHING_TO_UPDATE_MESSAGE = (
    "nothing to update; give any of --type, --target, --content, --priority, --check, "
    "--project N or --global"
)


def register(subparsers: Any) -> None:
    """Add the ``rules`` command and its actions to the ``agent-rules`` parser."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", default=DEFAULT_STORE, metavar="PATH_OR_URL", help=STORE_HELP)
    common.add_argument(
        "--json", action="store_true", help="print the records, as in a rules file, not text"
    )

    rules = subparsers.add_parser(
        "rules",
        help="list and edit agent rules",
        description=RULES_DESCRIPTION,
        epilog=RULES_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = rules.add_subparsers(
        dest="rules_command",
        required=True,
        metavar="ACTION",
        parser_class=OneLineErrorParser,
        help="what to do; agent-rules rules ACTION --help tells more",
    )

    def action(name: str, summary: str, description: str, epilog: str) -> Any:
        return actions.add_parser(
            name,
            parents=[common],
            help=summary,
            description=description,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    listing = action("list", "list rules, highest priority first", LIST_DESCRIPTION, LIST_EPILOG)
    which = listing.add_mutually_exclusive_group()
    which.add_argument(
        "--project",
        type=_project_id,
        metavar="N",
        help="also list project N's rules: what its agent sees",
    )
    which.add_argument(
        "--all", action="store_true", help="list every rule: global and every project's"
    )
    listing.set_defaults(handler=_list)

    show = action("show", "show one rule", SHOW_DESCRIPTION, SHOW_EPILOG)
    show.add_argument("id", help="the rule's id")
    show.set_defaults(handler=_show)

    add = action("add", "add a rule", ADD_DESCRIPTION, ADD_EPILOG)
    add.add_argument(
        "--id", required=True, help="a unique id: 3 to 64 characters of a-z, 0-9 and _"
    )
    add.add_argument(
        "--type",
        required=True,
        help="REQUIREMENT, PROHIBITION, GUIDELINE or CONSTRAINT (any case)",
    )
    add.add_argument(
        "--target",
        required=True,
        help="AGENT, TOOL, CODE or OUTPUT (any case): what the rule is about",
    )
    add.add_argument(
        "--content", required=True, help="the instruction the model reads, 10 characters or more"
    )
    add.add_argument(
        "--priority", type=int, default=0, help="an integer; higher comes first (default: 0)"
    )
    add.add_argument(
        "--project",
        type=_project_id,
        metavar="N",
        help="the project it applies to, a positive integer (default: global)",
    )
    add.add_argument("--check", metavar="JSON", help=CHECK_HELP)
    add.set_defaults(handler=_add)

    update = action("update", "change a rule", UPDATE_DESCRIPTION, UPDATE_EPILOG)
    update.add_argument("id", help="the rule's id")
    update.add_argument("--type", help="REQUIREMENT, PROHIBITION, GUIDELINE or CONSTRAINT")
    update.add_argument("--target", help="AGENT, TOOL, CODE or OUTPUT")
    update.add_argument("--content", help="the new instruction, 10 characters or more")
    update.add_argument("--priority", type=int, help="the new priority; higher comes first")
    update.add_argument("--check", metavar="JSON", help=CHECK_HELP + "; null removes it")
    scope = update.add_mutually_exclusive_group()
    scope.add_argument("--project", type=_project_id, metavar="N", help="move it to project N")
    scope.add_argument(
        "--global",
        dest="make_global",
        action="store_true",
        help="make it global: every project's agent follows it",
    )
    update.set_defaults(handler=_update)

    delete = action("delete", "delete a rule", DELETE_DESCRIPTION, DELETE_EPILOG)
    delete.add_argument("id", help="the rule's id")
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
    store = open_rule_store(args.store, must_exist=True)
    rules = store.get_all() if args.all else store.get_all_by_project(args.project)
    rules.sort(key=_by_project_then_priority if args.all else _by_priority)
    if args.json:
        _print_json([rule_to_record(rule) for rule in rules])
    elif not rules:
        print(f"No rules in {shown_store(args.store)}.")
    else:
        Console(highlight=False).print(rules_table(rules))
    return 0


def _show(args: argparse.Namespace) -> int:
    rule = open_rule_store(args.store, must_exist=True).get(args.id)
    if args.json:
        _print_json(rule_to_record(rule))
    else:
        Console(highlight=False).print(rules_table([rule]))
    return 0


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
    created = open_rule_store(args.store).create(rule)
    _report(args, created, f"created rule {rule_summary(created)} in {shown_store(args.store)}")
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
        raise RuleValidationError(NOTHING_TO_UPDATE_MESSAGE)
    store = open_rule_store(args.store, must_exist=True)
    current = store.get(args.id)
    wanted = current.with_changes(**changes)
    changed = rule_changes(current, wanted)
    where = shown_store(args.store)
    if not changed:
        _report(
            args, current, f"rule {current.id} in {where} already has these values; nothing changed"
        )
        return 0
    stored = store.update(wanted)
    _report(args, stored, f"updated rule {stored.id} in {where}: {', '.join(changed)}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    removed = open_rule_store(args.store, must_exist=True).delete(args.id)
    _report(args, removed, f"deleted rule {rule_summary(removed)} from {shown_store(args.store)}")
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


def _report(args: argparse.Namespace, rule: Rule, sentence: str) -> None:
    """What a change did: the sentence, or with ``--json`` the rule's record."""
    if args.json:
        _print_json(rule_to_record(rule))
    else:
        print(sentence)


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _by_priority(rule: Rule) -> int:
    return -rule.priority


def _by_project_then_priority(rule: Rule) -> tuple[bool, int, int]:
    return rule.project_id is not None, rule.project_id or 0, -rule.priority
