"""Whether a GPU pool that runs in Azure is managed the way the config now says: a switch
between `aks-managed` and the other modes is refused in one line; a read that fails leaves the
plan unknown (a preview warns, a deployment stops). Why, and the sources: docs/lifecycle.md,
"Switching variants", "The refusal's sources" and "A plan that rests on a read"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from components.config.values import NAMESPACE
from components.errors import error_line
from components.pools import pool_fields
from components.pools.settings import GpuPoolConfig, Pools
from components.seam.reader import AzureReader, NotRead, RunningPool, read_errors


def running_of(pool: Mapping[str, Any]) -> RunningPool:
    """The pool as the agentPools GET returns it (REST names): its mode and the fixed fields it has set."""
    return RunningPool(pool_fields.management(pool), pool_fields.switched_on(pool))


def switches(pools: Pools, running: Mapping[str, RunningPool], cluster: str) -> list[str]:
    lines = []
    for pool in pools.owned:
        was = running[pool.name].mode if pool.name in running else None
        if was is None or (was == "aks-managed") == pool.managed:
            continue
        key = pools.key(pool)
        single = key.endswith(":gpuPool")
        rename = f"{key}.name" if single else f"the entry's key in {key.rsplit('.', 1)[0]}"
        two_ups = "" if single else "; or remove the entry, `pulumi up`, then add it back"
        lines.append(
            f"{key}.management = {pool.mode}: node pool {pool.name} in cluster {cluster} runs {was} (as Azure describes it), and "
            "AKS cannot switch a pool's GPU management in place; nothing was changed. Give the pool a new name "
            f"({rename}): one `pulumi up` creates the new pool, then deletes the old one (GPU quota for both for a while)"
            f"{two_ups} (docs/lifecycle.md)"
        )
    return lines


# What a running pool may have set that a declaration leaving it unset would switch off, in a
# person's words: when the read fails, what could differ.
SWITCHED_OFF = {
    "gpuProfile": "a GPU driver or management of its own (gpuProfile)",
    "gpuInstanceProfile": "a MIG profile (gpuInstanceProfile)",
    "scaleSetPriority": "Spot (scaleSetPriority)",
}


def could_differ(pool: GpuPoolConfig, key: str) -> str:
    """What the unread management of `pool` could change in the plan: the fixed settings its
    config leaves unset (pool_fields.left_to_azure), and the refused switch of kind."""
    if pool.managed:
        return f"pool {pool.name} is refused if it runs as a typed pool (device-plugin or gpu-operator)"
    left_unset = {"gpuProfile": pool.mode == "device-plugin", "gpuInstanceProfile": not pool.mig_profile, "scaleSetPriority": not pool.spot}
    unset = [words for name, words in SWITCHED_OFF.items() if left_unset[name]]
    replaced = f"replaced, deleting it first, if it runs with {_or(unset)}, which {key} leaves unset, and " if unset else ""
    return f"pool {pool.name} is {replaced}refused if it runs aks-managed"


def _or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


@dataclass(frozen=True)
class Reading:
    refusals: list[str]
    #: The pools that run, by name (none known when the read failed).
    running: dict[str, RunningPool]
    #: Why the read could not be made (None: read, or the offline render's reader, which says so itself).
    failed: str | None = None

    def unknown(self, pools: Pools) -> str:
        owned = pools.owned
        return (
            f"preflight: the plan is not known for GPU pool(s) {', '.join(p.name for p in owned)}: the GPU pools' management "
            f"in Azure was not read ({self.failed}), and `pulumi up` reads it again and may plan otherwise: "
            + "; ".join(could_differ(p, pools.key(p)) for p in owned)
            + '; a deployment stops here while the read fails (docs/lifecycle.md, "A plan that rests on a read")'
        )

    def stop(self, pools: Pools) -> str:
        names = ", ".join(p.name for p in pools.owned)
        return (
            f"preflight: the GPU pools' management in Azure could not be read ({self.failed}); it decides whether GPU "
            f"pool(s) {names} are replaced or refused, so nothing was deployed, whatever {NAMESPACE}:preflight.mode says; "
            'run `pulumi up` again once Azure answers (docs/lifecycle.md, "A plan that rests on a read")'
        )


def check(pools: Pools, resource_group: str, cluster: str, subscription: Callable[[], str], reader: AzureReader) -> Reading:
    try:
        running = reader.pool_modes(subscription(), resource_group, cluster, [p.name for p in pools.pools])
    except NotRead:  # offline: the reader's own note says what the render assumed
        return Reading([], {})
    except read_errors() as error:  # Azure not read: the plan is not known (preflight.pool_switches)
        return Reading([], {}, error_line(error))
    return Reading(switches(pools, running, cluster), dict(running))
