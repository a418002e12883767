"""`open_rule_store`: turn a ``--store`` value into a rule store.

A store spec is a path to a JSON rules file, or a database URL (``postgresql://...``,
``sqlite:///rules.db``) for a `SqlRuleStore`. Other backends plug in here by their URL
scheme, so every command line and configuration that takes a store spec gains them at
once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_agent_rules.errors import RuleStoreError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.limits import AgentRuleToolConfig
from langchain_agent_rules.rules.sql_store import SqlRuleStore
from langchain_agent_rules.rules.store import RuleStore

__all__ = ["SQL_STORE_SCHEMES", "open_rule_store"]

SQL_STORE_SCHEMES = ("postgresql", "postgres", "sqlite")


def open_rule_store(
    spec: str, *, limits: AgentRuleToolConfig | Mapping[str, Any] | None = None
) -> RuleStore:
    """Open the rule store named by ``spec``: a JSON rules file path or a database URL.

    ``limits`` are the ones the store checks on every write (the defaults when omitted).
    """
    if not spec.strip():
        raise RuleStoreError(
            "empty rule store; give a path to a JSON rules file or a database URL "
            "(postgresql://... or sqlite:///...)"
        )
    scheme = spec.split("://", 1)[0].split("+", 1)[0] if "://" in spec else ""
    if scheme in SQL_STORE_SCHEMES:
        return SqlRuleStore(spec, limits=limits)
    return JsonFileRuleStore(spec, limits=limits)
