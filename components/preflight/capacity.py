"""Whether the region can run the pools: retired sizes, sizes not offered to the
subscription, and vCPU quota (the size's family, the regional total, or Spot's), with a
current size that fits when one does. GPU families start with zero quota, a size is often not
offered in a region, and the guide's Standard_NC6 is retired: each would fail `pulumi up`
after the cluster was created."""

from __future__ import annotations

from dataclasses import dataclass

from components.catalog import gpu_sizes
from components.cluster.settings import SYSTEM_POOL_NAME, SystemPoolConfig
from components.config.values import NAMESPACE
from components.pools import pool_upgrades
from components.pools.settings import Pools
from components.problem import Problem
from components.seam.azure_facts import REGIONAL_CORES, REGIONAL_SPOT_CORES, Facts, Sku

QUOTA_FIX = "request more on the Azure portal's Quotas page (Compute, {location}, '{display}')"


@dataclass(frozen=True)
class PoolNeed:
    """What one node pool asks of the region."""

    key: str
    vm_size: str
    #: Nodes needed for the deployment to finish: the initial count, and one GPU node for
    #: the MNIST Job even when the pool autoscales from zero.
    nodes: int
    #: Nodes the pool may grow to (the autoscaler's maxCount).
    max_nodes: int
    spot: bool = False
    gpu: bool = False
    gen2: bool = False
    #: Nodes AKS adds while it upgrades the pool at its largest (upgradeSettings.maxSurge).
    surge: int = 0
    #: A pool of a capacity group (gpuGroups): its size's offer is the group's to say (group_capacity).
    grouped: bool = False
    #: The availability zones the pool asks for (gpuPools.<name>.zones).
    zones: tuple[str, ...] = ()


@dataclass(frozen=True)
class Demand:
    """What the run asks of the region: the pools it adds, whether each needs a node for the proof
    Job (mnistJob.enabled), and the System pool of the cluster it creates (None in an existing one)."""

    pools: Pools
    job_enabled: bool
    system_pool: SystemPoolConfig | None
    #: The pools of capacity groups (gpuGroups): the proof needs one node of a group, not one of
    #: each of its pools (group_capacity.py holds each size to that node).
    grouped: frozenset[str] = frozenset()


def retired_sizes(pools: Pools, stack: str, grouped: frozenset[str] = frozenset()) -> list[Problem]:
    """A retired size of a pool outside any group (a group's pool is dropped: group_capacity)."""
    retired = [(pool, size) for pool in pools.new if pool.name not in grouped and (size := gpu_sizes.retirement(pool.vm_size))]
    return [
        Problem(
            f"{pools.key(pool)}.vmSize {size.name} ({size.gpu_model}) was retired by Azure on "
            f"{size.retired} and AKS refuses it; pick a current size: "
            f"`{set_size_command(size.replacement or 'Standard_NC4as_T4_v3', stack, pools.key(pool))}`"
        )
        for pool, size in retired
    ]


def set_size_command(size: str, stack: str, key: str = f"{NAMESPACE}:gpuPool") -> str:
    return f"pulumi config set --path {key}.vmSize {size} -s {stack}"


def pool_needs(demand: Demand, facts: Facts) -> list[PoolNeed]:
    """The pools, less what a deployed stack already runs (Azure's usage counts those)."""
    needs = []
    for gpu in demand.pools.new:  # the cluster's own pools have their nodes already
        grouped = gpu.name in demand.grouped
        start = max(gpu.node_count, 1) if demand.job_enabled and not grouped else gpu.node_count
        most = max(gpu.max_count or gpu.node_count, start)
        surge = pool_upgrades.surge_nodes(gpu.upgrade_settings, most)
        existing_size, existing_nodes = facts.existing_pools.get(gpu.name, (None, 0))
        if existing_size == gpu.vm_size:
            start, most = max(start - existing_nodes, 0), max(most - existing_nodes, 0)
        needs.append(
            PoolNeed(
                demand.pools.key(gpu),
                gpu.vm_size,
                start,
                most,
                gpu.spot,
                gpu=True,
                gen2=gpu.gen2,
                surge=surge,
                grouped=grouped,
                zones=gpu.zones,
            )
        )
    if (system := demand.system_pool) is not None:
        # The System pool is created with the cluster and never changed by `pulumi up` after.
        system_nodes = 0 if SYSTEM_POOL_NAME in facts.existing_pools else system.node_count
        needs.append(PoolNeed(f"{NAMESPACE}:systemPool", system.vm_size, system_nodes, system_nodes))
    return needs


def capacity(demand: Demand, facts: Facts, stack: str, location: str) -> list[Problem]:
    needs = pool_needs(demand, facts)
    problems = [p for need in needs for p in offer(need, facts, location)]
    offered = [n for n in needs if n.vm_size in facts.skus and not facts.skus[n.vm_size].restriction]
    problems += quota(offered, facts, location, stack)
    return problems


