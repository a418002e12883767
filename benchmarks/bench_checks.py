"""Check engine benchmark: 100 rules with checks against one answer, and the peers.

Run by hand (not in CI):

    python benchmarks/bench_checks.py

Aim from issues 11 and 17: 100 rules with checks cost at most 1 ms per short answer, the
normalised view included. The 100 rules mix every condition: 30 forbid (the seven
detectors and patterns), 30 require (half with ``when``), 10 language, 10 max_chars and
20 forbid patterns that revise. Measured in the same run:

- a plain ``re.search`` loop over the same 73 patterns (no detectors, no language, no
  events, no normalisation): the floor of any pattern-based check;
- LangChain's ``PIIMiddleware`` detectors (email, credit card, IP, MAC, URL) with their
  redaction, when the ``langchain`` extra is installed: fewer, fixed detectors.

Each row is the median of 7 runs of 200 calls; the ratio is against the ``re`` loop on
the same text. The short answer comes plain (ASCII: its own view) and in French
typography (no-break spaces, an accent, a zero-width space: the view is built and every
detector and pattern searches it too). Then ``normalize`` alone, a tool call whose SQL
spans lines, and the worst cases, each timed once: the engine on hostile megabytes
(every one must end in bounded time: the size bound, the 1 s budget and the phone
detector's stretch limit hold them), the view of each, the slowest phone stretch the
detector accepts, and the built-in detectors on the worst texts we know of
``UNTIMED_TEXT_CHARS`` characters, where they run without the regex timeout.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from contextlib import suppress

from langchain_agent_rules.rules.check import Detector, parse_detector
from langchain_agent_rules.rules.detectors import (
    MAX_PHONE_STRETCH_CHARS,
    UNTIMED_TEXT_CHARS,
    IncompleteScan,
    find_spans,
)
from langchain_agent_rules.rules.engine import check_answer, check_tool_call
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.normalized import normalize

SHORT = (
    "Alice Martin placed the largest order: 3 keyboards for 329.00 EUR on 14 March 2026. "
    "Her account is active and she lives in Lyon."
)
LONG = (SHORT + " ") * 10
FRENCH = (
    "Alice Martin a passé la plus grosse commande\u00a0: 3 claviers pour 329,00\u00a0EUR le "
    "14 mars 2026. Son compte est actif et elle habite à Lyon.\u200b"
)
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


# Repeated units that make the built-in patterns work hardest (many starts, long runs).
HOSTILE_UNITS = [
    "eyJ-",
    "eyJ" + "a" * 4090,
    "-----BEGIN RSA PRIVATE KEY-----",
    "a.",
    "a@",
    "a" * 63 + "@b" + ".c" * 9,
    "1 ",
    "1-",
    "DE12 ",
    "1.1.",
    "1:",
    "a:",
    "1",
    "1.2.3.4@a.b ",
    "sk-",
    "ghp_a",
    "xoxb-",
]


def worst_untimed_detector() -> tuple[str, float]:
    """The slowest pattern detector on the hostile texts of UNTIMED_TEXT_CHARS, in µs.

    ``phone`` is left out: libphonenumber has its own deadline, not the regex timeout.
    """
    worst = ("", 0.0)
    for name in DETECTORS:
        if name == "phone":
            continue
        detector = parse_detector(name)
        for unit in HOSTILE_UNITS:
            text = (unit * (UNTIMED_TEXT_CHARS // len(unit) + 1))[:UNTIMED_TEXT_CHARS]
            start = time.perf_counter()
            find_spans(detector, text, 10.0)
            took = (time.perf_counter() - start) * 1e6
            if took > worst[1]:
                worst = (f"{name} on {unit[:12]!r}...", took)
    return worst


# Hostile megabytes: each unit repeated to 1,000,000 characters.
HOSTILE_MEGABYTES = {
    "digits, @ and dots": "1.2.3.4@a.b ",
    "zero-width spaces between letters": "a\u200b",
    "no-break spaces": "a\u00a0",
    "fullwidth digits": "\uff11",
    "decomposed accents": "e\u0301",
    "ligatures": "\ufb01",
    "Latin words with Cyrillic letters": "\u0440\u0430ypal ",
    "phone decoys": "1234567 ",
    "phone decoys cut by letters": "12 34 56 78 b",
    "card groups": "4111 1111 1111 1111 ",
    "every code point, in order": "".join(
        chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000
    ),
    "letters and combining marks": "".join(chr(code) for code in range(0x41, 0x370)),
}
# The phone stretches that cost libphonenumber most per character, at the stretch limit.
PHONE_STRETCH_UNITS = ["1/1 ", "1 ", "+1 1 ", "0" * 40 + " ", "1 ext 1 ", "(1) "]


def megabyte(unit: str) -> str:
    return (unit * (1_000_000 // len(unit) + 1))[:1_000_000]


def once(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1e6


def view_and_map(text: str) -> None:
    view = normalize(text)
    view.original_span(len(view.text) // 2, len(view.text) // 2 + 1)  # builds the map


def worst_phone_stretch() -> tuple[str, float]:
    """The slowest stretch the phone detector reads whole (or gives up on), in µs."""
    worst = ("", 0.0)
    for region in ("phone", "phone:DE"):
        detector = parse_detector(region)
        for unit in PHONE_STRETCH_UNITS:
            text = (unit * (MAX_PHONE_STRETCH_CHARS // len(unit) + 1))[:MAX_PHONE_STRETCH_CHARS]

            def scan(text: str = text, detector: Detector = detector) -> None:
                with suppress(IncompleteScan):
                    find_spans(detector, text, 10.0)

            took = once(scan)
            if took > worst[1]:
                worst = (f"{region} on {unit[:8]!r}...", took)
    return worst


def main() -> None:
    rules = hundred_rules()
    patterns = [
        re.compile(check[len("regex:") :])
        for rule in rules
        if rule.check is not None
        for check in (rule.check.forbid, rule.check.require)
        if check is not None and check.startswith("regex:")
    ]
    nan = float("nan")
    rows = []
    answers = (
        ("short answer (130 chars)", SHORT),
        ("short answer in French typography (150 chars, its view differs)", FRENCH),
        ("long answer (1.3 KB)", LONG),
    )
    floors = {}
    for label, text in answers:
        floor = floors[text] = timed(re_loop(patterns, text))
        engine = timed(lambda text=text: check_answer(rules, text))
        rows.append((f"check_answer, 100 rules, {label}", engine, engine / floor))
        rows.append((f"re.search loop, {len(patterns)} patterns, {label}", floor, 1.0))
        peer = pii_middleware(text)
        if peer is not None:
            cost = timed(peer)
            rows.append((f"PIIMiddleware detectors (5), {label}", cost, cost / floor))
    for label, text in (("short answer", SHORT), ("French short answer", FRENCH)):
        cost = timed(lambda text=text: normalize(text), 2000)
        rows.append((f"normalize alone, {label}", cost, cost / floors[text]))
    tool = timed(lambda: check_tool_call(rules, "sql_query", {"query": "SELECT 1"}), 2000)
    rows.append(("check_tool_call, 101 rules", tool, nan))
    multiline = {"query": "SELECT name,\n       total\nFROM orders\nWHERE total > 100"}
    tool = timed(lambda: check_tool_call(rules, "sql_query", multiline), 2000)
    rows.append(("check_tool_call, 101 rules, SQL over 4 lines", tool, nan))
    worst_engine = ("", 0.0)
    for label, unit in HOSTILE_MEGABYTES.items():
        text = megabyte(unit)
        view = once(lambda text=text: view_and_map(text))
        start = time.perf_counter()
        verdict = check_answer(rules, text)
        took = (time.perf_counter() - start) * 1e6
        rows.append(
            (f"check_answer, 100 rules, hostile 1 MB of {label} ({verdict.status})", took, nan)
        )
        rows.append((f"normalize and map back, hostile 1 MB of {label}", view, nan))
        worst_engine = max(worst_engine, (label, took), key=lambda row: row[1])
    rows.append(
        (f"worst case: check_answer, 100 rules, 1 MB of {worst_engine[0]}", worst_engine[1], nan)
    )
    which, took = worst_phone_stretch()
    rows.append((f"worst phone stretch, {MAX_PHONE_STRETCH_CHARS:,} chars ({which})", took, nan))
    which, took = worst_untimed_detector()
    rows.append(
        (f"worst built-in detector, {UNTIMED_TEXT_CHARS} hostile chars ({which})", took, nan)
    )
    print("| what | µs per call | ratio to the re loop |")
    print("|---|---:|---:|")
    for what, micros, ratio in rows:
        shown = "" if ratio != ratio else f"{ratio:.1f}x"
        print(f"| {what} | {micros:,.0f} | {shown} |")


if __name__ == "__main__":
    main()
