"""The ``agent-rules`` console script: one subcommand module each, one error line on failure."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from langchain_agent_rules.cli._parser import OneLineErrorParser
from langchain_agent_rules.errors import AgentRulesError

__all__ = ["main"]

_EXAMPLES = """\
examples:
  agent-rules demo                   the agent on the embedded model, demo data
  agent-rules demo --export demo     the demo data in ./demo, for your own runs
  agent-rules run "How many customers?" --db sqlite:///demo/shop.db
  agent-rules rules list --all --store demo/rules.json
  agent-rules rules add --help       how to write a rule and its check
"""


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand registered."""
    from langchain_agent_rules import __version__
    from langchain_agent_rules.cli import rules as rules_command
    from langchain_agent_rules.cli import run as run_command

    parser = OneLineErrorParser(
        prog="agent-rules",
        description="Agent rules, safe tools and a bounded LangGraph agent.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    rules_command.register(commands)
    run_command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the console script; return the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except AgentRulesError as error:
        print(f"agent-rules: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("agent-rules: interrupted", file=sys.stderr)
        return 130
