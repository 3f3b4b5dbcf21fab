"""`gpuGroups`: capacity groups, each a list of `gpuPools` names in the team's order of
preference, so a workload that asks for the group lands on the next size when Azure has none
of the first (docs/gpu.md, "Capacity groups"). A group only labels its pools and gives them one
proof Job; its rules are one line each, naming `aks-gpu:gpuGroups.<group>`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field

from components.catalog import autoscaler_fallback, gpu_sizes
from components.config.messages import fail, json_object
from components.config.values import NAMESPACE, Allowed, PoolName
from components.errors import ConfigError
from components.pools.settings import MAX_GPU_POOLS, GpuPoolConfig, Pools

KEY = f"{NAMESPACE}:gpuGroups"
# The node label each pool of a group carries (AgentPool nodeLabels), its value the group's
# name: what a workload selects. A Kubernetes label value: at most 63 characters, alphanumeric
# at both ends (k8s.io/apimachinery validation.IsValidLabelValue); lowercase here, as pool names are.
GROUP_LABEL = "aks-gpu.io/gpu-group"
GROUP_NAME_PATTERN = r"^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$"
GROUP_NAME_ALLOWED = "1-63 lowercase letters, digits or '-', starting and ending with a letter or digit (a Kubernetes label value)"
# The GPU managements a group may have: both run the cluster autoscaler; AKS-managed GPU nodes
# have none during their preview (components/pools/settings.py, check_managed_gpu).
GROUP_MODES = ("device-plugin", "gpu-operator")
# The most pools a group may list: as many as the cluster autoscaler ever tries when each try
# fails only at max-node-provision-time. It goes back to a group's first pools once their
# back-off has run out, and before long no later pool is tried at all
# (components/catalog/autoscaler_fallback.py; docs/design/autoscaler-fallback.md).
MAX_GROUP_POOLS = autoscaler_fallback.reach(MAX_GPU_POOLS)

GroupPools = Annotated[
    tuple[PoolName, ...],
    Field(min_length=2, max_length=MAX_GROUP_POOLS, json_schema_extra={"uniqueItems": True}),
    Allowed(f"a list of 2 to {MAX_GROUP_POOLS} gpuPools names, each once, first choice first"),
]
GpuGroupMap = Annotated[
    dict[str, GroupPools],
    Field(min_length=1, max_length=MAX_GPU_POOLS, json_schema_extra={"propertyNames": {"pattern": GROUP_NAME_PATTERN}}),
    Allowed("a map from group name to the gpuPools names it accepts, first choice first"),
]


@dataclasses.dataclass(frozen=True)
class GpuGroups:
    """The stack's capacity groups: each group's pool names, in the team's order of preference."""

    groups: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def group_of(self, pool_name: str) -> str | None:
        return next((group for group, names in self.groups.items() if pool_name in names), None)

    def pools_of(self, group: str, pools: Iterable[GpuPoolConfig]) -> tuple[GpuPoolConfig, ...]:
        """The group's pools among `pools`, first choice first."""
        by_name = {p.name: p for p in pools}
        return tuple(by_name[name] for name in self.groups[group] if name in by_name)

    def labels_of(self, pool_name: str) -> dict[str, str]:
        """The node labels a pool carries for its group; none outside one."""
        group = self.group_of(pool_name)
        return {GROUP_LABEL: group} if group is not None else {}

    def key(self, group: str) -> str:
        return f"{KEY}.{group}"


