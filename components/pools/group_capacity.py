"""Which sizes of a capacity group (aks-gpu:gpuGroups) can run now, and why not: retired, not
offered, or without quota for one node (its family and the regional total, or the regional Spot
quota: azure-aks-docs articles/aks/spot-node-pool.md). Pure. Why one node and not one per pool:
docs/preflight.md, "Capacity groups"."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components.catalog import gpu_sizes
from components.preflight.capacity import quota_names
from components.problem import Problem
from components.seam.azure_facts import Facts


class Verdict(enum.Enum):
    RUNS = "can run"
    #: Not known: Azure was not read, or it lists no quota by that name; the pool is kept.
    NOT_CHECKED = "not checked"
    RETIRED = "retired"
    NOT_OFFERED = "not offered"
    NO_QUOTA = "no quota"

    @property
    def cannot_run(self) -> bool:
        return self in (Verdict.RETIRED, Verdict.NOT_OFFERED, Verdict.NO_QUOTA)


@dataclass(frozen=True)
class GroupPool:
    name: str
    vm_size: str
    spot: bool = False


@dataclass(frozen=True)
class SizeFit:
    pool: str
    vm_size: str
    verdict: Verdict
    why: str
    #: The nodes its free quota holds now, after the rest of the run (None: not known).
    free_nodes: int | None = None


def fit(pool: GroupPool, facts: Facts | None, location: str, drawn: Mapping[str, int]) -> SizeFit:
    """Whether `pool`'s size can run one node now: the fewest nodes any quota it draws on holds.
    `drawn`: the vCPUs of each quota the rest of the run starts with (capacity.drawn)."""
    if (retired := gpu_sizes.retirement(pool.vm_size)) is not None:
        when = retired.retired.isoformat() if retired.retired else "?"
        return SizeFit(pool.name, pool.vm_size, Verdict.RETIRED, f"retired by Azure on {when} and AKS refuses it")
    if facts is None:
        return SizeFit(pool.name, pool.vm_size, Verdict.NOT_CHECKED, "Azure's offers and quota were not read")
    sku = facts.skus.get(pool.vm_size)
    if sku is None:  # `az vm list-skus --all` lists every size of the region, offered or not
        return SizeFit(pool.name, pool.vm_size, Verdict.NOT_OFFERED, f"Azure lists no such size in {location} ({facts.source})")
    if sku.restriction:
        return SizeFit(pool.name, pool.vm_size, Verdict.NOT_OFFERED, f"not offered to this subscription in {location} ({sku.restriction})")
    if sku.vcpus <= 0:
        return SizeFit(pool.name, pool.vm_size, Verdict.NOT_CHECKED, f"Azure lists no vCPU count for it ({facts.source})")
    spot = " Spot" if pool.spot else ""
    held: list[tuple[int, str]] = []
    for name in quota_names(sku, pool.spot):
        usage = facts.usages.get(name)
        if usage is None:
            return SizeFit(pool.name, pool.vm_size, Verdict.NOT_CHECKED, f"no quota named {name} in {location} ({facts.source})")
        free = max(usage.free - drawn.get(name, 0), 0)
        rest = f", {drawn[name]} of them for the rest of this run" if drawn.get(name) else ""
        words = f"'{usage.display}' ({name}) has {free} vCPUs free in {location} (limit {usage.limit}, {usage.current} in use{rest})"
        held.append((free // sku.vcpus, words))
    nodes, words = min(held)
    if nodes < 1:
        return SizeFit(pool.name, pool.vm_size, Verdict.NO_QUOTA, f"no quota for one{spot} node of {sku.vcpus} vCPUs: {words}", 0)
    return SizeFit(pool.name, pool.vm_size, Verdict.RUNS, f"quota for {nodes}{spot} node(s)", nodes)


def fits(pools: Sequence[GroupPool], facts: Facts | None, location: str, drawn: Mapping[str, int]) -> tuple[SizeFit, ...]:
    """Each pool of a group, in the team's order. The proof needs ONE node of the group, not one
    per pool: each size is held to one node beside what the rest of the run starts (`drawn`)."""
    return tuple(fit(pool, facts, location, drawn) for pool in pools)


@dataclass(frozen=True)
class GroupDecision:
    """What preflight decides of one group: the pools it drops, and what it says of each."""

    group: str
    key: str
    fits: tuple[SizeFit, ...]
    #: The pools that run already: never dropped (a drop would delete what runs).
    running: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        """No pool of the group could run, and none runs: a deployment stops."""
        return all(f.verdict.cannot_run and f.pool not in self.running for f in self.fits)

    @property
    def dropped(self) -> tuple[SizeFit, ...]:
        """The pools not declared; none where the group is empty (a preview shows the config as given)."""
        return () if self.empty else tuple(f for f in self.fits if f.verdict.cannot_run and f.pool not in self.running)

    @property
    def kept(self) -> tuple[str, ...]:
        dropped = {f.pool for f in self.dropped}
        return tuple(f.pool for f in self.fits if f.pool not in dropped)

    def problems(self) -> list[Problem]:
        """A warning per pool dropped or kept only because it runs; an empty group's one blocking line."""
        if self.empty:
            sizes = "; ".join(f"{f.pool} ({f.vm_size}): {f.why}" for f in self.fits)
            return [
                Problem(
                    f"{self.key}: no pool of the group can run: {sizes}; request quota, or add a size that can run to "
                    "the group (the config as given is what a preview shows)"
                )
            ]
        rest = ", ".join(f"{f.pool} ({f.vm_size})" for f in self.fits if f.pool in self.kept)
        said = [
            Problem(f"{self.key}: dropping pool {f.pool} ({f.vm_size}): {f.why}; the group serves from {rest}", False) for f in self.dropped
        ]
        said += [
            Problem(f"{self.key}: keeping pool {f.pool} ({f.vm_size}), which runs already, though {f.why}", False)
            for f in self.fits
            if f.verdict.cannot_run and f.pool in self.running
        ]
        return said


def decide(
    group: str, key: str, pools: Sequence[GroupPool], running: frozenset[str], facts: Facts | None, location: str, drawn: Mapping[str, int]
) -> GroupDecision:
    """The group's pools (first choice first) held to Azure's facts; `running`: the pools that run already."""
    return GroupDecision(group, key, fits(pools, facts, location, drawn), running & {p.name for p in pools})
