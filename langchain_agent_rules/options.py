"""`AgentOptions`: the one definition of the agent's options, their defaults and their checks.

`create_rules_agent`, `RulesAgent`, the Studio context (``graphs/agent.py``), the flags of
``agent-rules run`` / ``demo`` and the middleware all read their options, defaults and
help texts from this class, so an option is added, documented and validated here once.
Options are plain data (numbers, names, text); what an agent is built *from* (the model,
tools, rule store, checkpointer, store) is passed beside them.

Keyword style: ``create_rules_agent(model, tools, max_iterations=3)`` and
``RulesAgent(model, tools, max_iterations=3)`` take the options as ``**options`` and
validate them here; an unknown keyword raises `AgentConfigurationError` listing the
options. The keywords are deliberately not typed with ``Unpack[SomeTypedDict]``: a
TypedDict cannot be generated from this class for a type checker, so it would be a
second copy of every name and type to keep in step. Pass ``options=AgentOptions(...)``
for a statically checked, reusable value.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from langchain_agent_rules.errors import AgentConfigurationError

__all__ = [
    "MIN_OBSERVATION_BYTES",
    "AgentOptions",
    "OnLimit",
    "ProtocolName",
    "Review",
    "describe_problems",
]

MIN_OBSERVATION_BYTES = 128
"""The smallest ``max_observation_bytes``: room for the truncation marker and some text."""

ProtocolName = Literal["auto", "native", "text"]
OnLimit = Literal["summarize", "end", "raise"]
Review = Literal["off", "model"]

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlevel = 2


class AgentOptions(BaseModel):
    """The options of a rules agent; every field has a working default.

    Frozen and validated when built: a wrong value or an unknown name raises
    `AgentConfigurationError` saying what is allowed. ``AgentOptions(max_iterations=3)``
    or, from keywords that may hold an options object, `AgentOptions.resolve`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    protocol: ProtocolName = Field(
        default="auto",
        description='Tool calling: "native" (bind the tools), "text" (fenced JSON described '
        'in the prompt) or "auto" (native when the model supports it).',
    )
    project_id: StrictInt | None = Field(
        default=None, ge=1, description="The project whose rules apply; none: global rules only."
    )
    max_iterations: StrictInt = Field(
        default=6, ge=1, description="Model turns that may use tools; then on_limit applies."
    )
    max_model_calls: StrictInt | None = Field(
        default=None,
        ge=1,
        description="Most model calls in one run, the summary call of on_limit included; "
        "none: no limit.",
    )
    max_total_tokens: StrictInt | None = Field(
        default=None,
        ge=1,
        description="Input plus output tokens a run may use before on_limit applies (as "
        "reported by the model); none: no limit.",
    )
    tool_timeout: float | None = Field(
        default=30.0,
        gt=0,
        strict=True,
        allow_inf_nan=False,
        description="Seconds one tool call may take before it becomes an error; none: no limit.",
    )
    max_observation_bytes: StrictInt = Field(
        default=8192,
        ge=MIN_OBSERVATION_BYTES,
        description="UTF-8 bytes of one tool result the model may see; the rest is cut.",
    )
    max_argument_bytes: StrictInt = Field(
        default=65536,
        ge=1,
        description="UTF-8 bytes of one tool call's arguments; a larger call is refused "
        "with an error observation.",
    )
    on_limit: OnLimit = Field(
        default="summarize",
        description='When a budget is spent: "summarize" (one last model call without tools), '
        '"end" (a fixed answer) or "raise" (IterationLimitError).',
    )
    system_prompt: str | None = Field(
        default=None, description="Replaces the opening of the system prompt."
    )
    require_approval: tuple[str, ...] = Field(
        default=(), description="Tool names whose calls wait for a human decision."
    )
    max_revisions: StrictInt = Field(
        default=2,
        ge=0,
        description="Model calls that may rewrite an answer breaking a checked rule "
        "(on_fail=revise) before the answer is blocked.",
    )
    grounded_answers: bool = Field(
        default=False,
        strict=True,
        description="After tools ran, revise an answer that states a number or a name no "
        "tool returned; if the revision still does, say it could not be found.",
    )
    review: Review = Field(
        default="off",
        description='"model": one more model call checks the answer against the output '
        'rules that have no check; "off": those rules are only in the prompt.',
    )

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as error:
            raise AgentConfigurationError(
                describe_problems(error, "agent options", type(self).model_fields)
            ) from None

    @classmethod
    def resolve(
        cls, options: AgentOptions | None = None, values: Mapping[str, Any] | None = None
    ) -> AgentOptions:
        """``options`` (or the defaults) with ``values`` applied on top, validated."""
        if options is not None and not isinstance(options, AgentOptions):
            raise AgentConfigurationError(
                f"options must be an AgentOptions, got {type(options).__name__}"
            )
        if not values:
            return options or cls()
        base = options.model_dump(exclude_unset=True) if options is not None else {}
        return cls(**{**base, **values})


def describe_problems(error: ValidationError, what: str, fields: Iterable[str]) -> str:
    """One line naming each wrong field, what it must be and what it got.

    An unknown name adds the list of ``fields``, so the message says what is allowed.
    """
    problems = []
    unknown = False
    for problem in error.errors():
        field = str(problem["loc"][0]) if problem["loc"] else what
        if problem["type"] == "extra_forbidden":
            unknown = True
            problems.append(f"{field}: unknown option")
        else:
            problems.append(f"{field}: {problem['msg']}, got {_SHORT.repr(problem['input'])}")
    message = f"invalid {what} ({'; '.join(dict.fromkeys(problems))})"
    if unknown:
        message += f"; the options are: {', '.join(fields)}"
    return message
