"""The schema as the model reads it: in the tool's description, and in error observations.

The description says as much as fits in ``max_bytes``, dropping detail in this order:
example values (one fewer per column at a time), then the foreign keys, then the
columns; past that only table names are listed, as many as fit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from langchain_agent_rules.tools._sql_catalog import Catalog, CatalogTable, ForeignKey

__all__ = [
    "FOREIGN_KEYS",
    "MORE_TABLES",
    "SCHEMA_DESCRIPTION",
    "SCHEMA_NAMES_ONLY",
    "SCHEMA_WITH_EXAMPLES",
    "TABLE_COUNT",
    "fit_names",
    "lists_columns",
    "schema_description",
    "sql_literal",
    "table_listing",
]

SCHEMA_DESCRIPTION = " Tables and their columns: {tables}."
SCHEMA_WITH_EXAMPLES = " Tables and their columns [with example values]: {tables}."
FOREIGN_KEYS = " Foreign keys: {keys}."
SCHEMA_NAMES_ONLY = (
    " Tables (columns left out to keep this short; SELECT * FROM <table> LIMIT 0 shows "
    "a table's columns): {tables}."
)
MORE_TABLES = "{tables}, and {more} more"
TABLE_COUNT = "{count} tables"


def sql_literal(value: str) -> str:
    """``value`` as a SQL string literal: ``'O''Brien'``."""
    return "'" + value.replace("'", "''") + "'"


def _table(catalog_table: CatalogTable, per_column: int) -> str:
    columns = []
    for column in catalog_table.columns:
        examples = catalog_table.examples.get(column.name, ())[:per_column]
        if examples:
            columns.append(f"{column.shown} [{', '.join(sql_literal(v) for v in examples)}]")
        else:
            columns.append(column.shown)
    return f"{catalog_table.shown}({', '.join(columns)})"


def _foreign_key(key: ForeignKey) -> str:
    if len(key.columns) == 1 and len(key.referred_columns) == 1:
        return f"{key.table}.{key.columns[0]} -> {key.referred_table}.{key.referred_columns[0]}"
    return (
        f"{key.table}({', '.join(key.columns)}) -> "
        f"{key.referred_table}({', '.join(key.referred_columns)})"
    )


def _full_schemas(catalog: Catalog, per_column: int) -> Iterator[str]:
    """Every rendering with all tables' columns, from the most detailed to the least."""
    keys = ""
    if catalog.foreign_keys:
        keys = FOREIGN_KEYS.format(keys=", ".join(_foreign_key(k) for k in catalog.foreign_keys))
    if any(t.examples for t in catalog.tables):
        for shown in range(per_column, 0, -1):
            tables = "; ".join(_table(t, shown) for t in catalog.tables)
            yield SCHEMA_WITH_EXAMPLES.format(tables=tables) + keys
    plain = _plain(catalog)
    yield plain + keys
    if keys:
        yield plain


def lists_columns(catalog: Catalog, max_bytes: int) -> bool:
    """Whether the description can list every table's columns within ``max_bytes``."""
    return len(_plain(catalog).encode()) <= max_bytes


def _plain(catalog: Catalog) -> str:
    return SCHEMA_DESCRIPTION.format(tables="; ".join(_table(t, 0) for t in catalog.tables))


def schema_description(catalog: Catalog, max_bytes: int, per_column: int) -> str:
    """The schema part of the description, at most ``max_bytes`` UTF-8 bytes if it can be."""
    for schema in _full_schemas(catalog, per_column):
        if len(schema.encode()) <= max_bytes:
            return schema
    room = max_bytes - len(SCHEMA_NAMES_ONLY.format(tables="").encode())
    return SCHEMA_NAMES_ONLY.format(tables=fit_names([t.shown for t in catalog.tables], room))


def fit_names(names: Sequence[str], room: int) -> str:
    """``a, b, c`` in ``room`` bytes; else as many as fit and ``and N more``; else a count."""
    every = ", ".join(names)
    if len(every.encode()) <= room:
        return every
    room -= len(MORE_TABLES.format(tables="", more=len(names)).encode())
    shown, used = 0, 0
    for name in names:
        used += len(name.encode()) + (2 if shown else 0)
        if used > room:
            break
        shown += 1
    if shown == 0:
        return TABLE_COUNT.format(count=len(names))
    return MORE_TABLES.format(tables=", ".join(names[:shown]), more=len(names) - shown)


def table_listing(tables: Sequence[CatalogTable], max_bytes: int) -> str:
    """``customers(id, name); orders(id, total)``, or only the names when that is too long."""
    full = "; ".join(_table(t, 0) for t in tables)
    if len(full.encode()) <= max_bytes:
        return full
    return fit_names([t.shown for t in tables], max_bytes)
