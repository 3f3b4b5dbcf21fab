"""The GPU pools an existing cluster already has, named by `gpuPools.<name>.existing` (the
guide's reader made them by hand with `az aks nodepool add`): read from Azure before
anything is registered, each resolved into the pool settings the rest of the program runs on.

  - `use`: the pool as it is. Never registered, so no `up`, `refresh` or `destroy` of this
    stack changes or deletes it; it gets what its GPU stack lacks and a proof Job.
  - `adopt`: the stack takes it over. It declares the live pool's settings, and on the `up`
    that adopts it the resource carries Pulumi's `import` option with the pool's ARM ID.

Pure: no resource, no call (the cluster was read once, components/azure/cluster_facts.py).
docs/existing-cluster.md, "Coming from the guide", is the user's side of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from components.azure.cluster_facts import OWNER_TAG, ClusterFacts, PoolFacts
from components.catalog import gpu_sizes
from components.config import GpuPoolConfig, PoolUpgradeSettings, StackConfig, pool_upgrades, snake
from components.config.existing import ADOPT_IN_PLACE
from components.config.pools import MIG_PROFILES, check_size
from components.config.workloads import check_modes
from components.errors import PreflightError

# Every input of azure-native's AgentPool (pulumi_azure_native containerservice/agent_pool.py,
# SDK 3.29.0, api 2025-09-01) by its REST name, with its SDK argument; tests/test_adoption.py
# holds it to the SDK. An import reads each of them that the live pool has into the stack's
# inputs (pulumi-azure-native provider/pkg/provider/provider.go at 006a62af, `Read`: with no
# old inputs, `ResponseToSdkInputs` of the whole response), and the update that follows
# diffs the program's inputs against those: a member the program leaves out is deleted
# (provider/pkg/provider/diff.go `objectDiff`: "If there was no new property, it has been
# deleted"), and one of the fixed members replaces the pool (pool_mutability, replaceOnChanges).
AGENT_POOL_INPUTS = {
    "availabilityZones": "availability_zones",
    "capacityReservationGroupID": "capacity_reservation_group_id",
    "count": "count",
    "creationData": "creation_data",
    "enableAutoScaling": "enable_auto_scaling",
    "enableEncryptionAtHost": "enable_encryption_at_host",
    "enableFIPS": "enable_fips",
    "enableNodePublicIP": "enable_node_public_ip",
    "enableUltraSSD": "enable_ultra_ssd",
    "gatewayProfile": "gateway_profile",
    "gpuInstanceProfile": "gpu_instance_profile",
    "gpuProfile": "gpu_profile",
    "hostGroupID": "host_group_id",
    "kubeletConfig": "kubelet_config",
    "kubeletDiskType": "kubelet_disk_type",
    "linuxOSConfig": "linux_os_config",
    "localDNSProfile": "local_dns_profile",
    "maxCount": "max_count",
    "maxPods": "max_pods",
    "messageOfTheDay": "message_of_the_day",
    "minCount": "min_count",
    "mode": "mode",
    "networkProfile": "network_profile",
    "nodeLabels": "node_labels",
    "nodePublicIPPrefixID": "node_public_ip_prefix_id",
    "nodeTaints": "node_taints",
    "orchestratorVersion": "orchestrator_version",
    "osDiskSizeGB": "os_disk_size_gb",
    "osDiskType": "os_disk_type",
    "osSKU": "os_sku",
    "osType": "os_type",
    "podIPAllocationMode": "pod_ip_allocation_mode",
    "podSubnetID": "pod_subnet_id",
    "powerState": "power_state",
    "proximityPlacementGroupID": "proximity_placement_group_id",
    "scaleDownMode": "scale_down_mode",
    "scaleSetEvictionPolicy": "scale_set_eviction_policy",
    "scaleSetPriority": "scale_set_priority",
    "securityProfile": "security_profile",
    "spotMaxPrice": "spot_max_price",
    "tags": "tags",
    "type": "type",
    "upgradeSettings": "upgrade_settings",
    "virtualMachineNodesStatus": "virtual_machine_nodes_status",
    "virtualMachinesProfile": "virtual_machines_profile",
    "vmSize": "vm_size",
    "vnetSubnetID": "vnet_subnet_id",
    "windowsProfile": "windows_profile",
    "workloadRuntime": "workload_runtime",
}
# What the stack sets on an adopted pool itself: the members AKS changes in place, from the
# config where it sets them and from the live pool otherwise (settings_from_azure), its tags
# with the stack's added, and the version it leaves to the owner (ignoreChanges).
SET_BY_THE_STACK = {"count", "enableAutoScaling", "minCount", "maxCount", "upgradeSettings", "tags", "orchestratorVersion"}
# Every other input is declared as Azure has it, absent where the pool has none (the fixed
# ones are then left to Azure: gpu_pool.typed_pool_ignores), so the import changes none of them.
PASSED_THROUGH = {rest: sdk for rest, sdk in AGENT_POOL_INPUTS.items() if rest not in SET_BY_THE_STACK}
# Members of the description that are no input (Azure reports them; the import reads none
# of them into the inputs, and no update sends them), or that name the pool.
READ_ONLY = {
    "name",
    "id",
    "currentOrchestratorVersion",
    "provisioningState",
    "nodeImageVersion",
    "etag",
    "eTag",
    "e_tag",
    "resourceGroup",
    "systemData",
    "properties",
    "status",
}
_SPELT = {rest.lower(): rest for rest in AGENT_POOL_INPUTS}


def unset(value: Any) -> bool:
    """No value, as the agentPools API omits one: null, an empty list or object."""
    return value is None or value == [] or value == {}


def live_inputs(facts: PoolFacts) -> dict[str, Any]:
    """The inputs of azure-native's AgentPool the pool's description has, by their REST name
    (a saved `az aks show` spells some otherwise: osDiskSizeGb, vnetSubnetId)."""
    return {_SPELT[m.lower()]: v for m, v in facts.profile.items() if m.lower() in _SPELT and not unset(v)}


def declared_members(facts: PoolFacts) -> dict[str, Any]:
    """The members of PASSED_THROUGH the pool's description has, by their REST name."""
    return {m: v for m, v in live_inputs(facts).items() if m in PASSED_THROUGH}


