"""Paths that are no regular file, and what the program says of each."""

from __future__ import annotations

import os
from pathlib import Path


def special(tmp_path: Path, what: str) -> str:
    """A path that is no regular file: a FIFO, a symlink loop, a directory, a device, a NUL."""
    if what == "a FIFO":
        os.mkfifo(tmp_path / "fifo.json")
        return str(tmp_path / "fifo.json")
    if what == "a symlink loop":
        os.symlink(tmp_path / "loop.json", tmp_path / "loop.json")
        return str(tmp_path / "loop.json")
    if what == "a directory":
        return str(tmp_path)
    return {"/dev/zero": "/dev/zero", "/dev/urandom": "/dev/urandom", "a NUL": "a\x00b.json"}[what]


SPECIAL = {
    "a FIFO": r"is a FIFO \(a named pipe\), not a regular file",
    "a symlink loop": r"cannot be read \(Too many levels of symbolic links\)",
    "a directory": r"is a directory, not a regular file",
    "/dev/zero": r"is a character device, not a regular file",
    "/dev/urandom": r"is a character device, not a regular file",
    "a NUL": r"(contains U\+0000|the path contains a NUL character)",
}
