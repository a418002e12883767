"""The display helpers show what a run did: rows, statuses, rule events and a chart."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

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
from langchain_agent_rules.display import MATPLOTLIB_MISSING
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
    decisions = iter(["approve", {"action": "reject", "reason": "not today"}])
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
    store = JsonFileRuleStore(tmp_path / "rules.json")
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


def boxes(chart: Any) -> list[tuple[str, str]]:
    """Each bar's label and colour, in the order they were drawn."""
    axes = chart.figure.axes[0]
    labels = [text.get_text() for text in axes.texts]
    colours = [to_hex(patch.get_facecolor()) for patch in axes.patches]
    return list(zip(labels, colours, strict=True))


def test_the_timeline_has_a_box_per_model_turn_tool_call_and_answer() -> None:
    chart = timeline_chart(mixed_run())

    shown = [(label.split("\n")[:2], colour) for label, colour in boxes(chart)]

    assert shown == [
        (["turn 1"], GREY),
        (["1 sql_query", "ok"], GREEN),
        (["2 convert", "error"], RED),
        (["3 nope", "unknown_tool"], RED),
        (["turn 2"], GREY),
        (["4 convert", "ok"], GREEN),
        (["turn 3"], GREY),
        (["5 convert", "repeated"], AMBER),
        (["answer"], GREY),
    ]
    assert chart.summary == "4 model calls, 5 tool calls, stop: repeated_calls"
    assert chart.figure.axes[0].get_title(loc="left") == chart.summary
    assert repr(chart) == f"<TimelineChart: {chart.summary}>"


def test_the_timeline_is_a_png_in_jupyter() -> None:
    png = timeline_chart(mixed_run())._repr_png_()

    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_a_run_that_hit_its_limit_has_no_answer_box_and_says_why_it_stopped() -> None:
    model = ScriptedChatModel([calls(TO_CHF)])
    agent = RulesAgent(model, tools=[convert], max_iterations=1, on_limit="end")

    chart = timeline_chart(agent.invoke("x"))

    assert [label.split("\n")[0] for label, _ in boxes(chart)] == ["turn 1", "1 convert"]
    assert chart.summary == "1 model call, 1 tool call, stop: max_iterations"


def test_the_answer_box_shows_the_model_calls_a_revision_took_and_the_rules() -> None:
    model = ScriptedChatModel(
        [calls(TO_CHF), "FINAL: That is 9.40 in Swiss francs.", "That is 10.00 EUR."]
    )
    result = RulesAgent(model, tools=[convert], rules=InMemoryRuleStore([EUR])).invoke("x")

    chart = timeline_chart(result)

    assert result.answer == "That is 10.00 EUR."
    assert boxes(chart)[-1] == ("answer\n2 calls\nrule: revised", GREY)
    assert "rule" not in boxes(chart)[1][0]


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


def test_names_and_statuses_that_look_like_markup_still_draw() -> None:
    step = {
        "step": 1,
        "iteration": 1,
        "tool": "$\\frac{1}{$ \x00 \ud800",
        "args": {},
        "observation": "",
        "status": "$x^",
        "duration_ms": 1.0,
        "truncated": False,
        "error": None,
        "approval": None,
        "rule_events": [{"rule_id": "r", "status": "$bad{", "detail": ""}],
    }
    run = RunResult(answer="", stop_reason="final", trace=[step])  # type: ignore[list-item]

    chart = timeline_chart(run)

    assert chart._repr_png_().startswith(b"\x89PNG")
    assert boxes(chart)[1][0].startswith("1 \\$\\frac{1}{\\$ \ufffd \ufffd\n\\$x^")
