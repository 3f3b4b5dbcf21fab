"""What a pod must tolerate to land on a GPU pool: the taints of the pool as the program
declares it, or as the cluster runs it (a used or adopted pool, components/pools/
existing_pools.py). One source for every pod that lands on a pool: the plan decides the
device plugin's from it, and GpuPool and UsedPool carry it for the proof Jobs and the others."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pulumi_kubernetes as k8s

from components.pools.existing_pools import LivePool
from components.pools.settings import GpuPoolConfig, pool_taints

Tolerations = tuple[k8s.core.v1.TolerationArgs, ...]


def tolerations_for(taints: Sequence[str]) -> Tolerations:
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


def pool_tolerations(pool: GpuPoolConfig, live: LivePool | None) -> Tolerations:
    """A pool's: the taints Azure runs it with where the cluster has it already (used or
    adopted), else the program's own (`sku=gpu` and the Spot taint: pools.pool_taints)."""
    return tolerations_for(live.taints if live is not None else pool_taints(pool))


def merged(each: Iterable[Sequence[k8s.core.v1.TolerationArgs]]) -> Tolerations:
    """What a pod serving all of several pools must tolerate: each pool's tolerations, once."""
    return tuple({(t.key, t.operator, t.value, t.effect): t for tolerations in each for t in tolerations}.values())
