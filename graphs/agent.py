"""The rules agent for LangGraph Studio and ``langgraph dev`` (registered in langgraph.json).

Every run picks its model, rules and tools through the run's ``context`` (the form Studio
shows under "Context", or ``context=`` in the LangGraph SDK); a run without context gets
the embedded model on the shipped demo data: the shop database (``sql_query``), the demo
project folder (``file_read``) and the demo rules file. ``http_get`` is added only when
``allowed_hosts`` is set. Every `AgentOptions` field (``max_iterations``,
``require_approval``, ...) is a context field too, with the same default and check.

The platform supplies the checkpointer and the store, so the graph is compiled with
``checkpointer=True`` (the platform's is used) and no store: an approval, for a tool in
``require_approval`` or for a call a rule's check sends to a human, pauses the run and is
answered with ``Command(resume=...)`` as usual. Every answer passes the rules' checks
before it is returned; while it may still change, its tokens are not streamed. The final
state holds the answer, the trace, ``usage`` and ``rule_events``.

``rules="store"`` keeps the rules in the platform's store (`LangGraphRuleStore`,
namespace ``("agent_rules",)``). Models, engines and rule files are opened in a worker
thread and reused across runs, so nothing blocks the server's event loop.

``scripted_replies`` is a testing affordance: the run uses a `ScriptedChatModel` that
replays those replies (pair it with ``protocol="text"`` to script fenced tool calls).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore
from langgraph_sdk.runtime import ServerRuntime
from pydantic import BaseModel, Field, ValidationError

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.demo import demo_database_url, demo_project_root, demo_rules_path
from langchain_agent_rules.errors import AgentConfigurationError, AgentRulesError
from langchain_agent_rules.models.resolve import resolve_chat_model
from langchain_agent_rules.options import AgentOptions, describe_problems
from langchain_agent_rules.rules.langgraph_store import LangGraphRuleStore
from langchain_agent_rules.rules.open import open_rule_store
from langchain_agent_rules.rules.store import RuleReader
from langchain_agent_rules.testing import ScriptedChatModel
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.http_get import HttpGetTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool

__all__ = ["PLATFORM_STORE", "AgentContext", "make_graph"]

PLATFORM_STORE = "store"
# The parameter each context field is passed as, named by the errors of what it builds.
_PARAMETERS = {"database_url": "engine_or_url", "file_root": "root_dir"}


class AgentContext(AgentOptions):
    """What one run of the Studio agent uses: the agent's options plus what it is built from.

    Every field has a working default.
    """

    model: str = Field(
        default="local",
        description='"local" (the embedded model), "local:/path/model.gguf", "ollama:<name>" '
        'or a LangChain provider string such as "openai:gpt-4o-mini".',
    )
    rules: str | None = Field(
        default=None,
        description=f'A JSON rules file, a rule store URL, or "{PLATFORM_STORE}" for the '
        "platform's store; empty: the demo rules.",
    )
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL for sql_query; empty: the demo shop database."
    )
    file_root: str | None = Field(
        default=None, description="The folder file_read may read; empty: the demo project."
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts http_get may fetch from (*.example.com allowed); empty: no http_get.",
    )
    scripted_replies: list[str] | None = Field(
        default=None,
        description="TESTING ONLY: replay these model replies instead of calling a model.",
    )

    def __init__(self, **values: Any) -> None:
        # AgentOptions's own __init__ would call every problem an agent option's.
        try:
            BaseModel.__init__(self, **values)
        except ValidationError as error:
            raise AgentConfigurationError(
                describe_problems(error, "run context", type(self).model_fields)
            ) from None

    def options(self) -> AgentOptions:
        """The agent options of this context."""
        return AgentOptions(**self.model_dump(include=set(AgentOptions.model_fields)))


def parse_context(raw: Any) -> AgentContext:
    """Validate a run's context; a wrong key or value raises `AgentConfigurationError`."""
    if raw is None:
        return AgentContext()
    if isinstance(raw, AgentContext):
        return raw
    if not isinstance(raw, dict):
        raise AgentConfigurationError(
            f"the run context must be an object, got {type(raw).__name__}"
        )
    if not all(isinstance(key, str) for key in raw):
        raise AgentConfigurationError("the run context's keys must be strings naming its fields")
    return AgentContext(**raw)


@lru_cache(maxsize=4)
def _chat_model(spec: str) -> BaseChatModel:
    return resolve_chat_model(spec)


@lru_cache(maxsize=8)
def _sql_tool(database_url: str) -> SqlQueryTool:
    return SqlQueryTool(database_url, include_schema=True)


@lru_cache(maxsize=8)
def _rule_file(spec: str) -> RuleReader:
    # A mistyped path is an error, never an empty store.
    return open_rule_store(spec)


@contextmanager
def _field(name: str) -> Iterator[None]:
    """Our errors raised inside name the context field whose value caused them."""
    try:
        yield
    except AgentRulesError as error:
        message = str(error)
        parameter = _PARAMETERS.get(name, name)
        if message.startswith(f"{parameter} "):
            message = name + message.removeprefix(parameter)
        else:
            message = f"{name}: {message}"
        raise type(error)(f"invalid run context: {message}") from None


def _model(context: AgentContext) -> BaseChatModel:
    if context.scripted_replies is not None:
        return ScriptedChatModel(context.scripted_replies)
    with _field("model"):
        return _chat_model(context.model)


def _tools(context: AgentContext) -> list[BaseTool]:
    with _field("database_url"):
        tools: list[BaseTool] = [_sql_tool(context.database_url or demo_database_url())]
    with _field("file_root"):
        tools.append(FileReadTool(context.file_root or demo_project_root()))
    if context.allowed_hosts:
        with _field("allowed_hosts"):
            tools.append(HttpGetTool(allowed_hosts=context.allowed_hosts))
    return tools


def _rules(context: AgentContext, store: BaseStore) -> RuleReader:
    if context.rules == PLATFORM_STORE:
        return LangGraphRuleStore(store)
    with _field("rules"):
        return _rule_file(context.rules or str(demo_rules_path()))


def build_agent(context: AgentContext, store: BaseStore) -> Pregel[Any, Any]:
    """The agent for one run (blocking: loads models and opens files; call it in a thread)."""
    options = context.options()
    agent = create_rules_agent(
        _model(context),
        _tools(context),
        rules=_rules(context, store),
        # The platform replaces it with its own checkpointer.
        checkpointer=True,
        options=options,
    )
    return agent.copy(update={"context_schema": AgentContext})


def _placeholder(name: str) -> BaseTool:
    return StructuredTool.from_function(lambda: "", name=name, description="A placeholder.")


def _outline() -> Pregel[Any, Any]:
    """The same topology with nothing loaded, for schema and state reads."""
    names = (SqlQueryTool.model_fields["name"].default, FileReadTool.model_fields["name"].default)
    tools = [_placeholder(name) for name in names]
    agent = create_rules_agent(ScriptedChatModel([]), tools)
    return agent.copy(update={"context_schema": AgentContext})


async def make_graph(runtime: ServerRuntime[Any]) -> Pregel[Any, Any]:
    """The graph factory `langgraph dev` calls for every run and every schema or state read."""
    execution = runtime.execution_runtime
    if execution is None:
        return _outline()
    context = parse_context(execution.context)
    return await asyncio.to_thread(build_agent, context, runtime.store)
