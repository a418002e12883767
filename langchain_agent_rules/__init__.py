"""Prioritised agent rules, safe built-in tools and a bounded LangGraph ReAct agent.

Everything public is importable from here. The agent is LangChain's ``create_agent``
driven by this package's middleware (``langchain_agent_rules.middleware``), which a
LangChain user can also add to their own ``create_agent``.
"""

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.facade import ApprovalHandler, RulesAgent, Task
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.agent.streaming import (
    AnswerDeltaEvent,
    EndEvent,
    StepEvent,
    StreamEvent,
)
from langchain_agent_rules.display import (
    RunTable,
    TimelineChart,
    rule_events_table,
    timeline_chart,
    trace_table,
)
from langchain_agent_rules.errors import (
    AgentConfigurationError,
    AgentRulesError,
    ContextWindowError,
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
from langchain_agent_rules.middleware import (
    AgentRulesMiddleware,
    RunLimitsMiddleware,
    TextToolProtocolMiddleware,
    ToolGuardMiddleware,
    ToolProtocolMiddleware,
)
from langchain_agent_rules.middleware.state import (
    AgentState,
    ModelCall,
    ModelCallPurpose,
    StopReason,
    TraceStep,
    Usage,
)
from langchain_agent_rules.models.local import ChatLocalLlama
from langchain_agent_rules.models.resolve import resolve_chat_model
from langchain_agent_rules.options import AgentOptions
from langchain_agent_rules.rules.check import RuleCheck
from langchain_agent_rules.rules.engine import (
    AnswerVerdict,
    CheckFailure,
    Redaction,
    RuleEvent,
    ToolVerdict,
    check_answer,
    check_tool_call,
    redact_observation,
)
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.langgraph_store import (
    DEFAULT_RULE_NAMESPACE,
    LangGraphRuleStore,
)
from langchain_agent_rules.rules.limits import (
    AgentRuleToolConfig,
    EffectiveRules,
    PublicRule,
    effective_rules_payload,
)
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule, RuleTarget, RuleType
from langchain_agent_rules.rules.open import open_rule_store
from langchain_agent_rules.rules.sql_store import SqlRuleStore
from langchain_agent_rules.rules.store import RuleReader, RuleStore, RuleWriter
from langchain_agent_rules.rules.suggest import CheckSuggestion, suggest_checks
from langchain_agent_rules.tools.agent_rule import AgentRuleTool, aeffective_rules_payload
from langchain_agent_rules.tools.agent_rule_admin import AgentRuleAdminTool
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.http_get import HttpGetTool
from langchain_agent_rules.tools.path_guard import DEFAULT_DENY
from langchain_agent_rules.tools.sql_query import SqlQueryTool

__version__ = "0.1.0"


__all__ = [
    "DEFAULT_DENY",
    "DEFAULT_RULE_NAMESPACE",
    "AgentConfigurationError",
    "AgentOptions",
    "AgentRuleAdminTool",
    "AgentRuleTool",
    "AgentRuleToolConfig",
    "AgentRulesError",
    "AgentRulesMiddleware",
    "AgentState",
    "AnswerDeltaEvent",
    "AnswerVerdict",
    "ApprovalHandler",
    "ChatLocalLlama",
    "CheckFailure",
    "CheckSuggestion",
    "ContextWindowError",
    "DuplicateRuleError",
    "EffectiveRules",
    "EndEvent",
    "FileReadTool",
    "HttpGetTool",
    "InMemoryRuleStore",
    "InvalidToolCallError",
    "IterationLimitError",
    "JsonFileRuleStore",
    "LangGraphRuleStore",
    "ModelCall",
    "ModelCallPurpose",
    "ModelUnavailableError",
    "PublicRule",
    "Redaction",
    "Rule",
    "RuleCheck",
    "RuleEvent",
    "RuleNotFoundError",
    "RuleReader",
    "RuleStore",
    "RuleStoreError",
    "RuleTarget",
    "RuleType",
    "RuleValidationError",
    "RuleWriter",
    "RulesAgent",
    "RunLimitsMiddleware",
    "RunResult",
    "RunTable",
    "SqlQueryTool",
    "SqlRuleStore",
    "StepEvent",
    "StopReason",
    "StreamEvent",
    "Task",
    "TextToolProtocolMiddleware",
    "TimelineChart",
    "ToolConfigurationError",
    "ToolExecutionError",
    "ToolGuardMiddleware",
    "ToolProtocolMiddleware",
    "ToolVerdict",
    "TraceStep",
    "Usage",
    "__version__",
    "aeffective_rules_payload",
    "check_answer",
    "check_tool_call",
    "create_rules_agent",
    "effective_rules_payload",
    "open_rule_store",
    "redact_observation",
    "resolve_chat_model",
    "rule_events_table",
    "suggest_checks",
    "timeline_chart",
    "trace_table",
]
