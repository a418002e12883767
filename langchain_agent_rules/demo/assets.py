"""Where the demo data lives, and the shop database built from its SQL script.

The data ships inside the package (``demo/data``): ``shop.sql`` (customers with e-mail
addresses and an ``active`` flag, products, orders with amounts in EUR), a small project
folder (``README.md``, ``config.toml``, ``docs/notes.md``) and ``rules.json`` (a
JSON rules file: no e-mail addresses in answers, amounts in EUR for project 1, French
for project 2). The SQLite database is built from the script into the cache folder on
first use, under a lock and by rename, and rebuilt when the script changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from langchain_agent_rules.models.weights import cache_dir

__all__ = [
    "DEMO_QUESTIONS",
    "DemoFiles",
    "DemoQuestion",
    "demo_database_url",
    "demo_project_root",
    "demo_rules_path",
    "export_demo",
]

_DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class DemoQuestion:
    """One example question and the rules project it is asked in."""

    question: str
    project_id: int | None


DEMO_QUESTIONS = (
    DemoQuestion("How many active customers do we have?", 1),
    DemoQuestion("What is the total amount of all orders?", 1),
    # Asked with the global rules only: under project 2's "answer in French" rule the
    # embedded model answered in French without reading the file, and got the date wrong.
    DemoQuestion("According to docs/notes.md, when does the next release ship?", None),
    # The embedded model answers this with the address, despite the rule in its prompt;
    # the rule's check redacts it.
    DemoQuestion("What is Alice Martin's e-mail address?", None),
)


def demo_project_root() -> Path:
    """The demo project folder, the root for ``file_read``."""
    return _DATA / "project"


def demo_rules_path() -> Path:
    """The demo's JSON rules file."""
    return _DATA / "rules.json"


def demo_database_url(folder: Path | None = None) -> str:
    """An SQLAlchemy URL of the demo shop database, built in ``folder`` (the cache) once."""
    script = (_DATA / "shop.sql").read_text(encoding="utf-8")
    digest = hashlib.sha256(script.encode()).hexdigest()[:12]
    target_folder = (folder or cache_dir()) / "demo"
    target = target_folder / f"shop-{digest}.sqlite"
    if not target.exists():
        target_folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(target_folder / "shop.lock")):
            if not target.exists():
                _build_database(script, target)
    return f"sqlite:///{target}"


@dataclass(frozen=True)
class DemoFiles:
    """The demo data written into a folder of the user's: what the docs' examples use."""

    database: Path
    """``shop.db``, the shop database (open it with ``sqlite:///shop.db``)."""
    project: Path
    """``project/``, the folder ``file_read`` may read."""
    rules: Path
    """``rules.json``, the rules file."""


def export_demo(folder: Path) -> DemoFiles:
    """Write the demo shop database, project folder and rules file into ``folder``.

    Raises:
        FileExistsError: One of them is already there; nothing is overwritten.
    """
    files = DemoFiles(folder / "shop.db", folder / "project", folder / "rules.json")
    existing = [path.name for path in (files.database, files.project, files.rules) if path.exists()]
    if existing:
        raise FileExistsError(
            f"{', '.join(existing)} already in {folder}; export into an empty folder "
            "or remove them first"
        )
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(demo_project_root(), files.project)
    shutil.copyfile(demo_rules_path(), files.rules)
    _build_database((_DATA / "shop.sql").read_text(encoding="utf-8"), files.database)
    return files


def _build_database(script: str, target: Path) -> None:
    handle, temporary_name = tempfile.mkstemp(dir=target.parent, suffix=".sqlite.part")
    os.close(handle)
    try:
        connection = sqlite3.connect(temporary_name)
        try:
            connection.executescript(script)
            connection.commit()
        finally:
            connection.close()
        os.replace(temporary_name, target)
    except BaseException:
        Path(temporary_name).unlink(missing_ok=True)
        raise
