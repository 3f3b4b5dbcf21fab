"""A stack's plan (components/plan.py) by a plain call, with no mock engine: what a run of the
program would say before it declares anything, from the same config and offline reader."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi.runtime.settings
import pytest

from components.cost import cost
from components.plan import Mode, Plan, build_plan
from components.stack import parse
from tools.azure_mocks import OfflineReader
from tools.mock_engine import merged_config
from tools.stack_files import ROOT, project_name


def planned(
    stack: str = "dev", preview: bool = True, feature_state: str = "Registered", cluster: dict[str, Any] | None = None, **overrides: Any
) -> Plan:
    """The plan `run_program(stack, overrides=overrides, preview=preview)` declares from:
    its config merged as that run merges it, and the offline reader it is handed
    (`feature_state` and `cluster` as conftest's run_cached takes them)."""
    return planned_by(OfflineReader(feature_state, cluster), stack, preview, **overrides)


def plan_warnings(plan: Plan) -> list[str]:
    """The plan's warnings, as the run logs them (`pulumi.log.warn`), in order."""
    return [m.text for m in plan.messages if m.level == "warn"]


def plan_infos(plan: Plan) -> list[str]:
    """The plan's lines for the record (`pulumi.log.info`), in order."""
    return [m.text for m in plan.messages if m.level == "info"]


@dataclass(frozen=True)
class Lines:
    """What a run says before it declares anything: its warnings and its lines for the record."""

    warnings: list[str]
    infos: list[str]


def lines(stack: str = "dev", preview: bool = True, **overrides: Any) -> Lines:
    """The lines `run_cached(stack, preview, ..., **overrides)` says from its plan."""
    plan = planned(stack, preview, **overrides)
    return Lines(plan_warnings(plan), plan_infos(plan))


def named_as_a_run(stack: str) -> None:
    """Pulumi's project and stack names as a run of `stack` sets them: a few checks ask Pulumi for
    the project (components/cluster/existing_cluster_checks.py `stack_pools`, `pool_name_conflicts`),
    which a plain call of the plan in a fresh process would otherwise see as Pulumi's default,
    "project", and take the stack's own tagged pools for another's."""
    pulumi.runtime.settings._set_project(project_name())
    pulumi.runtime.settings._set_stack(stack)


def planned_by(reader: OfflineReader, stack: str = "dev", preview: bool = True, stack_file: Path | None = None, **overrides: Any) -> Plan:
    """The plan `run_program(stack, overrides=overrides, monitor=RecordingMonitor(AzureMocks(reader=reader)),
    preview=preview, stack_file=stack_file)` declares from: a test's own reader (a stack state, a
    Kubernetes list, a refused read, Azure's answers), readied as that run readies it."""
    named_as_a_run(stack)
    merged = merged_config(stack, overrides=overrides, stack_file=stack_file)
    reader.offline(merged, stack)
    cfg = parse(merged, project_name(), stack, ROOT)
    return build_plan(cfg, reader, Mode.of(preview), project=project_name(), stack=stack, environ=os.environ)


def lines_by(reader: OfflineReader, stack: str = "dev", preview: bool = True, stack_file: Path | None = None, **overrides: Any) -> Lines:
    """What that run (`planned_by`'s) says from its plan."""
    plan = planned_by(reader, stack, preview, stack_file, **overrides)
    return Lines(plan_warnings(plan), plan_infos(plan))


def estimated_cost(plan: Plan) -> dict[str, Any]:
    """The estimatedCost output a run exports from the plan (__main__.py: `cost.output`)."""
    assert plan.estimate is not None, "the run exports no estimatedCost"
    return cost.output(plan.estimate)


#: A preview, then a deployment: `run_program(..., preview=...)` for each.
MODES = (True, False)


def refusals(
    error: type[Exception],
    match: str,
    reader: Callable[[], OfflineReader] = OfflineReader,
    stack: str = "dev",
    stack_file: Path | None = None,
    **overrides: Any,
) -> list[str]:
    """The one line the plan of a preview and of a deployment each stops with (`match`, as
    pytest.raises matches it), each from a fresh `reader()`: what `run_program` of the same
    stack, overrides and reader raises, since __main__.py builds the plan before it declares
    anything (so nothing is registered). The lines, a preview's first."""
    said = []
    for preview in MODES:
        with pytest.raises(error, match=match) as raised:
            planned_by(reader(), stack, preview, stack_file, **overrides)
        assert "\n" not in str(raised.value), str(raised.value)
        said.append(str(raised.value))
    return said
