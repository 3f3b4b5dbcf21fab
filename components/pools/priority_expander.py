"""The cluster autoscaler's priority expander for capacity groups: which pool of a group it
scales first (AKS's default expander, `random`, picks any). With `expander: priority` it reads
a YAML map from an integer (higher first) to regexes searched in each node group's ID
(kubernetes/autoscaler@2d425888, cluster-autoscaler-1.35.2, expander/priority/priority.go:
`map[int][]string`, `FindStringIndex`, so each pattern is anchored). docs/design/capacity-groups.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

#: The ConfigMap the expander reads, and its key (priority.go PriorityConfigMapName,
#: ConfigMapKey), in the autoscaler's namespace, kube-system (config/flags/flags.go).
CONFIG_MAP_NAME = "cluster-autoscaler-priority-expander"
CONFIG_MAP_NAMESPACE = "kube-system"
CONFIG_MAP_KEY = "priorities"
#: The profile's value (ARM ManagedClusterPropertiesAutoScalerProfile.expander; AKS's default is random).
EXPANDER = "priority"
#: Every node group matches it, at the lowest priority: a node group this stack does not declare
#: (a pool added by hand) is then ranked below every declared pool, never dropped with a
#: PriorityConfigMapNotMatchedGroup, and those tie there, where the chain's fallback, random, picks.
CATCH_ALL = ".*"
LOWEST = 10
STEP = 10


def scale_set_pattern(pool: str) -> str:
    """The node group of an AKS pool is its scale set, `aks-<pool>-<digits>-vmss` (the Azure
    provider's ScaleSet.Id(); azure-aks-docs autoscale-gpu-workloads-with-keda.md shows
    `aks-gpunp-36854149-vmss`). Anchored, so `t4`'s pattern does not match `t4b`'s scale set;
    pool names are lowercase letters and digits, nothing to escape. RE2 syntax only."""
    return f"^aks-{pool}-[0-9]+-vmss$"


@dataclasses.dataclass(frozen=True)
class Priorities:
    """The priorities of every declared pool. Groups share levels: a pod of one group fits only
    that group's pools, so two groups' levels never compete."""

    #: (priority, patterns), highest first; the catch-all last.
    levels: tuple[tuple[int, tuple[str, ...]], ...]

    @classmethod
    def of(cls, lines: Iterable[tuple[int, str]]) -> Priorities:
        """(priority, pattern) lines, each level's in their order, highest first."""
        by_level: dict[int, list[str]] = {}
        for level, pattern in lines:
            by_level.setdefault(level, []).append(pattern)
        return cls(tuple((level, tuple(by_level[level])) for level in sorted(by_level, reverse=True)))

    def yaml(self) -> str:
        """The `priorities` value, YAML that priority.go unmarshals into map[int][]string;
        single-quoted, so a regex is a string whatever its characters (none is a quote)."""
        return "\n".join(f"{level}:\n" + "".join(f"  - '{p}'\n" for p in patterns) for level, patterns in self.levels).rstrip("\n")

    def flow(self) -> str:
        """The same map on one line (YAML flow style)."""
        return "{" + ", ".join(f"{level}: [{', '.join(repr(p) for p in patterns)}]" for level, patterns in self.levels) + "}"


def priorities(groups: Mapping[str, Sequence[str]], outside: Sequence[str] = ()) -> Priorities:
    """Each group's pools, first choice highest, and the pools outside groups (`outside`) on the
    top level with the first choices: priority.go keeps only the options at the highest priority
    any matches (BestOptions), so a pool ranked below a group's would never be chosen for a pod
    that fits both. The catch-all LOWEST, for node groups this stack does not declare. A pool the
    autoscaler does not scale is listed all the same, so the System pool ranks right if its owner
    turns the autoscaler on by hand."""
    top = STEP * (max((len(pools) for pools in groups.values()), default=0) + 1)
    ranked = [(top - STEP * rank, scale_set_pattern(pool)) for pools in groups.values() for rank, pool in enumerate(pools)]
    return Priorities.of([*ranked, *((top, scale_set_pattern(pool)) for pool in outside), (LOWEST, CATCH_ALL)])


def created_cluster_line(groups: Mapping[str, Sequence[str]], outside: Sequence[str], resource_group: str, cluster: str) -> str:
    return (
        f"gpuGroups: the cluster autoscaler scales each group's pools in the team's order: this stack sets its "
        f"profile's expander to {EXPANDER} and declares the ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME} "
        f"({CONFIG_MAP_KEY}: {priorities(groups, outside).flow()}). The pools it declares outside groups rank with "
        "each group's first choice, so a pod that fits one of them and a group's pool is not steered onto the group's; "
        f"pools this stack does not declare match only '{CATCH_ALL}' and rank below the groups. Once no group is left "
        f"the ConfigMap is deleted and the order is random again, but Azure keeps expander={EXPANDER} (a removed input "
        f"is not reset); to set AKS's default back: az aks update --resource-group {resource_group} --name {cluster} "
        "--cluster-autoscaler-profile expander=random"
    )


def existing_cluster_line(groups: Mapping[str, Sequence[str]], outside: Sequence[str], resource_group: str, cluster: str) -> str:
    """What the owner of an existing cluster would set for the team's order; `outside`: the pools in no group."""
    return (
        f"gpuGroups on the existing cluster {cluster}: its cluster autoscaler's settings are its owner's, and this stack "
        "changes none of them; each group still falls back to its next pool when Azure cannot fill one, in the order "
        "of the owner's expander (AKS's default: random). For the team's order the owner would run "
        f"`az aks update --resource-group {resource_group} --name {cluster} --cluster-autoscaler-profile "
        f"expander={EXPANDER}` and add to the ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME}, key "
        f"{CONFIG_MAP_KEY}: {priorities(groups, outside).flow()}, every pool outside a group on the groups' top level, "
        "so that a pod that fits one of them and a group's pool is not steered onto the group's (their own entries "
        f"at or above that level; the '{CATCH_ALL}' only if theirs has no catch-all; docs/gpu.md)"
    )
