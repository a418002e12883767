"""The ``file_read`` tool: read part of a text file inside one project folder.

Which file may be opened is decided by the path guard
(:mod:`langchain_agent_rules.tools.path_guard`), which verifies the opened descriptor
itself. Reading uses ``pread`` on that descriptor: at most ``max_bytes`` are read, never
the whole file, and the cut never splits a UTF-8 character.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.tools import BaseTool
from langchain_core.tools.base import ArgsSchema
from langchain_core.tools.base import ToolException as _ToolException
from pydantic import BaseModel, Field

from langchain_agent_rules._json_text import compact_json
from langchain_agent_rules.errors import InvalidToolCallError, ToolConfigurationError
from langchain_agent_rules.tools._arguments import parse_arguments, tool_json_schema
from langchain_agent_rules.tools._text import utf8_prefix
from langchain_agent_rules.tools.path_guard import (
    DEFAULT_DENY,
    check_relative_path,
    open_inside_root,
)

__all__ = ["FILE_READ_DESCRIPTION", "FileReadInput", "FileReadTool"]

FILE_READ_DESCRIPTION = (
    "Read a UTF-8 text file of the project, given its path relative to the project folder. "
    "Returns JSON with the content (at most {max_bytes} bytes per call), the file's size "
    "and next_offset: when the file is longer, call again with that offset to read on. "
    "Secrets (.env, keys, .git) are never shown."
)
CUT_MARKER = "\n[showing bytes {start}-{end} of {size}; call again with offset={end} for more]"
BINARY_FILE = (
    "The file {path!r} is binary or not UTF-8 text, so it is not shown. Read text files only."
)
OFFSET_PAST_END = "The offset {offset} is past the end of {path!r}, which has {size} bytes."
MISSING_ROOT = (
    "root_dir {root!r} is not an existing folder; give the folder whose files the tool may read."
)


class FileReadInput(BaseModel):
    """Arguments of the ``file_read`` tool."""

    path: str = Field(description="Path of a text file relative to the project folder.")
    offset: int = Field(
        default=0, ge=0, description="Byte offset to start reading at (from next_offset)."
    )


_ALLOWED = {
    "path": "a string with a path relative to the project folder",
    "offset": "an integer byte offset from 0 (the next_offset of an earlier call)",
}


def _pread_exactly(fd: int, size: int, offset: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = os.pread(fd, remaining, offset + size - remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _skip_partial_character(data: bytes) -> bytes:
    """Drop continuation bytes at the start (an offset inside a character)."""
    start = 0
    while start < min(3, len(data)) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:]


class FileReadTool(BaseTool):
    r"""Read a slice of a UTF-8 text file inside ``root_dir``; secrets are never shown.

    Setup:
        Linux or macOS (the opened file is verified through the kernel).

    Instantiate:
        .. code-block:: python

            from langchain_agent_rules.tools.file_read import FileReadTool

            tool = FileReadTool("/srv/project", max_bytes=8192)

    Invoke:
        .. code-block:: python

            tool.invoke({"path": "src/app.py"})
            # '{"path":"src/app.py","content":"import os\\n...","offset":0,
            #   "size":20480,"next_offset":8190}'
            tool.invoke({"path": "src/app.py", "offset": 8190})

    Output:
        Compact JSON text (what a ``ToolMessage`` carries to the model), with the same
        result as a dict in the message's ``artifact`` (``response_format=
        "content_and_artifact"``, as for every tool of this package).

    Errors:
        Invalid arguments or a refused path raise ``InvalidToolCallError``.
        ``handle_tool_error`` defaults to ``True`` as for all of this package's tools:
        ``invoke`` returns the message (an error ``ToolMessage`` for a tool call) so an
        agent's model reads it; pass ``handle_tool_error=False`` to have ``invoke`` raise.

    Args:
        root_dir: the project folder; nothing outside its real path is ever read.
        max_bytes: the most bytes read and shown per call.
        deny: patterns of files never shown (see ``path_guard.DEFAULT_DENY``); they are
            matched against the requested path and against the real path it leads to.
        **kwargs: other ``BaseTool`` fields (``name``, ``handle_tool_error``, ...).
    """

    name: str = "file_read"
    description: str = ""
    args_schema: ArgsSchema | None = tool_json_schema(FileReadInput)
    handle_tool_error: bool | str | Callable[[_ToolException], str] | None = True
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    root_dir: str
    max_bytes: int = 8192
    deny: tuple[str, ...] = DEFAULT_DENY

    def __init__(
        self,
        root_dir: str | os.PathLike[str],
        max_bytes: int = 8192,
        deny: Sequence[str] = DEFAULT_DENY,
        **kwargs: Any,
    ) -> None:
        if max_bytes < 4:
            raise ToolConfigurationError(
                f"max_bytes must be at least 4 (one UTF-8 character); got {max_bytes}."
            )
        if isinstance(deny, str):
            raise ToolConfigurationError("deny must be a list of patterns, not one string.")
        real_root = os.path.realpath(root_dir)
        if not os.path.isdir(real_root):
            raise ToolConfigurationError(MISSING_ROOT.format(root=str(root_dir)))
        kwargs.setdefault("description", FILE_READ_DESCRIPTION.format(max_bytes=max_bytes))
        super().__init__(root_dir=real_root, max_bytes=max_bytes, deny=tuple(deny), **kwargs)

    def _run(self, *args: Any, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        arguments = parse_arguments(FileReadInput, args, kwargs, self.name, _ALLOWED)
        offset = arguments.offset
        relative = check_relative_path(arguments.path, self.deny)
        fd, status = open_inside_root(relative, self.root_dir, self.deny)
        try:
            size = status.st_size
            if offset > size:
                raise InvalidToolCallError(
                    OFFSET_PAST_END.format(offset=offset, path=relative, size=size)
                )
            data = _pread_exactly(fd, self.max_bytes + 1, offset)
        finally:
            os.close(fd)
        raw = data[: self.max_bytes]
        skipped = len(raw) - len(_skip_partial_character(raw))
        shown = utf8_prefix(data, self.max_bytes)[skipped:]
        if b"\x00" in shown:
            raise InvalidToolCallError(BINARY_FILE.format(path=relative))
        try:
            content = shown.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidToolCallError(BINARY_FILE.format(path=relative)) from None
        start = offset + skipped
        end = start + len(shown)
        more = len(data) > len(shown) + skipped
        if more:
            content += CUT_MARKER.format(start=start, end=end, size=size)
        result: dict[str, Any] = {
            "path": relative,
            "content": content,
            "offset": start,
            "size": size,
            "next_offset": end if more else None,
        }
        return compact_json(result), result
