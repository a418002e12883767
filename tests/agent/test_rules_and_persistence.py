from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.rules.memory import InMemoryRuleStore
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import PROTOCOLS, call_step, run

MODES = ["sync", "async"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_rules_are_in_the_prompt_and_a_change_mid_run_reaches_the_next_call(
    protocol: str, mode: str
) -> None:
    store = InMemoryRuleStore(
        [
            Rule(
                id="eur",
                type="REQUIREMENT",
                target="OUTPUT",
                content="Write amounts with EUR.",
                priority=5,
            ),
            Rule(
                id="other",
                type="REQUIREMENT",
                target="OUTPUT",
                content="Only for project 9.",
                priority=5,
                project_id=9,
            ),
        ]
    )

    @tool
    def add_rule(content: str) -> str:
        """Add a prohibition."""
        store.create(
            Rule(id="no_names", type="PROHIBITION", target="OUTPUT", content=content, priority=1)
        )
        return "added"

    model = ScriptedChatModel(
        [call_step(protocol, "add_rule", content="Never print customer names."), "FINAL: ok"]
    )
    agent = create_rules_agent(model, [add_rule], rules=store, project_id=1, protocol=protocol)
    run(agent, "x", mode)
    first, second = (call.system_prompt for call in model.calls)
    assert "- [output] Write amounts with EUR." in first
    assert "project 9" not in first
    assert "Never print customer names." not in first
    assert "Prohibitions (never do this):\n- [output] Never print customer names." in second


def test_no_rules_leave_the_prompt_alone() -> None:
    model = ScriptedChatModel(["FINAL: hi"])
    run(create_rules_agent(model, [], rules=InMemoryRuleStore()), "x", "sync")
    assert "rules" not in model.calls[0].system_prompt


READER = textwrap.dedent(
    """
    import json, sys
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langchain_agent_rules.agent.builder import create_rules_agent
    from langchain_agent_rules.testing import ScriptedChatModel

    with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
        agent = create_rules_agent(ScriptedChatModel([]), [], checkpointer=saver)
        state = agent.get_state({"configurable": {"thread_id": "shared"}}).values
        print(json.dumps({"trace": state["trace"], "answer": state["answer"]}))
    """
)


def test_trace_is_read_back_from_sqlite_by_a_new_process(tmp_path: Path) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    database = str(tmp_path / "checkpoints.sqlite")
    model = ScriptedChatModel([call_step("native", "add", a=20, b=22), "FINAL: 42"])
    with SqliteSaver.from_conn_string(database) as saver:
        agent = create_rules_agent(model, [add], checkpointer=saver)
        result = run(agent, "20+22?", "sync", {"configurable": {"thread_id": "shared"}})
    completed = subprocess.run(
        [sys.executable, "-c", READER, database], capture_output=True, text=True, check=True
    )
    read_back = json.loads(completed.stdout)
    assert read_back["answer"] == "42"
    assert read_back["trace"] == json.loads(json.dumps(result["trace"]))
    assert read_back["trace"][0]["observation"] == "42"