def undeclared_members(facts: PoolFacts) -> list[str]:
    """The members of the pool's description that azure-native's AgentPool has no input for:
    the import does not read them, and no update sends them."""
    known = {m.lower() for m in (*AGENT_POOL_INPUTS, *READ_ONLY)}
    return sorted(m for m, v in facts.profile.items() if m.lower() not in known and not unset(v) and v is not False)


@dataclass(frozen=True)
class LivePool:
    """A pool of the cluster that the stack uses or adopts, as Azure has it."""

    facts: PoolFacts
    #: use or adopt.
    how: str
    #: adopt: the ARM ID the adopting `up` imports; None once the pool carries this stack's tag.
    import_id: str | None = None

    @property
    def taints(self) -> tuple[str, ...]:
        return self.facts.node_taints


def mode_of(facts: PoolFacts) -> str:
    """Who serves the pool's GPUs, from its gpuProfile: AKS (nvidia.managementMode Managed),
    an operator (driver None: "skip GPU driver installation", nvidia-gpu-operator.md), or a
    device plugin beside the driver AKS installs (the guide's pool)."""
    if (facts.gpu_management or "").lower() == "managed":
        return "aks-managed"
    if (facts.gpu_driver or "").lower() == "none":
        return "gpu-operator"
    return "device-plugin"


# A fixed property (components/azure/pool_mutability.py) as the config names it, and as
# the live pool has it.
def _fixed(facts: PoolFacts) -> dict[str, Any]:
    return {
        "vmSize": facts.vm_size,
        "spot": (facts.scale_set_priority or "").lower() == "spot",
        "spotMaxPrice": facts.spot_max_price if (facts.scale_set_priority or "").lower() == "spot" else None,
        "migProfile": facts.gpu_instance_profile,
        "management": mode_of(facts),
        "maxPods": facts.max_pods,
        "vnetSubnetId": facts.vnet_subnet_id,
        "podSubnetId": facts.pod_subnet_id,
    }


def _same(member: str, given: Any, live: Any) -> bool:
    # ARM matches resource IDs without case (the az CLI's `resourcegroups`).
    if member in ("vnetSubnetId", "podSubnetId") and isinstance(given, str) and isinstance(live, str):
        return given.lower() == live.lower()
    return bool(given == live)


def _upgrade_settings(facts: PoolFacts, given: Mapping[str, Any], key: str) -> PoolUpgradeSettings | None:
    """The pool's upgradeSettings as Azure has them, with what an adopting config sets over
    them, member by member: a member neither sets stays unset, never this program's default
    for a new pool (pool_upgrades.NO_SURGE), which would change the owner's upgrades."""
    live = facts.member("upgradeSettings")
    members = {f.name for f in dataclasses.fields(PoolUpgradeSettings)}
    known = {snake(k): v for k, v in live.items() if snake(k) in members and v is not None} if isinstance(live, Mapping) else {}
    config = given.get("upgradeSettings")
    if isinstance(config, Mapping):
        known.update({snake(k): v for k, v in config.items() if v is not None})
    if not known:
        return None
    try:
        settings = PoolUpgradeSettings(**known)
    except ValidationError as error:
        problem = error.errors()[0]
        raise PreflightError(
            f"{key}: the pool {facts.name} has upgradeSettings.{'.'.join(str(p) for p in problem['loc'])} = "
            f"{str(problem.get('input'))[:80]!r} in Azure, which this program cannot take ({problem['msg']}); manage that pool by hand"
        ) from None
    if isinstance(config, Mapping):
        pool_upgrades.check(settings, key, fill=False)
    return settings


