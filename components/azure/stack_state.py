"""What this stack already holds, from the engine's state (AzureReader.stack_resources), not
from a tag on the live object: `az aks nodepool update --tags` replaces a pool's whole tag set,
and a pool the stack registered stays the stack's whatever its tags say (issue #45, item 1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.azure.reader import AzureReader, NotRead

AGENT_POOL = "azure-native:containerservice:AgentPool"


def held_pools(reader: AzureReader, cluster: str) -> frozenset[str] | None:
    """The names of the cluster's pools the state holds as AgentPools (their recorded ID names
    the cluster, matched as ARM matches names, without case); None: the state was not read."""
    try:
        held: Mapping[str, Mapping[str, Any]] = reader.stack_resources()
    except NotRead:
        return None
    names = set()
    for entry in held.values():
        outputs = entry.get("outputs") or {}
        pool_id = str(outputs.get("id") or "").lower()
        if entry.get("type") == AGENT_POOL and f"/managedclusters/{cluster.lower()}/agentpools/" in pool_id:
            names.add(str(outputs.get("name") or pool_id.rsplit("/", 1)[-1]))
    return frozenset(names)
