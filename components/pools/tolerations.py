"""What a pod must tolerate to land on a GPU pool: the taints of the pool as the program
declares it, or as the cluster runs it (a used or adopted pool). One source for every pod that
lands on a pool: the plan decides the device plugin's from it, and the proof Jobs'."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pulumi_kubernetes as k8s

from components.pools.existing_pools import LivePool
from components.pools.settings import GpuPoolConfig, pool_taints

Tolerations = tuple[k8s.core.v1.TolerationArgs, ...]


def pool_tolerations(pool: GpuPoolConfig, live: LivePool | None) -> Tolerations:
    """A pool's, from its taints as AKS writes them (`key=value:Effect`, or `key:Effect`): those
    Azure runs it with where the cluster has it already, else the program's own."""
    tolerations = []
    for taint in live.taints if live is not None else pool_taints(pool):
        pair, _, effect = taint.rpartition(":")
        key, has_value, value = pair.partition("=")
        operator = "Equal" if has_value else "Exists"
        tolerations.append(
            k8s.core.v1.TolerationArgs(key=key, operator=operator, value=value if has_value else None, effect=effect or None)
        )
    return tuple(tolerations)


def merged(each: Iterable[Sequence[k8s.core.v1.TolerationArgs]]) -> Tolerations:
    """What a pod serving all of several pools must tolerate: each pool's tolerations, once."""
    return tuple({(t.key, t.operator, t.value, t.effect): t for tolerations in each for t in tolerations}.values())
