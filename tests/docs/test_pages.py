"""The docs pages keep their promises: the README's first commands, marked model blocks, options."""

from __future__ import annotations

import re

from langchain_agent_rules import AgentOptions

from .examples import EXAMPLES, MAX_LOCAL_MODEL_BLOCKS, NEEDS, REPO_ROOT, example_id, need_of

README_COMMANDS = (
    'CMAKE_ARGS="$(python3 langchain_agent_rules/models/build_flags.py)" '
    'pip install --no-cache-dir --no-binary llama-cpp-python -e ".[local]" && agent-rules demo\n'
    'pip install -e ".[dev]" && pytest\n'
)
_EMBEDDED_MODEL = re.compile(r"""ChatLocalLlama|["']local(:[^"']*)?["']""")


def _code(source: str) -> str:
    """The block without its comment lines (the printed output among them)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))


def _shown(default: object) -> str:
    return f'"{default}"' if isinstance(default, str) else repr(default)


def test_the_readme_starts_with_the_two_commands() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```(\w*)\n(.*?)```", readme, flags=re.S)

    assert first_block is not None
    assert first_block.group(1) == "bash"
    assert first_block.group(2) == README_COMMANDS
    assert readme[: first_block.start()].count("\n") <= 2  # only the title above it


def test_every_block_names_a_known_need() -> None:
    unknown = [example_id(e) for e in EXAMPLES if need_of(e) not in (None, *NEEDS)]

    assert unknown == []


def test_every_block_that_loads_the_embedded_model_is_marked() -> None:
    unmarked = [
        example_id(e)
        for e in EXAMPLES
        if _EMBEDDED_MODEL.search(_code(e.source)) and need_of(e) != "local_model"
    ]

    assert unmarked == []


def test_few_blocks_use_the_embedded_model() -> None:
    local = [example_id(e) for e in EXAMPLES if need_of(e) == "local_model"]

    assert 1 <= len(local) <= MAX_LOCAL_MODEL_BLOCKS, local


def test_the_agent_page_lists_every_option_with_its_default() -> None:
    page = (REPO_ROOT / "docs" / "agent.md").read_text(encoding="utf-8")
    section = page.split("\n## Options\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| `([^`]*)` \|", section, flags=re.M))

    expected = {name: _shown(field.default) for name, field in AgentOptions.model_fields.items()}
    assert rows == expected
