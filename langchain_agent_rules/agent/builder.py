"""`create_rules_agent`: build the agent graph and check its configuration up front.

The graph::

    START -> start -> agent -> (tools | END)
                      tools -> (agent | limit | repeated_calls)
                      limit -> END
                      repeated_calls -> END

``start`` resets the per-run fields, ``agent`` is one model turn, ``tools`` runs the
calls of that turn and ``limit`` decides the answer once ``max_iterations`` turns have
used tools. ``repeated_calls`` asks the model, without tools, for its answer when a turn
only repeated calls it had already made (a small model otherwise repeats them until the
limit). The graph binds its own ``recursion_limit`` from ``max_iterations``, so
LangGraph's ``GraphRecursionError`` cannot end a run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as to_tool

# langgraph's own prebuilt nodes use RunnableCallable: one node with a sync and an async
# body and no per-call tracing overhead, which RunnableLambda would add.
from langgraph._internal._runnable import RunnableCallable
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from langchain_agent_rules.agent.nodes import AgentNodes, AgentSettings, OnLimit
from langchain_agent_rules.agent.protocol import ProtocolChoice
from langchain_agent_rules.agent.state import AgentInput, AgentState
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["MIN_OBSERVATION_BYTES", "create_rules_agent", "recursion_limit_for"]

MIN_OBSERVATION_BYTES = 128
_ON_LIMIT = ("summarize", "end", "raise")


def recursion_limit_for(max_iterations: int) -> int:
    """Super-steps a run can need: start, two per iteration, a last model turn and limit."""
    return 2 * max_iterations + 5


def create_rules_agent(
    model: BaseChatModel | str,
    tools: Sequence[BaseTool | Callable[..., Any]] = (),
    *,
    rules: RuleReader | None = None,
    project_id: int | None = None,
    protocol: str = "auto",
    max_iterations: int = 6,
    tool_timeout: float = 30.0,
    max_observation_bytes: int = 8192,
    on_limit: str = "summarize",
    system_prompt: str | None = None,
    require_approval: Sequence[str] = (),
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build a ReAct agent graph that follows rules and bounds every tool call.

    Args:
        model: A chat model, or a model string for
            ``langchain_agent_rules.models.resolve.resolve_chat_model`` (``"local"``,
            ``"ollama:qwen2.5-coder:1.5b"``).
        tools: `BaseTool` objects or plain functions (turned into tools).
        rules: A rule store; its effective rules for ``project_id`` are read before every
            model call and put in the system prompt.
        project_id: The project whose rules apply (``None``: global rules only).
        protocol: ``"native"`` (bind the tools), ``"text"`` (fenced JSON in the prompt)
            or ``"auto"``.
        max_iterations: Model turns that may use tools; then ``on_limit`` applies. A
            turn whose calls all repeat earlier ones ends the run before that: one model
            call without tools gives the answer (``stop_reason="repeated_calls"``).
        tool_timeout: Seconds one tool call may take before it becomes an error.
        max_observation_bytes: UTF-8 bytes of one observation the model may see.
        on_limit: ``"summarize"`` (one last model call without tools), ``"end"`` (a fixed
            answer) or ``"raise"`` (`IterationLimitError`).
        system_prompt: Replaces the default opening of the system prompt.
        require_approval: Tool names whose calls pause the run for a human decision.
        checkpointer: A LangGraph checkpointer; required by ``require_approval``.
        store: A LangGraph store, passed to the compiled graph.

    Returns:
        A compiled graph: input ``{"messages": [...]}``; output state with ``messages``,
        ``answer``, ``stop_reason``, ``iterations`` and ``trace``.

    Raises:
        AgentConfigurationError: An option is invalid; the message says what is allowed.
    """
    chat_model = _resolve_model(model)
    tool_list = _check_tools(tools)
    settings = _check_settings(
        tool_list,
        rules=rules,
        project_id=project_id,
        max_iterations=max_iterations,
        tool_timeout=tool_timeout,
        max_observation_bytes=max_observation_bytes,
        on_limit=on_limit,
        system_prompt=system_prompt,
        require_approval=require_approval,
        checkpointer=checkpointer,
    )
    nodes = AgentNodes(
        chat_model, tool_list, ProtocolChoice(chat_model, tool_list, protocol), settings
    )
    graph = StateGraph(AgentState, input_schema=AgentInput)
    graph.add_node("start", RunnableCallable(nodes.start, nodes.astart, trace=False))
    graph.add_node("agent", RunnableCallable(nodes.agent, nodes.aagent))
    graph.add_node("tools", RunnableCallable(nodes.tools, nodes.atools))
    graph.add_node("limit", RunnableCallable(nodes.limit, nodes.alimit))
    graph.add_node("repeated_calls", RunnableCallable(nodes.repeated_calls, nodes.arepeated_calls))
    graph.add_edge(START, "start")
    graph.add_edge("start", "agent")
    # Routers get an async twin too: a sync-only router in an async run costs a thread hop.
    graph.add_conditional_edges(
        "agent", _router(nodes.route_after_agent, "route_after_agent"), ["tools", END]
    )
    graph.add_conditional_edges(
        "tools",
        _router(nodes.route_after_tools, "route_after_tools"),
        ["agent", "limit", "repeated_calls"],
    )
    graph.add_edge("limit", END)
    graph.add_edge("repeated_calls", END)
    compiled = graph.compile(checkpointer=checkpointer, store=store, name="rules_agent")
    return compiled.with_config(recursion_limit=recursion_limit_for(max_iterations))


