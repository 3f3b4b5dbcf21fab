"""Checks against Azure before anything is created (`preflight`): how strict they are, and the saved
answers of Azure and the stack's saved state a stack may name instead of live calls."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Annotated

from pydantic import Field
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass

from components import files as file_checks
from components.config.messages import fail
from components.config.values import MODEL, NAMESPACE, Allowed, one_of
from components.errors import ConfigError

PREFLIGHT_MODES = ("enforce", "warn", "off")
# A path Linux can open: PATH_MAX is 4096 bytes, each name at most 255 (NAME_MAX).
FilePath = Annotated[str, Field(min_length=1, max_length=4096), Allowed("a file path (relative to the project), at most 4096 characters")]


@dataclass(frozen=True, config=MODEL)
class PreflightConfig:
    """Checks against the Azure subscription before anything is created (docs/preflight.md)."""

    mode: one_of(*PREFLIGHT_MODES) = "enforce"
    """enforce: a deployment stops on a problem Azure would refuse; warn: it warns and goes on; off: no checks (skusFile and usageFile are then not read, and said so). Two device plugins on one node stop a deployment in every mode (docs/preflight.md)."""
    skus_file: FilePath | None = None
    """With usageFile: `az vm list-skus --location <loc> --resource-type virtualMachines --all -o json`, saved (relative to the project). Set, no live call is made."""
    usage_file: FilePath | None = None
    """With skusFile: `az vm list-usage --location <loc> -o json`, saved (relative to the project)."""
    prices_file: FilePath | None = None
    """A saved Azure Retail Prices API response (JSON with Items), relative to the project. Set, no live call is made; unset, the API, or where it cannot be read (make render, a runner without the network) the shipped snapshot, its date said (docs/preflight.md)."""
    cluster_file: FilePath | None = None
    """existingCluster only: `az aks show --output json` of the cluster, saved (relative to the project), which the offline render (make render) uses instead of assumed facts. pulumi preview and up read the cluster from Azure."""
    kubernetes_file: FilePath | None = None
    """existingCluster, or gpuGroups: `kubectl get namespaces,daemonsets --all-namespaces --show-managed-fields --output json` of the cluster, saved (relative to the project), which the offline render checks against; on a cluster the stack created, with `configmaps` after `daemonsets`, for whether it has the priority expander's ConfigMap already (docs/gpu.md). pulumi preview and up read the cluster itself."""
    state_file: FilePath | None = None
    """existingCluster, or gpuGroups: `pulumi stack export` of this stack, saved (relative to the project), or the rehearsal `make render WRITE_STATE=` writes, which the offline render plans on as `up` would on that state (the day after adopting, or after creating the cluster), showing what `up` would change in each resource it holds; `make render STATE_FILE=` names one for a single render. pulumi preview and up read the stack's state from its backend."""


def check_preflight(preflight: PreflightConfig, root: Path) -> list[str]:
    """The files' rules; returns what a run says of a file it will not read."""
    key = f"{NAMESPACE}:preflight"
    files = {to_camel(f.name): getattr(preflight, f.name) for f in dataclasses.fields(preflight) if f.name.endswith("_file")}
    given = [member for member in ("skusFile", "usageFile") if files[member]]
    if len(given) == 1:
        missing = "usageFile" if given == ["skusFile"] else "skusFile"
        raise ConfigError(f"invalid config {key}: {given[0]} is set without {missing}; set both, or neither for live facts")
    for member, path in files.items():
        # A stat, never an open: a FIFO would block the run, a device never end (components/files.py).
        why = file_checks.problem(root / str(path)) if path else None
        if why and not os.path.lexists(root / str(path)):
            raise fail(f"{key}.{member}", path, f"expected an existing file (relative to {root})")
        if why:
            raise fail(f"{key}.{member}", path, f"{why}; expected a saved file (a regular file)")
    # mode off skips the size and quota checks, the only readers of skusFile and usageFile
    # (components/preflight/preflight.py load_facts); the other files are read in every mode.
    if preflight.mode == "off" and given:
        return [
            f"{key}.skusFile and usageFile are not read: {key}.mode = off skips the VM size and quota checks they are for; "
            "set mode to warn or enforce to check them, or remove them"
        ]
    return []
