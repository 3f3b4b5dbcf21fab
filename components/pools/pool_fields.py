"""An agent pool, field by field, in ARM's REST names: whether AKS changes each in place or fixes
it at creation, with the source; how adoption compares it; how the declared pool sets it. The
typed `AgentPool` (gpu_pool.py) replaces, deleting first, on every fixed field (azure-native
itself replaces only on gpuInstanceProfile, vmSize and nodePublicIPTags: pulumi-azure-native
provider/pkg/gen/replacement.go at 1b7112af), the `ManagedGpuPool`'s diff updates in place only
what AKS changes in place, adoption compares the fixed ones with the live pool: else a fixed
field would preview as `~ update` and fail at `pulumi up` (docs/lifecycle.md has the table)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from components.pools import pool_upgrades
from components.pools.settings import GpuPoolConfig, pool_taints


@dataclass(frozen=True)
class Field:
    #: AKS changes it on an existing pool (`az aks nodepool update`, `scale` or `upgrade`).
    in_place: bool
    source: str
    #: From the pool's config and network (pool_network.PoolNetwork); None: the pool does not
    #: declare it of itself (the plan gives its tags and labels, the cluster its version).
    declare: Callable[[GpuPoolConfig, Any], Any] | None = None
    #: The config key that sets it on an adopted pool: a fixed one must equal the live pool's
    #: (`live` reads it as the config names it), an in-place one follows the config.
    config: str | None = None
    live: Callable[[Any], Any] | None = None
    #: Adoption: the stack sets it itself rather than declaring it as Azure has it.
    by_stack: bool = False


def _spot(pool: GpuPoolConfig, value: Any) -> Any:
    # `--priority Spot --eviction-policy Delete --spot-max-price -1`, where -1 means "the
    # instance won't be evicted based on price" (spot-node-pool.md).
    return value if pool.spot else None


def _is_spot(live: Any) -> bool:
    return str(live.scale_set_priority or "").lower() == "spot"


def management(pool: Mapping[str, Any]) -> str:
    """Who serves a pool's GPUs, from its gpuProfile (REST names): AKS (nvidia.managementMode
    Managed), an operator (driver None: "skip GPU driver installation", nvidia-gpu-operator.md),
    or a device plugin beside the driver AKS installs."""
    properties = pool.get("properties") or pool
    profile = properties.get("gpuProfile") or {}
    if str((profile.get("nvidia") or {}).get("managementMode") or "").lower() == "managed":
        return "aks-managed"
    return "gpu-operator" if str(profile.get("driver") or "").lower() == "none" else "device-plugin"


SPOT_SOURCE = 'spot-node-pool.md (04/06/2025): "You can\'t change ScaleSetPriority or SpotMaxPrice after creation"'
# Sources: azure-aks-docs at fb060abe (ms.date per page), azure-cli acs `_params.py` at 0088c878
# (the flags of `az aks nodepool update`). The order is the typed pool's replaceOnChanges.
AGENT_POOL = {
    "vmSize": Field(
        False,
        'create-node-pools.md (07/13/2026): "You can\'t change the virtual machine (VM) size of a node pool after you create it"',
        lambda pool, network: pool.vm_size,
        "vmSize",
        lambda live: live.vm_size,
    ),
    "osType": Field(False, "no `az aks nodepool update` flag; set at `nodepool add`", lambda pool, network: "Linux"),
    "type": Field(
        False,
        'no `az aks nodepool update` flag; "The AKS cluster must use Virtual Machine Scale Sets" (create-node-pools.md)',
        lambda pool, network: "VirtualMachineScaleSets",
    ),
    "maxPods": Field(
        False,
        'create-node-pools.md: "You can\'t change the max pods setting of a node pool after you create it"',
        lambda pool, network: network.max_pods,
        "maxPods",
        lambda live: live.max_pods,
    ),
    "vnetSubnetID": Field(
        False,
        "no update flag; AKS: \"Changing property 'agentPoolProfile.vnetSubnetID' is not allowed\" (Azure/AKS#695)",
        lambda pool, network: network.vnet_subnet_id,
        "vnetSubnetId",
        lambda live: live.vnet_subnet_id,
    ),
    "podSubnetID": Field(
        False,
        "no `az aks nodepool update` flag: set at `nodepool add --pod-subnet-id` only",
        lambda pool, network: network.pod_subnet_id,
        "podSubnetId",
        lambda live: live.pod_subnet_id,
    ),
    "availabilityZones": Field(
        False,
        'reliability-availability-zones-configure.md (03/26/2026): "You can\'t change the number of availability zones after you create a node pool"',
        lambda pool, network: list(pool.zones) or None,
        "zones",
        # Azure's order as it is: the adopted pool declares it back, so the import sees no change.
        lambda live: tuple(live.availability_zones or ()),
    ),
    "scaleSetPriority": Field(False, SPOT_SOURCE, lambda pool, network: _spot(pool, "Spot"), "spot", _is_spot),
    "scaleSetEvictionPolicy": Field(
        False,
        'spot-node-pool.md: "The priority and eviction-policy values can only be set during node pool creation"',
        lambda pool, network: _spot(pool, "Delete"),
    ),
    "spotMaxPrice": Field(
        False,
        SPOT_SOURCE,
        lambda pool, network: _spot(pool, pool.spot_max_price if pool.spot_max_price is not None else -1),
        "spotMaxPrice",
        lambda live: live.spot_max_price if _is_spot(live) else None,
    ),
    "gpuInstanceProfile": Field(
        False,
        'gpu-multi-instance.md (05/22/2026): "You can\'t change the applied GPU instance profile after node pool creation"',
        # `az aks nodepool add --gpu-instance-profile MIG1g` (GA).
        lambda pool, network: pool.mig_profile,
        "migProfile",
        lambda live: live.gpu_instance_profile,
    ),
    "gpuProfile": Field(
        False,
        'aks-managed-gpu-nodes.md (07/02/2026): "The managementMode, migStrategy, and driver fields under gpuProfile are immutable after node pool creation"',
        # The GPU Operator installs its own driver: `--gpu-driver none` (nvidia-gpu-operator.md).
        lambda pool, network: {"driver": "None"} if pool.mode == "gpu-operator" else None,
        "management",
        management,
    ),
    "mode": Field(
        True,
        'use-system-pools.md (04/30/2026): "You can change modes for both system node pools and user node pools"',
        lambda pool, network: "User",
    ),
    # User pools may scale to zero ("User node pools can contain zero or more nodes", create-node-pools.md).
    "count": Field(True, "`az aks nodepool scale`", lambda pool, network: pool.node_count, "nodeCount", by_stack=True),
    # `az aks nodepool add --enable-cluster-autoscaler --min-count --max-count` (today's guide).
    "enableAutoScaling": Field(
        True,
        "`az aks nodepool update --enable-cluster-autoscaler / --disable-cluster-autoscaler`",
        lambda pool, network: True if pool.autoscaling else None,
        by_stack=True,
    ),
    "minCount": Field(
        True,
        "`az aks nodepool update --update-cluster-autoscaler --min-count`",
        lambda pool, network: pool.min_count if pool.autoscaling else None,
        "minCount",
        by_stack=True,
    ),
    "maxCount": Field(
        True,
        "`az aks nodepool update --update-cluster-autoscaler --max-count`",
        lambda pool, network: pool.max_count if pool.autoscaling else None,
        "maxCount",
        by_stack=True,
    ),
    "nodeTaints": Field(
        True,
        'use-node-taints.md (05/07/2024): "Update a node pool to add a node taint using the az aks nodepool update command"',
        lambda pool, network: pool_taints(pool),
    ),
    "nodeLabels": Field(
        True,
        'use-labels.md (06/10/2024): "You can update the labels on an existing node pool. Note that updating labels will overwrite the old labels"',
    ),
    "tags": Field(True, "`az aks nodepool update --tags`", None, by_stack=True),
    "orchestratorVersion": Field(True, "`az aks nodepool upgrade --kubernetes-version`", None, by_stack=True),
    # By default no surge node, which a GPU quota rarely holds (pool_upgrades.py).
    "upgradeSettings": Field(
        True,
        "`az aks nodepool update --max-surge --max-unavailable --drain-timeout --node-soak-duration --undrainable-node-behavior`",
        lambda pool, network: pool_upgrades.effective(pool.upgrade_settings, fill=pool.existing is None) or None,
        "upgradeSettings",
        by_stack=True,
    ),
}


UPGRADES = "upgradeSettings"
# What an adopting config sets over Azure's values: the counts (the upgrades merge member by member).
ADOPT_IN_PLACE = tuple(f.config for f in AGENT_POOL.values() if f.by_stack and f.config is not None and f.config != UPGRADES)


def upgrades(facts: Any, given: Mapping[str, Any], key: str) -> pool_upgrades.PoolUpgradeSettings | None:
    """A pool's upgrade settings as Azure has them, with what an adopting config sets over them."""
    return pool_upgrades.adopted(facts.member(UPGRADES), given.get(UPGRADES), key)


