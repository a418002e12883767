"""Shipped example data for ``agent-rules demo``: a shop database, project files and rules."""

from langchain_agent_rules.demo.assets import (
    DEMO_QUESTIONS,
    DemoFiles,
    DemoQuestion,
    demo_database_url,
    demo_project_root,
    demo_rules_path,
    export_demo,
)

__all__ = [
    "DEMO_QUESTIONS",
    "DemoFiles",
    "DemoQuestion",
    "demo_database_url",
    "demo_project_root",
    "demo_rules_path",
    "export_demo",
]
