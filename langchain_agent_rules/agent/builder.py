"""`create_rules_agent`: LangChain's `create_agent` with this package's middleware.

The graph is `create_agent`'s own (a model node, LangGraph's `ToolNode` with one task
per tool call, and the middleware's hooks); what makes it a rules agent is the stack
`rules_agent_middleware` builds from `AgentOptions` (handed to `create_agent` as one
`EngineMiddleware`, which runs the same parts in the same order with one hook each)::

    [*your middleware, ToolGuardMiddleware, AgentRulesMiddleware,
     GroundedAnswersMiddleware (if grounded_answers), RunLimitsMiddleware,
     ToolProtocolMiddleware]

Your middleware comes first: its model and tool hooks wrap ours (LangChain's
`HumanInTheLoopMiddleware` asks about calls only after our rules let them through, and
`ModelFallbackMiddleware` retries our whole model step with its next model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as to_tool
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from langchain_agent_rules.errors import AgentConfigurationError
from langchain_agent_rules.middleware import (
    AgentRulesMiddleware,
    GroundedAnswersMiddleware,
    RunLimitsMiddleware,
    ToolGuardMiddleware,
    ToolProtocolMiddleware,
)
from langchain_agent_rules.middleware._engine import EngineMiddleware
from langchain_agent_rules.middleware.prompts import DEFAULT_SYSTEM_PROMPT
from langchain_agent_rules.middleware.state import AgentState
from langchain_agent_rules.models.resolve import resolve_chat_model
from langchain_agent_rules.options import AgentOptions
from langchain_agent_rules.rules.store import RuleReader

__all__ = ["create_rules_agent", "rules_agent_middleware"]


def rules_agent_middleware(
    options: AgentOptions, rules: RuleReader | None = None, *, can_ask_approval: bool = True
) -> list[AgentMiddleware[Any, Any, Any]]:
    """The package's middleware, in order, set from ``options`` (see the module docs)."""
    grounding = [GroundedAnswersMiddleware()] if options.grounded_answers else []
    return [
        ToolGuardMiddleware(options.tool_timeout, options.max_observation_bytes),
        AgentRulesMiddleware(
            rules,
            options.project_id,
            max_revisions=options.max_revisions,
            review=options.review,
            require_approval=options.require_approval,
            max_argument_bytes=options.max_argument_bytes,
            can_ask_approval=can_ask_approval,
        ),
        *grounding,
        RunLimitsMiddleware(
            options.max_iterations,
            options.max_model_calls,
            options.max_total_tokens,
            options.on_limit,
        ),
        ToolProtocolMiddleware(options.protocol, options.max_argument_bytes),
    ]


def create_rules_agent(
    model: BaseChatModel | str,
    tools: Sequence[BaseTool | Callable[..., Any]] = (),
    *,
    rules: RuleReader | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    checkpointer: Checkpointer = None,
    store: BaseStore | None = None,
    options: AgentOptions | None = None,
    **option_values: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build a ReAct agent that follows rules and bounds every tool call and budget.

    Args:
        model: A chat model, or a model string: ``"local"`` (the embedded model),
            ``"local:/path/model.gguf"``, ``"ollama:<name>"``, or anything
            `init_chat_model` takes (``"openai:gpt-4o-mini"``).
        tools: `BaseTool` objects or plain functions (turned into tools). They run in
            LangGraph's `ToolNode`, so its contracts hold: injected state, store,
            ``ToolRuntime`` and call id, ``interrupt()``, a returned ``Command``,
            artifacts and ``return_direct``.
        rules: A rule store; its effective rules for ``project_id`` are read once per
            model turn, put in the system prompt and enforced (see
            `AgentRulesMiddleware`). What each check did is in ``rule_events``.
        middleware: Your own LangChain middleware, run outside ours (see the module docs).
        checkpointer: A LangGraph checkpointer; required by ``require_approval``, and by
            rules whose check asks for approval (without one, such a call is refused).
            ``True`` means a parent graph or the LangGraph platform supplies it.
        store: A LangGraph store, for the graph and tools that take an ``InjectedStore``.
        options: An `AgentOptions`; keywords (``max_iterations=3``) override its fields.
        **option_values: Any field of `AgentOptions`.

    Returns:
        `create_agent`'s compiled graph: input ``{"messages": [...]}``; output state with
        ``messages``, ``answer``, ``stop_reason``, ``iterations``, ``trace``, ``usage``,
        ``model_calls`` and ``rule_events``.

    Raises:
        AgentConfigurationError: An option is invalid; the message says what is allowed.
        ModelUnavailableError: The model string names a model that cannot be loaded, or
            a provider whose package is not installed (the message names it).
    """
    settings = AgentOptions.resolve(options, option_values)
    if rules is not None and not isinstance(rules, RuleReader):
        raise AgentConfigurationError(
            f"rules must be a RuleReader (get_all_by_project and get), got {type(rules).__name__}"
        )
    tool_list = _check_tools(tools)
    _check_approval(settings, tool_list, checkpointer)
    chat_model = resolve_chat_model(model)
    _check_native(chat_model, settings, tool_list)
    can_ask = checkpointer is not None and checkpointer is not False
    ours = rules_agent_middleware(settings, rules, can_ask_approval=can_ask)
    repeated = [m.name for m in middleware if isinstance(m, tuple(type(part) for part in ours))]
    if repeated:
        raise AgentConfigurationError(
            f"middleware must not repeat one of the agent's own ({', '.join(repeated)}); "
            "set their options through AgentOptions instead"
        )
    guard, rules_part, *turns = ours
    engine = EngineMiddleware(guard, rules_part, [rules_part, *turns])  # type: ignore[arg-type, list-item]
    return create_agent(
        chat_model,
        tool_list,
        system_prompt=settings.system_prompt or DEFAULT_SYSTEM_PROMPT,
        middleware=[*middleware, engine],
        state_schema=AgentState,
        checkpointer=checkpointer,
        store=store,
        name="rules_agent",
    )


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


def _check_native(model: BaseChatModel, options: AgentOptions, tools: list[BaseTool]) -> None:
    if options.protocol != "native" or not tools:
        return
    try:
        model.bind_tools(tools)
    except NotImplementedError:
        raise AgentConfigurationError(
            f"protocol='native' needs tool calling, but {type(model).__name__}.bind_tools "
            "is not implemented; use protocol='text' or 'auto'"
        ) from None


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
