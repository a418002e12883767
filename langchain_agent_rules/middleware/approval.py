"""Ask a human to approve one tool call, in LangChain's human-in-the-loop format.

The interrupt's value is LangChain's `HITLRequest`: one action request (the tool's name,
its arguments, and a description naming the rules that asked, if a rule did) and its
review config (``approve``, ``edit``, ``reject``). The run resumes with LangChain's
`HITLResponse`, ``{"decisions": [decision]}``: ``{"type": "approve"}``,
``{"type": "edit", "edited_action": {"name": <the same tool>, "args": {...}}}`` or
``{"type": "reject", "message": "..."}``.

The answer is checked by LangGraph before it is saved (the interrupt's
``response_schema``): a value that is not one valid decision for this call — ``None``, a
string, a huge or deeply nested edit, another tool's name — raises
`AgentConfigurationError` saying what a decision looks like, and the run keeps waiting
for a valid one; the thread is never stuck with a bad answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal

from langchain.agents.middleware.human_in_the_loop import (
    ActionRequest,
    DecisionType,
    HITLRequest,
    ReviewConfig,
)
from langchain_core.messages import ToolCall
from langgraph.errors import is_invalid_resume
from langgraph.types import interrupt
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    ValidationError,
    create_model,
)

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware._arguments import argument_problem
from langchain_agent_rules.middleware.prompts import APPROVAL_DESCRIPTION, APPROVAL_RULE_LINE
from langchain_agent_rules.rules.model import Rule

__all__ = ["ALLOWED_DECISIONS", "DECISION_FORMS", "ApprovalDecision", "ask_approval"]

ALLOWED_DECISIONS: list[DecisionType] = ["approve", "edit", "reject"]
DECISION_FORMS = (
    '{"decisions": [{"type": "approve"}]}, {"decisions": [{"type": "edit", '
    '"edited_action": {"name": <tool>, "args": {...}}}]} or {"decisions": [{"type": '
    '"reject", "message": "..."}]}'
)
_MAX_MESSAGE_CHARS = 2000


@dataclass(frozen=True)
class ApprovalDecision:
    """What the human decided: the arguments to run with, and how they decided."""

    args: dict[str, Any]
    approval: Literal["approved", "edited", "rejected"]
    reason: str = ""


class _Approve(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["approve"]


class _Reject(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["reject"]
    message: Annotated[StrictStr, Field(max_length=_MAX_MESSAGE_CHARS)] = ""


@lru_cache(maxsize=256)
def _response_schema(tool: str, max_argument_bytes: int) -> type[BaseModel]:
    """The resume value one approval accepts: one decision, an edit of this tool only."""

    def safe_args(args: dict[str, Any]) -> dict[str, Any]:
        problem = argument_problem(args, max_argument_bytes)
        if problem is not None:
            raise ValueError(problem)
        return args

    fields: dict[str, Any] = {
        "name": (Literal[tool], ...),
        "args": (Annotated[dict[str, Any], AfterValidator(safe_args)], ...),
    }
    action = create_model("EditedAction", __config__=ConfigDict(extra="forbid"), **fields)
    edit_fields: dict[str, Any] = {"type": (Literal["edit"], ...), "edited_action": (action, ...)}
    edit = create_model("EditDecision", __config__=ConfigDict(extra="forbid"), **edit_fields)
    decision = Annotated[_Approve | edit | _Reject, Field(discriminator="type")]  # type: ignore[valid-type]
    return create_model(
        "ApprovalResponse",
        __config__=ConfigDict(extra="forbid"),
        decisions=(Annotated[list[decision], Field(min_length=1, max_length=1)], ...),  # type: ignore[valid-type]
    )


def _description(tool: str, rules: Sequence[Rule]) -> str:
    lines = [APPROVAL_DESCRIPTION.format(tool=tool)]
    lines += [APPROVAL_RULE_LINE.format(rule_id=rule.id, content=rule.content) for rule in rules]
    return "\n".join(lines)


def approval_request(call: ToolCall, rules: Sequence[Rule] = ()) -> HITLRequest:
    """The `HITLRequest` for ``call``; ``rules`` are those whose check asks for it."""
    action: ActionRequest = {
        "name": call["name"],
        "args": call["args"],
        "description": _description(call["name"], rules),
    }
    review: ReviewConfig = {"action_name": call["name"], "allowed_decisions": ALLOWED_DECISIONS}
    return {"action_requests": [action], "review_configs": [review]}


def ask_approval(
    call: ToolCall, max_argument_bytes: int, rules: Sequence[Rule] = ()
) -> ApprovalDecision:
    """Pause the run until a human approves, edits or rejects ``call``.

    Raises:
        AgentConfigurationError: The resume value is not one valid decision for this
            call; nothing was saved, so the run can be resumed again.
    """
    schema = _response_schema(call["name"], max_argument_bytes)
    try:
        answer = interrupt(approval_request(call, rules), response_schema=schema)
    except ValidationError as error:
        if not is_invalid_resume(error):
            raise
        problems = "; ".join(
            f"{'.'.join(str(p) for p in problem['loc']) or 'value'}: {problem['msg']}"
            for problem in error.errors()[:3]
        )
        raise AgentConfigurationError(
            f"the answer to the approval of {call['name']!r} is not a valid decision "
            f"({problems}); the run still waits: resume it with {DECISION_FORMS}"
        ) from None
    decision = answer.decisions[0]  # type: ignore[attr-defined]
    if decision.type == "approve":
        return ApprovalDecision(call["args"], "approved")
    if decision.type == "reject":
        return ApprovalDecision(call["args"], "rejected", decision.message)
    return ApprovalDecision(dict(decision.edited_action.args), "edited")
