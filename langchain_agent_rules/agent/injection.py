"""Arguments a tool gets from the graph, not from the model, as LangGraph's ``ToolNode`` does.

A tool may declare arguments annotated with LangGraph's markers: ``InjectedState`` (the
whole state, or one field with ``InjectedState("field")``), ``InjectedStore`` (the
graph's store) and ``ToolRuntime`` (state, context, config, store, stream writer and
call id in one object); ``InjectedToolCallId`` is filled by langchain-core itself when a
tool is invoked with a tool call. None of them is in the schema the model sees
(``tool.tool_call_schema``), and any value the model sends for one is dropped before the
graph's value is put in, so a model cannot forge them.

``ToolNode`` keeps this logic in private methods (and runs every sync tool step on a
new thread pool, with no timeout), so the agent reads the same public markers itself;
tests/agent/test_langgraph_tools.py pins each marker's behaviour.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.runtime import Runtime

__all__ = ["Injections", "inject", "injections_of"]

_RUNTIME_NAME = "runtime"


@dataclass(frozen=True)
class Injections:
    """Which arguments of one tool the graph fills in, and from what.

    ``state`` maps an argument to the state field it gets (``None``: the whole state);
    ``hidden`` is every argument the model may not set.
    """

    state: Mapping[str, str | None]
    store: str | None
    runtime: str | None
    hidden: frozenset[str]


def _fields(schema: Any) -> dict[str, Any]:
    if isinstance(schema, dict):
        return dict(schema.get("properties") or {})
    fields = getattr(schema, "model_fields", None)
    if fields is None:  # a pydantic v1 model
        fields = getattr(schema, "__fields__", {})
    return dict(fields)


def _marker(annotation: Any, kind: type) -> Any:
    """The ``kind`` marker (instance or class) inside ``annotation``, or None."""
    if isinstance(annotation, kind) or (
        isinstance(annotation, type) and issubclass(annotation, kind)
    ):
        return annotation
    origin = get_origin(annotation)
    if origin is Annotated or origin is Union or origin is UnionType:
        for argument in get_args(annotation):
            found = _marker(argument, kind)
            if found is not None:
                return found
        return None
    if isinstance(origin, type) and issubclass(origin, kind):
        return origin
    return None


def _annotations(tool: BaseTool) -> dict[str, list[Any]]:
    """Every annotation of each argument: the function's hints and the schema's fields."""
    found: dict[str, list[Any]] = {}
    function = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if function is not None:
        try:
            hints = typing.get_type_hints(function, include_extras=True)
        except (NameError, TypeError):
            hints = {}
        for name, hint in hints.items():
            found.setdefault(name, []).append(hint)
    for name, info in _fields(tool.get_input_schema()).items():
        found.setdefault(name, []).extend(
            [getattr(info, "annotation", None), *getattr(info, "metadata", ())]
        )
    return found


def injections_of(tool: BaseTool) -> Injections | None:
    """What the graph must fill in when ``tool`` is called, or None when nothing."""
    model_facing = set(_fields(tool.tool_call_schema))
    annotations = _annotations(tool)
    hidden = {name for name in _fields(tool.get_input_schema()) if name not in model_facing}
    state: dict[str, str | None] = {}
    store: str | None = None
    runtime: str | None = None
    for name, candidates in annotations.items():
        for annotation in candidates:
            state_marker = _marker(annotation, InjectedState)
            if state_marker is not None:
                state[name] = getattr(state_marker, "field", None) or None
            if _marker(annotation, InjectedStore) is not None:
                store = name
            if _marker(annotation, ToolRuntime) is not None:
                runtime = name
        if name == _RUNTIME_NAME and name in hidden | model_facing:
            runtime = name
    if not (hidden or state or store or runtime):
        return None
    injected = set(state) | {n for n in (store, runtime) if n is not None}
    return Injections(state, store, runtime, frozenset(hidden | injected))


def inject(
    call: ToolCall,
    injections: Injections,
    state: Mapping[str, Any],
    config: RunnableConfig | None,
    runtime: Runtime[Any] | None,
    tools: Sequence[BaseTool],
) -> ToolCall:
    """``call`` with the model's values for hidden arguments dropped and the graph's put in.

    Raises `ValueError` when the tool needs a store and the graph has none.
    """
    args = {k: v for k, v in call["args"].items() if k not in injections.hidden}
    for name, field in injections.state.items():
        if field is None:
            args[name] = state
        elif field in state:
            args[name] = state[field]
    store = runtime.store if runtime is not None else None
    if injections.store is not None:
        if store is None:
            raise ValueError(
                f"tool {call['name']!r} takes an InjectedStore argument, but the graph has "
                "no store; pass store= to create_rules_agent"
            )
        args[injections.store] = store
    if injections.runtime is not None:
        args[injections.runtime] = ToolRuntime(
            state=state,
            context=runtime.context if runtime is not None else None,
            config=config or {},
            stream_writer=runtime.stream_writer if runtime is not None else _no_writer,
            tool_call_id=call["id"],
            store=store,
            tools=list(tools),
            execution_info=runtime.execution_info if runtime is not None else None,
            server_info=runtime.server_info if runtime is not None else None,
        )
    return {**call, "args": args}


def _no_writer(chunk: Any) -> None:
    """The stream writer outside a graph run: nothing listens."""
