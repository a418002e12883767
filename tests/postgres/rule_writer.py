"""Rule-writing workers for `run_together`: each opens its own `SqlRuleStore`."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Engine, create_engine

from langchain_agent_rules.errors import DuplicateRuleError
from langchain_agent_rules.rules.model import Rule
from langchain_agent_rules.rules.sql_store import SqlRuleStore, sqlalchemy_url


def engine_for(url: str, schema: str | None) -> Engine:
    """An engine on ``url`` whose unqualified tables live in ``schema`` (None: the default)."""
    options = {} if schema is None else {"schema_translate_map": {None: schema}}
    return create_engine(sqlalchemy_url(url), execution_options=options)


def guideline(rule_id: str, content: str) -> Rule:
    return Rule(id=rule_id, type="guideline", target="agent", content=content, priority=1)


def write_many(
    url: str, schema: str | None, prefix: str, count: int, *, ready: Callable[[], object]
) -> str:
    """Create ``count`` rules with ids ``prefix_0``...; return "created COUNT"."""
    store = SqlRuleStore(engine_for(url, schema))
    store.get_all_by_project(None)  # creates the table, opens a connection
    ready()
    for index in range(count):
        store.create(guideline(f"{prefix}_{index}", f"Rule number {index} from {prefix}."))
    return f"created {count}"


def write_one(
    url: str, schema: str | None, rule_id: str, content: str, *, ready: Callable[[], object]
) -> str:
    """Create one rule; return "created" or "duplicate"."""
    store = SqlRuleStore(engine_for(url, schema))
    store.get_all_by_project(None)
    ready()
    try:
        store.create(guideline(rule_id, content))
    except DuplicateRuleError:
        return "duplicate"
    return "created"
