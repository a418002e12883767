"""The ```python blocks of README.md and docs/*.md, and what each one needs to run.

A block's fence may name what it needs: ```python test="local_model"``` (the embedded
model), ``test="postgres"`` (a PostgreSQL server at POSTGRES_URL) or ``test="studio"`` (a
``langgraph dev`` server at LANGGRAPH_URL). Blocks without a setting need nothing but the
package and the demo data.
"""

from __future__ import annotations

from pathlib import Path

from pytest_examples import CodeExample, find_examples

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
NEEDS = ("local_model", "postgres", "studio")
MAX_LOCAL_MODEL_BLOCKS = 2
"""The embedded model's blocks share CI's token budget with the real-model suite."""

EXAMPLES: list[CodeExample] = list(find_examples(*PAGES))


def need_of(example: CodeExample) -> str | None:
    """What the block's fence says it needs (``None``: nothing)."""
    return example.prefix_settings().get("test")


def example_id(example: CodeExample) -> str:
    """``docs/agent.md:42``: the page and the line the block starts on."""
    return f"{example.path.relative_to(REPO_ROOT)}:{example.start_line}"
