"""The exceptions of langchain-agent-rules, one tree with one root.

Errors are split by audience: what the model should correct (it reaches the model as
an observation), what is the developer's mistake (raised at construction), and what
ends a run or a store operation::

    AgentRulesError
    ├── RuleValidationError        a rule field is invalid (also a ValueError)
    ├── RuleStoreError             a rule store cannot read or write its data (a RuntimeError)
    │   ├── DuplicateRuleError     create() of an id that already exists
    │   └── RuleNotFoundError      get()/update()/delete() of an unknown id (also a KeyError)
    ├── ToolConfigurationError     bad tool configuration, raised at construction (a ValueError)
    ├── AgentConfigurationError    bad agent configuration, raised at construction (a ValueError)
    ├── InvalidToolCallError       bad arguments from the model (a ToolException)
    ├── ToolExecutionError         a limit breached or a failure while running (a ToolException)
    ├── IterationLimitError        a budget was spent with on_limit="raise" (a RuntimeError)
    ├── ModelUnavailableError      a model cannot be loaded or reached (a RuntimeError)
    └── ContextWindowError         a prompt longer than the model's context (a RuntimeError)

`InvalidToolCallError` and `ToolExecutionError` subclass
`langchain_core.tools.ToolException`, so LangChain's `handle_tool_error` turns them
into observations the model can read. The errors that end a run are also
`RuntimeError`s (configuration errors are `ValueError`s): the LangGraph server shows the
message of those two kinds to its clients and hides every other one behind "An internal
error occurred". docs/errors.md lists, by audience, every error with an example message.
"""

from __future__ import annotations

from langchain_core.tools import ToolException

__all__ = [
    "AgentConfigurationError",
    "AgentRulesError",
    "ContextWindowError",
    "DuplicateRuleError",
    "InvalidToolCallError",
    "IterationLimitError",
    "ModelUnavailableError",
    "RuleNotFoundError",
    "RuleStoreError",
    "RuleValidationError",
    "ToolConfigurationError",
    "ToolExecutionError",
]


class AgentRulesError(Exception):
    """Root of every error raised by langchain-agent-rules."""


class RuleValidationError(AgentRulesError, ValueError):
    """A rule field has an invalid value; the message names the field and what is allowed."""


class RuleStoreError(AgentRulesError, RuntimeError):
    """A rule store cannot read or write its data (corrupt file, broken backend)."""


class DuplicateRuleError(RuleStoreError):
    """A rule with this id already exists; ids are unique across the whole store."""


class RuleNotFoundError(RuleStoreError, KeyError):
    """No rule has this id."""

    def __str__(self) -> str:
        # KeyError's str() wraps the message in quotes; keep it readable.
        return str(self.args[0]) if self.args else ""


class ToolConfigurationError(AgentRulesError, ValueError):
    """A tool was configured with invalid options; raised when the tool is built."""


class AgentConfigurationError(AgentRulesError, ValueError):
    """An agent was configured with invalid options; raised when the agent is built."""


class InvalidToolCallError(AgentRulesError, ToolException):
    """The model called a tool with invalid arguments; the message says what is allowed."""


class ToolExecutionError(AgentRulesError, ToolException):
    """A tool hit a limit or failed while running; the message gives the figure and the limit."""


class IterationLimitError(AgentRulesError, RuntimeError):
    """The agent spent a budget (iterations, model calls, tokens) with ``on_limit="raise"``."""


class ModelUnavailableError(AgentRulesError, RuntimeError):
    """A chat model cannot be loaded or reached; the message says what to run to fix it."""


class ContextWindowError(AgentRulesError, RuntimeError):
    """A prompt has more tokens than the model's context window; nothing was generated.

    The message gives both figures and the ways out: a larger context (``n_ctx``) or a
    shorter conversation (a new thread, smaller tool results).
    """