def settings_from_azure(pool: GpuPoolConfig, given: Mapping[str, Any], facts: PoolFacts, key: str) -> GpuPoolConfig:
    """The pool's settings as Azure has them; with `adopt`, what the config sets in place
    (counts, upgradeSettings) over them, and a fixed property set otherwise refused."""
    fixed = _fixed(facts)
    if pool.existing == "adopt":
        for member, live in fixed.items():
            if member in given and not _same(member, given[member], live):
                raise PreflightError(
                    f"{key}.{member} = {given[member]!r}, but the pool {facts.name} has {live!r} in Azure, which AKS fixes when a "
                    "pool is created: adopting it with another value would replace it, deleting the owner's pool; remove "
                    f"{member} to adopt it as it is, or add a new pool"
                )
    autoscaled = facts.enable_auto_scaling and facts.min_count is not None and facts.max_count is not None
    values: dict[str, Any] = {
        "name": pool.name,
        "existing": pool.existing,
        "vm_size": facts.vm_size,
        "node_count": facts.count,
        "min_count": facts.min_count if autoscaled else None,
        "max_count": facts.max_count if autoscaled else None,
        "spot": fixed["spot"],
        "spot_max_price": fixed["spotMaxPrice"],
        "mig_profile": facts.gpu_instance_profile if facts.gpu_instance_profile in MIG_PROFILES else None,
        "management": fixed["management"],
        # An adopted pool's network is kept from the live pool by its plan (pool_network.plan),
        # which says so; the config may only repeat it (above).
        "max_pods": given.get("maxPods") if pool.existing == "adopt" else facts.max_pods,
        "vnet_subnet_id": given.get("vnetSubnetId") if pool.existing == "adopt" else facts.vnet_subnet_id,
        "pod_subnet_id": given.get("podSubnetId") if pool.existing == "adopt" else facts.pod_subnet_id,
        "upgrade_settings": _upgrade_settings(facts, given if pool.existing == "adopt" else {}, key),
    }
    if pool.existing == "adopt":
        for member in ADOPT_IN_PLACE:
            if member in given and member != "upgradeSettings":
                values[snake(member)] = getattr(pool, snake(member))
        values["gen2"] = pool.gen2
    try:
        return GpuPoolConfig(**values)
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise PreflightError(
            f"{key}.existing = {pool.existing}: the pool {facts.name} has {where} = {problem.get('input')!r} in Azure, which this "
            f"program cannot take ({problem['msg']}); manage that pool by hand"
        ) from None


def _refused(key: str, how: str, found: ClusterFacts, why: str) -> PreflightError:
    return PreflightError(f"{key}.existing = {how}: {why} (cluster {found.resource_group}/{found.name})")


def live_pool(pool: GpuPoolConfig, key: str, found: ClusterFacts, owner: str) -> LivePool:
    """The cluster's pool that `pool` names, checked: it exists, has an NVIDIA GPU, and is
    not this stack's own (use) or another stack's (adopt)."""
    how = str(pool.existing)
    facts = next((p for p in found.pools if p.name == pool.name), None)
    if facts is None:
        pools = ", ".join(p.name for p in found.pools) or "none"
        raise _refused(key, how, found, f"the cluster has no pool named {pool.name!r} (its pools: {pools}); check the name")
    size = gpu_sizes.CATALOG.get(facts.vm_size)
    if not gpu_sizes.is_gpu_family(facts.vm_size) or (size is not None and not size.gpu.nvidia):
        gpu = "no GPU" if not gpu_sizes.is_gpu_family(facts.vm_size) else f"an {size.gpu.vendor if size else 'unknown'} GPU"
        raise _refused(key, how, found, f"its pool {pool.name} is {facts.vm_size}, with {gpu}: expected an NVIDIA GPU pool")
    if (facts.os_type or "Linux").lower() != "linux":
        raise _refused(
            key, how, found, f"its pool {pool.name} runs {facts.os_type}: the guide's device plugin and proof run on Linux pools"
        )
    if how == "adopt" and facts.mode.lower() == "system":
        raise _refused(key, how, found, f"its pool {pool.name} is a System pool, and this stack's pools are User pools: use it instead")
    tagged = facts.tags.get(OWNER_TAG)
    if how == "use" and tagged == owner:
        raise _refused(
            key,
            how,
            found,
            f"the pool carries this stack's tag ({OWNER_TAG} = {owner}): the stack created or adopted it, and a run without it "
            "deletes it; to hand it back, `pulumi state delete` its AgentPool first (docs/existing-cluster.md, handing a pool back)",
        )
    if how == "adopt" and tagged and tagged != owner:
        raise _refused(key, how, found, f"the pool belongs to another stack ({OWNER_TAG} = {tagged}); adopt it there, or use it")
    pool_type = str(facts.member("type") or "VirtualMachineScaleSets")
    if how == "adopt" and pool_type.lower() != "virtualmachinescalesets":
        # The program declares VirtualMachineScaleSets pools only, and `type` is fixed when a
        # pool is created (pool_mutability): adopting another would replace it.
        raise _refused(
            key,
            how,
            found,
            f"the pool {facts.name} is type {pool_type[:40]}, and this program adopts only VirtualMachineScaleSets pools (AKS fixes "
            "a pool's type when it is created, so declaring it would replace the pool): use it instead, or add a new pool",
        )
    if how == "adopt" and mode_of(facts) == "aks-managed":
        raise _refused(
            key, how, found, "the pool is AKS-managed GPU nodes (gpuProfile.nvidia.managementMode Managed): use it, or add a new pool"
        )
    import_id = None
    if how == "adopt" and tagged != owner:
        if not found.resource_id:
            raise _refused(key, how, found, "the cluster's description has no id, so the pool's ARM ID is not known")
        import_id = f"{found.resource_id}/agentPools/{facts.name}"
    return LivePool(facts, how, import_id)


