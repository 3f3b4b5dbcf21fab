"""The preflight's saved answers (tests/fixtures/preflight/) and a preview's problems."""

from __future__ import annotations

from pathlib import Path

from tools.mock_engine import run_program

FIXTURES = Path(__file__).parent.parent / "fixtures" / "preflight"

T4 = "Standard_NC4as_T4_v3"


def preview(**overrides):
    return run_program("dev", overrides=overrides, preview=True)


def problems(run) -> list[str]:
    """What preflight found, less what it could not read offline (the SKUs when no file is
    given, the permissions: tests/test_failed_destroy.py has those)."""
    unread = ("preflight: VM size offers", "preflight: the permissions a `pulumi destroy`")
    return [w for w in run.warnings if not w.startswith(unread)]
