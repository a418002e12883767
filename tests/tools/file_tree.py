"""A real project folder with secrets, escapes and symlinks, shared by the file tests."""

from __future__ import annotations

import os
from pathlib import Path

OUTSIDE_SECRET = "outside secret: never shown"
MAIN_PY = "print('héllo wörld 😀')\n"


def build_tree(base: Path) -> Path:
    """Build ``base/app`` (the root) beside ``base/outside`` and ``base/app-secrets``."""
    root = base / "app"
    (root / "src").mkdir(parents=True)
    (base / "outside").mkdir()
    (base / "app-secrets").mkdir()
    (base / "outside" / "secret.txt").write_text(OUTSIDE_SECRET)
    (base / "app-secrets" / "key.txt").write_text("sibling secret")
    files = {
        "README.md": "# Demo\n",
        "src/main.py": MAIN_PY,
        "a..b.txt": "dots inside a name are fine\n",
        "..foo": "a name starting with two dots\n",
        "...": "three dots\n",
        ".env": "PASSWORD=hunter2\n",
        ".env.local": "PASSWORD=hunter2\n",
        "config/.env.production": "PASSWORD=hunter2\n",
        "certs/server.pem": "-----BEGIN PRIVATE KEY-----\n",
        ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        "keys/ID_RSA.pub": "ssh-rsa AAAA\n",
        ".git/config": "[core]\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".netrc": "machine x login y password z\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "bin.dat").write_bytes(b"\x89PNG\x00\x01\x02")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    links = {
        "escape": "../outside",
        "escape_file": "../outside/secret.txt",
        "abs_link": str(base / "outside" / "secret.txt"),
        "etc_link": "/etc/passwd",
        "sibling": "../app-secrets/key.txt",
        "sibling_dir": "../app-secrets",
        "loop": "loop",
        "chain1": "chain2",
        "chain2": "../outside/secret.txt",
        "dangling": "does-not-exist",
        "env_link": ".env",
        "git_link": ".git",
        "dev_null": "/dev/null",
        "inner_link": "src/main.py",
        "src_dir_link": "src",
        "src/up_link": "../../outside/secret.txt",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    os.mkfifo(root / "fifo")
    return root