def compared(facts: Any) -> dict[str, Any]:
    """The fields an adopting config is compared with, by config name, as the live pool has them."""
    return {field.config: field.live(facts) for field in AGENT_POOL.values() if field.config is not None and field.live is not None}


def fixed() -> list[str]:
    return [name for name, how in AGENT_POOL.items() if not how.in_place]


def in_place() -> tuple[str, ...]:
    return tuple(name for name, how in AGENT_POOL.items() if how.in_place)


def declared(pool: GpuPoolConfig, network: Any) -> dict[str, Any]:
    """The GPU pool's fields as it declares them, in REST names and JSON values (unset: None)."""
    return {name: field.declare(pool, network) for name, field in AGENT_POOL.items() if field.declare}


def switched_on(pool: Mapping[str, Any]) -> frozenset[str]:
    """The fixed fields a running pool (the agentPools GET's answer) has set other than a
    declaration leaving them unset would. Not the subnets: AKS reports the one it generated for
    a pool given none, and no setting takes a pool's subnet away without a new cluster."""
    properties = pool.get("properties") or pool
    on = {"gpuProfile"} if management(pool) != "device-plugin" else set()
    if properties.get("gpuInstanceProfile"):
        on.add("gpuInstanceProfile")
    if str(properties.get("scaleSetPriority") or "").lower() == "spot":
        on |= {"scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice"}
    return frozenset(on)


