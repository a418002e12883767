from __future__ import annotations

import threading

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.errors import IterationLimitError
from langchain_agent_rules.testing import ScriptedChatModel

from .helpers import PROTOCOLS, call_step, calls_step, run

MODES = ["sync", "async"]
OBSERVATION_HINT = (
    "\nIf these observations answer the whole task, reply with FINAL: followed by your "
    "answer. Otherwise call one more tool."
)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"broken: {reason}")


@tool
def huge() -> str:
    """Return one megabyte of text."""
    return "y" * 1_000_000


def last_observation_seen(model: ScriptedChatModel, protocol: str) -> str:
    """The observation text of the model's latest call, as the model saw it."""
    last = model.calls[-1].messages[-1]
    if protocol == "native":
        assert isinstance(last, ToolMessage)
        return last.text
    assert isinstance(last, HumanMessage)
    assert last.text.startswith("Observation:\n")
    assert last.text.endswith(OBSERVATION_HINT)
    body, _, task = last.text.removesuffix(OBSERVATION_HINT).rpartition("\n\nThe task: ")
    first_task = next(m for m in model.calls[-1].messages if isinstance(m, HumanMessage))
    assert task == first_task.text
    return body.removeprefix("Observation:\n")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_final_answer_at_once(protocol: str, mode: str) -> None:
    model = ScriptedChatModel(["FINAL: Paris"])
    result = run(create_rules_agent(model, [add], protocol=protocol), "Capital of France?", mode)
    assert result["answer"] == "Paris"
    assert (result["stop_reason"], result["iterations"], result["trace"]) == ("final", 0, [])
    assert model.calls[0].tools == (["add"] if protocol == "native" else [])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tool_call_then_answer(protocol: str, mode: str) -> None:
    model = ScriptedChatModel([call_step(protocol, "add", a=2, b=3), "FINAL: 5"])
    result = run(create_rules_agent(model, [add], protocol=protocol), "2+3?", mode)
    assert result["answer"] == "5"
    assert result["iterations"] == 1
    (step,) = result["trace"]
    assert {k: step[k] for k in ("step", "iteration", "tool", "args", "observation", "status")} == {
        "step": 1,
        "iteration": 1,
        "tool": "add",
        "args": {"a": 2, "b": 3},
        "observation": "5",
        "status": "ok",
    }
    assert step["truncated"] is False
    assert step["error"] is None
    assert last_observation_seen(model, protocol) == "5"
    ai = next(m for m in result["messages"] if isinstance(m, AIMessage))
    assert [(c["name"], c["args"]) for c in ai.tool_calls] == [("add", {"a": 2, "b": 3})]


