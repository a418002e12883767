"""`OneLineErrorParser`: usage errors as one ``agent-rules: error:`` line, exit code 1."""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["OneLineErrorParser"]

USAGE_ERROR_TEMPLATE = "agent-rules: error: {message} (see {prog} --help)\n"


class OneLineErrorParser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose usage errors read like every other CLI error.

    argparse prints the usage block and exits with 2; this prints one line naming the
    help page to read and exits with 1, as the command's own errors do.
    """

    def error(self, message: str) -> NoReturn:
        """Print ``message`` as one error line and exit with code 1."""
        self.exit(1, USAGE_ERROR_TEMPLATE.format(message=message, prog=self.prog))
