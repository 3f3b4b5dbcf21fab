"""The committed desired state of every stack is what the program renders now.

tests/snapshots/<stack>/ holds `make render`'s four files for each stack. A change to the
program that changes what gets deployed fails here until `make snapshots` refreshes them, so
the pull request carries the change as a readable diff of manifests and ARM properties.
Every Pulumi.<stack>.yaml the project has, whatever its name; the tests of the renderer
itself run the tests' own stacks (tests/fixtures/stacks/).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import project_run, run_cached
from support.snapshots import check_snapshot

from tools import render
from tools.mock_engine import run_program
from tools.stack_files import stacks


@pytest.mark.parametrize("stack", stacks())
def test_the_rendered_state_matches_the_committed_snapshot(stack: str, tmp_path: Path):
    check_snapshot(project_run(stack), stack, render.SNAPSHOTS, tmp_path)


def test_every_snapshot_belongs_to_a_stack():
    folders = sorted(p.name for p in render.SNAPSHOTS.iterdir() if p.is_dir()) if render.SNAPSHOTS.is_dir() else []
    assert [f for f in folders if f not in stacks()] == [], "no Pulumi.<stack>.yaml for these: `make snapshots` removes them"


def test_rendering_twice_gives_the_same_bytes(tmp_path: Path):
    # Components register concurrently; the render must not depend on that order.
    for attempt in ("first", "second"):
        render.write(run_program("prod", preview=True), tmp_path / attempt)
    for name in render.RENDERED_FILES:
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name


def test_a_changed_program_is_caught(tmp_path: Path):
    """Against the dev stack's snapshot as `make snapshots` writes it (here into tmp_path)."""
    render.write(run_cached("dev")[0], tmp_path / "snapshots" / "dev")
    run = run_program("dev", overrides={"mnistJob": {"maxSteps": 499}}, preview=True)
    with pytest.raises(pytest.fail.Exception, match=r"dev/manifests\.yaml changed; if intended, run `make snapshots`") as failed:
        check_snapshot(run, "dev", tmp_path / "snapshots", tmp_path / "rendered")
    diff = [line for line in str(failed.value).splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")]
    pairs = [(line[0], line[1:].strip()) for line in diff]
    # The Job's spec hash (its watch's, components/proof/watch_verdict.py SPEC_ANNOTATION) moves with its spec.
    spec = [(sign, text) for sign, text in pairs if text.startswith("aks-gpu.io/proof-spec: ")]
    assert [sign for sign, _ in spec] == ["-", "+"]
    assert [pair for pair in pairs if pair not in spec] == [("-", "- '500'"), ("+", "- '499'")]
