"""A plan's Args in a preview and a deployment, compared. The program branches on the mode
only in the plan (components/plan.py `Mode`; __main__.py hands the components nothing else of
it), so where both modes' plans hand out the same Args the components declare the same graph:
a test of the graph then runs one mode, and this check, with no engine, stands for the other."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from components.plan import Plan
from components.pools.existing_pool import UsedPool
from support.plan import named_as_a_run, planned_by
from tools.azure_mocks import OfflineReader


def _comparable(value: Any) -> Any:
    """UsedPool is a plain class (equal only to itself): compared by what it holds."""
    if isinstance(value, UsedPool):
        return ("UsedPool", vars(value))
    if isinstance(value, tuple):
        return tuple(_comparable(v) for v in value)
    return value


def args_of(plan: Plan) -> dict[str, Any]:
    """What the plan hands the components: every field but the mode and the messages."""
    return {f.name: _comparable(getattr(plan, f.name)) for f in dataclasses.fields(plan) if f.name not in ("mode", "messages")}


def same_in_both_modes(reader: Callable[[], OfflineReader], stack: str = "dev", stack_file: Path | None = None, **overrides: Any) -> Plan:
    """The preview's plan, once the deployment's is known to hand the components the same Args
    (`reader` makes a fresh reader per plan, as each run gets its own)."""
    named_as_a_run(stack)
    preview = planned_by(reader(), stack, True, stack_file, **overrides)
    deployment = planned_by(reader(), stack, False, stack_file, **overrides)
    assert args_of(preview) == args_of(deployment), "a preview and a deployment would declare different graphs"
    return preview


#: The inputs already checked in this session: each is checked once, as run_cached runs once.
_CHECKED: set[str] = set()


def declares_the_same_in_both_modes(stack: str = "dev", stack_file: Path | None = None, **overrides: Any) -> None:
    """`same_in_both_modes` with the offline reader, once per input in a session: a test of the
    declared graph that runs one mode says why with this check, not a comment alone."""
    key = json.dumps([stack, str(stack_file), overrides], sort_keys=True)
    if key not in _CHECKED:
        same_in_both_modes(OfflineReader, stack, stack_file, **overrides)
        _CHECKED.add(key)
