"""A run rendered and compared with its committed snapshot."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from tools import render


def check_snapshot(run, stack: str, snapshots: Path, tmp_path: Path) -> None:
    render.write(run, tmp_path)
    for name in render.RENDERED_FILES:
        committed = snapshots / stack / name
        assert committed.exists(), f"no snapshot {committed.relative_to(render.ROOT)}: run `make snapshots`"
        expected, actual = committed.read_text(), (tmp_path / name).read_text()
        if actual != expected:
            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(keepends=True),
                    actual.splitlines(keepends=True),
                    f"snapshot/{stack}/{name}",
                    f"rendered/{stack}/{name}",
                )
            )
            pytest.fail(f"{stack}/{name} changed; if intended, run `make snapshots` and commit:\n{diff}")
