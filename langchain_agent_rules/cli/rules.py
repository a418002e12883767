"""``agent-rules rules``: start a rule store, list, show, add, update and delete rules.

Every action takes ``--store PATH_OR_URL`` (a JSON rules file or a database URL,
opened by `open_rule_store`; default ``rules.json`` in the current folder) and all but
``init`` take ``--json`` (print the records instead of text). Only ``init`` creates a
store; every other action refuses a missing one, so a mistyped path is an error, never
a new store. ``add``, ``update`` and ``delete`` print what they changed;
``suggest-checks`` shows the checks plain-text rules ask for and writes them with
``--apply``. Bad input is one error line and exit code 1, with nothing written.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console

from langchain_agent_rules.cli._display import (
    rule_changes,
    rule_summary,
    rules_table,
    suggestion_lines,
)
from langchain_agent_rules.cli._parser import OneLineErrorParser
from langchain_agent_rules.errors import RuleNotFoundError, RuleValidationError
from langchain_agent_rules.rules._records import rule_to_record
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.open import open_rule_store, shown_store, store_exists
from langchain_agent_rules.rules.store import RuleStore
from langchain_agent_rules.rules.suggest import CheckSuggestion, suggest_checks

__all__ = ["register"]

DEFAULT_STORE = "rules.json"

RULES_DESCRIPTION = """\
List and edit the rules an agent follows. A rule has a type (REQUIREMENT,
PROHIBITION, GUIDELINE or CONSTRAINT), a target (AGENT, TOOL, CODE or OUTPUT),
its content, a priority (higher comes first) and a scope: global, or one
project. A rule with --check is also enforced in code, not only prompted.

Rules live in a JSON rules file (the adachsoft/agent-rule format) or in a
database: every action takes --store PATH_OR_URL, by default rules.json in
the current folder. init starts an empty store; the other actions refuse a
store that does not exist, so a mistyped path is an error, never a new store."""
RULES_EPILOG = """\
examples:
  agent-rules rules init                  # an empty rules.json, once
  agent-rules rules add --id no_emails --type PROHIBITION --target OUTPUT \\
      --content "Never reveal e-mail addresses." --check '{"forbid": "email"}'
  agent-rules rules list --all
  agent-rules rules update no_emails --priority 10
  agent-rules rules suggest-checks        # checks plain-text rules ask for
  agent-rules rules delete no_emails"""

INIT_DESCRIPTION = """\
Start an empty rule store: a JSON rules file (and its folder), a SQLite
database, or the rules table of a PostgreSQL database. A store that exists
already is left as it is. The other actions refuse a missing store."""
INIT_EPILOG = """\
examples:
  agent-rules rules init                            # rules.json here
  agent-rules rules init --store config/rules.json
  agent-rules rules init --store sqlite:///rules.db"""

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
The store must exist: agent-rules rules init starts an empty one."""
ADD_EPILOG = """\
examples:
  agent-rules rules init     # once, if there is no rules.json yet
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

SUGGEST_DESCRIPTION = """\
Propose checks for the OUTPUT rules that have none, from their wording: a
prohibition of e-mail addresses, phone numbers, card numbers, IBANs, IP
addresses or secrets gets a forbid check; "answer in French" a language
check; "amounts with the currency code EUR" a require check; "at most 500
characters" a max_chars check. Shows each rule's check before (-) and after
(+); writes them only with --apply. Read the proposals before applying them."""
SUGGEST_EPILOG = """\
examples:
  agent-rules rules suggest-checks
  agent-rules rules suggest-checks --apply
  agent-rules rules suggest-checks --json"""

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
INIT_CREATED_TEMPLATE = "created an empty rule store at {where}"
INIT_EXISTS_TEMPLATE = "{where} already exists with {count} rule(s); nothing was overwritten"
NO_SUGGESTIONS_TEMPLATE = "no checks to suggest for the {count} rule(s) without a check in {where}"
SUGGESTED_TEMPLATE = (
    "{count} check(s) suggested in {where}; nothing written (add --apply to write them)"
)
APPLIED_TEMPLATE = "wrote {count} check(s) to {where}"
CHANGED_MEANWHILE_TEMPLATE = (
    "skipped rule {id}: it changed or was deleted while the checks were suggested"
)
NOTHING_TO_UPDATE_MESSAGE = (
    "nothing to update; give any of --type, --target, --content, --priority, --check, "
    "--project N or --global"
)


