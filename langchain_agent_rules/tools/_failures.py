"""One mapping from a driver's exception (a database's, httpx's) to the error the model reads."""

from __future__ import annotations

from langchain_agent_rules.errors import ToolExecutionError
from langchain_agent_rules.tools._text import valid_text

__all__ = ["driver_failure", "failure_detail"]


def failure_detail(error: BaseException) -> str:
    """What a driver said about a failure, as one line an observation can carry.

    The first line of its message without a closing period (its type name when it said
    nothing), with any lone surrogate replaced.
    """
    lines = str(error).strip().splitlines()
    return valid_text(lines[0].rstrip(".") if lines else type(error).__name__)


def driver_failure(
    error: BaseException, *, timed_out: bool, timeout_message: str, template: str, **fields: object
) -> ToolExecutionError:
    """The `ToolExecutionError` for a driver's failure.

    ``timeout_message`` when the driver gave up on a time limit; otherwise ``template``
    filled with ``fields`` and the driver's own words as ``{detail}``.
    """
    if timed_out:
        return ToolExecutionError(timeout_message)
    return ToolExecutionError(template.format(detail=failure_detail(error), **fields))
