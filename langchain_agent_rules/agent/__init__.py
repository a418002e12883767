"""The rules agent: LangChain's `create_agent` with this package's middleware.

`create_rules_agent` builds it; `RulesAgent` wraps it in ``invoke``/``ainvoke`` (a
`RunResult`), ``run``/``arun``, ``stream``/``astream`` (typed events) and ``trace``. The
engine itself is the middleware in `langchain_agent_rules.middleware`.
"""

from langchain_agent_rules.agent.builder import create_rules_agent, rules_agent_middleware
from langchain_agent_rules.agent.facade import ApprovalHandler, RulesAgent, Task
from langchain_agent_rules.agent.result import RunResult
from langchain_agent_rules.agent.streaming import (
    AnswerDeltaEvent,
    AnswerStream,
    EndEvent,
    StepEvent,
    StreamEvent,
)

__all__ = [
    "AnswerDeltaEvent",
    "AnswerStream",
    "ApprovalHandler",
    "EndEvent",
    "RulesAgent",
    "RunResult",
    "StepEvent",
    "StreamEvent",
    "Task",
    "create_rules_agent",
    "rules_agent_middleware",
]
