from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_agent_rules.errors import InvalidToolCallError, ToolConfigurationError
from langchain_agent_rules.tools.file_read import (
    BINARY_FILE,
    CUT_MARKER,
    FILE_READ_DESCRIPTION,
    OFFSET_PAST_END,
    FileReadTool,
)

from .file_tree import MAIN_PY, build_tree

LONG_TEXT = "héllo wörld 😀 ünïcödé €uro\n" * 50
SHORT_TEXT = "héllo wörld 😀 ünïcödé €uro\n" * 3


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = build_tree(tmp_path)
    (root / "long.txt").write_text(LONG_TEXT, encoding="utf-8")
    (root / "short.txt").write_text(SHORT_TEXT, encoding="utf-8")
    return root


def make_tool(root: Path, **kwargs: Any) -> FileReadTool:
    return FileReadTool(root, handle_tool_error=False, **kwargs)


def test_name_is_file_read(root: Path) -> None:
    assert make_tool(root).name == "file_read"


def test_a_small_file_is_read_whole(root: Path) -> None:
    assert json.loads(make_tool(root).invoke({"path": "src/main.py"})) == {
        "path": "src/main.py",
        "content": MAIN_PY,
        "offset": 0,
        "size": len(MAIN_PY.encode()),
        "next_offset": None,
    }


def test_a_long_file_is_cut_with_a_marker(root: Path) -> None:
    result = json.loads(make_tool(root, max_bytes=100).invoke({"path": "long.txt"}))
    size = len(LONG_TEXT.encode())
    end = result["next_offset"]
    assert 96 < end <= 100
    assert result["content"].endswith(CUT_MARKER.format(start=0, end=end, size=size))
    assert CUT_MARKER.format(start=0, end=98, size=1500) == (
        "\n[showing bytes 0-98 of 1500; call again with offset=98 for more]"
    )


@pytest.mark.parametrize("max_bytes", [4, 5, 7, 64, 100, 1000])
def test_paging_with_next_offset_returns_the_whole_file(root: Path, max_bytes: int) -> None:
    tool = make_tool(root, max_bytes=max_bytes)
    pieces: list[str] = []
    offset: int | None = 0
    while offset is not None:
        result = json.loads(tool.invoke({"path": "short.txt", "offset": offset}))
        text = result["content"]
        if result["next_offset"] is not None:
            marker = CUT_MARKER.format(
                start=result["offset"], end=result["next_offset"], size=result["size"]
            )
            assert text.endswith(marker)
            text = text[: -len(marker)]
        assert len(text.encode()) <= max_bytes
        pieces.append(text)
        offset = result["next_offset"]
    assert "".join(pieces) == SHORT_TEXT


def test_an_offset_inside_a_character_starts_at_the_next_one(root: Path) -> None:
    result = json.loads(make_tool(root).invoke({"path": "long.txt", "offset": 2}))  # inside "é"
    assert result["offset"] == 3
    assert result["content"].startswith("llo")


def test_an_offset_past_the_end_is_refused(root: Path) -> None:
    size = len(LONG_TEXT.encode())
    with pytest.raises(InvalidToolCallError) as caught:
        make_tool(root).invoke({"path": "long.txt", "offset": size + 1})
    assert str(caught.value) == OFFSET_PAST_END.format(offset=size + 1, path="long.txt", size=size)


def test_an_offset_at_the_end_gives_empty_content(root: Path) -> None:
    size = len(LONG_TEXT.encode())
    result = json.loads(make_tool(root).invoke({"path": "long.txt", "offset": size}))
    assert (result["content"], result["next_offset"]) == ("", None)


def test_a_huge_sparse_file_reads_only_the_first_bytes(root: Path) -> None:
    path = root / "huge.log"
    with open(path, "wb") as handle:
        handle.write(b"line\n" * 2000)
        handle.truncate(1024**3)
    result = json.loads(make_tool(root, max_bytes=8192).invoke({"path": "huge.log"}))
    assert result["size"] == 1024**3
    assert result["next_offset"] == 8192
    assert result["content"].startswith("line\nline\n")


