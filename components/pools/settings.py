"""The GPU pools: `gpuPool` (the guide's one pool) or `gpuPools` (several, keyed by AKS pool
name), each pool's settings, the defaults that depend on other members, and one pool's rules."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from components.catalog import api_versions, gpu_sizes
from components.cluster.existing_settings import EXISTING_POOL_MODES, ON_DESTROY, check_existing, check_on_destroy
from components.cluster.settings import SYSTEM_POOL_NAME
from components.config.messages import did_you_mean, fail, json_object, min_above_max, no_node_for_the_job, structured
from components.config.values import (
    MAX_POOL_NODES,
    MODEL,
    NAMESPACE,
    POOL_NAME_ALLOWED,
    POOL_NAME_PATTERN,
    Allowed,
    Bool,
    PoolName,
    SubnetId,
    VmSize,
    list_of,
    one_of,
    whole_number,
)
from components.errors import ConfigError
from components.pools import pool_upgrades
from components.pools.pool_upgrades import PoolUpgradeSettings

# "AKS supports up to 100 node pools per cluster" (azure-aks-docs articles/aks/quotas-skus-regions.md);
# one is the System pool.
MAX_GPU_POOLS = 99


def _spot_price(value: float) -> float:
    # "set a max price, in US dollars (USD) using up to five decimal places ... If you set the
    # max price to -1, the instance won't be evicted based on price" (azure-aks-docs
    # spot-node-pool.md, ms.date 04/06/2025).
    if value != -1 and (value <= 0 or round(value, 5) != value):
        raise ValueError("a price per hour above 0 with at most five decimals, or -1")
    return value


SpotMaxPrice = Annotated[
    float,
    Field(allow_inf_nan=False),
    AfterValidator(_spot_price),
    Allowed("-1 (no cap) or a price per hour in US dollars above 0, with at most five decimals, such as 0.25"),
]


# Who manages the GPU stack (azure-aks-docs articles/aks/use-nvidia-gpu.md,
# aks-managed-gpu-nodes.md, nvidia-gpu-operator.md).
GPU_MANAGEMENT_MODES = ("device-plugin", "aks-managed", "gpu-operator")
# AKS agent pool gpuInstanceProfile values (the 2025-09-01 agentPools schema's enum;
# azure-aks-docs articles/aks/gpu-multi-instance.md).
MIG_PROFILES = ("MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g")


@dataclass(frozen=True, config=MODEL)
class GpuPoolSettings:
    """One GPU User pool (`az aks nodepool add`): an entry of gpuPools, whose key names it."""

    vm_size: VmSize = gpu_sizes.GUIDE_SIZE
    """A GPU (N-series) size (docs/gpu.md#gpu-sizes). Unset: the guide's Standard_NC6 (retired), or Standard_NC6s_v2 with gen2."""
    node_count: whole_number(0, MAX_POOL_NODES) = 1
    """GPU nodes; with autoscaling, the starting count, inside [minCount, maxCount] (default: minCount)."""
    min_count: whole_number(0, MAX_POOL_NODES) | None = None
    """With maxCount (both or neither; alone on an adopted pool Azure autoscales already, keeping Azure's maxCount): the cluster autoscaler's floor (0 scales to zero), at most maxCount; not with AKS-managed GPU nodes (no autoscaler there during the preview)."""
    max_count: whole_number(1, MAX_POOL_NODES) | None = None
    """With minCount (alone on an adopted pool Azure autoscales already, keeping Azure's minCount): the cluster autoscaler's ceiling."""
    gen2: Bool = False
    """The guide's Gen2 variant: refuses a Gen1-only size (Linux pools boot Gen2 when they can)."""
    dedicated_vhd: Bool = False
    """The guide's dedicated GPU image, today AKS-managed GPU nodes (preview): AKS installs the GPU stack, no device plugin; the pool is a resource over the AKS REST API (docs/gpu.md)."""
    spot: Bool = False
    """Spot VMs: Delete on eviction; no price cap unless spotMaxPrice sets one."""
    spot_max_price: SpotMaxPrice | None = None
    """spot only: the most a node may cost per hour, in US dollars, above which Azure evicts it; -1 (the default): no cap, billed up to the pay-as-you-go price. Cost figures count Spot at this ceiling."""
    management: one_of(*GPU_MANAGEMENT_MODES) = "device-plugin"
    """Who installs the GPU driver and device plugin: device-plugin (the guide's DaemonSet), aks-managed (AKS, preview; what dedicatedVhd selects), or gpu-operator (NVIDIA's GPU Operator). device-plugin to gpu-operator or back replaces the pool; to or from aks-managed on a running pool is refused: rename it (docs/gpu.md)."""
    mig_profile: one_of(*MIG_PROFILES) | None = None
    """Multi-instance GPU: slice each GPU (A100, H100 sizes); each slice is one nvidia.com/gpu. Unset: whole GPUs. Fixed when the pool is created."""
    zones: list_of(one_of("1", "2", "3"), 3) = ()
    """The availability zones the nodes spread over (`az aks nodepool add --zones 1 2 3`), fixed when the pool is created. Unset: none, Azure places them; the region must have zones, and the GPU size be offered in each."""
    max_pods: whole_number(10, 250) | None = None
    """Pods per node, fixed when the pool is created. Unset: 250, or on an existing cluster with Azure CNI without overlay its System pool's, which its subnets are sized for; a pool the stack runs already keeps what it has (docs/existing-cluster.md#its-network)."""
    vnet_subnet_id: SubnetId | None = None
    """existingCluster only: the nodes' subnet. Unset: the System pool's, when the cluster's pools have subnets of their own; a pool the stack runs already keeps its own."""
    pod_subnet_id: SubnetId | None = None
    """existingCluster only: the pods' subnet (Azure CNI with dynamic pod IPs). Unset: the System pool's, when it has one; a pool the stack runs already keeps its own."""
    existing: one_of(*EXISTING_POOL_MODES) | None = None
    """existingCluster only: the cluster's own pool of this name, made by hand. use: read from Azure and never registered or changed (no other member: they come from Azure); adopt: imported on the first up as Azure has it; a fixed property set otherwise, or a pool of another type than VirtualMachineScaleSets, is refused, and the preview's adopt: line names each field up changes (docs/existing-cluster.md#coming-from-the-guide-a-cluster-made-by-hand)."""
    on_destroy: one_of(*ON_DESTROY) | None = None
    """existing: adopt only: what `pulumi destroy`, or removing the pool from the config, does to the owner's pool. release (unset): Pulumi forgets it and Azure keeps it (Pulumi's retainOnDelete); delete: the stack may delete it (docs/existing-cluster.md#handing-back-what-was-adopted)."""
    upgrade_settings: PoolUpgradeSettings | None = None
    """How AKS upgrades the pool's nodes: maxSurge, maxUnavailable, drainTimeoutInMinutes, nodeSoakDurationInMinutes, undrainableNodeBehavior. Unset: maxSurge '0', maxUnavailable '1': no GPU quota beyond the pool's nodes, one node down at a time; an adopted pool keeps Azure's, with the config's members over them (docs/lifecycle.md#upgrades-of-a-gpu-pool)."""

    @property
    def managed(self) -> bool:
        """AKS installs the GPU stack: `management: aks-managed`, or the card's `dedicatedVhd: true`."""
        return self.dedicated_vhd or self.management == "aks-managed"

    @property
    def mode(self) -> str:
        return "aks-managed" if self.managed else self.management

    @property
    def owned(self) -> bool:
        """The stack declares the pool (a new one, or one it adopts); `existing: use` is the owner's."""
        return self.existing != "use"

    @property
    def autoscaling(self) -> bool:
        return self.min_count is not None

    @property
    def can_scale_to_zero(self) -> bool:
        # A fixed pool of 0 nodes is refused while the Job is enabled, so only the
        # autoscaler's floor matters to anything that waits for a node.
        return self.min_count == 0


@dataclass(frozen=True, config=MODEL)
class GpuPoolConfig(GpuPoolSettings):
    """The separate User pool of GPU nodes (`az aks nodepool add --name gpu`)."""

    name: PoolName = "gpu"
    """The pool's name (the guide's `--name gpu`); not 'system'."""


# Today's guide (azure-aks-docs articles/aks/use-nvidia-gpu.md) taints the GPU pool so
# that only pods that ask for it land there: `az aks nodepool add ... --node-taints sku=gpu:NoSchedule`.
GPU_TAINT = "sku=gpu:NoSchedule"

# AKS puts this taint (and label) on every node of a Spot pool (azure-aks-docs
# articles/aks/spot-node-pool.md: "A Spot node pool has the
# kubernetes.azure.com/scalesetpriority=spot:NoSchedule taint"). It is declared explicitly
# as well, so the declared taints equal what Azure reports and no diff appears.
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"


def pool_taints(pool: GpuPoolConfig) -> list[str]:
    return [GPU_TAINT, SPOT_TAINT] if pool.spot else [GPU_TAINT]


# gpuPools: AKS pool name -> the members of gpuPool but its name.
GpuPoolMap = Annotated[
    dict[str, GpuPoolSettings],
    Field(min_length=1, max_length=MAX_GPU_POOLS, json_schema_extra={"propertyNames": {"pattern": POOL_NAME_PATTERN}}),
    Allowed(f"a map from pool name to pool settings, with 1 to {MAX_GPU_POOLS} pools"),
]


@dataclasses.dataclass(frozen=True)
class Pools:
    """The stack's GPU pools, each pool's config key, and the members each entry sets."""

    pools: tuple[GpuPoolConfig, ...]
    keys: Mapping[str, str]
    given: Mapping[str, Mapping[str, Any]]

    def key(self, pool: GpuPoolConfig) -> str:
        return self.keys[pool.name]

    @property
    def modes(self) -> frozenset[str]:
        return frozenset(p.mode for p in self.pools)

    @property
    def owned(self) -> tuple[GpuPoolConfig, ...]:
        """The pools the stack declares: new and adopted, not used."""
        return tuple(p for p in self.pools if p.owned)

    @property
    def new(self) -> tuple[GpuPoolConfig, ...]:
        """The pools the stack adds to the cluster."""
        return tuple(p for p in self.pools if p.existing is None)

    def without(self, names: frozenset[str]) -> Pools:
        """These pools but `names` (a group's pools that cannot run), as a new value."""
        return Pools(tuple(p for p in self.pools if p.name not in names), self.keys, self.given)


def gpu_pools(gpu_pool: GpuPoolConfig, pool_map: dict[str, GpuPoolSettings] | None, values: Mapping[str, Any]) -> Pools:
    """gpuPool's one pool, or gpuPools' entries sorted by name, so nothing (resources,
    outputs, messages) depends on the order in which the stack file, `pulumi config set` or
    the CLI's JSON hand them over."""
    if pool_map is None:
        return Pools((gpu_pool,), {gpu_pool.name: f"{NAMESPACE}:gpuPool"}, {gpu_pool.name: values.get("gpuPool", {})})
    if "gpuPool" in values:
        raise ConfigError(
            f"invalid config {NAMESPACE}:gpuPool with {NAMESPACE}:gpuPools: gpuPool is the guide's one GPU pool, "
            "gpuPools several; set one of them"
        )
    settings = [f.name for f in dataclasses.fields(GpuPoolSettings)]
    entries = sorted(pool_map.items())
    return Pools(
        tuple(GpuPoolConfig(name=name, **{f: getattr(entry, f) for f in settings}) for name, entry in entries),
        {name: f"{NAMESPACE}:gpuPools.{name}" for name, _ in entries},
        {name: values["gpuPools"][name] for name, _ in entries},
    )


def check(found: Pools, job_enabled: bool, existing_cluster: bool = False) -> list[str]:
    """Each pool's rules; returns a preview's warnings. An `existing` pool is checked once read (existing_pools)."""
    warnings: list[str] = []
    for pool in found.pools:
        key = found.keys[pool.name]
        check_on_destroy(pool, key, None)
        if pool.existing is not None:
            check_existing(pool, found.given[pool.name], key, existing_cluster)
            continue
        check_gpu_pool(pool, job_enabled, key)
        warnings += check_size(pool.vm_size, pool.gen2, key)
        warnings += check_pool_stack(pool, found.given[pool.name], key)
        pool_upgrades.check(pool.upgrade_settings, key)
    return warnings


def check_size(vm_size: str, gen2: bool, key: str) -> list[str]:
    """Refuses a GPU size the catalog knows cannot work here; returns a preview's warnings of the rest."""
    size = gpu_sizes.CATALOG.get(vm_size)
    if size is None:
        # ARM takes a size in any letter case, but the program's checks (the catalog, the
        # SKU list, the price list's names) read it as Azure lists it: a size the catalog
        # knows in other letters is refused with its spelling, not deployed unchecked.
        spelt = next((name for name in gpu_sizes.CATALOG if name.lower() == vm_size.lower()), None)
        if spelt is not None:
            raise fail(
                f"{key}.vmSize", vm_size, f"write it as Azure lists it, {spelt!r} (the catalog, quota and price checks match names exactly)"
            )
        # Size names share most of their letters ("Standard_N..."): only a near miss is suggested.
        close = did_you_mean(vm_size, list(gpu_sizes.CATALOG), cutoff=0.85)
        if not gpu_sizes.is_gpu_family(vm_size):
            raise fail(
                f"{key}.vmSize",
                vm_size,
                f"not a GPU size{close}; expected an N-series size such as 'Standard_NC4as_T4_v3' (known: {', '.join(gpu_sizes.current_sizes())})",
            )
        # Azure adds sizes faster than this catalog: an unknown N-series size may be fine.
        return [
            f"{key}.vmSize {vm_size} is not in this program's GPU size catalog{close}; "
            "deploying it as given (check its GPU and Gen2 support with `az vm list-skus`)"
        ]
    if not size.gpu.nvidia:
        raise fail(
            f"{key}.vmSize",
            vm_size,
            f"{size.gpus_text}: an {size.gpu.vendor} GPU, which neither the NVIDIA device plugin nor the CUDA proof can use "
            "(AKS runs AMD GPUs with AMD's own GPU Operator, use-amd-gpus.md); expected an NVIDIA size such as 'Standard_NC4as_T4_v3'",
        )
    if gen2 and not size.gen2:
        raise ConfigError(
            f"invalid config {key}: gen2 = true but vmSize {size.name} ({size.gpu_model}) supports Gen1 only; "
            "choose a Gen2-capable size such as Standard_NC4as_T4_v3 (or omit vmSize for the guide's "
            f"{gpu_sizes.GUIDE_GEN2_SIZE}), or set gen2 to false"
        )
    warnings = []
    if size.share < 1:
        warnings.append(
            f"{key}.vmSize {size.name} has {size.gpus_text}: one nvidia.com/gpu per node with that share of the GPU's "
            f"memory, under {size.driver.says if size.driver else 'no driver'}; no MIG, and no AKS page documents partial-GPU sizes"
        )
    if size.not_on_aks:
        warnings.append(f"{key}.vmSize {size.name}: {size.not_on_aks}; deploying it as given")
    return warnings


def pool_map(key: str, raw: Any) -> dict[str, Any]:
    entries = json_object(key, raw)
    if not entries:
        raise fail(key, entries, f"expected at least one pool, such as {{gpu: {{vmSize: {gpu_sizes.GUIDE_GEN2_SIZE}}}}}")
    pools = {}
    for name, entry in entries.items():
        if not re.fullmatch(POOL_NAME_PATTERN, name) or name == SYSTEM_POOL_NAME:
            raise fail(f"{key}.{name}", name, f"a pool name must be {POOL_NAME_ALLOWED}, and not '{SYSTEM_POOL_NAME}'")
        if isinstance(entry, dict) and "name" in entry:
            raise fail(f"{key}.{name}.name", entry["name"], f"the entry's key, {name!r}, is the pool's name; remove name")
        pools[name] = gpu_pool_defaults(structured(f"{key}.{name}", entry, GpuPoolSettings), f"{key}.{name}")
    return pools


def gpu_pool_defaults(value: dict[str, Any], key: str) -> dict[str, Any]:
    """The GPU pool's defaults that depend on other members."""
    value = dict(value)
    # Both or neither, by value: `maxCount: null` is not a maxCount. A pool the cluster has may
    # name one bound of the autoscaler Azure runs on it already: existing_pools.one_bound.
    if (value.get("minCount") is None) != (value.get("maxCount") is None) and value.get("existing") is None:
        given, missing = ("minCount", "maxCount") if value.get("minCount") is not None else ("maxCount", "minCount")
        raise ConfigError(
            f"invalid config {key}: {given} is set without {missing}; "
            "set both to turn the cluster autoscaler on, or neither for a fixed nodeCount"
        )
    if value.get("existing") is not None:
        return value  # the pool's size and counts come from Azure (components/pools/existing_pools.py)
    if "vmSize" not in value:
        # The guide's size for the chosen generation (Standard_NC6, or Standard_NC6s_v2).
        value["vmSize"] = gpu_sizes.default_size(value.get("gen2") is True)
    if "nodeCount" not in value and value.get("minCount") is not None:
        # The autoscaler owns the count; start at the floor so an idle pool costs nothing.
        value["nodeCount"] = value["minCount"]
    return value


def check_gpu_pool(pool: GpuPoolConfig, job_enabled: bool, key: str) -> None:
    if pool.name == SYSTEM_POOL_NAME:
        raise fail(f"{key}.name", pool.name, f"'{SYSTEM_POOL_NAME}' is the System pool's name; pick another")
    if pool.min_count is not None and pool.max_count is not None:
        if pool.min_count > pool.max_count:
            raise min_above_max(key, pool.min_count, pool.max_count)
        if not pool.min_count <= pool.node_count <= pool.max_count:
            raise ConfigError(
                f"invalid config {key}.nodeCount = {pool.node_count}: an autoscaled pool starts inside its range; "
                f"expected {pool.min_count} <= nodeCount <= {pool.max_count}"
            )
    elif job_enabled and pool.node_count == 0:
        raise no_node_for_the_job(key)
    if pool.spot_max_price is not None and not pool.spot:
        raise fail(f"{key}.spotMaxPrice", pool.spot_max_price, f"only with {key}.spot = true: it caps a Spot node's price; remove it")
    # "The minimum value that can be set for maximum pods per node is 10 if and only if the
    # configuration of each node pool has space for a minimum of 30 pods" (azure-aks-docs
    # concepts-network-ip-address-planning.md, ms.date 04/16/2026).
    if pool.max_pods is not None and pool.max_pods < 30 and pool.node_count * pool.max_pods < 30:
        raise ConfigError(
            f"invalid config {key}.maxPods = {pool.max_pods}: AKS takes fewer than 30 pods per node only when the pool's "
            f"{pool.node_count} node(s) have room for 30 pods in all; set maxPods to at least {-(-30 // max(pool.node_count, 1))} "
            "or more nodes"
        )


def managed_key(pool: GpuPoolConfig, key: str) -> str:
    """The key that asked for AKS-managed GPU nodes, as the stack file spells it."""
    return f"{key}.dedicatedVhd = true" if pool.dedicated_vhd else f"{key}.management = aks-managed"


def check_pool_stack(pool: GpuPoolConfig, given: Mapping[str, Any], key: str) -> list[str]:
    """One pool's GPU management settings; returns its warnings. `given` is what its entry sets."""
    if pool.dedicated_vhd and "management" in given and pool.management != "aks-managed":
        raise ConfigError(
            f"invalid config {key}.management = {pool.management!r} with {key}.dedicatedVhd = true: dedicatedVhd "
            "selects AKS-managed GPU nodes; set management to aks-managed, or remove one of them"
        )
    size = gpu_sizes.CATALOG.get(pool.vm_size)
    if pool.mig_profile is not None and (size is None or not size.mig):
        supported = ", ".join(s.name for s in gpu_sizes.CATALOG.values() if s.mig)
        raise ConfigError(
            f"invalid config {key}.migProfile = {pool.mig_profile!r} with vmSize {pool.vm_size}: "
            f"{'not in the catalog' if size is None else size.gpu_model + ' has no multi-instance GPU'}; "
            f"expected one of {supported}, or no migProfile"
        )
    if pool.mode == "gpu-operator":
        return [
            f"{key}.management = gpu-operator: switching a deployed pool between this mode and device-plugin replaces it "
            "(its GPU driver setting cannot change in place), deleting the old pool first (docs/gpu.md)"
        ]
    if not pool.managed:
        return []
    # "Cluster autoscaler isn't supported on managed GPU node pools during preview. Scale
    # these pools manually." (azure-aks-docs articles/aks/aks-managed-gpu-nodes.md,
    # Limitations; added in f2493a9d, 2026-04-23, still there at f63267b4, 2026-07-15).
    if pool.autoscaling:
        raise ConfigError(
            f"invalid config {key}.minCount/maxCount = {pool.min_count}/{pool.max_count} with "
            f"{managed_key(pool, key)}: AKS does not support the cluster autoscaler on managed GPU node pools during "
            "the preview (aks-managed-gpu-nodes.md, Limitations); set a fixed nodeCount and scale the pool by hand"
        )
    # No Kubernetes version floor: "This feature requires Kubernetes version 1.34 or later" left
    # aks-managed-gpu-nodes.md in azure-aks-docs f21c5e447 (2025-10-29), and the page at
    # f63267b4 (2026-07-15, ms.date 07/02/2026) states no minimum.
    what = (
        "AKS-managed GPU nodes, an Azure PREVIEW: AKS installs the GPU driver, device plugin and DCGM exporter, "
        "and this program deploys no device plugin; the pool is created, read and deleted through the AKS "
        "agentPools REST API with your Azure sign-in (docs/gpu.md)"
    )
    retired = "the guide's AKS GPU image (UseGPUDedicatedVHD) was retired on 2025-01-10; deploying its successor instead, "
    warnings = [
        f"{key}.management = aks-managed: a deployed pool cannot switch to or from this mode; a run that would is "
        "refused before anything changes, and a new pool name is the way through (docs/gpu.md)",
        f"{managed_key(pool, key)}: {retired if pool.dedicated_vhd else ''}{what}",
    ]
    if pool.mig_profile:
        warnings.append(
            f"{key}.migProfile = {pool.mig_profile} on AKS-managed GPU nodes: the pool is sent with the "
            f"PREVIEW agentPools API {api_versions.MIG_PREVIEW}, the only kind that has gpuProfile.nvidia.migStrategy"
        )
    return warnings
