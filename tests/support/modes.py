"""Whether a preview and a deployment declare the same: a test of the declared graph that runs
one of them only says why with this check, not a comment alone."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from support.plan import planned_by
from tools.azure_mocks import OfflineReader

#: The inputs already checked in this session: each is checked once, as run_cached runs once.
_CHECKED: set[str] = set()


def declares_the_same_in_both_modes(stack: str = "dev", stack_file: Path | None = None, **overrides: Any) -> None:
    """The plan a preview and a deployment of `stack` with `overrides` declare from is the same,
    Args for Args: __main__.py branches on the run's mode only through the plan (its messages
    aside, which say where a deployment stops), so the two runs register the same graph, but
    for what Azure computes once a resource exists (tools/azure_mocks.py, the node resource group).
    `stack_file`: the stack's file, as run_cached takes it."""
    key = json.dumps([stack, str(stack_file), overrides], sort_keys=True)
    if key in _CHECKED:
        return
    preview = planned_by(OfflineReader(), stack, True, stack_file, **overrides)
    deployment = planned_by(OfflineReader(), stack, False, stack_file, **overrides)
    for field in dataclasses.fields(preview):
        if field.name not in ("mode", "messages"):
            assert getattr(preview, field.name) == getattr(deployment, field.name), field.name
    _CHECKED.add(key)
