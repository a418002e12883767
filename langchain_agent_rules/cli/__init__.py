"""The ``agent-rules`` console script: one subcommand module each, one error line on failure.

Every argument is checked to be UTF-8 text before anything runs, so a path or a rule
given as raw bytes is one error line with nothing written. Output that cannot be
encoded is escaped, never a crash; output into a closed pipe (``| head``) ends quietly
with exit code 141, as a shell tool stopped by SIGPIPE does.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence

from langchain_agent_rules.cli._parser import OneLineErrorParser
from langchain_agent_rules.display._common import shorten
from langchain_agent_rules.errors import AgentRulesError

__all__ = ["EXIT_CLOSED_OUTPUT", "main"]

EXIT_CLOSED_OUTPUT = 141
"""The exit code when standard output was closed early: 128 + SIGPIPE, as shells report."""

NOT_UTF8_TEMPLATE = "argument '{argument}' is not valid UTF-8; give paths and text as UTF-8"

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
    arguments = sys.argv[1:] if argv is None else list(argv)
    for argument in arguments:
        if not _is_utf8(argument):
            print(
                f"agent-rules: error: {NOT_UTF8_TEMPLATE.format(argument=_shown(argument))}",
                file=sys.stderr,
            )
            return 1
    _escape_unencodable_output()
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
        code = int(args.handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except AgentRulesError as error:
        print(f"agent-rules: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("agent-rules: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _output_closed()
    except SystemExit as exit_:
        # rich exits on a closed pipe from inside its own `except BrokenPipeError`.
        if isinstance(exit_.__context__, BrokenPipeError):
            return _output_closed()
        raise


def _is_utf8(argument: str) -> bool:
    try:
        argument.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(argument: str) -> str:
    r"""``argument`` with its undecodable bytes as ``\xff`` escapes, cut to fit a line."""
    try:
        raw = argument.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that did not come from a byte
        raw = argument.encode("utf-8", "backslashreplace")
    return shorten(raw.decode("utf-8", "backslashreplace"), 80)


def _escape_unencodable_output() -> None:
    """Print what the terminal's encoding cannot show as escapes instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def _output_closed() -> int:
    """Standard output was closed by its reader: stop writing, quietly (the Python docs' way)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file descriptor: nothing will flush to the closed pipe
    return EXIT_CLOSED_OUTPUT
