"""The embedded model on the demo data: one model per session, a fixed seed and thread count.

Every model call of the suite is tallied (`TALLY`) and the totals are printed at the end:
CI's budget for this suite is about 2,000 generated and 25,000 evaluated prompt tokens
(a slow machine of our kind generates ~4 tokens/s and reads ~50 prompt tokens/s).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import LLMResult
from langchain_core.tools import BaseTool

from langchain_agent_rules.agent.builder import create_rules_agent
from langchain_agent_rules.demo import demo_database_url, demo_project_root, demo_rules_path
from langchain_agent_rules.rules.json_file import JsonFileRuleStore

if TYPE_CHECKING:
    from langchain_agent_rules.models.local import ChatLocalLlama

RunTask = Callable[..., dict[str, Any]]


class UsageTally(BaseCallbackHandler):
    """Sums the usage of every model call it sees."""

    def __init__(self) -> None:
        self.model_calls = 0
        self.prompt_tokens = 0
        self.evaluated_tokens = 0
        self.generated_tokens = 0
        self.forced_tokens = 0

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                usage = getattr(generation, "message", None) and generation.message.usage_metadata
                if not usage:
                    continue
                cached = usage.get("input_token_details", {}).get("cache_read", 0)
                self.model_calls += 1
                self.prompt_tokens += usage["input_tokens"]
                self.evaluated_tokens += usage["input_tokens"] - cached
                self.generated_tokens += usage["output_tokens"]
                self.forced_tokens += generation.message.response_metadata.get("forced_tokens", 0)


TALLY = UsageTally()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TALLY.model_calls:
        terminalreporter.write_line(
            f"embedded model (in this process): {TALLY.model_calls} calls, "
            f"{TALLY.evaluated_tokens} prompt tokens evaluated "
            f"(of {TALLY.prompt_tokens}; the rest reused), "
            f"{TALLY.generated_tokens} tokens generated "
            f"({TALLY.forced_tokens} of them forced by a grammar: no decode step of their own)"
        )


@pytest.fixture(scope="session", autouse=True)
def prefix_states_of_this_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Evaluated prefixes go to a folder of this session's (models and CLI runs alike).

    So the suite starts cold whatever earlier runs saved, and its token counts repeat.
    """
    from langchain_agent_rules.models.local import PREFIX_CACHE_DIR_ENV

    folder = tmp_path_factory.mktemp("prefix-states")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PREFIX_CACHE_DIR_ENV, str(folder))
        yield folder


def embedded_model(**options: Any) -> ChatLocalLlama:
    """The embedded model with the suite's settings (the loaded model is shared), tallied."""
    from langchain_agent_rules.models.local import ChatLocalLlama

    return ChatLocalLlama(n_threads=2, seed=0, callbacks=[TALLY], **options)


@pytest.fixture(scope="session")
def local_model() -> BaseChatModel:
    return embedded_model()


@pytest.fixture(scope="session")
def demo_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    url = demo_database_url(tmp_path_factory.mktemp("cache"))
    return Path(url.removeprefix("sqlite:///"))


@pytest.fixture(scope="session")
def demo_tools(demo_database: Path) -> list[BaseTool]:
    from langchain_agent_rules.tools.file_read import FileReadTool
    from langchain_agent_rules.tools.sql_query import SqlQueryTool

    return [
        SqlQueryTool(f"sqlite:///{demo_database}", include_schema=True),
        FileReadTool(demo_project_root()),
    ]


@pytest.fixture(scope="session")
def run_task(local_model: BaseChatModel, demo_tools: list[BaseTool]) -> RunTask:
    """Ask one question with the CLI's defaults; return the final state."""
    rules = JsonFileRuleStore(demo_rules_path())

    def run(question: str, project_id: int | None = None, protocol: str = "auto") -> dict[str, Any]:
        agent = create_rules_agent(
            local_model, demo_tools, rules=rules, project_id=project_id, protocol=protocol
        )
        return dict(agent.invoke({"messages": [("user", question)]}))

    return run


def database_value(database: Path, sql: str) -> Any:
    with sqlite3.connect(database) as connection:
        return connection.execute(sql).fetchone()[0]


def numbers_in(text: str) -> list[float]:
    """The numbers written in ``text`` (``626.25``, ``626,25``, ``1,234.5`` all read right)."""
    found = re.findall(r"\d[\d,]*(?:[.,]\d+)?", text)
    values = []
    for raw in found:
        if re.fullmatch(r"\d+,\d{1,2}", raw):  # a decimal comma, as French writes it
            raw = raw.replace(",", ".")
        values.append(float(raw.replace(",", "")))
    return values


def tools_called(state: dict[str, Any]) -> list[tuple[str, str]]:
    return [(step["tool"], step["status"]) for step in state["trace"]]