def left_to_azure(declared: Mapping[str, Any], switched_on: Collection[str] = ()) -> list[str]:
    """The fixed fields a typed pool leaves to Azure (`ignoreChanges`): those the declaration
    leaves unset, unless the running pool has one set (`switched_on`), which the declaration
    then switches off: a replacement. Why: docs/lifecycle.md, "A refresh and the fixed
    properties left unset"."""
    return [name for name in fixed() if declared.get(name) is None and name not in switched_on]


@functools.cache
def inputs() -> dict[str, str]:
    """Every input of azure-native's AgentPool by its REST name, with its SDK argument (its
    `pulumi.getter` names). An import reads each into the state, and the update after it deletes
    a member the program leaves out (docs/existing-cluster.md, "What the adopting `up` changes").
    Imported when asked: azure-native takes seconds, and the managed pool's provider host needs none."""
    from pulumi import _types
    from pulumi_azure_native import containerservice

    names = _types.input_type_py_to_pulumi_names(containerservice.AgentPoolArgs)
    return {rest: py for py, rest in names.items() if py not in ("resource_group_name", "resource_name", "agent_pool_name")}


def passed_through() -> list[str]:
    """The inputs an adopted pool declares as Azure has them, so the import changes none of
    them: all but what the stack sets itself (`by_stack`)."""
    return [rest for rest in inputs() if not (rest in AGENT_POOL and AGENT_POOL[rest].by_stack)]


# Members of the description that are no input (Azure reports them), or that name the pool.
READ_ONLY = {
    *("name", "id", "currentOrchestratorVersion", "provisioningState", "nodeImageVersion", "etag", "eTag", "e_tag"),
    *("resourceGroup", "systemData", "properties", "status"),
}


def unset(value: Any) -> bool:
    """No value, as the agentPools API omits one: null, an empty list or object."""
    return value is None or value == [] or value == {}


def live_inputs(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs of azure-native's AgentPool the pool's description has, by their REST name."""
    spelt = {rest.lower(): rest for rest in inputs()}
    return {spelt[m.lower()]: v for m, v in facts.items() if m.lower() in spelt and not unset(v)}


def undeclared_members(facts: Mapping[str, Any]) -> list[str]:
    """The members of the pool's description that azure-native's AgentPool has no input for:
    the import reads none of them, and no update sends them."""
    known = {m.lower() for m in (*inputs(), *READ_ONLY)}
    return sorted(m for m, v in facts.items() if m.lower() not in known and not unset(v) and v is not False)
