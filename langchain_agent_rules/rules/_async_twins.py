"""Async twins for a store whose work is synchronous: each runs its sync method in a thread."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from langchain_agent_rules.rules.model import Rule

__all__ = ["ThreadedAsyncTwins"]


class ThreadedAsyncTwins:
    """``aget_all_by_project``, ``aget_all``, ``aget``, ``acreate``, ``aupdate``, ``adelete``.

    Mixed into a store that defines the sync methods; the event loop never waits on a lock,
    a file or a database.
    """

    if TYPE_CHECKING:  # the sync methods the store defines

        def get_all_by_project(self, project_id: int | None) -> list[Rule]: ...
        def get_all(self) -> list[Rule]: ...
        def get(self, rule_id: str) -> Rule: ...
        def create(self, rule: Rule) -> Rule: ...
        def update(self, rule: Rule) -> Rule: ...
        def delete(self, rule_id: str) -> Rule: ...

    async def aget_all_by_project(self, project_id: int | None) -> list[Rule]:
        """Async `get_all_by_project`."""
        return await asyncio.to_thread(self.get_all_by_project, project_id)

    async def aget_all(self) -> list[Rule]:
        """Async `get_all`."""
        return await asyncio.to_thread(self.get_all)

    async def aget(self, rule_id: str) -> Rule:
        """Async `get`."""
        return await asyncio.to_thread(self.get, rule_id)

    async def acreate(self, rule: Rule) -> Rule:
        """Async `create`."""
        return await asyncio.to_thread(self.create, rule)

    async def aupdate(self, rule: Rule) -> Rule:
        """Async `update`."""
        return await asyncio.to_thread(self.update, rule)

    async def adelete(self, rule_id: str) -> Rule:
        """Async `delete`."""
        return await asyncio.to_thread(self.delete, rule_id)
