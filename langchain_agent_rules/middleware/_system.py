"""Add a section to the system message of a model request, keeping what is already there."""

from __future__ import annotations

from langchain_core.messages import SystemMessage

__all__ = ["SECTION_SEPARATOR", "with_section"]

SECTION_SEPARATOR = "\n\n"


def with_section(system_message: SystemMessage | None, section: str) -> SystemMessage | None:
    """``system_message`` with ``section`` appended (a new message when there was none).

    An empty ``section`` leaves the message as it is. Content given as a list of blocks
    gets one more text block, so provider-specific blocks (cache markers) survive.
    """
    if not section:
        return system_message
    if system_message is None:
        return SystemMessage(content=section)
    content = system_message.content
    if isinstance(content, str):
        joined = f"{content}{SECTION_SEPARATOR}{section}" if content else section
        return system_message.model_copy(update={"content": joined})
    return system_message.model_copy(
        update={"content": [*content, {"type": "text", "text": section}]}
    )
