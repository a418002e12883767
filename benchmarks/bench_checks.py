"""Check engine benchmark: 100 rules with checks against one answer, and the peers.

Run by hand (not in CI):

    python benchmarks/bench_checks.py

Aim from issue 11: 100 rules with checks cost at most 1 ms per answer. The 100 rules mix
every condition: 30 forbid (the seven detectors and patterns), 30 require (half with
``when``), 10 language, 10 max_chars and 20 forbid patterns that revise. Measured in the
same run:

- a plain ``re.search`` loop over the same 60 patterns (no detectors, no language, no
  events): the floor of any pattern-based check;
- LangChain's ``PIIMiddleware`` detectors (email, credit card, IP, MAC, URL) with their
  redaction, when the ``langchain`` extra is installed: fewer, fixed detectors.

Each row is the median of 7 runs of 200 calls; the ratio is against the ``re`` loop.
A last row times the engine on a hostile 1 MB answer (digits, ``@`` and dots), which
must end in bounded time.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable

from langchain_agent_rules.rules.engine import check_answer, check_tool_call
from langchain_agent_rules.rules.model import Rule

SHORT = (
    "Alice Martin placed the largest order: 3 keyboards for 329.00 EUR on 14 March 2026. "
    "Her account is active and she lives in Lyon."
)
LONG = (SHORT + " ") * 10
DETECTORS = ["email", "phone", "credit_card", "iban", "ipv4", "ipv6", "secret"]


def hundred_rules() -> list[Rule]:
    checks: list[dict[str, object]] = []
    for index in range(30):
        if index < len(DETECTORS):
            checks.append({"forbid": DETECTORS[index]})
        else:
            checks.append({"forbid": rf"regex:\bcode{index}-\d{{4}}\b"})
    for index in range(30):
        check: dict[str, object] = {"require": rf"regex:\b(?:EUR|euro{index})\b"}
        if index % 2:
            check["when"] = rf"regex:\d+[.,]\d{{{index % 3 + 1}}}"
        checks.append(check)
    checks += [{"language": "en"}] * 10
    checks += [{"max_chars": 1000 + index} for index in range(10)]
    checks += [
        {"forbid": rf"regex:(?i)\bsecret{index}\b", "on_fail": "revise"} for index in range(20)
    ]
    rules = [
        Rule(
            id=f"rule_{index:03d}",
            type="requirement",
            target="output",
            content=f"Checked rule number {index}.",
            priority=index,
            check=check,
        )
        for index, check in enumerate(checks)
    ]
    rules.append(
        Rule(
            id="no_delete",
            type="constraint",
            target="tool",
            content="Never delete rows.",
            check={"tool": "sql_query", "args": r"regex:(?i)\bdelete\b"},
        )
    )
    return rules


def timed(work: Callable[[], object], calls: int = 200) -> float:
    """Median microseconds per call over 7 runs."""
    work()
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            work()
        runs.append((time.perf_counter() - start) / calls)
    return statistics.median(runs) * 1e6


def re_loop(patterns: list[re.Pattern[str]], text: str) -> Callable[[], object]:
    return lambda: [pattern.search(text) for pattern in patterns]


def pii_middleware(text: str) -> Callable[[], object] | None:
    try:
        from langchain.agents.middleware._redaction import BUILTIN_DETECTORS, apply_strategy
    except ImportError:
        return None

    def run() -> object:
        for detector in BUILTIN_DETECTORS.values():
            matches = detector(text)
            if matches:
                apply_strategy(text, matches, "redact")
        return None

    return run


def main() -> None:
    rules = hundred_rules()
    patterns = [
        re.compile(check[len("regex:") :])
        for rule in rules
        if rule.check is not None
        for check in (rule.check.forbid, rule.check.require)
        if check is not None and check.startswith("regex:")
    ]
    rows = []
    for label, text in (("short answer (130 chars)", SHORT), ("long answer (1.3 KB)", LONG)):
        floor = timed(re_loop(patterns, text))
        engine = timed(lambda text=text: check_answer(rules, text))
        rows.append((f"check_answer, 100 rules, {label}", engine, engine / floor))
        rows.append((f"re.search loop, {len(patterns)} patterns, {label}", floor, 1.0))
        peer = pii_middleware(text)
        if peer is not None:
            cost = timed(peer)
            rows.append((f"PIIMiddleware detectors (5), {label}", cost, cost / floor))
    tool = timed(lambda: check_tool_call(rules, "sql_query", {"query": "SELECT 1"}), 2000)
    rows.append(("check_tool_call, 101 rules", tool, float("nan")))
    hostile = ("1.2.3.4@a.b " * 90_000)[:1_000_000]
    start = time.perf_counter()
    verdict = check_answer(rules, hostile)
    rows.append(
        (
            f"check_answer, hostile 1 MB ({verdict.status})",
            (time.perf_counter() - start) * 1e6,
            float("nan"),
        )
    )
    print("| what | µs per call | ratio to the re loop |")
    print("|---|---:|---:|")
    for what, micros, ratio in rows:
        shown = "" if ratio != ratio else f"{ratio:.1f}x"
        print(f"| {what} | {micros:,.0f} | {shown} |")


if __name__ == "__main__":
    main()
