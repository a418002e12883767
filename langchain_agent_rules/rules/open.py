"""`open_rule_store`: turn a ``--store`` value into a rule store.

Today a store spec is a path to a JSON rules file. Other backends plug in here by
their URL scheme, so every command line and configuration that takes a store spec
gains them at once.
"""

from __future__ import annotations

from langchain_agent_rules.errors import RuleStoreError
from langchain_agent_rules.rules.json_file import JsonFileRuleStore
from langchain_agent_rules.rules.store import RuleStore

__all__ = ["open_rule_store"]


def open_rule_store(spec: str) -> RuleStore:
    """Open the rule store named by ``spec``: a path to a JSON rules file."""
    if not spec.strip():
        raise RuleStoreError("empty rule store; give a path to a JSON rules file")
    return JsonFileRuleStore(spec)
