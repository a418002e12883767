from __future__ import annotations

import subprocess
import sys
import textwrap

# `sys.modules[name] = None` is Python's documented way to make an import fail, so the
# check runs in a fresh interpreter where `langchain` (the optional extra) is "missing".
SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["langchain"] = None
    import langchain_agent_rules
    print("package imported")
    try:
        import langchain_agent_rules.middleware
    except ImportError as error:
        print(error)
    """
)


def test_without_langchain_the_package_imports_and_the_middleware_says_what_to_install() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )

    lines = completed.stdout.splitlines()
    assert lines[0] == "package imported"
    assert lines[1] == (
        "langchain_agent_rules.middleware needs the `langchain` package (langchain>=1.0); "
        'install it with: pip install "langchain-agent-rules[langchain]"'
    )
