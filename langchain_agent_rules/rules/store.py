"""The rule store protocols: `RuleReader` and `RuleWriter`.

Every store follows the same contract: ids are unique across the whole store,
``get_all_by_project(None)`` returns the global rules only, ``get_all_by_project(N)``
returns the global rules plus those of project N (never another project's), in the
store's own stable order. ``create`` of an existing id raises `DuplicateRuleError`;
``get``, ``update`` or ``delete`` of an unknown id raises `RuleNotFoundError`.
Stores stamp ``created_at`` on create, keep it on update and set ``updated_at``.

The stores shipped here also have ``get_all()``: every rule of every project, in the
same order (what ``agent-rules rules list --all`` shows). It is not part of the
protocols, so a store of your own need not have it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from langchain_agent_rules.rules.model import Rule

__all__ = ["RuleReader", "RuleStore", "RuleWriter"]


@runtime_checkable
class RuleReader(Protocol):
    """Reads rules; what `AgentRuleTool` and the agent's system prompt need."""

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        """Return the global rules plus, when ``project_id`` is set, that project's rules."""
        ...

    def get(self, rule_id: str) -> Rule:
        """Return the rule with ``rule_id`` or raise `RuleNotFoundError`."""
        ...


@runtime_checkable
class RuleWriter(Protocol):
    """Writes rules; what `AgentRuleAdminTool` needs."""

    def create(self, rule: Rule) -> Rule:
        """Store a new rule and return it with its timestamps set."""
        ...

    def update(self, rule: Rule) -> Rule:
        """Replace the rule with the same id, keeping ``created_at``; return the stored rule."""
        ...

    def delete(self, rule_id: str) -> Rule:
        """Remove the rule with ``rule_id`` and return it."""
        ...


@runtime_checkable
class RuleStore(RuleReader, RuleWriter, Protocol):
    """A store that both reads and writes rules."""
