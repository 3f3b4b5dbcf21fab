"""A GPU pool the cluster already had (components/azure/existing_pools.py): the pool used as it
is, which the stack never registers (`UsedPool`), and what an adopted pool declares beyond
this program's own settings, so that importing it changes nothing Azure fixes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

import pulumi_kubernetes as k8s
from pulumi import _types

from components.azure import ownership
from components.azure.agent_pool_members import PASSED_THROUGH, declared_members
from components.azure.existing_pools import LivePool
from components.catalog import gpu_sizes
from components.config import GpuPoolConfig

# The gpuManagement output of a pool the stack uses (its GPU stack is as Azure has it).
USED_MANAGEMENT = {
    "device-plugin": "device-plugin-daemonset (existing pool)",
    "aks-managed": "aks-managed (existing pool)",
    "gpu-operator": "gpu-operator (existing pool)",
}


def tolerations_for(taints: Sequence[str]) -> tuple[k8s.core.v1.TolerationArgs, ...]:
    """What a pod must tolerate to land on nodes with these taints, as AKS writes them
    (`key=value:Effect`, or `key:Effect`)."""
    tolerations = []
    for taint in taints:
        pair, _, effect = taint.rpartition(":")
        key, has_value, value = pair.partition("=")
        if has_value:
            tolerations.append(k8s.core.v1.TolerationArgs(key=key, operator="Equal", value=value, effect=effect or None))
        else:
            tolerations.append(k8s.core.v1.TolerationArgs(key=key, operator="Exists", effect=effect or None))
    return tuple(tolerations)


def adopted_settings(live: LivePool, pool: GpuPoolConfig, owner_tags: Mapping[str, str]) -> dict[str, Any]:
    """What an adopted pool declares as Azure has it, beside the members the stack sets itself
    (agent_pool_members.SET_BY_THE_STACK): every other input of the AgentPool, as the live pool has
    it, or unset where it has none (so a fixed one is left to Azure, not set to this program's
    choice: the Spot pool's eviction policy, its price cap, the pool's type, its GPU profile),
    and its tags with this stack's added. As azure-native's AgentPool arguments; a nested
    object keeps its REST spelling, which the SDK sends as it is."""
    members = declared_members(live.facts)
    declared: dict[str, Any] = {sdk: members.get(rest) for rest, sdk in PASSED_THROUGH.items()}
    declared["tags"] = {**ownership.without(live.facts.tags, owner_tags), **owner_tags}
    if live.facts.member("enableAutoScaling") is False and not pool.autoscaling:
        declared["enable_auto_scaling"] = False  # as Azure says it, not left out (which the update would send as a deletion)
    return declared


def plain(value: Any) -> Any:
    """A declared value as the engine is sent it: an SDK `...Args` object as an object of its
    wire names, an enum as its value (pulumi sdk/python/lib/pulumi/_types.py
    `input_type_to_dict`, which the SDK's serialize_property uses; None members left out)."""
    if isinstance(value, Enum):
        return value.value
    if _types.is_input_type(type(value)):
        return {k: plain(v) for k, v in _types.input_type_to_dict(value).items()}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class UsedPool:
    """A pool of the cluster used as it is (`existing: use`): what the device plugin, the
    proof Job and the outputs need of it. Not a resource: nothing of this stack holds it."""

    node_pool = None

    def __init__(self, pool: GpuPoolConfig, live: LivePool) -> None:
        self.pool = pool
        self.live = live
        self.name = pool.name
        self.vm_size = pool.vm_size
        self.generation = gpu_sizes.generation(pool.vm_size)
        self.management = USED_MANAGEMENT[pool.mode]
        self.gpus_per_node = gpu_sizes.gpus_per_node(pool.vm_size, pool.mig_profile)
        self.tolerations = tolerations_for(live.taints)