@pytest.mark.parametrize("path", ["bin.dat", "latin1.txt"])
def test_binary_and_non_utf8_files_are_refused(root: Path, path: str) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        make_tool(root).invoke({"path": path})
    assert str(caught.value) == BINARY_FILE.format(path=path)
    assert str(caught.value) == (
        f"The file {path!r} is binary or not UTF-8 text, so it is not shown. Read text files only."
    )


def test_a_missing_file_says_so(root: Path) -> None:
    with pytest.raises(InvalidToolCallError, match=re.escape("'nope.txt' does not exist")):
        make_tool(root).invoke({"path": "nope.txt"})


def test_a_directory_is_refused(root: Path) -> None:
    with pytest.raises(InvalidToolCallError, match="it is a directory, not a regular file"):
        make_tool(root).invoke({"path": "src"})


def test_a_fifo_is_refused_without_blocking(root: Path) -> None:
    with pytest.raises(InvalidToolCallError, match="it is a FIFO, not a regular file"):
        make_tool(root).invoke({"path": "fifo"})


def test_the_deny_list_is_configurable(root: Path) -> None:
    tool = make_tool(root, deny=["*.md"])
    with pytest.raises(InvalidToolCallError, match=re.escape("deny pattern '*.md'")):
        tool.invoke({"path": "README.md"})
    assert json.loads(tool.invoke({"path": ".env"}))["content"] == "PASSWORD=hunter2\n"


def test_a_refusal_is_an_error_tool_message_by_default(root: Path) -> None:
    message = FileReadTool(root).invoke(
        {"type": "tool_call", "id": "c1", "name": "file_read", "args": {"path": ".env"}}
    )
    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    assert "which protects secrets" in message.text


def test_a_result_tool_message_carries_compact_json_and_the_dict(root: Path) -> None:
    message = FileReadTool(root).invoke(
        {"type": "tool_call", "id": "c1", "name": "file_read", "args": {"path": "src/main.py"}}
    )
    assert isinstance(message, ToolMessage)
    assert message.artifact["content"] == MAIN_PY
    assert message.text == json.dumps(message.artifact, ensure_ascii=False, separators=(",", ":"))
    assert "héllo wörld 😀" in message.text


def test_description_names_the_limit(root: Path) -> None:
    assert make_tool(root).description == FILE_READ_DESCRIPTION.format(max_bytes=8192)
    assert make_tool(root).description == (
        "Read a UTF-8 text file of the project, given its path relative to the project folder. "
        "Returns JSON with the content (at most 8192 bytes per call), the file's size and "
        "next_offset: when the file is longer, call again with that offset to read on. "
        "Secrets (.env, keys, .git) are never shown."
    )


async def test_ainvoke_reads_and_refuses(root: Path) -> None:
    tool = make_tool(root)
    assert (json.loads(await tool.ainvoke({"path": "src/main.py"})))["content"] == MAIN_PY
    with pytest.raises(InvalidToolCallError):
        await tool.ainvoke({"path": "../outside/secret.txt"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"root_dir": "/does/not/exist"}, "is not an existing folder"),
        ({"max_bytes": 3}, "max_bytes must be at least 4"),
        ({"deny": ".env"}, "deny must be a list of patterns"),
    ],
)
def test_bad_options_are_configuration_errors(
    root: Path, kwargs: dict[str, Any], message: str
) -> None:
    options: dict[str, Any] = {"root_dir": root, **kwargs}
    with pytest.raises(ToolConfigurationError, match=message):
        FileReadTool(**options)


def test_a_missing_root_is_refused_word_for_word(tmp_path: Path) -> None:
    with pytest.raises(ToolConfigurationError) as caught:
        FileReadTool(tmp_path / "nope")

    assert str(caught.value) == (
        f"root_dir '{tmp_path / 'nope'}' is not an existing folder; give the folder whose "
        "files the tool may read."
    )


def test_a_file_as_root_is_a_configuration_error(root: Path) -> None:
    with pytest.raises(ToolConfigurationError):
        FileReadTool(root / "README.md")


class TestFileReadToolStandard(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return FileReadTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"root_dir": os.path.dirname(__file__)}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"path": "conftest.py", "offset": 0}
