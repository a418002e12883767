"""`LangGraphRuleStore`: rules kept in any LangGraph `BaseStore`.

Works with `InMemoryStore`, the SQLite and Postgres stores, and the store LangGraph
Platform / Studio injects into a graph. Each rule is one item under ``namespace`` with
the rule id as key and the adachsoft camelCase record as value, so ids are unique
across the whole store.

Two traps of `BaseStore` are handled here: ``search`` returns 10 items unless told
otherwise (this store pages through every item), and namespace labels may not contain
``.`` (checked at construction).

The sync methods are the `RuleStore` protocol plus ``get_all``. The async twins
(``aget_all_by_project``, ``aget_all``, ``aget``, ``acreate``, ``aupdate``,
``adelete``) use the store's async API so an agent running on an event loop does not
block it; the agent calls ``aget_all_by_project`` when a reader has it. A store without
an async API (the sync ``SqliteStore``) is run in a worker thread instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, Item

from langchain_agent_rules.errors import (
    DuplicateRuleError,
    RuleNotFoundError,
    RuleStoreError,
    RuleValidationError,
)
from langchain_agent_rules.rules._records import rule_from_record, rule_to_record
from langchain_agent_rules.rules.limits import AgentRuleToolConfig, check_rule_limits, limits_config
from langchain_agent_rules.rules.model import Rule, is_valid_rule_id, shown_id, utc_now

__all__ = ["DEFAULT_RULE_NAMESPACE", "LangGraphRuleStore"]

DEFAULT_RULE_NAMESPACE: tuple[str, ...] = ("agent_rules",)
_PAGE_SIZE = 10_000
_NO_TIME = datetime.min.replace(tzinfo=UTC)

_T = TypeVar("_T")


class LangGraphRuleStore:
    """A rule store on top of a LangGraph `BaseStore`.

    Rules come back in a stable order: by ``created_at``, then by id.

    Example:
        .. code-block:: python

            from langgraph.store.memory import InMemoryStore

            rules = LangGraphRuleStore(InMemoryStore())
            rules.create(Rule(id="be_brief", type="guideline", target="output",
                              content="Keep answers under five sentences."))
            await rules.aget_all_by_project(7)

    ``limits`` (an `AgentRuleToolConfig` or its keys; the defaults when omitted) are
    checked on every write: a rule that alone breaks one raises `RuleValidationError`
    before the store is touched.
    """

    def __init__(
        self,
        store: BaseStore,
        namespace: tuple[str, ...] = DEFAULT_RULE_NAMESPACE,
        *,
        limits: AgentRuleToolConfig | Mapping[str, Any] | None = None,
    ) -> None:
        self._limits = limits_config(limits)
        if not isinstance(store, BaseStore):
            raise RuleStoreError(
                f"LangGraphRuleStore needs a langgraph BaseStore, got {type(store).__name__}"
            )
        _check_namespace(namespace)
        self._store = store
        self._namespace = tuple(namespace)
        # key -> (the record it was parsed from, the rule); a read parses changed items only.
        self._parsed: dict[str, tuple[dict[str, Any], Rule]] = {}

    @property
    def namespace(self) -> tuple[str, ...]:
        """The namespace that holds the rules."""
        return self._namespace

    # -- sync: the RuleStore protocol ------------------------------------------------

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        """Return the global rules plus, when ``project_id`` is set, that project's rules."""
        return _in_scope(self.get_all(), project_id)

    def get_all(self) -> list[Rule]:
        """Return every rule: the global ones and those of every project."""
        items: list[Item] = []
        with self._reading():
            while True:
                page = self._store.search(self._namespace, limit=_PAGE_SIZE, offset=len(items))
                items.extend(page)
                if len(page) < _PAGE_SIZE:
                    return self._rules_of(items)

    def get(self, rule_id: str) -> Rule:
        """Return the rule with ``rule_id`` or raise `RuleNotFoundError`."""
        _known_shape(rule_id)
        with self._reading():
            return self._found(rule_id, self._store.get(self._namespace, rule_id))

    def create(self, rule: Rule) -> Rule:
        """Store a new rule; raise `DuplicateRuleError` if its id exists."""
        check_rule_limits(rule, self._limits)
        if self._store.get(self._namespace, rule.id) is not None:
            raise DuplicateRuleError(f"a rule with id {rule.id!r} already exists")
        stored = _stamp_new(rule)
        self._store.put(self._namespace, rule.id, rule_to_record(stored), index=False)
        return stored

    def update(self, rule: Rule) -> Rule:
        """Replace the rule with the same id, keeping ``created_at``."""
        check_rule_limits(rule, self._limits)
        current = self.get(rule.id)
        stored = rule.with_changes(created_at=current.created_at, updated_at=utc_now())
        self._store.put(self._namespace, rule.id, rule_to_record(stored), index=False)
        return stored

    def delete(self, rule_id: str) -> Rule:
        """Remove the rule with ``rule_id`` and return it."""
        removed = self.get(rule_id)
        self._store.delete(self._namespace, rule_id)
        return removed

    # -- async twins ------------------------------------------------------------------

    async def aget_all_by_project(self, project_id: int | None) -> list[Rule]:
        """Async `get_all_by_project`, using the store's async API."""
        return _in_scope(await self.aget_all(), project_id)

    async def aget_all(self) -> list[Rule]:
        """Async `get_all`, using the store's async API."""

        async def run() -> list[Rule]:
            items: list[Item] = []
            with self._reading():
                while True:
                    page = await self._store.asearch(
                        self._namespace, limit=_PAGE_SIZE, offset=len(items)
                    )
                    items.extend(page)
                    if len(page) < _PAGE_SIZE:
                        return self._rules_of(items)

        return await _async_or_thread(run, self.get_all)

    async def aget(self, rule_id: str) -> Rule:
        """Async `get`."""
        _known_shape(rule_id)

        async def run() -> Rule:
            with self._reading():
                return self._found(rule_id, await self._store.aget(self._namespace, rule_id))

        return await _async_or_thread(run, lambda: self.get(rule_id))

    async def acreate(self, rule: Rule) -> Rule:
        """Async `create`."""
        check_rule_limits(rule, self._limits)

        async def run() -> Rule:
            if await self._store.aget(self._namespace, rule.id) is not None:
                raise DuplicateRuleError(f"a rule with id {rule.id!r} already exists")
            stored = _stamp_new(rule)
            await self._store.aput(self._namespace, rule.id, rule_to_record(stored), index=False)
            return stored

        return await _async_or_thread(run, lambda: self.create(rule))

    async def aupdate(self, rule: Rule) -> Rule:
        """Async `update`."""
        check_rule_limits(rule, self._limits)

        async def run() -> Rule:
            current = self._found(rule.id, await self._store.aget(self._namespace, rule.id))
            stored = rule.with_changes(created_at=current.created_at, updated_at=utc_now())
            await self._store.aput(self._namespace, rule.id, rule_to_record(stored), index=False)
            return stored

        return await _async_or_thread(run, lambda: self.update(rule))

    async def adelete(self, rule_id: str) -> Rule:
        """Async `delete`."""
        _known_shape(rule_id)

        async def run() -> Rule:
            removed = self._found(rule_id, await self._store.aget(self._namespace, rule_id))
            await self._store.adelete(self._namespace, rule_id)
            return removed

        return await _async_or_thread(run, lambda: self.delete(rule_id))

    # -- helpers ----------------------------------------------------------------------

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except RecursionError:
            raise RuleStoreError(
                f"a value in namespace {self._namespace!r} is nested too deeply to read"
            ) from None

    def _found(self, rule_id: str, item: Item | None) -> Rule:
        if item is None:
            raise RuleNotFoundError(f"no rule with id {rule_id!r}")
        return self._rule(item)

    def _rule(self, item: Item) -> Rule:
        try:
            return rule_from_record(item.value)
        except RuleValidationError as error:
            raise RuleStoreError(
                f"item {item.key!r} in namespace {self._namespace!r} is not a valid rule: {error}"
            ) from None

    def _rules_of(self, items: list[Item]) -> list[Rule]:
        previous, parsed = self._parsed, {}
        for item in items:
            if item.namespace != self._namespace:
                continue
            known = previous.get(item.key)
            if known is not None and known[0] == item.value:
                parsed[item.key] = known
            else:
                parsed[item.key] = (item.value, self._rule(item))
        self._parsed = parsed
        rules = [rule for _, rule in parsed.values()]
        rules.sort(key=_order)
        return rules


