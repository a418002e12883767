"""The display helpers show what a run did: rows, statuses, rule events and a chart."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from matplotlib.colors import to_hex

from langchain_agent_rules import (
    InMemoryRuleStore,
    JsonFileRuleStore,
    Rule,
    RulesAgent,
    RunResult,
    SqlQueryTool,
    rule_events_table,
    timeline_chart,
    trace_table,
)
from langchain_agent_rules.demo import demo_database_url
from langchain_agent_rules.display import (
    MATPLOTLIB_MISSING,
    ORDER_AXIS_LABEL,
    PURPOSE_COLOURS,
    TIME_AXIS_LABEL,
)
from langchain_agent_rules.testing import ScriptedChatModel

GREEN, AMBER, RED, GREY = "#1a7f37", "#9a6700", "#cf222e", "#57606a"


def calls(*pairs: tuple[str, dict[str, Any]]) -> AIMessage:
    """One model turn calling each ``(tool, args)``."""
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": None} for n, a in pairs])


@tool
def convert(amount: float, currency: str) -> str:
    """Convert an amount in EUR to CHF."""
    if currency != "CHF":
        raise ToolException(f"unknown currency {currency!r}; use CHF")
    return f"{amount:.2f} EUR = {amount * 0.94:.2f} CHF"


@tool
def send_mail(to: str, text: str) -> str:
    """Send an e-mail."""
    return f"sent to {to}"


COUNT = ("sql_query", {"sql": "SELECT COUNT(*) AS n FROM customers"})
TO_CHF = ("convert", {"amount": 10, "currency": "CHF"})


def mixed_run() -> RunResult:
    """Turn 1: three calls at once (ok, error, unknown tool); turn 2: ok; turn 3: a repeat."""
    model = ScriptedChatModel(
        [
            calls(COUNT, ("convert", {"amount": 10, "currency": "JPY"}), ("nope", {})),
            calls(TO_CHF),
            calls(TO_CHF),
            "FINAL: 10.00 EUR = 9.40 CHF",
        ]
    )
    return RulesAgent(model, tools=[SqlQueryTool(demo_database_url()), convert]).invoke("x")


class _Cells(HTMLParser):
    """The text of each ``<td>`` per ``<tr>`` of the body, and each cell's style."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, ...]] = []
        self.styles: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append(())
            self.styles.append([])
        elif tag == "td":
            self._cell = []
            self.styles[-1].append(dict(attrs).get("style") or "")

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1] = (*self.rows[-1], "".join(self._cell))
            self._cell = None


def html_cells(markup: str) -> _Cells:
    parser = _Cells()
    parser.feed(markup)
    parser.rows = [row for row in parser.rows if row]  # the header row has no <td>
    parser.styles = [style for style in parser.styles if style]
    return parser


# --- the trace table ---------------------------------------------------------------------


def test_the_trace_table_has_a_row_per_tool_call_with_its_turn_and_status() -> None:
    table = trace_table(mixed_run())

    assert table.title == "4 model calls, 5 tool calls, stop: repeated_calls"
    assert table.columns == ("step", "turn", "tool", "status", "ms", "args", "observation")
    assert [row[:4] for row in table.rows] == [
        ("1", "1", "sql_query", "ok"),
        ("2", "1", "convert", "error"),
        ("3", "1", "nope", "unknown_tool"),
        ("4", "2", "convert", "ok"),
        ("5", "3", "convert", "repeated"),
    ]
    assert table.styles == ("green", "red", "red", "green", "yellow")
    assert json.loads(table.rows[0][5]) == COUNT[1]
    assert table.rows[0][6] == '{"columns":["n"],"rows":[{"n":12}],"row_count":1,"truncated":false}'
    assert table.rows[1][6] == "ERROR: unknown currency 'JPY'; use CHF"


def test_in_jupyter_the_trace_is_an_html_table_with_coloured_statuses() -> None:
    table = trace_table(mixed_run())

    cells = html_cells(table._repr_html_())

    assert cells.rows == list(table.rows)
    status_colours = [re.search(r"color:(#\w+)", styles[3]) for styles in cells.styles]
    assert [m.group(1) for m in status_colours if m] == [GREEN, RED, RED, GREEN, AMBER]
    assert "<caption style='text-align:left'>4 model calls, 5 tool calls" in table._repr_html_()


