"""Middleware for `langchain.agents.create_agent`, built from the same parts as our agent.

For apps that keep LangChain's own agent loop:

- `AgentRulesMiddleware`: the effective rules of a project in the system prompt at every
  model call (and, if asked, the ``agent_rule`` tool); with ``enforce=True`` their checks
  on answers, tool calls and tool observations, as in our own agent;
- `ToolGuardMiddleware`: a timeout per tool call, a cap on the observation size, and every
  tool exception turned into an error ``ToolMessage`` instead of a crash;
- `TextToolProtocolMiddleware`: drives a model without native tool calling through the
  fenced-JSON text protocol.

They need the ``langchain`` extra: ``pip install "langchain-agent-rules[langchain]"``.
"""

from __future__ import annotations

try:
    import langchain.agents.middleware  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "langchain_agent_rules.middleware needs the `langchain` package (langchain>=1.0); "
        'install it with: pip install "langchain-agent-rules[langchain]"'
    ) from error

from langchain_agent_rules.middleware.rules import AgentRulesMiddleware
from langchain_agent_rules.middleware.text_protocol import TextToolProtocolMiddleware
from langchain_agent_rules.middleware.tool_guard import ToolGuardMiddleware

__all__ = ["AgentRulesMiddleware", "TextToolProtocolMiddleware", "ToolGuardMiddleware"]