def register(subparsers: Any) -> None:
    """Add the ``rules`` command and its actions to the ``agent-rules`` parser."""
    store_option = argparse.ArgumentParser(add_help=False)
    store_option.add_argument(
        "--store", default=DEFAULT_STORE, metavar="PATH_OR_URL", help=STORE_HELP
    )
    common = argparse.ArgumentParser(add_help=False, parents=[store_option])
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

    def action(
        name: str, summary: str, description: str, epilog: str, *, parent: Any = common
    ) -> Any:
        return actions.add_parser(
            name,
            parents=[parent],
            help=summary,
            description=description,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    init = action(
        "init", "start an empty rule store", INIT_DESCRIPTION, INIT_EPILOG, parent=store_option
    )
    init.set_defaults(handler=_init)

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

    suggest = action(
        "suggest-checks",
        "propose checks for rules that have none",
        SUGGEST_DESCRIPTION,
        SUGGEST_EPILOG,
        parent=store_option,
    )
    suggest.add_argument(
        "--json",
        action="store_true",
        help="print the suggestions as JSON (id, check, because, also), not a diff",
    )
    suggest.add_argument(
        "--apply", action="store_true", help="write the suggested checks into the store"
    )
    suggest.set_defaults(handler=_suggest_checks)

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


def _init(args: argparse.Namespace) -> int:
    where = shown_store(args.store)
    existed = store_exists(args.store)
    store = open_rule_store(args.store, create=True)
    count = len(store.get_all())  # creates a database's table; proves a file is readable
    if existed:
        print(INIT_EXISTS_TEMPLATE.format(where=where, count=count))
    else:
        print(INIT_CREATED_TEMPLATE.format(where=where))
    return 0


def _list(args: argparse.Namespace) -> int:
    store = open_rule_store(args.store)
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
    rule = open_rule_store(args.store).get(args.id)
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
    store = open_rule_store(args.store)
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
    removed = open_rule_store(args.store).delete(args.id)
    _report(args, removed, f"deleted rule {rule_summary(removed)} from {shown_store(args.store)}")
    return 0


def _suggest_checks(args: argparse.Namespace) -> int:
    store = open_rule_store(args.store)
    rules = store.get_all()
    suggestions = suggest_checks(rules)
    where = shown_store(args.store)
    written = [_apply(store, suggestion) for suggestion in suggestions] if args.apply else []
    if args.json:
        records = [_suggestion_record(suggestion) for suggestion in suggestions]
        if args.apply:
            records = [{**r, "written": done} for r, done in zip(records, written, strict=True)]
        _print_json(records)
        return 0
    for suggestion in suggestions:
        print("\n".join(suggestion_lines(suggestion)))
    if not suggestions:
        unchecked = sum(rule.check is None for rule in rules)
        print(NO_SUGGESTIONS_TEMPLATE.format(count=unchecked, where=where))
    elif args.apply:
        for skipped in (s for s, done in zip(suggestions, written, strict=True) if not done):
            print(CHANGED_MEANWHILE_TEMPLATE.format(id=skipped.rule.id))
        print(APPLIED_TEMPLATE.format(count=sum(written), where=where))
    else:
        print(SUGGESTED_TEMPLATE.format(count=len(suggestions), where=where))
    return 0


def _apply(store: RuleStore, suggestion: CheckSuggestion) -> bool:
    """Write the suggested check, unless the rule changed or went since it was read."""
    try:
        current = store.get(suggestion.rule.id)
    except RuleNotFoundError:
        return False
    if current != suggestion.rule:
        return False
    store.update(suggestion.checked_rule)
    return True


def _suggestion_record(suggestion: CheckSuggestion) -> dict[str, Any]:
    return {
        "id": suggestion.rule.id,
        "check": suggestion.check.to_record(),
        "because": suggestion.because,
        "also": [check.to_record() for check in suggestion.also],
    }


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