def test_elsewhere_the_trace_prints_as_a_text_table() -> None:
    text = str(trace_table(mixed_run()))

    assert text.splitlines()[0].strip() == "4 model calls, 5 tool calls, stop: repeated_calls"
    for shown in ("sql_query", "unknown_tool", "repeated", "'JPY'"):
        assert shown in text
    assert repr(trace_table(mixed_run())).splitlines()[0] == text.splitlines()[0]


def test_a_stored_trace_shows_the_same_rows_as_the_run() -> None:
    model = ScriptedChatModel([calls(TO_CHF), "FINAL: 9.40 CHF"])
    agent = RulesAgent(model, tools=[convert], checkpointer=InMemorySaver())
    result = agent.invoke("Convert 10 EUR to CHF.", thread_id="t1")

    stored = trace_table(agent.trace("t1"))

    assert stored.title == "1 tool call"
    assert stored.rows == trace_table(result).rows


def test_calls_that_needed_approval_show_the_human_decision() -> None:
    decisions = iter(["approve", {"type": "reject", "message": "not today"}])
    model = ScriptedChatModel(
        [calls(TO_CHF), calls(("convert", {"amount": 20, "currency": "CHF"})), "FINAL: done"]
    )
    agent = RulesAgent(
        model, tools=[convert], require_approval=["convert"], approve=lambda _: next(decisions)
    )

    table = trace_table(agent.invoke("Convert 10 and 20 EUR to CHF."))

    assert [row[3] for row in table.rows] == ["ok (approved)", "rejected"]
    assert table.styles == ("green", "yellow")


def test_a_run_without_tool_calls_shows_an_empty_table_that_says_so() -> None:
    table = trace_table(RulesAgent(ScriptedChatModel(["FINAL: hello"])).invoke("hi"))

    assert table.title == "1 model call, 0 tool calls, stop: final"
    assert table.rows == ()
    assert html_cells(table._repr_html_()).rows == []


@tool
def noisy() -> str:
    """Return markup, control characters, line breaks and a lot of text."""
    return "<b>bold</b>\x1b[31m red\nline two " + "x" * 500


def test_cells_are_escaped_on_one_line_and_cut_with_an_ellipsis() -> None:
    result = RulesAgent(ScriptedChatModel([calls(("noisy", {})), "FINAL: ok"]), tools=[noisy])
    table = trace_table(result.invoke("x"))

    observation = table.rows[0][6]
    assert observation.startswith("<b>bold</b>\ufffd[31m red line two xxx")
    assert observation.endswith("…")
    assert len(observation) == 200
    markup = table._repr_html_()
    assert "&lt;b&gt;bold&lt;/b&gt;" in markup
    assert "<b>" not in markup
    assert "\x1b" not in str(table)


TEXT = st.text(max_size=300)


@settings(max_examples=60, deadline=None)
@given(tool=TEXT, observation=TEXT, value=TEXT, status=TEXT)
def test_any_text_in_a_trace_renders_as_valid_html_and_plain_text(
    tool: str, observation: str, value: str, status: str
) -> None:
    step = {
        "step": 1,
        "iteration": 1,
        "tool": tool,
        "args": {value: [value, {"n": 10**30}]},
        "observation": observation,
        "status": status,
        "duration_ms": 1.5,
        "truncated": False,
        "error": None,
        "approval": None,
    }
    table = trace_table([step])

    markup = table._repr_html_()
    markup.encode("utf-8")
    assert html_cells(markup).rows == [table.rows[0]]
    text = str(table)
    text.encode("utf-8")
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", text)


# --- rule events -------------------------------------------------------------------------


