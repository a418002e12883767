"""The package's public surface is pinned: a change to it is a visible decision."""

from __future__ import annotations

import subprocess
import sys

import langchain_agent_rules

EXPECTED_EXPORTS = {
    "AgentRulesMiddleware",
    "AnswerDeltaEvent",
    "EndEvent",
    "RunLimitsMiddleware",
    "StepEvent",
    "StreamEvent",
    "Task",
    "TextToolProtocolMiddleware",
    "ToolGuardMiddleware",
    "ToolProtocolMiddleware",
    "AnswerVerdict",
    "CheckFailure",
    "Redaction",
    "RuleCheck",
    "RuleEvent",
    "ToolVerdict",
    "check_answer",
    "check_tool_call",
    "redact_observation",
    "CheckSuggestion",
    "suggest_checks",
    "DEFAULT_DENY",
    "DEFAULT_RULE_NAMESPACE",
    "AgentConfigurationError",
    "AgentOptions",
    "AgentRuleAdminTool",
    "AgentRuleTool",
    "AgentRuleToolConfig",
    "AgentRulesError",
    "AgentState",
    "ApprovalHandler",
    "ChatLocalLlama",
    "ContextWindowError",
    "DuplicateRuleError",
    "EffectiveRules",
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
    "Rule",
    "RuleNotFoundError",
    "RuleReader",
    "RuleStore",
    "RuleStoreError",
    "RuleTarget",
    "RuleType",
    "RuleValidationError",
    "RuleWriter",
    "RulesAgent",
    "RunResult",
    "SqlQueryTool",
    "SqlRuleStore",
    "StopReason",
    "ToolConfigurationError",
    "ToolExecutionError",
    "TraceStep",
    "Usage",
    "__version__",
    "aeffective_rules_payload",
    "create_rules_agent",
    "effective_rules_payload",
    "open_rule_store",
    "resolve_chat_model",
    "RunTable",
    "TimelineChart",
    "rule_events_table",
    "timeline_chart",
    "trace_table",
}


def test_all_lists_exactly_the_public_names() -> None:
    assert set(langchain_agent_rules.__all__) == EXPECTED_EXPORTS
    for name in langchain_agent_rules.__all__:
        assert hasattr(langchain_agent_rules, name), name


def test_version_matches_the_distribution() -> None:
    from importlib.metadata import version

    assert langchain_agent_rules.__version__ == version("langchain-agent-rules")


def test_middleware_is_reachable_from_the_root_on_first_access() -> None:
    from langchain_agent_rules.middleware import ToolGuardMiddleware

    assert langchain_agent_rules.ToolGuardMiddleware is ToolGuardMiddleware


def test_importing_the_package_loads_neither_llama_cpp_nor_matplotlib() -> None:
    code = (
        "import sys, langchain_agent_rules; "
        "print('llama_cpp' in sys.modules, 'matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_every_error_has_one_root() -> None:
    from langchain_agent_rules import errors

    for name in errors.__all__:
        assert issubclass(getattr(errors, name), langchain_agent_rules.AgentRulesError), name
