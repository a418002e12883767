"""The agent engine: middleware for `langchain.agents.create_agent`.

`create_rules_agent` and `RulesAgent` are `create_agent` with these, in this order
(`default_middleware`); a LangChain user adds the same to their own `create_agent`:

- `ToolGuardMiddleware`: a timeout, an observation cap, error observations, repeated
  calls answered without running them, and one trace step per tool call;
- `AgentRulesMiddleware`: the effective rules in the system prompt at every model turn,
  and their checks on answers, tool calls and observations, with approvals in
  LangChain's human-in-the-loop format;
- `GroundedAnswersMiddleware` (``grounded_answers``): an answer that states a number or
  a name no tool returned is revised once, then replaced by "could not find";
- `RunLimitsMiddleware`: budgets (iterations, model calls, tokens) that end with an
  answer, and the run's record (answer, stop reason, usage, model calls);
- `ToolProtocolMiddleware` (`TextToolProtocolMiddleware`: always text): native tool
  calling or the fenced-JSON text protocol, and every reply made safe to store.
"""

from __future__ import annotations

from langchain_agent_rules.middleware.grounding import GroundedAnswersMiddleware
from langchain_agent_rules.middleware.limits import RunLimitsMiddleware
from langchain_agent_rules.middleware.protocol import (
    TextToolProtocolMiddleware,
    ToolProtocolMiddleware,
)
from langchain_agent_rules.middleware.rules import AgentRulesMiddleware
from langchain_agent_rules.middleware.tool_guard import ToolGuardMiddleware

__all__ = [
    "AgentRulesMiddleware",
    "GroundedAnswersMiddleware",
    "RunLimitsMiddleware",
    "TextToolProtocolMiddleware",
    "ToolGuardMiddleware",
    "ToolProtocolMiddleware",
]
