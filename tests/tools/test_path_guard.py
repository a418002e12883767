from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from langchain_agent_rules.errors import InvalidToolCallError
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.path_guard import (
    DEFAULT_DENY,
    DENIED_PATH,
    OUTSIDE_ROOT,
    check_relative_path,
    denied_by,
    is_inside,
)

from .file_tree import MAIN_PY, OUTSIDE_SECRET, build_tree

TRAVERSALS = [
    "../outside/secret.txt",
    "..",
    "../",
    "../../etc/passwd",
    "src/../../outside/secret.txt",
    "src/../..",
    "./../outside/secret.txt",
    "src/./../../outside/secret.txt",
    "escape/../../outside/secret.txt",
    "/etc/passwd",
    "//etc/passwd",
    "/",
    "~/.ssh/id_rsa",
    "~root/.bashrc",
    "C:\\Windows\\win.ini",
    "C:/Windows/win.ini",
    "..\\outside\\secret.txt",
    "src\\..\\..\\outside\\secret.txt",
    "src/main.py\x00.txt",
    "\x00",
    "",
    "   ",
    ".",
    "./",
    "src",
    "src/",
    "escape/secret.txt",
    "escape_file",
    "abs_link",
    "etc_link",
    "sibling",
    "sibling_dir/key.txt",
    "loop",
    "chain1",
    "src/up_link",
    "src_dir_link/up_link",
    "dangling",
    "env_link",
    "git_link/config",
    "dev_null",
    "fifo",
    ".env",
    ".ENV",
    ".env.local",
    "config/.env.production",
    "certs/server.pem",
    ".ssh/id_rsa",
    "keys/ID_RSA.pub",
    ".git/config",
    ".git/HEAD",
    "./.git//config",
    ".netrc",
    "src/../.env",
    "%2e%2e/outside/secret.txt",
]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("tree"))


@pytest.fixture(scope="module")
def tool(root: Path) -> FileReadTool:
    return FileReadTool(root, handle_tool_error=False)


def test_the_traversal_corpus_has_at_least_forty_inputs() -> None:
    assert len(TRAVERSALS) >= 40


@pytest.mark.parametrize("path", TRAVERSALS)
def test_every_traversal_is_refused(tool: FileReadTool, path: str) -> None:
    with pytest.raises(InvalidToolCallError):
        tool.invoke({"path": path})


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/main.py", MAIN_PY),
        ("./src//main.py", MAIN_PY),
        ("inner_link", MAIN_PY),
        ("src_dir_link/main.py", MAIN_PY),
        ("a..b.txt", "dots inside a name are fine\n"),
        ("..foo", "a name starting with two dots\n"),
        ("...", "three dots\n"),
    ],
)
def test_files_inside_the_root_are_read(tool: FileReadTool, path: str, expected: str) -> None:
    assert json.loads(tool.invoke({"path": path}))["content"] == expected


def test_a_symlink_leading_outside_says_so(tool: FileReadTool) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        tool.invoke({"path": "escape_file"})
    assert str(caught.value) == OUTSIDE_ROOT.format(path="escape_file")
    assert str(caught.value) == (
        "The path 'escape_file' is refused: it leads outside the project folder. Allowed: a "
        "relative path to a text file inside the project, such as 'src/app.py'."
    )


def test_a_symlink_to_a_secret_inside_the_root_is_denied(tool: FileReadTool) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        tool.invoke({"path": "env_link"})
    assert str(caught.value) == DENIED_PATH.format(path="env_link", pattern=".env")


def test_a_root_given_through_a_symlink_still_works(root: Path, tmp_path: Path) -> None:
    (tmp_path / "root_link").symlink_to(root, target_is_directory=True)
    tool = FileReadTool(tmp_path / "root_link", handle_tool_error=False)
    assert json.loads(tool.invoke({"path": "src/main.py"}))["content"] == MAIN_PY


def test_a_swapped_symlink_never_leads_outside(root: Path, tool: FileReadTool) -> None:
    # A real race: one thread flips a symlink between an inside and an outside target.
    inside = root / "src" / "main.py"
    outside = root.parent / "outside" / "secret.txt"
    link = root / "racy"
    os.symlink(inside, link)
    # Whatever the race, every call must show the inside file or refuse.
    stop = threading.Event()

    def flip() -> None:
        targets = [outside, inside]
        while not stop.is_set():
            for target in targets:
                temporary = root / "racy.tmp"
                os.symlink(target, temporary)
                os.replace(temporary, link)
                time.sleep(0)  # let the reader run between flips

    flipper = threading.Thread(target=flip)
    flipper.start()
    seen: set[str] = set()
    try:
        for _ in range(300):
            try:
                seen.add(json.loads(tool.invoke({"path": "racy"}))["content"])
            except InvalidToolCallError as error:
                seen.add(str(error))
    finally:
        stop.set()
        flipper.join()
    assert OUTSIDE_SECRET not in seen
    assert not any(OUTSIDE_SECRET in text for text in seen)


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/srv/app", "/srv/app", True),
        ("/srv/app/a.txt", "/srv/app", True),
        ("/srv/app-secrets/key", "/srv/app", False),
        ("/srv/application", "/srv/app", False),
        ("/srv", "/srv/app", False),
        ("/srv/app/a", "/srv/app/", True),
        ("/etc/passwd", "/", True),
    ],
)
def test_is_inside_compares_whole_components(path: str, root: str, inside: bool) -> None:
    assert is_inside(path, root) is inside


@pytest.mark.parametrize(
    ("path", "normalised"),
    [("a//b", "a/b"), ("./a/./b/", "a/b"), ("a..b.txt", "a..b.txt"), ("..foo/x", "..foo/x")],
)
def test_paths_are_normalised(path: str, normalised: str) -> None:
    assert check_relative_path(path, DEFAULT_DENY) == normalised


@pytest.mark.parametrize(
    ("relative", "pattern"),
    [
        (".env", ".env"),
        ("deploy/.env.staging", ".env.*"),
        ("certs/site.PEM", "*.pem"),
        ("home/.ssh/known_hosts", ".ssh/"),
        (".git/objects/ab/cdef", ".git/"),
        ("id_ed25519.pub", "id_ed25519*"),
        ("README.md", None),
        ("environment.py", None),
        ("docs/.github/workflow.yml", None),
        (".git", None),
    ],
)
def test_default_deny_patterns(relative: str, pattern: str | None) -> None:
    assert denied_by(relative, DEFAULT_DENY) == pattern


def test_a_pattern_with_a_slash_matches_the_whole_path() -> None:
    assert denied_by("config/prod.secret", ["config/*.secret"]) == "config/*.secret"
    assert denied_by("other/prod.secret", ["config/*.secret"]) is None


@pytest.mark.parametrize("path", ["notes\ud800.txt", "\udcff", "src/\udc80/main.py"])
def test_a_lone_surrogate_in_a_path_is_refused_by_the_guard_itself(path: str) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        check_relative_path(path, DEFAULT_DENY)
    assert "is refused: it contains a lone surrogate, which no file name can hold" in str(
        caught.value
    )
