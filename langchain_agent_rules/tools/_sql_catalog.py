"""What ``sql_query`` knows of its database: tables, columns, foreign keys, example values.

Read once, when the tool is built, from SQLAlchemy's inspector. Names are kept twice: as
the database spells them (for lookups) and quoted where SQL needs it (for the model).
Example values come from :func:`read_examples`: the first rows of each table (in primary
key order where there is one), read in the tool's read-only transaction, of text columns
whose values have a format (dates, codes) or repeat (statuses, categories), filtered by
:mod:`langchain_agent_rules.tools._safe_values`. The same read keeps every value of the text
columns of a small table (one the sample read whole), never shown as such: an observation
only says which column holds the text a query looked for in another.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import TypeVar

from sqlalchemy import Connection, Engine, column, inspect, select, table
from sqlalchemy.engine.reflection import ObjectKind
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.types import String

from langchain_agent_rules.errors import ToolExecutionError
from langchain_agent_rules.tools._safe_values import is_private_column, is_shown_value

__all__ = [
    "SAMPLED_ROWS",
    "Catalog",
    "CatalogColumn",
    "CatalogTable",
    "ForeignKey",
    "read_catalog",
    "read_examples",
]

SAMPLED_ROWS = 100
"""How many rows of a table are read to pick its example values."""
_MAX_CATEGORIES = 12  # at most this many distinct values, each seen twice on average
_SAMPLING_TIMEOUT = 5.0  # seconds, at most, for all the tables' samples together


@dataclass(frozen=True)
class CatalogColumn:
    """One column: its name, its name as SQL writes it, whether it holds text or NULLs."""

    name: str
    shown: str
    is_text: bool
    nullable: bool = True


@dataclass(frozen=True)
class CatalogTable:
    """One table or view of the default schema."""

    name: str
    shown: str
    columns: tuple[CatalogColumn, ...]
    primary_key: tuple[str, ...] = ()
    is_view: bool = False
    examples: dict[str, tuple[str, ...]] = field(default_factory=dict)
    values: dict[str, frozenset[str]] = field(default_factory=dict)
    """Every value of each text column of a small table, as read when the tool was built."""

    def column(self, name: str) -> CatalogColumn | None:
        """The column called ``name`` (exactly, else ignoring case), or ``None``."""
        return _find(self.columns, name)


_Named = TypeVar("_Named", CatalogColumn, CatalogTable)


@dataclass(frozen=True)
class ForeignKey:
    """A declared reference, in SQL spelling: ``orders.customer_id -> customers.id``."""

    table: str
    columns: tuple[str, ...]
    referred_table: str
    referred_columns: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    """The tables (sorted by name) and the foreign keys between them."""

    tables: tuple[CatalogTable, ...]
    foreign_keys: tuple[ForeignKey, ...] = ()

    def table(self, name: str) -> CatalogTable | None:
        """The table called ``name`` (exactly, else ignoring case), or ``None``."""
        return _find(self.tables, name)


def _find(items: Sequence[_Named], name: str) -> _Named | None:
    exact = next((item for item in items if item.name == name), None)
    if exact is not None:
        return exact
    lowered = name.lower()
    return next((item for item in items if item.name.lower() == lowered), None)


def read_catalog(engine: Engine) -> Catalog:
    """The tables, views, columns and foreign keys of the default schema.

    Raises:
        SQLAlchemyError: the database could not be read.
    """
    inspector = inspect(engine)
    quote = engine.dialect.identifier_preparer.quote
    views = set(inspector.get_view_names())
    keys = inspector.get_multi_pk_constraint(kind=ObjectKind.TABLE)
    tables = []
    every_column = inspector.get_multi_columns(kind=ObjectKind.ANY)
    for (schema, name), columns in sorted(every_column.items()):
        constraint = keys.get((schema, name))
        primary_key = tuple(constraint["constrained_columns"]) if constraint else ()
        tables.append(
            CatalogTable(
                name=name,
                shown=quote(name),
                columns=tuple(
                    CatalogColumn(
                        c["name"],
                        quote(c["name"]),
                        isinstance(c["type"], String),
                        bool(c.get("nullable", True)),
                    )
                    for c in columns
                ),
                primary_key=primary_key,
                is_view=name in views,
            )
        )
    references = []
    for (_schema, name), foreign_keys in sorted(inspector.get_multi_foreign_keys().items()):
        for key in foreign_keys:
            referred = quote(key["referred_table"])
            referred_schema = key.get("referred_schema")
            if referred_schema:
                referred = f"{quote(referred_schema)}.{referred}"
            references.append(
                ForeignKey(
                    quote(name),
                    tuple(quote(c) for c in key["constrained_columns"]),
                    referred,
                    tuple(quote(c) for c in key["referred_columns"]),
                )
            )
    return Catalog(tuple(tables), tuple(sorted(references, key=lambda k: (k.table, k.columns))))


def _sampled_columns(catalog_table: CatalogTable) -> list[CatalogColumn]:
    key = set(catalog_table.primary_key)
    return [
        c
        for c in catalog_table.columns
        if c.is_text and c.name not in key and not is_private_column(c.name)
    ]


def _examples(values: Iterator[object], per_column: int) -> tuple[str, ...]:
    """Examples of a column whose values have a format (most hold digits) or repeat.

    Free text such as names or titles shows no format the model could get wrong, costs
    prompt tokens, and tempts a small model to answer with an example it never queried.
    """
    texts = [value for value in values if isinstance(value, str)]
    distinct = set(texts)
    with_digits = sum(any(character.isdigit() for character in text) for text in distinct)
    has_format = 2 * with_digits >= len(distinct) > 0
    repeats = len(distinct) <= _MAX_CATEGORIES and 2 * len(distinct) <= len(texts)
    if not (has_format or repeats):
        return ()
    return tuple(sorted(text for text in distinct if is_shown_value(text))[:per_column])


def _every_value(values: Iterator[object]) -> frozenset[str]:
    texts = {value for value in values if isinstance(value, str)}
    return frozenset(text for text in texts if is_shown_value(text))


def read_examples(
    engine: Engine,
    catalog: Catalog,
    per_column: int,
    read_only: Callable[[Connection, float], AbstractContextManager[None]],
) -> Catalog:
    """``catalog`` with up to ``per_column`` example values for the text columns of its tables.

    The first `SAMPLED_ROWS` rows of each table are read in one read-only transaction
    that stops after a few seconds; a table that cannot be read, and every table after a
    failure or the time limit, simply has no examples. Views are not sampled (reading
    one may run any query). A table with fewer rows than that keeps all its text values
    (those a forbid detector would not catch) in ``values``.
    """
    sampled: dict[str, dict[str, tuple[str, ...]]] = {}
    complete: dict[str, dict[str, frozenset[str]]] = {}
    deadline = time.monotonic() + _SAMPLING_TIMEOUT
    try:
        with engine.connect() as connection, read_only(connection, _SAMPLING_TIMEOUT):
            for catalog_table in catalog.tables:
                columns = _sampled_columns(catalog_table)
                if catalog_table.is_view or not columns:
                    continue
                if time.monotonic() > deadline:
                    break
                rows: Sequence[Sequence[object]] = connection.execute(
                    select(*[column(c.name) for c in columns])
                    .select_from(table(catalog_table.name))
                    .order_by(*[column(name) for name in catalog_table.primary_key])
                    .limit(SAMPLED_ROWS)
                ).fetchall()
                sampled[catalog_table.name] = {
                    c.name: _examples((row[i] for row in rows), per_column)
                    for i, c in enumerate(columns)
                }
                if len(rows) < SAMPLED_ROWS:
                    complete[catalog_table.name] = {
                        c.name: _every_value(row[i] for row in rows) for i, c in enumerate(columns)
                    }
    except (SQLAlchemyError, ToolExecutionError):
        pass  # examples are a help, never a reason to refuse the database (or to read unsafely)
    return replace(
        catalog,
        tables=tuple(
            replace(
                t,
                examples={k: v for k, v in sampled.get(t.name, {}).items() if v},
                values=complete.get(t.name, {}),
            )
            for t in catalog.tables
        ),
    )
