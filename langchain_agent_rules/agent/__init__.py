"""The LangGraph ReAct agent: state, nodes, prompts, the text tool protocol and the builder.

`create_rules_agent` builds the graph from `AgentOptions`; `RulesAgent` wraps it in
``invoke``/``ainvoke`` (a `RunResult`), ``run``/``arun`` (the answer), ``stream`` and
``trace``. The building blocks are reusable on their own (for example by
LangChain ``create_agent`` middleware): `run_tool_calls` / `arun_tool_calls` (timeouts,
size caps, one observation per call), `parse_tool_reply` and `render_tools_prompt` (the
text protocol) and `render_rules_prompt` / `read_rules_prompt` (rules in the prompt).
The rules' checks are enforced by the graph itself: TOOL checks in the tools node, OUTPUT
checks in ``check_answer`` (`answer_checks`, shared with `AgentRulesMiddleware`).
"""

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.agent.facade import ApprovalHandler, RulesAgent
from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.agent.rules_prompt import (
    aread_rules_prompt,
    read_rules_prompt,
    render_rules_prompt,
)
from langchain_agent_rules.agent.state import (
    AgentInput,
    AgentState,
    ModelCall,
    ModelCallPurpose,
    RuleEvent,
    StopReason,
    TraceStep,
    Usage,
)
from langchain_agent_rules.agent.tool_runner import (
    ToolOutcome,
    arun_tool_call,
    arun_tool_calls,
    run_tool_call,
    run_tool_calls,
    truncate_observation,
)
from langchain_agent_rules.text_protocol import (
    ParsedReply,
    ParsedToolCall,
    parse_tool_reply,
    render_tools_prompt,
    to_text_messages,
)

__all__ = [
    "AgentInput",
    "AgentOptions",
    "AgentState",
    "ApprovalHandler",
    "ModelCall",
    "ModelCallPurpose",
    "ParsedReply",
    "ParsedToolCall",
    "RuleEvent",
    "RulesAgent",
    "RunResult",
    "StopReason",
    "ToolOutcome",
    "TraceStep",
    "Usage",
    "aread_rules_prompt",
    "arun_tool_call",
    "arun_tool_calls",
    "create_rules_agent",
    "parse_tool_reply",
    "read_rules_prompt",
    "render_rules_prompt",
    "render_tools_prompt",
    "run_tool_call",
    "run_tool_calls",
    "to_text_messages",
    "truncate_observation",
]