def resolve(cfg: StackConfig, found: ClusterFacts | None, owner: str) -> tuple[StackConfig, dict[str, LivePool], list[str]]:
    """The config with each `existing` pool's settings read from the cluster, the live pools
    by name, and what a preview says of them. `owner` is this stack's owner tag value."""
    if found is None or not any(p.existing for p in cfg.gpu_pools):
        return cfg, {}, []
    live: dict[str, LivePool] = {}
    pools, lines = [], []
    given = cfg.given_pools
    for pool in cfg.gpu_pools:
        if pool.existing is None:
            pools.append(pool)
            continue
        key = cfg.pool_key(pool)
        live[pool.name] = found_pool = live_pool(pool, key, found, owner)
        resolved = settings_from_azure(pool, given.get(pool.name, {}), found_pool.facts, key)
        lines += check_size(resolved.vm_size, resolved.gen2, key)
        pools.append(resolved)
        lines.append(line(key, resolved, found_pool))
    resolved_cfg = dataclasses.replace(cfg, gpu_pools=tuple(pools))
    check_modes(tuple(p for p in resolved_cfg.gpu_pools), {p.name: cfg.pool_key(p) for p in resolved_cfg.gpu_pools})
    return resolved_cfg, live, lines


def unread_plugin_lines(cfg: StackConfig) -> list[str]:
    """A pool used as it is gets the stack's device plugin only where nothing of the cluster's
    serves it; when the cluster's DaemonSets could not be read, that is not known."""
    return [
        f"{cfg.pool_key(p)} (use): what the cluster runs was not read, so this stack puts its device plugin on {p.name}; if a "
        "device plugin of the cluster's serves it already, that is two on one node: check with `kubectl get daemonsets "
        "--all-namespaces`, or save that list as preflight.kubernetesFile"
        for p in cfg.gpu_pools
        if p.existing == "use" and p.mode == "device-plugin"
    ]


def line(key: str, pool: GpuPoolConfig, live: LivePool) -> str:
    """The pool in one line, as a preview says what it read."""
    counts = f"{pool.min_count}-{pool.max_count} (autoscaler)" if pool.autoscaling else f"{pool.node_count}"
    taints = ", ".join(live.taints) or "no taints"
    serves = {
        "aks-managed": "AKS installs its GPU stack: this stack installs nothing on it",
        "gpu-operator": "its driver is None: a GPU Operator must serve it; this stack installs nothing on it",
        "device-plugin": "AKS installs its driver: it gets a device plugin unless one serves it already",
    }[pool.mode]
    if live.how == "use":
        what = "the owner's, read from Azure and never changed by this stack"
    elif live.import_id:
        what = f"adopted: this `up` imports it and declares it as Azure has it, tagged {OWNER_TAG} (the `adopt:` line says what it changes)"
    else:
        what = "adopted earlier (it carries this stack's tag): a pool of this stack"
    if live.how == "adopt" and (left := undeclared_members(live.facts)):
        what += f"; it also has {', '.join(left)}, which azure-native's AgentPool has no input for: this stack never sends them"
    return f"existing pool: {key} ({live.how}): {counts} x {pool.vm_size}, {taints}; {what}; {serves}"
