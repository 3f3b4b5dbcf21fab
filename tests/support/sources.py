"""Python files (the project's, an installed SDK's), each read and parsed once a session, for the
tests that walk sources (tests/test_house.py, tests/test_type_checking.py, tests/test_sdk_swaps.py).
Treat a tree as read-only."""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path


@functools.cache
def text(path: Path) -> str:
    """A file's text, as `path.read_text(encoding="utf-8")`."""
    return path.read_text(encoding="utf-8")


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A file's syntax tree, as `ast.parse(text(path))`."""
    return ast.parse(text(path))


def python_files(root: Path) -> list[Path]:
    """`sorted(root.rglob("*.py"))` without what lies under a folder whose name starts with a dot
    (a virtual environment, .git), which is not walked: the project's own files."""
    found = []
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if not name.startswith(".")]
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return sorted(found)


@functools.cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a file's tree, in `ast.walk`'s order."""
    return tuple(ast.walk(parsed(path)))
