"""Shared fixtures: every test runs the real program (or one component) under mocks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.mock_engine import ProgramRun, run_program  # noqa: E402


@pytest.fixture(scope="module")
def dev() -> ProgramRun:
    """The dev stack as `pulumi up -s dev` would declare it."""
    return run_program("dev")


@pytest.fixture
def program() -> Callable[..., ProgramRun]:
    """Runs the dev stack's config with overrides: program(gpuPool={...}, protect=True)."""

    def run(stack: str = "dev", **overrides: Any) -> ProgramRun:
        return run_program(stack, overrides=overrides)

    return run
