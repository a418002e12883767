"""Side by side: our three tools against langchain-community's SQL, requests and file tools.

Run by hand; langchain-community is not a dependency of this package:

    pip install langchain-community aiohttp requests
    python benchmarks/compare_community_tools.py

Everything runs on this machine: a throwaway SQLite file, a throwaway folder and an HTTP
server on 127.0.0.1. Each row gives what each tool did with the same input, measured in
this run.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.http_get import HttpGetTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool

warnings.filterwarnings("ignore", category=DeprecationWarning)

ROWS = 500
BIG_BODY = b"x" * 1_000_000
SLOW_SECONDS = 3.0


def outcome(call: Callable[[], Any]) -> tuple[str, int, float]:
    """What a tool call gave the model: a short description, its size in bytes, seconds."""
    started = time.perf_counter()
    try:
        result = call()
        text = result if isinstance(result, str) else repr(result)
        kind = "returned"
    except Exception as error:
        text = f"{type(error).__name__}: {error}"
        kind = "raised"
    seconds = time.perf_counter() - started
    size = len(text.encode("utf-8"))
    return f"{kind} {text[:60]!r}", size, seconds


def row(case: str, theirs: tuple[str, int, float], ours: tuple[str, int, float]) -> None:
    print(f"\n{case}")
    for who, (what, size, seconds) in (("community", theirs), ("ours", ours)):
        print(f"  {who:10} {size:>9} bytes {seconds:6.2f} s  {what}")


def shop_database(folder: Path) -> Path:
    path = folder / f"shop-{time.perf_counter_ns()}.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT)")
    connection.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [(i, f"Customer {i}", f"customer{i}@example.com") for i in range(ROWS)],
    )
    connection.commit()
    connection.close()
    return path


def count_rows(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        return str(connection.execute("SELECT COUNT(*) FROM customers").fetchone()[0])
    except sqlite3.Error as error:
        return f"table gone ({error})"
    finally:
        connection.close()


def compare_sql(folder: Path) -> None:
    from langchain_community.tools.sql_database.tool import QuerySQLDatabaseTool
    from langchain_community.utilities.sql_database import SQLDatabase

    print("\n== SQL: QuerySQLDatabaseTool against sql_query")
    for statement in ("DELETE FROM customers", "DROP TABLE customers"):
        theirs_db, ours_db = shop_database(folder), shop_database(folder)
        theirs_tool = QuerySQLDatabaseTool(db=SQLDatabase.from_uri(f"sqlite:///{theirs_db}"))
        ours_tool = SqlQueryTool(f"sqlite:///{ours_db}")
        theirs = outcome(lambda t=theirs_tool, s=statement: t.invoke({"query": s}))
        ours = outcome(lambda t=ours_tool, s=statement: t.invoke({"sql": s}))
        row(statement, theirs, ours)
        print(f"  rows left: community {count_rows(theirs_db)}, ours {count_rows(ours_db)}")
    database = shop_database(folder)
    theirs_tool = QuerySQLDatabaseTool(db=SQLDatabase.from_uri(f"sqlite:///{database}"))
    ours_tool = SqlQueryTool(f"sqlite:///{database}")
    select = "SELECT * FROM customers"
    row(
        f"{select} ({ROWS} rows)",
        outcome(lambda: theirs_tool.invoke({"query": select})),
        outcome(lambda: ours_tool.invoke({"sql": select})),
    )


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(SLOW_SECONDS)
        body = BIG_BODY if self.path == "/big" else b"ok"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def loopback_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def compare_http() -> None:
    from langchain_community.tools.requests.tool import RequestsGetTool
    from langchain_community.utilities.requests import TextRequestsWrapper

    print("\n== HTTP: RequestsGetTool against http_get")
    theirs_tool = RequestsGetTool(
        requests_wrapper=TextRequestsWrapper(), allow_dangerous_requests=True
    )
    no_allow_list = HttpGetTool()
    loopback_allowed = HttpGetTool(allowed_hosts=["127.0.0.1"], timeout=1.0)
    with loopback_server() as base:
        row(
            "GET a loopback address, no allow-list (SSRF)",
            outcome(lambda: theirs_tool.invoke(f"{base}/")),
            outcome(lambda: no_allow_list.invoke({"url": f"{base}/"})),
        )
        row(
            "GET a 1 MB body (ours: 127.0.0.1 allowed by name)",
            outcome(lambda: theirs_tool.invoke(f"{base}/big")),
            outcome(lambda: loopback_allowed.invoke({"url": f"{base}/big"})),
        )
        row(
            f"GET an endpoint that answers after {SLOW_SECONDS:g} s (ours: timeout=1)",
            outcome(lambda: theirs_tool.invoke(f"{base}/slow")),
            outcome(lambda: loopback_allowed.invoke({"url": f"{base}/slow"})),
        )


def compare_files(folder: Path) -> None:
    from langchain_community.tools.file_management.read import ReadFileTool

    print("\n== Files: ReadFileTool against file_read")
    root = folder / "project"
    root.mkdir()
    (root / "big.txt").write_text("y" * 2_000_000)
    (root / ".env").write_text("DATABASE_PASSWORD=hunter2\n")
    outside = folder / "outside-secret.txt"
    outside.write_text("not for the model\n")
    os.symlink(outside, root / "link.txt")
    ours = FileReadTool(root)
    row(
        "an absolute path outside the project (community: root_dir=None, the default)",
        outcome(lambda: ReadFileTool().invoke({"file_path": str(outside)})),
        outcome(lambda: ours.invoke({"path": str(outside)})),
    )
    rooted = ReadFileTool(root_dir=str(root))
    for path, case in (
        ("link.txt", "a symlink inside the root that leads out of it"),
        (".env", "a secrets file inside the root"),
        ("big.txt", "a 2 MB text file"),
    ):
        row(
            f"{case} (community: root_dir set)",
            outcome(lambda p=path: rooted.invoke({"file_path": p})),
            outcome(lambda p=path: ours.invoke({"path": p})),
        )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        compare_sql(Path(scratch))
        compare_http()
        compare_files(Path(scratch))
