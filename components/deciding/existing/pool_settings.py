"""A GPU pool's agent-pool settings as the typed pool declares them (azure-native's AgentPool
keyword arguments), and what `pulumi up` leaves to Azure among them: worked out here, below
both the plan and the components, so the plan can say what an adopting `up` changes
(`adopted_pool_plan`) from the very settings components/resources/gpu_pool.py then declares.
Pure: it declares nothing (azure-native's `...Args` types and enums are plain values)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from pulumi import _types
from pulumi_azure_native import containerservice

from components.config import VERSION_UPGRADE_CHANNELS, GpuPoolConfig, UpgradeConfig, camel_case, pool_upgrades, snake
from components.config.pools import pool_taints
from components.deciding.azure import pool_mutability
from components.deciding.existing import adoption, ownership, pool_network
from components.deciding.existing.agent_pool_members import AGENT_POOL_INPUTS, PASSED_THROUGH, declared_members
from components.deciding.existing.existing_pools import LivePool
from components.deciding.existing.pool_network import PoolNetwork
from components.reading.reader import RunningPool

# The agentPools REST spelling of the members whose snake_case the camel-casing gets wrong.
REST_NAMES = {"vnet_subnet_id": "vnetSubnetID", "pod_subnet_id": "podSubnetID"}


def gpu_pool_settings(pool: GpuPoolConfig, network: PoolNetwork | None = None) -> dict[str, Any]:
    """The GPU pool's agent-pool properties, as azure-native keyword arguments.

    Autoscaling: `enableAutoScaling` with `minCount`/`maxCount` is `az aks nodepool add
    --enable-cluster-autoscaler --min-count --max-count` (today's guide). User pools may
    scale to zero ("User node pools can contain zero or more nodes", create-node-pools.md).
    Spot: `--priority Spot --eviction-policy Delete --spot-max-price -1`, where -1 means
    "the instance won't be evicted based on price" (spot-node-pool.md).
    Network: the subnets and pods per node that fit the cluster (pool_network.plan).
    """
    network = network or pool_network.plan(None, "", pool.max_pods)
    upgrade = pool_upgrades.effective(pool.upgrade_settings, fill=pool.existing is None)
    settings: dict[str, Any] = {
        "mode": containerservice.AgentPoolMode.USER,
        # gpuInstanceProfile (GA): `az aks nodepool add --gpu-instance-profile MIG1g`
        # (azure-aks-docs articles/aks/gpu-multi-instance.md).
        "gpu_instance_profile": pool.mig_profile,
        # The GPU Operator installs its own driver: `--gpu-driver none` (nvidia-gpu-operator.md).
        "gpu_profile": containerservice.GPUProfileArgs(driver=containerservice.GPUDriver.NONE) if pool.mode == "gpu-operator" else None,
        "os_type": containerservice.OSType.LINUX,
        "type": containerservice.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
        "vm_size": pool.vm_size,
        "count": pool.node_count,
        "max_pods": network.max_pods,
        "vnet_subnet_id": network.vnet_subnet_id,
        "pod_subnet_id": network.pod_subnet_id,
        "node_taints": pool_taints(pool),
        # How AKS upgrades the nodes; by default no surge node, which a GPU quota rarely holds
        # (components/config/pool_upgrades.py says why and what it costs); an adopted pool's
        # as Azure has them, with what the config sets over them.
        "upgrade_settings": containerservice.AgentPoolUpgradeSettingsArgs(**{snake(k): v for k, v in upgrade.items()}) if upgrade else None,
    }
    if pool.autoscaling:
        settings.update(enable_auto_scaling=True, min_count=pool.min_count, max_count=pool.max_count)
    if pool.spot:
        settings.update(
            scale_set_priority=containerservice.ScaleSetPriority.SPOT,
            scale_set_eviction_policy=containerservice.ScaleSetEvictionPolicy.DELETE,
            spot_max_price=pool.spot_max_price if pool.spot_max_price is not None else -1,
        )
    return settings


def pool_ignore_changes(pool: GpuPoolConfig, version_moves: bool) -> list[str] | None:
    """What `pulumi up` must leave to Azure on the GPU pool: the count, when the cluster
    autoscaler owns it; the version, when something else moves it: an upgrade channel (AKS
    upgrades node pools with the control plane: auto-upgrade-cluster.md), or an existing
    cluster's owner. Unset is not enough: azure-native's Read writes a property that changed
    outside Pulumi into the stored inputs, and its Diff then reports the program's missing
    value as a deletion, an update on every `up` (pulumi-azure-native provider.go `Read`,
    applyDiff of the outputs' change; `Diff`/objectDiff: `deletes[k] = old`).
    tests/test_existing_cluster.py pins it."""
    ignored = []
    if pool.autoscaling:
        ignored.append("count")
    if version_moves:
        ignored.append("orchestratorVersion")
    return ignored or None


def typed_pool_ignores(pool: GpuPoolConfig, version_moves: bool, settings: Mapping[str, Any], running: RunningPool | None) -> list[str]:
    """The typed pool's ignoreChanges: `pool_ignore_changes`, and the fixed properties its
    `settings` (azure-native's keyword arguments) leave unset, which a refresh may fill in and
    which would then replace the pool, unless the running pool has one set and the settings
    switch it off (pool_mutability.left_to_azure)."""
    declared = {REST_NAMES.get(k, camel_case(k)): v for k, v in settings.items()}
    switched_on = running.switched_on if running is not None else frozenset()
    return (pool_ignore_changes(pool, version_moves) or []) + pool_mutability.left_to_azure(declared, switched_on)


def agent_pool_settings(
    pool: GpuPoolConfig,
    network: PoolNetwork | None,
    tags: Mapping[str, str] | None,
    live: LivePool | None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The typed pool's arguments but its names and version; an adopted pool's as Azure has them
    (adopted_settings). `labels`: its capacity group's node label (gpuGroups), added to an
    adopted pool's own, which an update would otherwise overwrite (use-labels.md: "updating
    labels will overwrite the old labels"); a pool in no group sets none."""
    settings = {"tags": dict(tags) if tags else None, **gpu_pool_settings(pool, network)}
    if live is not None:
        settings.update(adopted_settings(live, pool, tags or {}))
    if labels:
        settings["node_labels"] = {**(settings.get("node_labels") or {}), **labels}
    return settings


def version_moves(upgrade: UpgradeConfig) -> bool:
    return upgrade.channel in VERSION_UPGRADE_CHANNELS


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


def rest_properties(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The typed pool's arguments as the agentPools API names and spells them, unset ones left out."""
    rest_name = {sdk: rest for rest, sdk in AGENT_POOL_INPUTS.items()}
    return {rest_name[k]: plain(v) for k, v in settings.items() if v is not None}


def adopted_pool_plan(
    pool: GpuPoolConfig,
    key: str,
    network: PoolNetwork | None,
    tags: Mapping[str, str],
    live: LivePool,
    running: RunningPool | None,
    labels: Mapping[str, str] | None = None,
) -> adoption.Plan:
    """The adopting `up` of the owner's pool: the import, then the update field by field; a
    replacement refused. The version is the owner's on an existing cluster (ignoreChanges)."""
    assert live.import_id is not None, "only the adopting run imports"
    settings = agent_pool_settings(pool, network, tags, live, labels)
    ignored = typed_pool_ignores(pool, True, settings, running)
    return adoption.pool_plan(key, live.facts, live.import_id, rest_properties(settings), ignored)
