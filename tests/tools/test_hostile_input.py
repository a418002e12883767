"""Inputs found by attack tests: each ends as a result or one of our errors, never another one.

Every tool here raises (``handle_tool_error=False``) so the test sees the exact error; with
the default ``handle_tool_error=True`` the same message is the tool's result.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from langchain_agent_rules.errors import InvalidToolCallError
from langchain_agent_rules.tools._arguments import MAX_ARGUMENT_DEPTH
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.http_get import HttpGetTool
from langchain_agent_rules.tools.sql_query import SqlQueryTool

from .conftest import LocalServer


@pytest.fixture(scope="module")
def sql_tool(tmp_path_factory: pytest.TempPathFactory) -> SqlQueryTool:
    path = tmp_path_factory.mktemp("hostile") / "shop.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT)")
    connection.close()
    return SqlQueryTool(f"sqlite:///{path}", handle_tool_error=False)


@pytest.fixture
def file_tool(tmp_path: Path) -> FileReadTool:
    (tmp_path / "notes.txt").write_text("hello\n")
    return FileReadTool(tmp_path, handle_tool_error=False)


def http_tool() -> HttpGetTool:
    return HttpGetTool(
        allowed_hosts=["127.0.0.1"], resolver=lambda host: ["127.0.0.1"], handle_tool_error=False
    )


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": [value]}
    return value


def _refusal(call: Any) -> str:
    with pytest.raises(InvalidToolCallError) as caught:
        call()
    message = str(caught.value)
    message.encode("utf-8")  # an observation is always valid text
    return message


# --- lone surrogates ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql", ["SELECT '\ud800'", 'SELECT 1 AS "\udcff"', "SELECT note FROM orders -- \ud83d"]
)
def test_a_lone_surrogate_in_sql_is_refused(sql_tool: SqlQueryTool, sql: str) -> None:
    message = _refusal(lambda: sql_tool.invoke({"sql": sql}))
    assert message.startswith("invalid sql_query arguments: sql has a lone surrogate (\\u")
    assert message.endswith(", which is not valid text; send plain Unicode text")


def test_a_lone_surrogate_in_a_path_is_refused(file_tool: FileReadTool) -> None:
    message = _refusal(lambda: file_tool.invoke({"path": "notes\ud800.txt"}))
    assert message == (
        "invalid file_read arguments: path has a lone surrogate (\\ud800), which is not "
        "valid text; send plain Unicode text"
    )


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({"url": "http://127.0.0.1/\ud800"}, "url"),
        ({"url": "http://127.0.0.1/", "headers": {"X-Note": "\ud800"}}, "headers.X-Note"),
        ({"url": "http://127.0.0.1/", "headers": {"X-\udc80": "v"}}, "headers.X-\\udc80"),
    ],
)
def test_a_lone_surrogate_in_a_url_or_header_is_refused(
    arguments: dict[str, Any], where: str
) -> None:
    message = _refusal(lambda: http_tool().invoke(arguments))
    assert message.startswith(f"invalid http_get arguments: {where} has a lone surrogate")


# --- deep nesting and huge numbers in arguments --------------------------------------------


# LangChain's BaseTool.run takes str() of the arguments before the tool sees them, which
# Python cannot do past ~1,000 levels; upstream JSON parsers stop well before that.
DEEP = 200


def test_deeply_nested_arguments_are_refused_before_validation(sql_tool: SqlQueryTool) -> None:
    message = _refusal(lambda: sql_tool.invoke({"sql": "SELECT 1", "extra": nested(DEEP)}))
    assert message == (
        f"invalid sql_query arguments: extra nests deeper than {MAX_ARGUMENT_DEPTH} levels; "
        "send flat values"
    )


def test_nesting_just_within_the_bound_reaches_validation(file_tool: FileReadTool) -> None:
    message = _refusal(lambda: file_tool.invoke({"path": nested(MAX_ARGUMENT_DEPTH // 2 - 1)}))
    assert message.startswith("invalid file_read arguments: invalid path {")


@pytest.mark.parametrize("offset", [2**63, -(2**63) - 1, 10**400])
def test_integers_beyond_64_bits_are_refused(file_tool: FileReadTool, offset: int) -> None:
    message = _refusal(lambda: file_tool.invoke({"path": "notes.txt", "offset": offset}))
    assert message == (
        "invalid file_read arguments: offset is outside the 64-bit integer range; send a "
        "smaller number"
    )


def test_the_largest_64_bit_offset_is_past_the_end(file_tool: FileReadTool) -> None:
    message = _refusal(lambda: file_tool.invoke({"path": "notes.txt", "offset": 2**63 - 1}))
    assert message.startswith("The offset 9223372036854775807 is past the end of 'notes.txt'")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"sql": 5},
            "invalid sql_query arguments: invalid sql 5: a string with one read-only SQL "
            "SELECT query",
        ),
        (
            {},
            "invalid sql_query arguments: sql is required: a string with one read-only SQL "
            "SELECT query",
        ),
    ],
)
def test_arguments_of_the_wrong_type_are_tool_errors(
    sql_tool: SqlQueryTool, arguments: dict[str, Any], message: str
) -> None:
    assert _refusal(lambda: sql_tool.invoke(arguments)) == message


def test_a_negative_offset_is_a_tool_error(file_tool: FileReadTool) -> None:
    assert _refusal(lambda: file_tool.invoke({"path": "notes.txt", "offset": -1})) == (
        "invalid file_read arguments: invalid offset -1: an integer byte offset from 0 "
        "(the next_offset of an earlier call)"
    )


def test_with_default_error_handling_hostile_arguments_are_a_result(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    tool = FileReadTool(tmp_path)
    result = tool.invoke({"path": "notes.txt", "offset": nested(DEEP)})
    assert result.startswith("invalid file_read arguments: offset nests deeper than")


# --- header values -----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["café", "日本語", "\u2028"])
def test_a_non_ascii_header_value_is_refused(value: str) -> None:
    message = _refusal(
        lambda: http_tool().invoke({"url": "http://127.0.0.1:1/", "headers": {"X-Note": value}})
    )
    assert message.startswith("The header 'X-Note' is refused: the value has a non-ASCII character")


def test_a_header_name_with_a_trailing_newline_is_refused() -> None:
    message = _refusal(
        lambda: http_tool().invoke({"url": "http://127.0.0.1:1/", "headers": {"X-A\n": "v"}})
    )
    assert message.startswith("The header 'X-A\\n' is refused: the name is not a valid header")


def test_an_ascii_header_value_is_sent(local_server: LocalServer) -> None:
    result = json.loads(
        http_tool().invoke({"url": local_server.url("/headers"), "headers": {"X-Note": "ok"}})
    )
    assert json.loads(result["body"])["x-note"] == "ok"


# --- what a hostile server sends ---------------------------------------------------------


@pytest.mark.parametrize(
    "charset",
    [
        "base64",  # a bytes-to-bytes codec, not a text charset
        "zlib",
        "idna",  # refuses errors="replace"
        "undefined",  # fails on every input
        "punycode",
        "unicode_escape",  # turns the body's \ud800 into a lone surrogate
        "raw_unicode_escape",
        "utf-7",  # +2AA- is a lone surrogate in UTF-7
        "utf-16",
        "no-such-charset",
        "x" * 300,
    ],
)
def test_any_charset_a_server_names_gives_valid_text(
    local_server: LocalServer, charset: str
) -> None:
    result = json.loads(http_tool().invoke({"url": local_server.url(f"/charset?name={charset}")}))
    assert result["status"] == 200
    assert isinstance(result["body"], str) and result["body"]
    result["body"].encode("utf-8")


def test_an_unknown_charset_is_read_as_utf8(local_server: LocalServer) -> None:
    result = json.loads(http_tool().invoke({"url": local_server.url("/charset?name=base64")}))
    assert result["body"] == "café \\ud800 +2AA- \ufffd"


# --- the async path checks the same way ------------------------------------------------------


async def test_ainvoke_refuses_hostile_arguments_like_invoke(
    sql_tool: SqlQueryTool, file_tool: FileReadTool
) -> None:
    for tool, arguments in [
        (sql_tool, {"sql": "SELECT '\ud800'"}),
        (file_tool, {"path": "notes.txt", "offset": 2**64}),
        (http_tool(), {"url": "http://127.0.0.1:1/", "headers": {"X-Note": nested(DEEP)}}),
        (http_tool(), {"url": "http://127.0.0.1:1/", "headers": {"X-Note": "é"}}),
    ]:
        with pytest.raises(InvalidToolCallError) as caught:
            await tool.ainvoke(arguments)
        str(caught.value).encode("utf-8")
