"""Show a run in a notebook or a terminal: its trace, its rule events and a timeline.

Example:
    .. code-block:: python

        from langchain_agent_rules import rule_events_table, timeline_chart, trace_table

        result = agent.invoke("How many active customers do we have?")
        trace_table(result)  # one row per tool call
        rule_events_table(result)  # what the rules' checks did, and where
        timeline_chart(result)  # model calls and tool calls in time (the notebooks extra)

In Jupyter each one shows itself (an HTML table, a PNG chart); in a terminal ``print()``
the tables. `timeline_chart` needs matplotlib: ``pip install
"langchain-agent-rules[notebooks]"``.
"""

from langchain_agent_rules.display.tables import (
    RULE_STATUS_STYLES,
    RunTable,
    rule_events_table,
    trace_table,
)
from langchain_agent_rules.display.timeline import (
    MATPLOTLIB_MISSING,
    ORDER_AXIS_LABEL,
    PURPOSE_COLOURS,
    TIME_AXIS_LABEL,
    TimelineChart,
    timeline_chart,
)

__all__ = [
    "MATPLOTLIB_MISSING",
    "ORDER_AXIS_LABEL",
    "PURPOSE_COLOURS",
    "RULE_STATUS_STYLES",
    "TIME_AXIS_LABEL",
    "RunTable",
    "TimelineChart",
    "rule_events_table",
    "timeline_chart",
    "trace_table",
]