def offer(need: PoolNeed, facts: Facts, location: str) -> list[Problem]:
    """Is the size offered to this subscription in the region, and does Azure agree with the
    catalog about it?"""
    sku = facts.skus.get(need.vm_size)
    size = f"{need.key}.vmSize {need.vm_size}"
    if need.grouped and (sku is None or sku.restriction):
        return []  # the group drops the pool, or says why it keeps it (group_capacity.GroupDecision)
    if sku is None:
        # `az vm list-skus --all` lists every size of the region, offered or not.
        blocking = gpu_sizes.is_gpu_family(need.vm_size)
        return [Problem(f"{size}: Azure lists no such size in {location} ({facts.source})", blocking)]
    if sku.restriction:
        return [Problem(f"{size} is not offered to this subscription in {location} ({sku.restriction}); pick another size or region")]
    problems = []
    if missing := [zone for zone in need.zones if zone not in sku.zones]:
        offered = f"zone(s) {', '.join(sku.zones)}" if sku.zones else "no zone"
        problems.append(
            Problem(
                f"{need.key}.zones: Azure offers {need.vm_size} to this subscription in {offered} of {location}, not zone(s) "
                f"{', '.join(missing)} ({facts.source}); pick from those zones, or another size or region"
            )
        )
    known = gpu_sizes.CATALOG.get(need.vm_size)
    if known and sku.gpus is not None and sku.gpus != known.gpus:
        problems.append(Problem(f"{size}: Azure says {sku.gpus} GPU(s) per VM, this program's catalog {known.gpus}", False))
    if known and sku.generations and ("V2" in sku.generations) != known.gen2:
        problems.append(
            Problem(
                f"{size}: Azure lists Hyper-V generations {', '.join(sku.generations)}, this program's catalog "
                f"{'Gen2' if known.gen2 else 'Gen1 only'}; Azure's list decides",
                False,
            )
        )
    if need.gen2 and sku.generations and "V2" not in sku.generations:
        problems.append(
            Problem(f"{need.key}.gen2 = true but Azure offers {need.vm_size} as {', '.join(sku.generations)} only in {location}")
        )
    return problems


def quota(needs: list[PoolNeed], facts: Facts, location: str, stack: str) -> list[Problem]:
    """Each quota the pools draw on (quota_names), against its free vCPUs."""
    demands: dict[str, list[tuple[PoolNeed, int]]] = {}
    for need in needs:
        for name in quota_names(facts.skus[need.vm_size], need.spot):
            demands.setdefault(name, []).append((need, facts.skus[need.vm_size].vcpus))
    return [problem for name, users in demands.items() if (problem := _quota(name, users, facts, location, stack))]


def _quota(name: str, users: list[tuple[PoolNeed, int]], facts: Facts, location: str, stack: str) -> Problem | None:
    """One quota against the vCPUs its pools start with, may grow to, and take while AKS upgrades them."""
    usage, first = facts.usages.get(name), users[0][0]
    if usage is None:
        return Problem(f"{first.key}.vmSize {first.vm_size}: no quota named {name} in {location} ({facts.source}); not checked", False)
    start = sum(n.nodes * v for n, v in users)
    most = sum(n.max_nodes * v for n, v in users)
    upgrading = sum((n.max_nodes + n.surge) * v for n, v in users)
    pools = ", ".join(f"{n.key}.vmSize {n.vm_size} ({n.nodes} x {v} vCPUs)" for n, v in users)
    numbers = f"'{usage.display}' ({usage.name}) in {location}: {usage.current} in use, limit {usage.limit}"
    fix = QUOTA_FIX.format(location=location, display=usage.display)
    if start > usage.free:
        gpu = next((n for n, _ in users if n.gpu), None)
        extra = suggestion(gpu, facts, location, stack) if gpu else ""
        return Problem(f"{pools} need{'s' if len(users) == 1 else ''} {start} vCPUs of {numbers}; {fix}{extra}")
    if most > usage.free:
        return Problem(f"{pools} may grow to {most} vCPUs of {numbers}: the autoscaler would stall; {fix}", False)
    if upgrading > usage.free:
        surging = ", ".join(f"{n.key}.upgradeSettings.maxSurge ({n.surge} node(s))" for n, _ in users if n.surge)
        return Problem(
            f"{surging}: an upgrade adds {upgrading - most} vCPUs to {most} of {numbers}; AKS's upgrades would fail with "
            f"QuotaExceeded; {fix}, or leave maxSurge unset (0: one node down at a time, no extra quota)",
            False,
        )
    return None


def quota_names(sku: Sku, spot: bool) -> list[str]:
    """The quotas a node of `sku` draws on: its family's and the regional total, or for a Spot
    node the regional Spot quota instead of both (azure-aks-docs articles/aks/spot-node-pool.md)."""
    return [REGIONAL_SPOT_CORES] if spot else [sku.family, REGIONAL_CORES]


def drawn(needs: list[PoolNeed], facts: Facts) -> dict[str, int]:
    """The vCPUs of each quota that `needs` start with, where Azure offers their sizes."""
    total: dict[str, int] = {}
    for need in needs:
        if (sku := facts.skus.get(need.vm_size)) is not None and not sku.restriction:
            for name in quota_names(sku, need.spot):
                total[name] = total.get(name, 0) + need.nodes * sku.vcpus
    return total


def suggestion(need: PoolNeed, facts: Facts, location: str, stack: str) -> str:
    """A current catalog size with the same or a newer GPU, offered here, with room in its
    quotas for this pool's start: the one with the fewest vCPUs."""
    fits = [
        (sku.vcpus, size.name, size)
        for size in gpu_sizes.alternatives(need.vm_size)
        if (sku := facts.skus.get(size.name)) is not None
        and not sku.restriction
        and all(q in facts.usages and facts.usages[q].free >= need.nodes * sku.vcpus for q in quota_names(sku, need.spot))
    ]
    if not fits:
        return ""
    size = min(fits, key=lambda f: f[:2])[2]
    return (
        f", or use {size.name} ({size.gpu_model}, offered in {location} with free quota): `{set_size_command(size.name, stack, need.key)}`"
    )