def _router(route: Callable[[AgentState], str], name: str) -> RunnableCallable:
    async def aroute(state: AgentState) -> str:
        return route(state)

    return RunnableCallable(route, aroute, name=name, trace=False)


def _resolve_model(model: BaseChatModel | str) -> BaseChatModel:
    if isinstance(model, str):
        from langchain_agent_rules.models.resolve import resolve_chat_model

        return resolve_chat_model(model)
    if not isinstance(model, BaseChatModel):
        raise AgentConfigurationError(
            f"model must be a BaseChatModel or a model string such as 'local', got "
            f"{type(model).__name__}"
        )
    return model


def _check_tools(tools: Sequence[BaseTool | Callable[..., Any]]) -> list[BaseTool]:
    tool_list: list[BaseTool] = []
    for item in tools:
        if isinstance(item, BaseTool):
            tool_list.append(item)
        elif callable(item):
            tool_list.append(to_tool(item))
        else:
            raise AgentConfigurationError(
                f"tools must be BaseTool objects or functions, got {type(item).__name__}"
            )
    names = [t.name for t in tool_list]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise AgentConfigurationError(
            f"tool names must be unique; repeated: {', '.join(duplicates)}"
        )
    return tool_list


def _positive_int(name: str, value: object, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise AgentConfigurationError(f"{name} must be an int >= {minimum}, got {value!r}")
    return value


def _check_settings(
    tools: list[BaseTool],
    *,
    rules: RuleReader | None,
    project_id: int | None,
    max_iterations: int,
    tool_timeout: float,
    max_observation_bytes: int,
    on_limit: str,
    system_prompt: str | None,
    require_approval: Sequence[str],
    checkpointer: BaseCheckpointSaver[Any] | None,
) -> AgentSettings:
    _positive_int("max_iterations", max_iterations)
    _positive_int("max_observation_bytes", max_observation_bytes, MIN_OBSERVATION_BYTES)
    if (
        not isinstance(tool_timeout, int | float)
        or isinstance(tool_timeout, bool)
        or not tool_timeout > 0
    ):
        raise AgentConfigurationError(
            f"tool_timeout must be a number of seconds > 0, got {tool_timeout!r}"
        )
    if on_limit not in _ON_LIMIT:
        raise AgentConfigurationError(
            f"on_limit={on_limit!r} is not supported; use one of: {', '.join(_ON_LIMIT)}"
        )
    if project_id is not None:
        _positive_int("project_id", project_id)
    if rules is not None and not isinstance(rules, RuleReader):
        raise AgentConfigurationError(
            f"rules must be a RuleReader (get_all_by_project and get), got {type(rules).__name__}"
        )
    if isinstance(require_approval, str):
        raise AgentConfigurationError(
            "require_approval must be a list of tool names, not a single string"
        )
    names = {t.name for t in tools}
    unknown = sorted(set(require_approval) - names)
    if unknown:
        raise AgentConfigurationError(
            f"require_approval names tools the agent does not have: {', '.join(unknown)}; "
            f"its tools: {', '.join(sorted(names)) or 'none'}"
        )
    if require_approval and checkpointer is None:
        raise AgentConfigurationError(
            "require_approval pauses a run until a human decides, which needs a "
            "checkpointer: pass checkpointer=InMemorySaver() or a persistent one"
        )
    return AgentSettings(
        max_iterations=max_iterations,
        tool_timeout=float(tool_timeout),
        max_observation_bytes=max_observation_bytes,
        on_limit=cast(OnLimit, on_limit),
        system_prompt=system_prompt,
        require_approval=frozenset(require_approval),
        rules=rules,
        project_id=project_id,
        rule_config=AgentRuleToolConfig(),
    )
