"""A sample stack's settings as the package takes them, and the program's graph as the package
declares it (components/environment/dynamic_host.py, docs/design/package-dynamic.md).

The settings: the same, less the deployer's grant, whose wait is a dynamic resource the package
refuses (prod grants its deployer). The graph: the program's, less each proof Job's watch, the
dynamic resource the package's plan leaves out (the Job is awaited by pulumi-kubernetes alone),
and the provider hosts those watches run in."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from components.proof import proof_watch
from components.seam.reader import AzureReader
from tools.mock_engine import ProgramRun, RecordingMonitor, Registration, merged_config, reader_of, run_under_mocks

# An Entra ID group of cluster admins, which access.deployerType none needs (cluster/settings.py).
ADMIN_GROUP = "11111111-2222-3333-4444-555555555555"


def package_overrides(stack: str, stack_file: Path | None = None) -> dict[str, Any]:
    """The keys to override in `stack`'s settings for the package: `run_cached(stack, **these)`
    runs the program with what a GpuEnvironment is given (`merged_config(..., overrides=these)`)."""
    flat = merged_config(stack, stack_file=stack_file)
    access = json.loads(flat.get("aks-gpu:access", "{}"))
    if access.get("mode") != "entra" or access.get("deployerType", "ServicePrincipal") == "none":
        return {}
    groups = access.get("adminGroupObjectIds") or [ADMIN_GROUP]
    kept = {k: v for k, v in access.items() if k != "deployerObjectId"}  # not with deployerType none
    return {"access": {**kept, "deployerType": "none", "adminGroupObjectIds": groups}}


def package_config(stack: str, stack_file: Path | None = None) -> dict[str, str]:
    """`stack`'s flat config with `package_overrides`: what a consumer's GpuEnvironment is given."""
    return merged_config(stack, overrides=package_overrides(stack, stack_file), stack_file=stack_file)


def watches(registrations: Sequence[Registration]) -> list[Registration]:
    """The proof's watches the program registers, and the provider hosts they run in (mnist_job.py `_watch_host`)."""
    found = [r for r in registrations if r.type == proof_watch.TYPE]
    hosts = {r.provider for r in found}  # the provider's URN (the mock monitor's Registration drops its ID)
    return [*found, *(r for r in registrations if r.urn in hosts)]


def without_watches(registrations: Sequence[Registration]) -> list[Registration]:
    """The program's registrations as the package declares them: every one but `watches`."""
    left_out = {r.urn for r in watches(registrations)}
    return [r for r in registrations if r.urn not in left_out]


def run_as_a_consumer(
    build: Callable[[AzureReader], object], stack: str, merged: Mapping[str, str], monitor: RecordingMonitor, preview: bool = True
) -> ProgramRun:
    """A program that builds one of the package's components (`build`, handed the mock engine's
    reader), its stack config holding no `aks-gpu:` key; Azure answers as it does for the program's
    run of `stack` with the settings `merged`."""
    monitor.mocks.offline(merged, stack)
    consumers = {key: value for key, value in merged.items() if not key.startswith("aks-gpu:")}
    return run_under_mocks(lambda: build(reader_of(monitor)), stack=stack, config=consumers, monitor=monitor, preview=preview)
