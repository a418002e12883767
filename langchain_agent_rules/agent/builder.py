"""`create_rules_agent`: build the agent graph and check its configuration up front.

The graph::

    START -> start -> agent -> (tools | check_answer)
                      tools -> (agent | limit | repeated_calls)
                      limit -> check_answer
                      repeated_calls -> check_answer
                      check_answer -> END

``start`` resets the per-run fields, ``agent`` is one model turn, ``tools`` checks and
runs the calls of that turn and ``limit`` decides the answer once a budget
(``max_iterations``, ``max_model_calls``, ``max_total_tokens``) is spent.
``repeated_calls`` asks the model, without tools, for its answer when a turn only
repeated calls it had already made (a small model otherwise repeats them until the
limit). Those three write a private ``draft``; ``check_answer`` holds it to the checks
of the OUTPUT rules (redact, revise, block) and only then gives it as the run's answer.
Routers return the ``Literal`` name of the next node. The graph binds its own
``recursion_limit`` from ``max_iterations``, so LangGraph's ``GraphRecursionError``
cannot end a run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as to_tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from langchain_agent_rules.agent.nodes import AgentNodes
from langchain_agent_rules.agent.options import AgentOptions
from langchain_agent_rules.agent.protocol import ProtocolChoice
from langchain_agent_rules.agent.state import AgentInput, AgentState, GraphState
from langchain_agent_rules.agent.tools_node import ToolsNode
from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["create_rules_agent", "recursion_limit_for"]


def recursion_limit_for(max_iterations: int) -> int:
    """Super-steps a run can need: start, two per iteration, a last turn, limit, the check."""
    return 2 * max_iterations + 6


class _Node(Runnable[Any, Any]):
    """A graph node or router with a sync and an async body and no tracing of its own.

    LangGraph already records each node as one run; a `RunnableLambda` would add a
    second, nested run (and its callback cost) to every step, and a plain function
    would make async runs hop to a thread.
    """

    def __init__(
        self,
        name: str,
        func: Callable[..., Any],
        afunc: Callable[..., Awaitable[Any]],
        *,
        with_config: bool = True,
    ) -> None:
        self.name = name
        self._func = func
        self._afunc = afunc
        self._with_config = with_config

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the sync body."""
        if self._with_config:
            return self._func(input, config)
        return self._func(input)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the async body."""
        if self._with_config:
            return await self._afunc(input, config)
        return await self._afunc(input)


def _router(name: str, route: Callable[[GraphState], str]) -> _Node:
    async def aroute(state: GraphState) -> str:
        return route(state)

    return _Node(name, route, aroute, with_config=False)


def create_rules_agent(
    model: BaseChatModel | str,
    tools: Sequence[BaseTool | Callable[..., Any]] = (),
    *,
    rules: RuleReader | None = None,
    checkpointer: Checkpointer = None,
    store: BaseStore | None = None,
    options: AgentOptions | None = None,
    **option_values: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build a ReAct agent graph that follows rules and bounds every tool call and budget.

    Args:
        model: A chat model, or a model string for
            ``langchain_agent_rules.models.resolve.resolve_chat_model`` (``"local"``,
            ``"ollama:qwen2.5-coder:1.5b"``).
        tools: `BaseTool` objects or plain functions (turned into tools). LangGraph's
            tool contracts hold: ``InjectedState``, ``InjectedStore``, ``ToolRuntime``
            and ``InjectedToolCallId`` arguments are filled in (never shown to the
            model), ``interrupt()`` in a tool pauses the run, a returned ``Command``
            updates the state, and artifacts stay on the ``ToolMessage``.
        rules: A rule store; its effective rules for ``project_id`` are read before every
            model call and put in the system prompt (those over the limits are left out
            and reported in ``rule_events``). Rules with a check are also enforced: every
            tool call passes the TOOL checks before approval and execution (``deny``
            answers it with an error observation, ``approve`` asks a human), forbid
            checks with ``scope="answer_and_observations"`` redact tool results before
            the model or the state sees them, and every answer passes the OUTPUT checks
            before the run ends (``redact``, ``revise`` within ``max_revisions``,
            ``block``). What each check did is recorded in ``rule_events``.
        checkpointer: A LangGraph checkpointer; required by ``require_approval``, and by
            rules whose check asks for approval (without one, such a call is not run).
            ``True`` means a parent graph or the LangGraph platform supplies it.
        store: A LangGraph store, passed to the compiled graph (and to tools that take
            an ``InjectedStore`` argument).
        options: An `AgentOptions`; keywords (``max_iterations=3``) override its fields.
        **option_values: Any field of `AgentOptions`: ``protocol``, ``project_id``,
            ``max_iterations``, ``max_model_calls``, ``max_total_tokens``,
            ``tool_timeout``, ``max_observation_bytes``, ``max_argument_bytes``,
            ``on_limit``, ``system_prompt``, ``require_approval``, ``max_revisions``,
            ``review``.

    Returns:
        A compiled graph: input ``{"messages": [...]}``; output state with ``messages``,
        ``answer``, ``stop_reason``, ``iterations``, ``trace``, ``usage`` and
        ``rule_events``.

    Raises:
        AgentConfigurationError: An option is invalid; the message says what is allowed.
    """
    settings = AgentOptions.resolve(options, option_values)
    if rules is not None and not isinstance(rules, RuleReader):
        raise AgentConfigurationError(
            f"rules must be a RuleReader (get_all_by_project and get), got {type(rules).__name__}"
        )
    tool_list = _check_tools(tools)
    _check_approval(settings, tool_list, checkpointer)
    chat_model = _resolve_model(model)
    protocol = ProtocolChoice(chat_model, tool_list, settings.protocol)
    nodes = AgentNodes(chat_model, tool_list, protocol, settings, rules)
    can_ask = checkpointer is not None and checkpointer is not False
    tools_node = ToolsNode(tool_list, settings, rules, can_ask_approval=can_ask)

    graph = StateGraph(GraphState, input_schema=AgentInput, output_schema=AgentState)
    graph.add_node("start", _Node("start", nodes.start, nodes.astart, with_config=False))
    graph.add_node("agent", _Node("agent", nodes.agent, nodes.aagent))
    graph.add_node("tools", _Node("tools", tools_node.tools, tools_node.atools))
    graph.add_node("limit", _Node("limit", nodes.limit, nodes.alimit))
    graph.add_node(
        "repeated_calls", _Node("repeated_calls", nodes.repeated_calls, nodes.arepeated_calls)
    )
    graph.add_node("check_answer", _Node("check_answer", nodes.check_answer, nodes.acheck_answer))
    graph.add_edge(START, "start")
    graph.add_edge("start", "agent")
    graph.add_conditional_edges(
        "agent", _router("route_after_agent", nodes.route_after_agent), ["tools", "check_answer"]
    )
    graph.add_conditional_edges(
        "tools",
        _router("route_after_tools", nodes.route_after_tools),
        ["agent", "limit", "repeated_calls"],
    )
    graph.add_edge("limit", "check_answer")
    graph.add_edge("repeated_calls", "check_answer")
    graph.add_edge("check_answer", END)
    compiled = graph.compile(checkpointer=checkpointer, store=store, name="rules_agent")
    # LangGraph streams every channel by default; the draft answer must not leave the graph.
    compiled = compiled.copy(update={"stream_channels": compiled.output_channels})
    return compiled.with_config(recursion_limit=recursion_limit_for(settings.max_iterations))


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


def _check_approval(
    options: AgentOptions, tools: list[BaseTool], checkpointer: Checkpointer
) -> None:
    names = {t.name for t in tools}
    unknown = sorted(set(options.require_approval) - names)
    if unknown:
        raise AgentConfigurationError(
            f"require_approval names tools the agent does not have: {', '.join(unknown)}; "
            f"its tools: {', '.join(sorted(names)) or 'none'}"
        )
    if options.require_approval and checkpointer in (None, False):
        raise AgentConfigurationError(
            "require_approval pauses a run until a human decides, which needs a "
            "checkpointer: pass checkpointer=InMemorySaver() or a persistent one "
            "(checkpointer=True when a parent graph or the LangGraph platform supplies it)"
        )
