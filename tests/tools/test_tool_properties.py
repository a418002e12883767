"""Property tests: whatever arguments a model sends, a tool answers with a result or our error.

The invariant, for every tool and any argument object (any keys; any JSON values, lone
surrogates, nesting hundreds of levels deep, integers beyond 64 bits, 70 KB strings):
``invoke`` returns the tool's JSON result or raises `InvalidToolCallError` /
`ToolExecutionError` (with the default ``handle_tool_error=True`` that message is the
result), and the text is valid UTF-8. Beside it, each tool's own safety promise holds:
the database file never changes, no secret or outside file is shown, and http_get
connects to nothing but 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_agent_rules.errors import InvalidToolCallError, ToolExecutionError
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.http_get import HttpGetTool
from langchain_agent_rules.tools.path_guard import check_relative_path, denied_by
from langchain_agent_rules.tools.sql_query import SqlQueryTool
from langchain_agent_rules.tools.url_guard import check_url, is_public_address

from .conftest import LocalServer
from .hostile_values import ANY_VALUE, BIG_INTEGERS, arguments, hostile_text

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SECRET = "TOP-SECRET"
HIDDEN_NAMES = [".env", "key.pem", ".git", "to_outside", "to_env", "outside.txt"]


def outcome(call: Callable[[], Any]) -> str:
    """The tool's result or our error's message; any other exception fails the test."""
    try:
        result = call()
    except (InvalidToolCallError, ToolExecutionError) as error:
        text = str(error)
    else:
        assert isinstance(result, str)
        json.loads(result)
        text = result
    text.encode("utf-8")  # valid text: no lone surrogate reaches an observation
    return text


# --- sql_query ---------------------------------------------------------------------------

SQL_WORDS = [
    "SELECT", "FROM", "WHERE", "orders", "id", "note", "*", ",", "(", ")", "'x'", '"id"',
    "1", "9" * 30, "UNION", "WITH", "AS", "CASE", "WHEN", "THEN", "END", "NOT", "-", "AND",
    "LIMIT", "DELETE", "INSERT", "INTO", "VALUES", "UPDATE", "SET", "DROP", "PRAGMA",
    "ATTACH", "'x.db'", ";", "--", "/*", "*/", "/*!", "'", '"', "load_extension", "RETURNING",
    "zeroblob(5)", "randomblob(3)", "\ud800", "\x00", "?", ":name", "%s",
]  # fmt: skip
SELECTS = st.builds(
    "SELECT {} FROM orders WHERE note <> '{}' LIMIT {}".format,
    st.sampled_from(["*", "id", "note", "count(*)", "zeroblob(3)", "note || 'é'", "1e999"]),
    hostile_text(10).map(lambda text: text.replace("'", "''")),
    st.integers() | BIG_INTEGERS,
)
NESTED_SELECTS = st.integers(min_value=0, max_value=80).map(
    lambda depth: "SELECT " + "(" * depth + "1" + ")" * depth
)
SQL_TEXT = st.one_of(
    hostile_text(),
    st.lists(st.sampled_from(SQL_WORDS) | hostile_text(3), max_size=30).map(" ".join),
    SELECTS,
    NESTED_SELECTS,
)


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("properties") / "shop.db"
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT)")
        connection.execute("INSERT INTO orders VALUES (1, 'ok'), (2, 'x')")
    connection.close()
    return path


@pytest.fixture(scope="module")
def sql_tool(database: Path) -> SqlQueryTool:
    return SqlQueryTool(f"sqlite:///{database}", timeout=2.0, handle_tool_error=False)


@PROPERTY
@given(arguments({"sql": SQL_TEXT}))
def test_sql_query_answers_any_arguments_and_never_writes(
    sql_tool: SqlQueryTool, database: Path, args: dict[str, Any]
) -> None:
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    outcome(lambda: sql_tool.invoke(args))
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before


# --- file_read ---------------------------------------------------------------------------

PATH_PARTS = [
    "notes.txt", "sub", "inner.txt", "..", ".", "", ".env", "key.pem", "to_outside",
    "to_env", "binary.bin", "/", "~", "\\", "\x00", "\ud800", "a" * 300, ".git", "config",
]  # fmt: skip
PATHS = st.one_of(
    hostile_text(),
    st.lists(st.sampled_from(PATH_PARTS) | hostile_text(5), min_size=1, max_size=6).map("/".join),
)
OFFSETS = st.one_of(st.integers(), BIG_INTEGERS, ANY_VALUE)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("project")
    root = base / "root"
    (root / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    (base / "outside.txt").write_text(f"{SECRET}: outside the root\n")
    (root / "notes.txt").write_text("héllo wörld 😀\n" * 100)
    (root / "sub" / "inner.txt").write_text("inner\n")
    (root / ".env").write_text(f"{SECRET}=1\n")
    (root / "key.pem").write_text(f"{SECRET} key\n")
    (root / ".git" / "config").write_text(f"{SECRET} token\n")
    (root / "binary.bin").write_bytes(b"\x00\xff" * 100)
    os.symlink(base / "outside.txt", root / "to_outside")
    os.symlink(root / ".env", root / "to_env")
    return root


@PROPERTY
@given(arguments({"path": PATHS, "offset": OFFSETS}))
def test_file_read_answers_any_arguments_and_never_shows_a_secret(
    project: Path, args: dict[str, Any]
) -> None:
    tool = FileReadTool(project, max_bytes=64, handle_tool_error=False)
    text = outcome(lambda: tool.invoke(args))
    assert SECRET not in text
    if " does not exist. " in text:  # what exists nearby: never a secret or an escape
        nearby = text.split(" does not exist. ", 1)[1]
        assert not [name for name in HIDDEN_NAMES if name in nearby]


@PROPERTY
@given(PATHS)
def test_an_admitted_path_is_relative_normalised_and_not_denied(path: str) -> None:
    try:
        relative = check_relative_path(path, ("*.pem", ".env", ".git/"))
    except InvalidToolCallError as error:
        str(error).encode("utf-8")
        return
    parts = relative.split("/")
    assert relative and not relative.startswith(("/", "~"))
    assert ".." not in parts and "." not in parts and "" not in parts
    assert denied_by(relative, ("*.pem", ".env", ".git/")) is None


# --- http_get ----------------------------------------------------------------------------

LOCAL_PATHS = [
    "/json", "/headers", "/text?size=10", "/status/500", "/binary", "/gzip", "/utf8",
    "/charset?name=base64", "/charset?name=utf-7", "/redirect?to=http://10.0.0.1/",
    "/redirect?to=/json", "/bad-redirect", "/nowhere",
]  # fmt: skip
HEADER_NAMES = ["Accept", "X-Note", "Host", "Proxy-X", "Bad Name", "X-A\n", "é"]
HEADERS = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(HEADER_NAMES) | hostile_text(10), hostile_text(), max_size=4),
    ANY_VALUE,
)


@pytest.fixture(scope="module")
def loopback_only() -> HttpGetTool:
    def resolver(host: str) -> list[str]:
        raise AssertionError(f"only 127.0.0.1 is allowed, so {host!r} is never resolved")

    return HttpGetTool(
        allowed_hosts=["127.0.0.1"], resolver=resolver, timeout=2.0, handle_tool_error=False
    )


@PROPERTY
@given(st.data())
def test_http_get_answers_any_arguments_and_connects_only_to_loopback(
    local_server: LocalServer, loopback_only: HttpGetTool, data: st.DataObject
) -> None:
    local_url = st.tuples(st.sampled_from(LOCAL_PATHS), hostile_text(8)).map(
        lambda parts: local_server.url(parts[0]) + parts[1]
    )
    any_url = st.one_of(
        local_url,
        hostile_text(),
        st.tuples(st.sampled_from(["http://", "https://", "ftp://", ""]), hostile_text()).map(
            "".join
        ),
    )
    args = data.draw(arguments({"url": any_url, "headers": HEADERS}))
    outcome(lambda: loopback_only.invoke(args))


# --- the URL guard, a pure function --------------------------------------------------------

ADDRESSES = st.one_of(st.ip_addresses(), st.ip_addresses(v=6).filter(lambda a: a.teredo is None))


@PROPERTY
@given(
    url=st.one_of(
        hostile_text(),
        st.tuples(
            st.sampled_from(["http://", "https://"]),
            st.from_regex(r"[a-z0-9.\[\]:%-]{1,30}", fullmatch=True) | hostile_text(),
            st.sampled_from(["", "/", "/a?b=c", ":8080/", "@x/"]),
        ).map("".join),
    ),
    answer=st.lists(ADDRESSES, max_size=3),
    allowed=st.none() | st.lists(st.sampled_from(["*.example", "a.example", "127.0.0.1"])),
)
def test_check_url_admits_only_public_addresses_unless_a_host_is_listed(
    url: str, answer: list[Any], allowed: list[str] | None
) -> None:
    try:
        checked = check_url(url, allowed, lambda host: [str(a) for a in answer])
    except (InvalidToolCallError, ToolExecutionError) as error:
        str(error).encode("utf-8")
        return
    if allowed is None or checked.host not in allowed:
        assert is_public_address(checked.address)


V4 = st.ip_addresses(v=4)


@PROPERTY
@given(V4)
def test_an_ipv6_form_of_an_ipv4_address_is_judged_by_it(address: ipaddress.IPv4Address) -> None:
    value = int(address)
    mapped = ipaddress.IPv6Address((0xFFFF << 32) | value)
    nat64 = ipaddress.IPv6Address((0x64FF9B << 96) | value)
    sixtofour = ipaddress.IPv6Address((0x2002 << 112) | (value << 80))
    assert is_public_address(mapped) == is_public_address(address)
    assert is_public_address(nat64) == is_public_address(address)
    if not is_public_address(address):
        assert is_public_address(sixtofour) is False
