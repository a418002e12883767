"""Agent workers for `run_together`: each builds its own agent on a `PostgresSaver`.

The first worker runs a thread until the approval interrupt; a second one, in another
process with nothing shared but the database, resumes it. The model is scripted: each
worker gets the replies for its own part of the run.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.types import Command

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.testing import ScriptedChatModel

TASK = "Tell Ada her order shipped."
EMAIL_CALL = AIMessage(
    "",
    tool_calls=[{"name": "send_email", "args": {"to": "ada@example.com"}, "id": "call_email"}],
)


@tool
def send_email(to: str) -> str:
    """Send the shipping e-mail to ``to``."""
    return f"sent to {to} by process {os.getpid()}"


def _agent(model: ScriptedChatModel, checkpointer: Any) -> Any:
    return create_rules_agent(
        model,
        [send_email],
        protocol="native",
        require_approval=["send_email"],
        checkpointer=checkpointer,
    )


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def start_until_approval(url: str, thread_id: str, *, ready: Callable[[], object]) -> str:
    """Run the task until the run pauses for approval; return the interrupt and this pid."""
    ready()
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        result = _agent(ScriptedChatModel([EMAIL_CALL]), saver).invoke(
            {"messages": [("user", TASK)]}, _config(thread_id)
        )
    interrupts = [item.value for item in result.get("__interrupt__", [])]
    return json.dumps({"pid": os.getpid(), "interrupts": interrupts})


def resume_with(url: str, thread_id: str, answer: Any, *, ready: Callable[[], object]) -> str:
    """Resume the paused thread with ``answer``; return the run's result and this pid."""
    ready()
    with PostgresSaver.from_conn_string(url) as saver:
        result = _agent(ScriptedChatModel(["FINAL: Ada knows."]), saver).invoke(
            Command(resume=answer), _config(thread_id)
        )
    return json.dumps(
        {"pid": os.getpid(), "answer": result.get("answer"), "trace": result.get("trace")}
    )


def aresume_with(url: str, thread_id: str, answer: Any, *, ready: Callable[[], object]) -> str:
    """`resume_with` through `AsyncPostgresSaver` and ``ainvoke``."""
    ready()

    async def resume() -> dict[str, Any]:
        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            agent = _agent(ScriptedChatModel(["FINAL: Ada knows."]), saver)
            result: dict[str, Any] = await agent.ainvoke(Command(resume=answer), _config(thread_id))
            return result

    result = asyncio.run(resume())
    return json.dumps(
        {"pid": os.getpid(), "answer": result.get("answer"), "trace": result.get("trace")}
    )


def read_thread(url: str, thread_id: str, *, ready: Callable[[], object]) -> str:
    """Read the thread's saved state without running anything."""
    ready()
    with PostgresSaver.from_conn_string(url) as saver:
        state = _agent(ScriptedChatModel([]), saver).get_state(_config(thread_id))
    return json.dumps(
        {
            "answer": state.values.get("answer"),
            "trace": state.values.get("trace"),
            "messages": [message.type for message in state.values.get("messages", [])],
            "next": list(state.next),
        }
    )