def test_text_history_keeps_only_the_parsed_call() -> None:
    model = ScriptedChatModel(
        [
            "Let me think aloud here.\n```json\n"
            '{"name": "add", "arguments": {"a": 1, "b": 1}}\n```',
            "FINAL: 2",
        ]
    )
    run(create_rules_agent(model, [add], protocol="text"), "1+1?", "sync")
    replayed = model.calls[1].messages[2]
    assert replayed.content == '```tool\n{"tool": "add", "args": {"a": 1, "b": 1}}\n```'


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unknown_tool_is_an_observation(protocol: str, mode: str) -> None:
    model = ScriptedChatModel([call_step(protocol, "drop_db"), "FINAL: cannot"])
    result = run(create_rules_agent(model, [add, huge], protocol=protocol), "x", mode)
    assert result["trace"][0]["status"] == "unknown_tool"
    expected = 'ERROR: no tool named "drop_db". Available: add, huge'
    assert last_observation_seen(model, protocol) == expected
    assert result["answer"] == "cannot"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tool_that_raises_is_an_observation(protocol: str, mode: str) -> None:
    model = ScriptedChatModel([call_step(protocol, "explode", reason="disk"), "FINAL: failed"])
    result = run(create_rules_agent(model, [explode], protocol=protocol), "x", mode)
    assert result["trace"][0]["status"] == "error"
    assert last_observation_seen(model, protocol) == "ERROR: broken: disk"
    assert result["stop_reason"] == "final"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_invalid_arguments_are_an_observation(protocol: str, mode: str) -> None:
    model = ScriptedChatModel([call_step(protocol, "add", a=1), "FINAL: ?"])
    result = run(create_rules_agent(model, [add], protocol=protocol), "x", mode)
    assert result["trace"][0]["status"] == "invalid_args"
    assert last_observation_seen(model, protocol) == (
        'ERROR: invalid arguments for tool "add": b: Field required'
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_hanging_tool_times_out_and_the_run_goes_on(protocol: str, mode: str) -> None:
    release = threading.Event()

    @tool
    def hang() -> str:
        """Never answers in time."""
        release.wait(30)
        return "late"

    model = ScriptedChatModel([call_step(protocol, "hang"), "FINAL: gave up"])
    agent = create_rules_agent(model, [hang], protocol=protocol, tool_timeout=0.2)
    try:
        result = run(agent, "x", mode)
    finally:
        release.set()
    assert result["trace"][0]["status"] == "timeout"
    assert last_observation_seen(model, protocol) == 'ERROR: tool "hang" timed out after 0.2 s'
    assert result["answer"] == "gave up"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_megabyte_observation_is_cut_before_model_and_state(protocol: str, mode: str) -> None:
    model = ScriptedChatModel([call_step(protocol, "huge"), "FINAL: big"])
    agent = create_rules_agent(model, [huge], protocol=protocol, max_observation_bytes=4096)
    result = run(agent, "x", mode)
    seen = last_observation_seen(model, protocol)
    assert len(seen.encode()) <= 4096
    assert seen.endswith("of 1000000 bytes]")
    step = result["trace"][0]
    assert step["truncated"] is True
    assert step["observation"] == seen
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert all(len(m.text.encode()) <= 4096 for m in tool_messages)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_parallel_calls_run_together_with_one_observation_each(protocol: str, mode: str) -> None:
    barrier = threading.Barrier(2, timeout=5)

    @tool
    def meet(label: str) -> str:
        """Returns only while another call runs at the same time."""
        barrier.wait()
        return f"met {label}"

    model = ScriptedChatModel(
        [calls_step(protocol, ("meet", {"label": "a"}), ("meet", {"label": "b"})), "FINAL: ok"]
    )
    result = run(create_rules_agent(model, [meet], protocol=protocol), "x", mode)
    assert [(s["status"], s["observation"]) for s in result["trace"]] == [
        ("ok", "met a"),
        ("ok", "met b"),
    ]
    assert result["iterations"] == 1
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    ai = next(m for m in result["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert [m.tool_call_id for m in tool_messages] == [c["id"] for c in ai.tool_calls]


@pytest.mark.parametrize("mode", MODES)
def test_malformed_fenced_json_gets_an_error_and_counts(mode: str) -> None:
    model = ScriptedChatModel(
        ['```tool\n{"tool": "add", "args": {"a": 1, "b": }\n```', "FINAL: sorry"]
    )
    result = run(create_rules_agent(model, [add], protocol="text"), "x", mode)
    assert result["iterations"] == 1
    (step,) = result["trace"]
    assert step["status"] == "parse_error"
    seen = last_observation_seen(model, "text")
    assert seen.startswith("ERROR: your tool call could not be read: the block is not valid JSON")
    assert model.calls[1].messages[2].content == '{"tool": "add", "args": {"a": 1, "b": }'


@pytest.mark.parametrize("mode", MODES)
def test_native_invalid_tool_call_gets_an_error_and_counts(mode: str) -> None:
    broken = AIMessage(
        "",
        invalid_tool_calls=[
            {"name": "add", "args": '{"a": 1,', "id": "bad1", "error": "unterminated JSON"}
        ],
    )
    model = ScriptedChatModel([broken, "FINAL: sorry"])
    result = run(create_rules_agent(model, [add], protocol="native"), "x", mode)
    assert result["iterations"] == 1
    assert result["trace"][0]["status"] == "parse_error"
    assert result["trace"][0]["tool"] == "add"
    seen = last_observation_seen(model, "native")
    assert seen.startswith("ERROR: your tool call could not be read: unterminated JSON.")


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"text of {path}"


REPEATED_REQUEST = (
    "Task: x\n\nWhat the tools returned:\n[read_file]\ntext of a.txt\n\n"
    "No more tools will be run: your last tool call repeated an earlier one. Using only "
    "what the tools returned, reply with FINAL: followed by your best answer to the task. "
    "If they do not answer it, say plainly what you could not find and why."
)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_turn_of_only_repeated_calls_asks_for_the_answer_without_tools(
    protocol: str, mode: str
) -> None:
    runs: list[str] = []

    @tool("read_file")
    def counting_read_file(path: str) -> str:
        """Read a file."""
        runs.append(path)
        return f"text of {path}"

    model = ScriptedChatModel(
        [
            call_step(protocol, "read_file", path="a.txt"),
            call_step(protocol, "read_file", path="a.txt"),
            "FINAL: it says hello",
        ]
    )
    result = run(create_rules_agent(model, [counting_read_file], protocol=protocol), "x", mode)
    assert runs == ["a.txt"]
    assert (result["answer"], result["stop_reason"], result["iterations"]) == (
        "it says hello",
        "repeated_calls",
        2,
    )
    assert [s["status"] for s in result["trace"]] == ["ok", "repeated"]
    last_call = model.calls[-1]
    assert last_call.tools == []
    assert "You can call these tools" not in last_call.system_prompt
    assert [m.type for m in last_call.messages] == ["system", "human"]
    assert last_call.messages[-1].content == REPEATED_REQUEST
    assert model.remaining == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("on_limit", ["summarize", "end", "raise"])
def test_repeated_calls_ask_for_the_answer_whatever_on_limit_says(on_limit: str, mode: str) -> None:
    model = ScriptedChatModel(
        [
            call_step("native", "read_file", path="a.txt"),
            call_step("native", "read_file", path="a.txt"),
            "FINAL: from a.txt",
        ]
    )
    agent = create_rules_agent(model, [read_file], protocol="native", on_limit=on_limit)
    result = run(agent, "x", mode)
    assert (result["answer"], result["stop_reason"]) == ("from a.txt", "repeated_calls")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_repeated_calls_fall_back_to_the_fixed_answer_when_the_reply_has_no_text(
    protocol: str, mode: str
) -> None:
    again = call_step(protocol, "read_file", path="a.txt")
    summary = again.removeprefix("I will use a tool.\n") if isinstance(again, str) else again
    model = ScriptedChatModel([again, again, summary])
    result = run(create_rules_agent(model, [read_file], protocol=protocol), "x", mode)
    assert (result["answer"], result["stop_reason"]) == (
        "I stopped because a tool call repeated an earlier one, without reaching an answer.",
        "repeated_calls",
    )
    assert len(result["trace"]) == 2


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_repeated_call_beside_a_new_one_is_answered_and_the_run_goes_on(
    protocol: str, mode: str
) -> None:
    model = ScriptedChatModel(
        [
            call_step(protocol, "read_file", path="a.txt"),
            calls_step(
                protocol, ("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})
            ),
            "FINAL: both read",
        ]
    )
    result = run(create_rules_agent(model, [read_file], protocol=protocol), "x", mode)
    assert (result["answer"], result["stop_reason"]) == ("both read", "final")
    assert [s["status"] for s in result["trace"]] == ["ok", "repeated", "ok"]
    last_call = model.calls[-1]
    assert last_call.tools == ([] if protocol == "text" else ["read_file"])
    seen = "\n".join(m.text for m in last_call.messages[-2:])
    assert (
        'You already called tool "read_file" with these arguments, so it was not run again. '
        "Answer now with FINAL: and what you know. Its result was:\ntext of a.txt"
    ) in seen


@pytest.mark.parametrize("mode", MODES)
def test_the_iteration_limit_comes_before_the_repeated_call_stop(mode: str) -> None:
    steps = [call_step("native", "read_file", path="a.txt")] * 2
    agent = create_rules_agent(
        ScriptedChatModel(steps), [read_file], protocol="native", max_iterations=2, on_limit="raise"
    )
    with pytest.raises(IterationLimitError, match="max_iterations=2"):
        run(agent, "x", mode)


def looping(protocol: str, count: int) -> list[AIMessage | str]:
    return [call_step(protocol, "add", a=i, b=1) for i in range(count)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_limit_summarize_asks_once_more_without_tools(protocol: str, mode: str) -> None:
    model = ScriptedChatModel([*looping(protocol, 2), "FINAL: best guess 2"])
    agent = create_rules_agent(model, [add], protocol=protocol, max_iterations=2)
    result = run(agent, "x", mode)
    assert (result["answer"], result["stop_reason"], result["iterations"]) == (
        "best guess 2",
        "max_iterations",
        2,
    )
    last_call = model.calls[-1]
    assert last_call.tools == []
    assert [m.type for m in last_call.messages] == ["system", "human"]
    assert "You can call these tools" not in last_call.system_prompt
    assert last_call.messages[-1].content == (
        "Task: x\n\nWhat the tools returned:\n[add]\n1\n\n[add]\n2\n\n"
        "No more tools can be used: all 2 tool iterations are spent. Using only what the "
        "tools returned, reply with FINAL: followed by your best answer to the task."
    )
    assert len(result["trace"]) == 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_limit_summarize_drops_tool_calls_and_falls_back_to_the_fixed_answer(
    protocol: str,
) -> None:
    summary = call_step(protocol, "add", a=9, b=9)
    if isinstance(summary, str):
        summary = summary.removeprefix("I will use a tool.\n")
    model = ScriptedChatModel([*looping(protocol, 1), summary])
    result = run(create_rules_agent(model, [add], protocol=protocol, max_iterations=1), "x", "sync")
    assert result["answer"] == "I stopped after 1 tool iterations without reaching an answer."
    assert len(result["trace"]) == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_limit_end_answers_with_the_fixed_message(protocol: str, mode: str) -> None:
    model = ScriptedChatModel(looping(protocol, 3))
    agent = create_rules_agent(model, [add], protocol=protocol, max_iterations=3, on_limit="end")
    result = run(agent, "x", mode)
    assert result["answer"] == "I stopped after 3 tool iterations without reaching an answer."
    assert result["stop_reason"] == "max_iterations"
    assert model.remaining == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_limit_raise_raises_iteration_limit_error(protocol: str, mode: str) -> None:
    model = ScriptedChatModel(looping(protocol, 2))
    agent = create_rules_agent(model, [add], protocol=protocol, max_iterations=2, on_limit="raise")
    with pytest.raises(IterationLimitError, match="max_iterations=2"):
        run(agent, "x", mode)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_many_iterations_never_hit_the_recursion_limit(protocol: str) -> None:
    model = ScriptedChatModel([*looping(protocol, 40), "FINAL: done"])
    result = run(
        create_rules_agent(model, [add], protocol=protocol, max_iterations=40), "x", "sync"
    )
    assert (result["answer"], result["iterations"]) == ("done", 40)


@pytest.mark.parametrize("mode", MODES)
def test_model_errors_end_the_run(mode: str) -> None:
    model = ScriptedChatModel([ConnectionError("model server down")])
    with pytest.raises(ConnectionError, match="model server down"):
        run(create_rules_agent(model, [add]), "x", mode)


def test_system_prompt_replaces_the_default_opening_and_stays_identical() -> None:
    model = ScriptedChatModel([call_step("text", "add", a=1, b=1), "FINAL: 2"])
    agent = create_rules_agent(model, [add], protocol="text", system_prompt="You are terse.")
    run(agent, "x", "sync")
    first, second = (call.system_prompt for call in model.calls)
    assert first == second
    assert first.startswith("You are terse.\n\nYou can call these tools:\n- add: Add two numbers.")


def test_default_system_prompt_is_one_plain_sentence() -> None:
    model = ScriptedChatModel(["FINAL: hi"])
    run(create_rules_agent(model, [add]), "x", "sync")
    assert model.calls[0].system_prompt == "You are a helpful assistant."


def test_plain_functions_become_tools() -> None:
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    model = ScriptedChatModel([call_step("native", "double", x=4), "FINAL: 8"])
    result = run(create_rules_agent(model, [double], protocol="native"), "x", "sync")
    assert result["trace"][0]["observation"] == "8"


def test_a_new_run_on_the_same_thread_resets_the_trace() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    model = ScriptedChatModel([call_step("native", "add", a=1, b=1), "FINAL: 2", "FINAL: again"])
    agent = create_rules_agent(model, [add], protocol="native", checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    run(agent, "x", "sync", config)
    second = run(agent, "y", "sync", config)
    assert (second["answer"], second["trace"], second["iterations"]) == ("again", [], 0)
    assert len(second["messages"]) == 6


def test_parse_error_observation_word_for_word() -> None:
    model = ScriptedChatModel(["```tool\nadd 1 2\n```", "FINAL: 3"])
    run(create_rules_agent(model, [add], protocol="text"), "x", "sync")
    assert last_observation_seen(model, "text") == (
        "ERROR: your tool call could not be read: the block is not valid JSON (Expecting value "
        "at line 1 column 1). To call a tool, reply with exactly one block:\n```tool\n"
        '{"tool": "<tool name>", "args": {...}}\n```\nOtherwise reply with FINAL: followed by '
        "your answer."
    )
