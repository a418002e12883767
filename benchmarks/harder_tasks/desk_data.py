"""The service desk's data: the database built from the CSV files, the desk folder, the rules.

The database is rebuilt from ``data/schema.sql`` and the CSV files (an empty cell is NULL)
wherever a run wants it, so the expected answers are always computed from the same data
the agent queries.
"""

from __future__ import annotations

import csv
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DATA = HERE / "data"
DESK = HERE / "desk"
"""The folder ``file_read`` may read: the desk's README and its documents."""
RULES = HERE / "rules.json"
TABLES = ("departments", "agents", "tickets")


def build_database(target: Path) -> Path:
    """Write the helpdesk database to ``target`` (a new file) and return its path."""
    connection = sqlite3.connect(target)
    try:
        connection.executescript((DATA / "schema.sql").read_text(encoding="utf-8"))
        for table in TABLES:
            with (DATA / f"{table}.csv").open(encoding="utf-8", newline="") as handle:
                reader = csv.reader(handle)
                columns = next(reader)
                rows = [[cell if cell != "" else None for cell in row] for row in reader]
            placeholders = ", ".join("?" for _ in columns)
            connection.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders})", rows
            )
        connection.commit()
    finally:
        connection.close()
    return target


@dataclass(frozen=True)
class FileValue:
    """A value written in one of the desk's files: the first group of ``pattern`` there."""

    path: str
    pattern: str


@dataclass(frozen=True)
class DeskData:
    """Read access to a built database and the desk folder, for computing expected answers."""

    database: Path
    desk: Path = DESK

    def file_value(self, value: FileValue) -> str:
        text = (self.desk / value.path).read_text(encoding="utf-8")
        found = re.search(value.pattern, text)
        if found is None:
            raise ValueError(f"{value.pattern!r} matches nothing in {value.path}")
        return found.group(1)

    def rows(self, sql: str, params: tuple[str | FileValue, ...] = ()) -> list[tuple[Any, ...]]:
        values = [self.file_value(p) if isinstance(p, FileValue) else p for p in params]
        connection = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)
        try:
            return connection.execute(sql, values).fetchall()
        finally:
            connection.close()
