"""Time per call of sql_query, file_read and http_get against the raw operation, and peak memory.

Run by hand: ``python benchmarks/bench_tools.py``. Every figure is measured in this run; the
ratios compare each tool (guard + limits + LangChain's invoke) with the bare operation it wraps.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import statistics
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.http_get import HttpGetTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool

PAGE = b"<html>" + b"x" * 8000 + b"</html>"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out without a delayed-ACK stall

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/endless":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"z" * 65536)
            except OSError:
                return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass


def per_call_us(
    tool_call: Callable[[], Any], raw_call: Callable[[], Any], calls: int, repeats: int = 7
) -> tuple[float, float]:
    """Median µs per call of both, measured in alternating batches so load hits both alike."""
    timings: dict[Callable[[], Any], list[float]] = {tool_call: [], raw_call: []}
    for function in timings:
        function()  # warm up
    for _ in range(repeats):
        for function, samples in timings.items():
            started = time.perf_counter()
            for _ in range(calls):
                function()
            samples.append((time.perf_counter() - started) / calls)
    return (
        statistics.median(timings[tool_call]) * 1e6,
        statistics.median(timings[raw_call]) * 1e6,
    )


def peak_extra_bytes(function: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - baseline


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-tools-"))
    database = work / "shop.db"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, total REAL)"
        )
        connection.executemany(
            "INSERT INTO orders VALUES (?, ?, ?)", [(i, f"c{i % 97}", i * 1.5) for i in range(5000)]
        )
    raw_connection = sqlite3.connect(database)
    query = "SELECT id, customer, total FROM orders ORDER BY id LIMIT 50"
    sql_tool = SqlQueryTool(f"sqlite:///{database}")

    (work / "notes.txt").write_text("line of project notes\n" * 2000)
    file_tool = FileReadTool(work)

    def raw_read() -> bytes:
        with open(work / "notes.txt", "rb") as handle:
            return handle.read(8192)

    server = _Server(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/page"
    http_tool = HttpGetTool(allowed_hosts=["127.0.0.1"])
    client = httpx.Client()

    rows = [
        (
            "sql_query",
            "sqlite3 execute+fetchall, 50 rows",
            300,
            lambda: sql_tool.invoke({"sql": query}),
            lambda: raw_connection.execute(query).fetchall(),
        ),
        (
            "file_read",
            "open().read(8192)",
            1000,
            lambda: file_tool.invoke({"path": "notes.txt"}),
            raw_read,
        ),
        (
            "http_get",
            "httpx.get (new client per call)",
            30,
            lambda: http_tool.invoke({"url": url}),
            lambda: httpx.get(url),
        ),
        (
            "http_get",
            "httpx.Client.get (reused client)",
            100,
            lambda: http_tool.invoke({"url": url}),
            lambda: client.get(url),
        ),
    ]
    print("| tool | raw operation | tool µs/call | raw µs/call | ratio |")
    print("|---|---|---:|---:|---:|")
    for name, label, calls, tool_call, raw_call in rows:
        tool_us, raw_us = per_call_us(tool_call, raw_call, calls)
        print(f"| {name} | {label} | {tool_us:,.0f} | {raw_us:,.0f} | {tool_us / raw_us:.1f}x |")

    sparse = work / "huge.log"
    with open(sparse, "wb") as handle:
        handle.write(b"log line\n" * 1000)
        handle.truncate(1024**3)
    file_peak = peak_extra_bytes(lambda: file_tool.invoke({"path": "huge.log"}))
    endless = url.replace("/page", "/endless")
    http_peak = peak_extra_bytes(lambda: http_tool.invoke({"url": endless}))
    print()
    print("| case | peak extra memory (tracemalloc) |")
    print("|---|---:|")
    print(f"| file_read, 1 GB sparse file, max_bytes=8192 | {file_peak / 1024:,.0f} KiB |")
    print(f"| http_get, endless local stream, max_bytes=8192 | {http_peak / 1024:,.0f} KiB |")
    server.shutdown()
    client.close()
    os.remove(sparse)


if __name__ == "__main__":
    main()
