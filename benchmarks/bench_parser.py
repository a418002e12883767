"""Time of the text-protocol parser on 1 MB replies of JSON records, against JSON peers.

Run by hand: ``python benchmarks/bench_parser.py``. Every figure is measured in this run:
``parse_tool_reply`` (which reads the reply, decides whether it holds a call and decodes
the call's JSON) next to ``json.loads`` of the same records and langchain-core's
``parse_json_markdown`` of the same reply. The aim: each reply parses in under a second,
and the time grows linearly with the reply (the 4x reply takes about 4x as long).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from langchain_core.utils.json import parse_json_markdown

from langchain_agent_rules.text_protocol import parse_tool_reply

MEGABYTE = 1_000_000


def records(size: int) -> str:
    """A JSON array of user records with "name" keys, about ``size`` bytes long."""
    rows: list[str] = []
    total = 2
    index = 0
    while total < size:
        row = json.dumps({"name": f"user {index}", "id": index, "active": index % 3 == 0})
        rows.append(row)
        total += len(row) + 2
        index += 1
    return "[" + ",\n".join(rows) + "]"


def replies(size: int) -> dict[str, tuple[str, str]]:
    """Case name -> (reply, the JSON text inside it)."""
    data = records(size)
    call = json.dumps({"tool": "bulk_import", "args": {"rows": json.loads(data)}})
    return {
        "answer quoting records in a json fence": (
            f"FINAL: Here are the users:\n```json\n{data}\n```",
            data,
        ),
        "answer quoting bare records": (f"The users are {data} as listed.", data),
        "tool call whose args hold the records": (f"```tool\n{call}\n```", call),
    }


def median_seconds(function: Callable[[], Any], repeats: int = 5) -> float:
    function()  # warm up
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    print("| case | reply | parse_tool_reply | json.loads | ratio | parse_json_markdown | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for size in (MEGABYTE // 4, MEGABYTE):
        for case, (reply, data) in replies(size).items():
            ours = median_seconds(lambda reply=reply: parse_tool_reply(reply))
            loads = median_seconds(lambda data=data: json.loads(data))
            markdown = median_seconds(lambda reply=reply: _markdown_or_none(reply))
            print(
                f"| {case} | {len(reply) / MEGABYTE:.2f} MB | {ours * 1000:,.0f} ms | "
                f"{loads * 1000:,.0f} ms | {ours / loads:.1f}x | {markdown * 1000:,.0f} ms | "
                f"{ours / markdown:.1f}x |"
            )
    largest = max(
        median_seconds(lambda reply=reply: parse_tool_reply(reply))
        for reply, _ in replies(MEGABYTE).values()
    )
    verdict = "under" if largest < 1.0 else "OVER"
    print(f"\nSlowest 1 MB reply: {largest * 1000:,.0f} ms ({verdict} one second).")


def _markdown_or_none(reply: str) -> Any:
    try:
        return parse_json_markdown(reply)
    except json.JSONDecodeError:  # the bare-records reply is not one JSON value
        return None


if __name__ == "__main__":
    main()
