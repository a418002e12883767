"""Ask a human to approve a tool call through LangGraph's ``interrupt``, and read the answer.

The request (the interrupt's value) is ``{"type": "tool_approval", "tool", "args", "id",
"rules"}``; ``rules`` lists the rules whose check asks for the approval as ``{"id",
"content"}`` (empty for a tool named in ``require_approval``). The answer, given with
``Command(resume=...)``, is one of `APPROVAL_FORMS`; edited arguments pass the same
checks as a model's. The agent's tools node and `AgentRulesMiddleware` both ask here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import ToolCall
from langgraph.types import interrupt

from langchain_agent_rules.agent.arguments import argument_problem
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.rules.model import Rule

__all__ = ["APPROVAL_FORMS", "ApprovalDecision", "ask_approval"]

APPROVAL_FORMS = (
    '"approve", "reject", {"action": "approve"}, {"action": "edit", "args": {...}} '
    'or {"action": "reject", "reason": "..."}'
)


@dataclass(frozen=True)
class ApprovalDecision:
    """What the human decided: the arguments to run with, and how they decided."""

    args: dict[str, Any]
    approval: Literal["approved", "edited", "rejected"] | None
    reason: str = ""


def ask_approval(
    call: ToolCall, max_argument_bytes: int, rules: Sequence[Rule] = ()
) -> ApprovalDecision:
    """Pause the run until a human approves, edits or rejects ``call``.

    Raises:
        AgentConfigurationError: The answer is none of `APPROVAL_FORMS`, or the edited
            arguments are refused (too large, too deep, not JSON values).
    """
    answer = interrupt(
        {
            "type": "tool_approval",
            "tool": call["name"],
            "args": call["args"],
            "id": call["id"],
            "rules": [{"id": rule.id, "content": rule.content} for rule in rules],
        }
    )
    action = answer if isinstance(answer, str) else None
    if isinstance(answer, Mapping):
        action = answer.get("action")
    if action == "approve":
        return ApprovalDecision(call["args"], "approved")
    if action == "reject":
        reason = answer.get("reason", "") if isinstance(answer, Mapping) else ""
        return ApprovalDecision(call["args"], "rejected", str(reason or ""))
    if action == "edit" and isinstance(answer, Mapping) and isinstance(answer.get("args"), dict):
        problem = argument_problem(answer["args"], max_argument_bytes)
        if problem is not None:
            raise AgentConfigurationError(f"the edited arguments were refused: {problem}")
        return ApprovalDecision(dict(answer["args"]), "edited")
    raise AgentConfigurationError(
        f"an approval answer must be one of {APPROVAL_FORMS}; got {answer!r:.200}"
    )
