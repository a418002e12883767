"""`InMemoryRuleStore`: rules in a dict, for tests, notebooks and short-lived agents."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_agent_rules.errors import DuplicateRuleError, RuleNotFoundError
from langchain_agent_rules.rules._async_twins import ThreadedAsyncTwins
from langchain_agent_rules.rules.limits import AgentRuleToolConfig, check_rule_limits, limits_config
from langchain_agent_rules.rules.model import Rule, utc_now

__all__ = ["InMemoryRuleStore"]


class InMemoryRuleStore(ThreadedAsyncTwins):
    """A thread-safe rule store kept in memory, in insertion order.

    ``limits`` (an `AgentRuleToolConfig` or its keys; the defaults when omitted) are
    checked on every write: a rule that alone breaks one raises `RuleValidationError`.

    Example:
        .. code-block:: python

            store = InMemoryRuleStore([rule])
            store.get_all_by_project(7)  # global rules plus project 7's
    """

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        *,
        limits: AgentRuleToolConfig | Mapping[str, Any] | None = None,
    ) -> None:
        self._rules: dict[str, Rule] = {}
        self._lock = threading.Lock()
        self._limits = limits_config(limits)
        for rule in rules:
            self.create(rule)

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        """Return the global rules plus, when ``project_id`` is set, that project's rules."""
        with self._lock:
            return [r for r in self._rules.values() if r.project_id in (None, project_id)]

    def get_all(self) -> list[Rule]:
        """Return every rule: the global ones and those of every project."""
        with self._lock:
            return list(self._rules.values())

    def get(self, rule_id: str) -> Rule:
        """Return the rule with ``rule_id`` or raise `RuleNotFoundError`."""
        with self._lock:
            try:
                return self._rules[rule_id]
            except KeyError:
                raise RuleNotFoundError(f"no rule with id {rule_id!r}") from None

    def create(self, rule: Rule) -> Rule:
        """Store a new rule; raise `DuplicateRuleError` if its id exists."""
        check_rule_limits(rule, self._limits)
        with self._lock:
            if rule.id in self._rules:
                raise DuplicateRuleError(f"a rule with id {rule.id!r} already exists")
            now = utc_now()
            stored = rule.with_changes(created_at=rule.created_at or now, updated_at=now)
            self._rules[rule.id] = stored
            return stored

    def update(self, rule: Rule) -> Rule:
        """Replace the rule with the same id, keeping ``created_at``."""
        check_rule_limits(rule, self._limits)
        with self._lock:
            current = self._rules.get(rule.id)
            if current is None:
                raise RuleNotFoundError(f"no rule with id {rule.id!r}")
            stored = rule.with_changes(created_at=current.created_at, updated_at=utc_now())
            self._rules[rule.id] = stored
            return stored

    def delete(self, rule_id: str) -> Rule:
        """Remove the rule with ``rule_id`` and return it."""
        with self._lock:
            try:
                return self._rules.pop(rule_id)
            except KeyError:
                raise RuleNotFoundError(f"no rule with id {rule_id!r}") from None