def group_map(raw: Any) -> dict[str, Any]:
    """gpuGroups' names checked before pydantic reads the lists, which would name another key."""
    entries = json_object(KEY, raw)
    if not entries:
        raise fail(KEY, entries, "expected at least one group, such as {inference: [t4, a10]}")
    for name, names in entries.items():
        if not re.fullmatch(GROUP_NAME_PATTERN, name):
            raise fail(f"{KEY}.{name}", name, f"a group name must be {GROUP_NAME_ALLOWED}")
        if isinstance(names, list) and len(names) < 2:
            raise fail(
                f"{KEY}.{name}", names, "a group lists 2 or more gpuPools names, first choice first; a pool of its own needs no group"
            )
        if isinstance(names, list) and len(names) > MAX_GROUP_POOLS:
            minutes = autoscaler_fallback.MAX_NODE_PROVISION_SECONDS // 60
            backoff = (autoscaler_fallback.INITIAL_BACKOFF_SECONDS // 60, autoscaler_fallback.MAX_BACKOFF_SECONDS // 60)
            raise fail(
                f"{KEY}.{name}",
                names,
                f"{len(names)} pools, and the cluster autoscaler reaches {MAX_GROUP_POOLS} of a group: when each scale-up fails "
                f"only at max-node-provision-time ({minutes} minutes), it backs the pool off for {backoff[0]} minutes, doubling "
                f"up to {backoff[1]}, and returns to the first pools once their back-off ends, so pool {MAX_GROUP_POOLS + 1} is "
                f"never tried; list at most {MAX_GROUP_POOLS}, first choice first",
            )
    return entries


def parse(given: Mapping[str, tuple[str, ...]] | None, pools: Pools, pool_map: bool) -> GpuGroups:
    """The groups, each refusal one line."""
    if given is None:
        return GpuGroups()
    if not pool_map:
        raise ConfigError(
            f"invalid config {KEY} with {NAMESPACE}:gpuPool: a group lists gpuPools entries, and gpuPool is the guide's one pool; "
            f"move it into {NAMESPACE}:gpuPools and add the sizes the group accepts"
        )
    seen: dict[str, str] = {}
    by_name = {p.name: p for p in pools.pools}
    for group, names in given.items():
        key = f"{KEY}.{group}"
        if group in by_name:
            raise fail(
                key,
                group,
                f"a group's name is its proof Job's, as a pool's name is its Job's: name it other than {NAMESPACE}:gpuPools' entries",
            )
        for name in names:
            if names.count(name) > 1:
                raise fail(key, list(names), f"{name!r} is listed twice; expected each pool once")
            if name not in by_name:
                raise fail(
                    key, list(names), f"{name!r} is not an entry of {NAMESPACE}:gpuPools; expected one of {', '.join(sorted(by_name))}"
                )
            if name in seen:
                raise fail(key, list(names), f"{name!r} is in {KEY}.{seen[name]} already; a pool is in one group at most")
            if by_name[name].existing == "use":
                raise fail(
                    key,
                    list(names),
                    f"{name!r} is existing: use, the owner's pool, which this stack never changes: a group labels its pools; "
                    "adopt it, or leave it out of the group",
                )
            seen[name] = group
    groups = GpuGroups({group: tuple(given[group]) for group in sorted(given)})  # by name, as gpuPools: not the order the CLI hands
    check_pools(groups, tuple(p for p in pools.pools if p.existing is None), pools.keys)
    return groups


def check_pools(
    groups: GpuGroups, pools: Sequence[GpuPoolConfig], keys: Mapping[str, str], scale_down_modes: Mapping[str, str | None] | None = None
) -> None:
    """Each group's pools can stand in for each other. Run on the config's pools when parsed,
    and by the plan once adopted pools are read from Azure, with their `scale_down_modes` (the
    config sets none, and a new pool gets AKS's default, Delete)."""
    for group in groups.groups:
        members = groups.pools_of(group, pools)
        for pool in members:
            _check_member(groups.key(group), pool, keys[pool.name], (scale_down_modes or {}).get(pool.name))
        _one_of_each(groups.key(group), members, "management", lambda p: p.mode)
        _one_of_each(groups.key(group), members, "CPU architecture", lambda p: gpu_sizes.CATALOG[p.vm_size].arch)


def _check_member(key: str, pool: GpuPoolConfig, pool_key: str, scale_down_mode: str | None) -> None:
    where = " (as Azure has it)" if pool.existing == "adopt" else ""
    if pool.mode not in GROUP_MODES:
        raise fail(
            key,
            pool.name,
            f"{pool_key} is {pool.mode}{where}, which has no cluster autoscaler during its preview; a group's pools are "
            f"{' or '.join(GROUP_MODES)}",
        )
    if pool.min_count != 0:
        counts = f"minCount {pool.min_count}" if pool.autoscaling else f"a fixed nodeCount {pool.node_count}"
        raise fail(
            key,
            pool.name,
            f"{pool_key} has {counts}{where}: each pool of a group scales from zero (minCount: 0, maxCount >= 1), so a size "
            "Azure cannot supply fails no `pulumi up` and costs nothing while the others serve",
        )
    if pool.existing is None and pool.node_count != 0:
        # AKS creates an autoscaled pool with nodeCount nodes: a size Azure cannot supply would fail
        # the create, and the `up`, before the autoscaler could fall back to the next pool.
        raise fail(
            key,
            pool.name,
            f"{pool_key}.nodeCount = {pool.node_count}: a new pool of a group starts with no node (leave nodeCount unset), "
            "so a size Azure cannot supply fails no `pulumi up`; the autoscaler adds the nodes pods ask for",
        )
    if pool.vm_size not in gpu_sizes.CATALOG:
        raise fail(
            key,
            pool.name,
            f"{pool_key}.vmSize {pool.vm_size}{where} is not in this program's GPU size catalog, so its CPU architecture and GPU "
            f"memory are not known and the group cannot promise the proof runs on it; expected sizes such as "
            f"{', '.join(gpu_sizes.current_sizes()[:3])}",
        )
    # A Deallocate pool is never backed off when Azure cannot start or add its nodes, so the
    # autoscaler keeps scaling it and the group never falls back: Azure/AKS#5589 (open, filed
    # 2026-02-04 by AKS's autoscaling team, "acknowledged - added to backlog"): "for nodepools
    # using deallocate mode, CAS will not back off due to failed provisioning ... priority
    # expander + their backup nodepool was not switched to". Its fix, Azure/autoscaler#48, is
    # upstream only as the closed cherry-pick kubernetes/autoscaler#9932, and Azure/AKS's
    # CHANGELOG at 8d1c8909 (2026-08-07) names no rollout. And "the deallocated nodes are started
    # first before any new nodes are provisioned" (azure-aks-docs scale-down-mode.md, 08/21/2023).
    if (scale_down_mode or "").lower() == "deallocate":
        raise fail(
            key,
            pool.name,
            f"{pool_key} has scaleDownMode {scale_down_mode}{where}: the cluster autoscaler does not back such a pool off "
            "when Azure cannot start or add its nodes, so the group would never fall back to its next pool; set it to "
            f"Delete (`az aks nodepool update --name {pool.name} --scale-down-mode Delete` with the cluster's "
            "--resource-group and --cluster-name, which deletes its deallocated nodes), or leave the pool out of the group",
        )


def _one_of_each(key: str, pools: Sequence[GpuPoolConfig], what: str, of: Any) -> None:
    values = {pool.name: of(pool) for pool in pools}
    if len(set(values.values())) > 1:
        said = ", ".join(f"{name}: {value}" for name, value in values.items())
        raise fail(key, list(values), f"its pools have more than one {what} ({said}); a workload must run on each, so expected one")
