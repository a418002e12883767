"""Shared helpers for the agent tests: scripted tool-call steps in either protocol."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from langchain_core.messages import AIMessage

PROTOCOLS = ["native", "text"]


def calls_step(protocol: str, *calls: tuple[str, dict[str, Any]]) -> AIMessage | str:
    """One model reply that calls ``calls`` in ``protocol`` (text: one fenced block each)."""
    if protocol == "native":
        return AIMessage(
            "",
            tool_calls=[
                {"name": name, "args": args, "id": f"id_{index}_{name}"}
                for index, (name, args) in enumerate(calls)
            ],
        )
    blocks = [
        "```tool\n" + json.dumps({"tool": name, "args": args}) + "\n```" for name, args in calls
    ]
    return "I will use a tool.\n" + "\n".join(blocks)


def call_step(protocol: str, tool_name: str, /, **args: Any) -> AIMessage | str:
    return calls_step(protocol, (tool_name, args))


def run(graph: Any, task: str, mode: str, config: dict[str, Any] | None = None) -> Any:
    payload = {"messages": [("user", task)]}
    if mode == "async":
        return asyncio.run(graph.ainvoke(payload, config))
    return graph.invoke(payload, config)
