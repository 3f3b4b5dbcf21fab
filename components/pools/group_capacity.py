"""Which sizes of a capacity group (aks-gpu:gpuGroups) can run now, and why not: each pool
of the group read against Azure's facts and the catalog, as capacity.py reads one pool.
A size is retired (the catalog), not offered (no SKU in the region, or a Location
restriction), without quota for one node (its family and the regional total, or the
regional Spot quota for a Spot pool: azure-aks-docs articles/aks/spot-node-pool.md), or
it can run, with its free quota in nodes. Pure: the plan decides what is dropped from it.
Why one node and not one per pool: docs/preflight.md, "Capacity groups"."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components.catalog import gpu_sizes
from components.preflight.capacity import quota_names
from components.problem import Problem
from components.seam.azure_facts import Facts, Sku


class Verdict(enum.Enum):
    """What Azure's facts say of one size of a group, today."""

    RUNS = "can run"
    #: Not known: Azure was not read, or it lists no quota by that name; the pool is kept.
    NOT_CHECKED = "not checked"
    RETIRED = "retired"
    NOT_OFFERED = "not offered"
    NO_QUOTA = "no quota"

    @property
    def cannot_run(self) -> bool:
        """The size cannot run at all today: the pool would never get a node."""
        return self in (Verdict.RETIRED, Verdict.NOT_OFFERED, Verdict.NO_QUOTA)


@dataclass(frozen=True)
class GroupPool:
    """One pool of a group, as the decision reads it (never the whole config)."""

    name: str
    vm_size: str
    spot: bool = False


@dataclass(frozen=True)
class SizeFit:
    """One pool of a group, as Azure's facts stand for it."""

    pool: str
    vm_size: str
    verdict: Verdict
    #: Why, in words ("retired by Azure on 2023-09-06", "Azure lists no such size in eastus").
    why: str
    #: The nodes its free quota holds now, after what the rest of the run starts (None: not known).
    free_nodes: int | None = None


def fit(pool: GroupPool, facts: Facts | None, location: str, drawn: Mapping[str, int]) -> SizeFit:
    """Whether `pool`'s size can run one node now. `drawn`: the vCPUs of each quota that the
    rest of the run starts with (capacity.drawn), which this node cannot have."""
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
    return _quota_fit(pool, sku, facts, location, drawn)


def _quota_fit(pool: GroupPool, sku: Sku, facts: Facts, location: str, drawn: Mapping[str, int]) -> SizeFit:
    """The nodes each quota the size draws on holds, the fewest of them deciding."""
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
    """What preflight decides of one group: the pools it drops (they cannot run at all, and the
    stack does not run them), and what it says of each."""

    group: str
    #: The group's config key (aks-gpu:gpuGroups.<group>), as messages name it.
    key: str
    fits: tuple[SizeFit, ...]
    #: The pools that run already: never dropped (a drop would delete what runs).
    running: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        """No pool of the group could run, and the stack runs none of them: a deployment stops."""
        return all(f.verdict.cannot_run and f.pool not in self.running for f in self.fits)

    @property
    def dropped(self) -> tuple[SizeFit, ...]:
        """The pools not declared. None where the group is empty: a deployment stops there, and a
        preview (or preflight.mode warn) shows the config as given."""
        if self.empty:
            return ()
        return tuple(f for f in self.fits if f.verdict.cannot_run and f.pool not in self.running)

    @property
    def kept(self) -> tuple[str, ...]:
        dropped = {f.pool for f in self.dropped}
        return tuple(f.pool for f in self.fits if f.pool not in dropped)

    def problems(self) -> list[Problem]:
        """One warning per dropped pool and per pool kept only because it runs; the empty
        group's one blocking line, naming each size and why."""
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
