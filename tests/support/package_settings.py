"""A sample stack's settings as the package takes them: the same, less what declares one of the
program's dynamic resources, which the package refuses (components/environment/dynamic_host.py).
Every sample waits for its proof Job (a watch each), and prod grants its deployer (a wait)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tools.mock_engine import merged_config

# An Entra ID group of cluster admins, which access.deployerType none needs (cluster/settings.py).
ADMIN_GROUP = "11111111-2222-3333-4444-555555555555"


def package_overrides(stack: str, stack_file: Path | None = None) -> dict[str, Any]:
    """The keys to override in `stack`'s settings for the package: `run_cached(stack, **these)`
    runs the program with what a GpuEnvironment is given (`merged_config(..., overrides=these)`)."""
    flat = merged_config(stack, stack_file=stack_file)
    job = json.loads(flat.get("aks-gpu:mnistJob", "{}"))
    overrides: dict[str, Any] = {"mnistJob": {**job, "waitForCompletion": False}}
    access = json.loads(flat.get("aks-gpu:access", "{}"))
    if access.get("mode") == "entra" and access.get("deployerType", "ServicePrincipal") != "none":
        groups = access.get("adminGroupObjectIds") or [ADMIN_GROUP]
        kept = {k: v for k, v in access.items() if k != "deployerObjectId"}  # not with deployerType none
        overrides["access"] = {**kept, "deployerType": "none", "adminGroupObjectIds": groups}
    return overrides


def package_config(stack: str, stack_file: Path | None = None) -> dict[str, str]:
    """`stack`'s flat config with `package_overrides`: what a consumer's GpuEnvironment is given."""
    return merged_config(stack, overrides=package_overrides(stack, stack_file), stack_file=stack_file)
