"""What `make lint` would run for a team's stacks."""

from __future__ import annotations

import subprocess

from tools.stack_files import ROOT


def lint_plan(*stacks: str) -> str:
    """What `make lint` would run for these stacks (make -n: nothing runs)."""
    return subprocess.run(
        ["make", "-n", "--no-print-directory", "lint", f"STACKS={' '.join(stacks)}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
