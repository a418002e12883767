"""A missing file is answered with what exists near it, and never with a secret or an escape."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from langchain_agent_rules.errors import InvalidToolCallError
from langchain_agent_rules.tools.file_read import FileReadTool
from langchain_agent_rules.tools.path_guard import MAX_NEARBY_BYTES, NOT_FOUND

from .file_tree import build_tree

ROOT_LISTING = (
    "The project folder holds: ..., ..foo, README.md, a..b.txt, bin.dat, certs/, config/, "
    "inner_link, keys/, latin1.txt, src/, src_dir_link/."
)
# Every name in the tree that leads outside, is denied, or is not a readable kind of file.
HIDDEN = [
    ".env", ".ssh", "id_rsa", "ID_RSA", ".git", ".netrc", "server.pem", "escape", "abs_link",
    "etc_link", "sibling", "loop", "chain", "dangling", "env_link", "git_link", "dev_null",
    "up_link", "fifo", "secret", "key.txt", "outside", "app-secrets", "passwd",
]  # fmt: skip


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("tree"))


def missing(root: Path, path: str, **options: object) -> str:
    tool = FileReadTool(root, handle_tool_error=False, **options)  # type: ignore[arg-type]
    with pytest.raises(InvalidToolCallError) as caught:
        tool.invoke({"path": path})
    return str(caught.value)


def test_a_missing_file_gets_the_close_name_and_its_folder(root: Path) -> None:
    assert NOT_FOUND == "The file {path!r} does not exist."
    assert missing(root, "src/mian.py") == (
        "The file 'src/mian.py' does not exist. Did you mean 'src/main.py'? "
        "The folder 'src' holds: main.py."
    )


def test_without_a_close_name_the_nearest_existing_folder_is_listed(root: Path) -> None:
    assert missing(root, "nope.txt") == f"The file 'nope.txt' does not exist. {ROOT_LISTING}"
    assert missing(root, "docs/deep/nope.txt") == (
        f"The file 'docs/deep/nope.txt' does not exist. {ROOT_LISTING}"
    )


def test_a_name_in_another_folder_is_found_one_level_down(root: Path) -> None:
    assert missing(root, "main.py") == (
        "The file 'main.py' does not exist. Did you mean 'src/main.py' or "
        f"'src_dir_link/main.py'? {ROOT_LISTING}"
    )


def test_case_is_ignored_when_looking_for_a_close_name(root: Path) -> None:
    assert missing(root, "readme.md").startswith(
        "The file 'readme.md' does not exist. Did you mean 'README.md'? "
    )


def test_a_folder_of_secrets_shows_nothing(root: Path) -> None:
    assert missing(root, "certs/server.crt") == (
        "The file 'certs/server.crt' does not exist. The folder 'certs' holds no file that "
        "can be shown."
    )


def test_a_symlinked_folder_inside_the_root_lists_only_what_is_inside(root: Path) -> None:
    assert missing(root, "src_dir_link/zzz.txt") == (
        "The file 'src_dir_link/zzz.txt' does not exist. The folder 'src_dir_link' holds: main.py."
    )


@pytest.mark.parametrize(
    "path",
    ["nope.txt", "envv", "netrc", "secrets.txt", "escap", "dangle", "env_lnk", "git_lnk",
     "fifo2", "src/up_lnk", "src/nope", "keys/rsa.pub", "config/env", "certs/server.pm",
     "sibling_di", "looop", "chain3", "outside.txt", "ssh/rsa", "git/config"],
)  # fmt: skip
def test_the_listing_never_names_a_hidden_entry(root: Path, path: str) -> None:
    message = missing(root, path)
    assert message.startswith(f"The file {path!r} does not exist. ")
    nearby = message.removeprefix(f"The file {path!r} does not exist. ")
    assert not [name for name in HIDDEN if name in nearby]


def test_the_deny_list_given_decides_what_is_hidden(root: Path) -> None:
    message = missing(root, "nope.txt", deny=["*.md", "certs/"])
    assert "README.md" not in message
    assert "certs/" not in message
    assert ".env" in message  # no longer denied: the list given replaces the default


def test_the_listing_is_bounded(tmp_path: Path) -> None:
    for i in range(400):
        (tmp_path / f"a_rather_long_file_name_number_{i:03d}.txt").write_text("x")
    message = missing(tmp_path, "nope.txt")
    listing = message.removeprefix("The file 'nope.txt' does not exist. The project folder holds: ")
    assert listing.startswith("a_rather_long_file_name_number_000.txt, ")
    assert listing.endswith(" more.")
    assert len(listing.encode()) <= MAX_NEARBY_BYTES + 1


def test_names_no_observation_can_carry_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("x")
    (tmp_path / "two\nlines.txt").write_text("x")
    (tmp_path / ("x" * 200)).write_text("x")
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"bad\xff.txt"), os.O_CREAT | os.O_WRONLY))
    assert missing(tmp_path, "nope.txt") == (
        "The file 'nope.txt' does not exist. The project folder holds: plain.txt."
    )


def test_an_empty_root_says_it_shows_nothing(tmp_path: Path) -> None:
    assert missing(tmp_path, "a/b.txt") == (
        "The file 'a/b.txt' does not exist. The project folder holds no file that can be shown."
    )