def test_a_rule_left_out_of_the_prompt_is_an_event_of_the_prompt(tmp_path: Path) -> None:
    record = {"type": "requirement", "projectId": None, "target": "output", "priority": 5}
    rules = [
        {**record, "id": "huge_rule", "content": "Always " + "x" * 600},
        {**record, "id": "eur_rule", "content": "Write amounts with EUR."},
    ]
    (tmp_path / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    store = JsonFileRuleStore(tmp_path / "rules.json", create=True)
    result = RulesAgent(ScriptedChatModel(["FINAL: ok"]), rules=store).invoke("x")

    table = rule_events_table(result)

    assert table.title == "rule events: 1"
    assert table.columns == ("rule", "status", "where", "detail")
    assert table.rows == (
        (
            "huge_rule",
            "omitted",
            "prompt",
            "max_rule_content_bytes=500 (its content has 607 bytes)",
        ),
    )
    assert table.styles == ("yellow",)


HIDE_EMAILS = Rule(
    id="hide_emails",
    type="prohibition",
    target="output",
    content="Never reveal e-mail addresses.",
    check={"forbid": "email"},
)
NO_MAIL = Rule(
    id="no_mail",
    type="prohibition",
    target="tool",
    content="Never send mail.",
    check={"tool": "send_mail"},
)
EUR = Rule(
    id="amounts_in_eur",
    type="requirement",
    target="output",
    content="Write money amounts with EUR.",
    check={"require": r"regex:\d EUR\b", "when": r"regex:\d"},
)


def checked_run() -> RunResult:
    """A denied tool call, then an answer with an e-mail address that is redacted."""
    model = ScriptedChatModel(
        [
            calls(("send_mail", {"to": "alice@example.com", "text": "hi"})),
            "FINAL: I could not send it; write to alice@example.com yourself.",
        ]
    )
    rules = InMemoryRuleStore([HIDE_EMAILS, NO_MAIL])
    return RulesAgent(model, tools=[send_mail], rules=rules).invoke("Mail Alice.")


def test_rule_events_say_what_each_check_did_and_where() -> None:
    result = checked_run()

    table = rule_events_table(result)

    assert result.answer == "I could not send it; write to [redacted: email] yourself."
    assert [row[:3] for row in table.rows] == [
        ("no_mail", "denied", "step 1 (send_mail)"),
        ("hide_emails", "redacted", "answer"),
    ]
    assert table.styles == ("red", "yellow")
    assert html_cells(table._repr_html_()).rows == list(table.rows)


def test_the_trace_marks_the_call_a_rule_stopped() -> None:
    table = trace_table(checked_run())

    assert table.columns[-1] == "rules"
    assert [(row[2], row[3], row[-1]) for row in table.rows] == [
        ("send_mail", "denied", "no_mail denied")
    ]
    assert table.styles == ("red",)
    assert table.rows[0][6].startswith(
        'ERROR: rule no_mail does not allow this call to tool "send_mail"'
    )


# --- the timeline chart ------------------------------------------------------------------

TURN, REVISION, SUMMARY = (PURPOSE_COLOURS[p] for p in ("turn", "revision", "summary"))


@dataclass(frozen=True)
class Drawn:
    """One box of a chart: where it is, how wide, its colour, hatching and label."""

    lane: float
    x: float
    width: float
    colour: str
    hatched: bool
    text: str


def drawn(chart: Any) -> dict[str, Drawn]:
    """Each box of ``chart`` by its gid (``model:1``, ``tool:2``, ``wait:1``, ``answer``)."""
    axes = chart.figure.axes[0]
    texts = {text.get_gid(): text.get_text() for text in axes.texts}
    return {
        patch.get_gid(): Drawn(
            lane=patch.get_y() + patch.get_height() / 2,
            x=patch.get_x(),
            width=patch.get_width(),
            colour=to_hex(patch.get_facecolor()) if patch.get_fill() else "none",
            hatched=bool(patch.get_hatch()),
            text=texts.get(patch.get_gid(), ""),
        )
        for patch in axes.patches
        if patch.get_gid()
    }


def stored_by_an_earlier_version(result: RunResult) -> RunResult:
    """``result`` as a thread stored before steps and model calls had times reads back."""
    steps: Any = [{k: v for k, v in step.items() if k != "started_at"} for step in result.trace]
    return replace(result, trace=steps, model_calls=[])


def step_at(number: int, started_at: float, duration_ms: float, **values: Any) -> Any:
    return {
        "step": number,
        "iteration": number,
        "tool": "sql_query",
        "args": {},
        "observation": "",
        "status": "ok",
        "started_at": started_at,
        "duration_ms": duration_ms,
        "truncated": False,
        "error": None,
        "approval": None,
        "rule_events": [],
        **values,
    }


def test_the_timeline_places_each_call_at_its_time_in_seconds_from_the_start() -> None:
    run = RunResult(
        answer="9",
        stop_reason="final",
        trace=[step_at(1, 1000.0 + 2.0, 500.0)],
        usage={**RunResult("", None).usage, "model_calls": 2},
        model_calls=[
            {"started_at": 1000.0, "duration_ms": 2000.0, "purpose": "turn"},
            {"started_at": 1000.0 + 2.5, "duration_ms": 1500.0, "purpose": "turn"},
        ],
    )

    chart = timeline_chart(run)

    boxes = drawn(chart)
    assert boxes == {
        "model:1": Drawn(0, 0.0, 2.0, TURN, False, "turn 1\n2.0 s"),
        "tool:1": Drawn(1, 2.0, 0.5, GREEN, False, "1 sql_query\nok 500.0 ms"),
        "model:2": Drawn(0, 2.5, 1.5, TURN, False, "answer\n1.5 s"),
    }
    axes = chart.figure.axes[0]
    assert axes.get_xlabel() == TIME_AXIS_LABEL
    assert axes.get_xlim()[1] >= 4.0
    assert chart.summary == "2 model calls, 1 tool call, stop: final"


def test_a_call_too_short_to_see_is_drawn_a_little_wider_and_labelled_with_its_time() -> None:
    run = RunResult(
        answer="",
        stop_reason="final",
        trace=[step_at(1, 10.0, 1.0)],
        model_calls=[
            {"started_at": 0.0, "duration_ms": 10_000.0, "purpose": "turn"},
            {"started_at": 10.001, "duration_ms": 9_999.0, "purpose": "turn"},
        ],
    )

    tool = drawn(timeline_chart(run))["tool:1"]

    assert (tool.x, tool.text) == (10.0, "1 sql_query\nok 1.0 ms")
    assert 0.001 < tool.width <= 0.1


def test_a_run_shows_its_model_calls_and_tool_calls_where_the_run_timed_them() -> None:
    result = mixed_run()
    origin = result.model_calls[0]["started_at"]

    boxes = drawn(timeline_chart(result))

    assert sorted(boxes) == sorted(
        [f"model:{n}" for n in range(1, 5)] + [f"tool:{n}" for n in range(1, 6)]
    )
    for number, call in enumerate(result.model_calls, start=1):
        assert boxes[f"model:{number}"].x == pytest.approx(call["started_at"] - origin)
    for step in result.trace:
        assert boxes[f"tool:{step['step']}"].x == pytest.approx(step["started_at"] - origin)
    # Turn 1 called three tools at once: one above the other.
    assert [boxes[f"tool:{n}"].lane for n in range(1, 6)] == [1, 2, 3, 1, 1]
    assert [boxes[f"tool:{n}"].colour for n in range(1, 6)] == [GREEN, RED, RED, GREEN, AMBER]
    assert [boxes[f"model:{n}"].colour for n in range(1, 5)] == [TURN, TURN, TURN, SUMMARY]


def test_a_revision_is_a_model_call_of_its_own_colour() -> None:
    model = ScriptedChatModel(
        [calls(TO_CHF), "FINAL: That is 9.40 in Swiss francs.", "That is 10.00 EUR."]
    )
    result = RulesAgent(model, tools=[convert], rules=InMemoryRuleStore([EUR])).invoke("x")

    boxes = drawn(timeline_chart(result))

    assert [boxes[f"model:{n}"].colour for n in (1, 2, 3)] == [TURN, TURN, REVISION]
    assert boxes["model:3"].x >= boxes["model:2"].x + boxes["model:2"].width


def test_the_time_a_call_waited_for_approval_is_a_hatched_box_before_it() -> None:
    def approve(request: Any) -> str:
        time.sleep(0.2)
        return "approve"

    model = ScriptedChatModel([calls(TO_CHF), "FINAL: 9.40 CHF"])
    agent = RulesAgent(model, tools=[convert], require_approval=["convert"], approve=approve)

    chart = timeline_chart(agent.invoke("Convert 10 EUR to CHF."))

    boxes = drawn(chart)
    wait, tool, turn = boxes["wait:1"], boxes["tool:1"], boxes["model:1"]
    assert (wait.hatched, wait.colour, wait.lane, wait.text) == (True, "none", 1, "approval")
    assert wait.x == pytest.approx(turn.x + turn.width, abs=1e-3)
    assert wait.x + wait.width == pytest.approx(tool.x)
    assert wait.width >= 0.2
    legend = [text.get_text() for text in chart.figure.axes[0].get_legend().get_texts()]
    assert legend == ["model: turn", "ok", "waiting for approval"]


def test_a_trace_stored_without_times_is_shown_step_by_step() -> None:
    chart = timeline_chart(stored_by_an_earlier_version(mixed_run()))

    boxes = drawn(chart)

    assert [(gid, box.text.split("\n")[:2], box.colour) for gid, box in boxes.items()] == [
        ("turn:1", ["turn 1"], GREY),
        ("tool:1", ["1 sql_query", "ok"], GREEN),
        ("tool:2", ["2 convert", "error"], RED),
        ("tool:3", ["3 nope", "unknown_tool"], RED),
        ("turn:2", ["turn 2"], GREY),
        ("tool:4", ["4 convert", "ok"], GREEN),
        ("turn:3", ["turn 3"], GREY),
        ("tool:5", ["5 convert", "repeated"], AMBER),
        ("answer", ["answer"], GREY),
    ]
    assert chart.figure.axes[0].get_xlabel() == ORDER_AXIS_LABEL
    assert chart.summary == "4 model calls, 5 tool calls, stop: repeated_calls"
    assert chart.figure.axes[0].get_title(loc="left") == chart.summary
    assert repr(chart) == f"<TimelineChart: {chart.summary}>"


def test_the_timeline_is_a_png_in_jupyter() -> None:
    for run in (mixed_run(), stored_by_an_earlier_version(mixed_run())):
        assert timeline_chart(run)._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")


def test_a_run_that_hit_its_limit_has_no_answer_and_says_why_it_stopped() -> None:
    model = ScriptedChatModel([calls(TO_CHF)])
    agent = RulesAgent(model, tools=[convert], max_iterations=1, on_limit="end")
    result = agent.invoke("x")

    timed, ordered = timeline_chart(result), timeline_chart(stored_by_an_earlier_version(result))

    assert list(drawn(timed)) == ["model:1", "tool:1"]
    assert list(drawn(ordered)) == ["turn:1", "tool:1"]
    assert timed.summary == "1 model call, 1 tool call, stop: max_iterations"


def test_without_times_the_answer_box_counts_the_calls_a_revision_took() -> None:
    model = ScriptedChatModel(
        [calls(TO_CHF), "FINAL: That is 9.40 in Swiss francs.", "That is 10.00 EUR."]
    )
    result = RulesAgent(model, tools=[convert], rules=InMemoryRuleStore([EUR])).invoke("x")

    boxes = drawn(timeline_chart(stored_by_an_earlier_version(result)))

    assert result.answer == "That is 10.00 EUR."
    assert (boxes["answer"].text, boxes["answer"].colour) == (
        "answer\n2 calls\nrule: revised",
        GREY,
    )
    assert "rule" not in boxes["tool:1"].text


def test_the_timeline_names_the_extra_to_install_when_matplotlib_is_missing() -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from langchain_agent_rules import RunResult, timeline_chart\n"
        "try:\n"
        "    timeline_chart(RunResult(answer='', stop_reason='final'))\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert out.stdout.strip() == MATPLOTLIB_MISSING
    assert 'pip install "langchain-agent-rules[notebooks]"' in MATPLOTLIB_MISSING


@pytest.mark.parametrize("timed", [True, False])
def test_names_and_statuses_that_look_like_markup_still_draw(timed: bool) -> None:
    step = step_at(
        1,
        5.0,
        1.0,
        tool="$\\frac{1}{$ \x00 \ud800",
        status="$x^",
        rule_events=[{"rule_id": "r", "status": "$bad{", "detail": ""}],
    )
    calls_made: Any = [{"started_at": 4.0, "duration_ms": 900.0, "purpose": "turn"}]
    run = RunResult(answer="", stop_reason="final", trace=[step], model_calls=calls_made)
    if not timed:
        run = stored_by_an_earlier_version(run)

    chart = timeline_chart(run)

    assert chart._repr_png_().startswith(b"\x89PNG")
    assert drawn(chart)["tool:1"].text.startswith("1 \\$\\frac{1}{\\$ \ufffd \ufffd\n\\$x^")


def test_an_empty_run_draws_an_empty_chart() -> None:
    chart = timeline_chart(RunResult(answer="", stop_reason=None))

    assert drawn(chart) == {}
    assert chart._repr_png_().startswith(b"\x89PNG")
