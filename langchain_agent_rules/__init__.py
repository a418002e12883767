"""Prioritised agent rules, safe built-in tools and a bounded LangGraph ReAct agent."""

from langchain_agent_rules.errors import (
    AgentConfigurationError,
    AgentRulesError,
    DuplicateRuleError,
    InvalidToolCallError,
    IterationLimitError,
    ModelUnavailableError,
    RuleNotFoundError,
    RuleStoreError,
    RuleValidationError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule, RuleTarget, RuleType
from langchain_agent_rules.rules.store import RuleReader, RuleStore, RuleWriter

__version__ = "0.1.0"

__all__ = [
    "AgentConfigurationError",
    "AgentRuleToolConfig",
    "AgentRulesError",
    "DuplicateRuleError",
    "InMemoryRuleStore",
    "InvalidToolCallError",
    "IterationLimitError",
    "ModelUnavailableError",
    "Rule",
    "RuleNotFoundError",
    "RuleReader",
    "RuleStore",
    "RuleStoreError",
    "RuleTarget",
    "RuleType",
    "RuleValidationError",
    "RuleWriter",
    "ToolConfigurationError",
    "ToolExecutionError",
    "__version__",
]