def _in_scope(rules: list[Rule], project_id: int | None) -> list[Rule]:
    return [rule for rule in rules if rule.project_id is None or rule.project_id == project_id]


def _known_shape(rule_id: object) -> None:
    # No rule has a malformed id; the backend never sees one (a lone surrogate breaks drivers).
    if not is_valid_rule_id(rule_id):
        raise RuleNotFoundError(f"no rule with id {shown_id(rule_id)}")


def _order(rule: Rule) -> tuple[datetime, str]:
    return rule.created_at or _NO_TIME, rule.id


def _stamp_new(rule: Rule) -> Rule:
    now = utc_now()
    return rule.with_changes(created_at=rule.created_at or now, updated_at=now)


def _check_namespace(namespace: Any) -> None:
    labels_ok = (
        isinstance(namespace, tuple)
        and len(namespace) > 0
        and all(isinstance(label, str) and label and "." not in label for label in namespace)
    )
    if not labels_ok:
        raise RuleStoreError(
            f"invalid namespace {namespace!r}: a non-empty tuple of non-empty strings "
            "without '.' (for example ('agent_rules',))"
        )


async def _async_or_thread(run: Callable[[], Awaitable[_T]], sync: Callable[[], _T]) -> _T:
    """Await ``run``; for a store with no async API, run ``sync`` in a worker thread."""
    try:
        return await run()
    except NotImplementedError:
        return await asyncio.to_thread(sync)
