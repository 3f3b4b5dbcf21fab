"""The priority expander's ConfigMap on a cluster the stack creates: the stack's own, its
owner's, or none yet. An admin may have made one by hand on a cluster an earlier `up` created
(AKS's blog has them `kubectl apply` it for Spot pools: Azure/AKS@8d1c8909
website/blog/2025-07-17-Scaling-safely-with-spot-on-aks/index.md), and since 4.29.0
pulumi-kubernetes creates client-side, so `up` would stop at AlreadyExists, which a preview's dry
run hides. So whose it is comes from the stack's state, never from a mark the owner can remove:
the owner's is used, never registered, and the plan says which of the groups' lines it lacks.
A read that fails is not known: a preview says so, a deployment stops.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from components.cluster.kubeconfig import provider_kubeconfig
from components.config.values import NAMESPACE
from components.errors import cut, error_line
from components.ownership.stack_state import MANAGED_CLUSTER, PRIORITY_CONFIG_MAP, StackState
from components.pools.priority_expander import (
    CATCH_ALL,
    CONFIG_MAP_KEY,
    CONFIG_MAP_NAME,
    CONFIG_MAP_NAMESPACE,
    EXPANDER,
    Priorities,
)
from components.problem import STOPS
from components.seam.reader import AzureReader, read_errors

CHECK = f"kubectl get configmap -n {CONFIG_MAP_NAMESPACE} {CONFIG_MAP_NAME} -o yaml"
WHERE = f"{CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME}"
# PyYAML's safe loader, in C where PyYAML was built with it (as components/cluster/kubeconfig.py).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A priority as priority.go's map[int][]string takes it through sigs.k8s.io/yaml's JSON: a
# key's text read by Go's strconv.ParseInt(key, 10, 64) (encoding/json, map keys of an int type).
_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Owners:
    """The owner's `priorities` as the autoscaler reads them, or why it cannot (then it keeps
    every option: priority.go BestOptions)."""

    priorities: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    unreadable: str | None = None


@dataclass(frozen=True)
class Found:
    """The owner's ConfigMap (None: the stack declares its own), or why that is not known."""

    owners: Owners | None = None
    unknown: str | None = None


def read(reader: AzureReader, state: StackState, cluster: tuple[str, str]) -> Found:
    """Whose the ConfigMap of the created cluster (resource group, name) is, read where the
    state holds the cluster but not the ConfigMap."""
    if not state.known and not state.undeployed:
        return Found(unknown=f"what this stack's state holds is not known: {state.why}")
    if not state.holds(*MANAGED_CLUSTER) or state.holds(*PRIORITY_CONFIG_MAP):
        return Found()
    try:
        # The user credential the created cluster's Kubernetes provider signs in with (GpuCluster).
        kubeconfig = provider_kubeconfig(reader.user_kubeconfig(*cluster))
        config_map = reader.config_map(kubeconfig, CONFIG_MAP_NAMESPACE, CONFIG_MAP_NAME)
    except read_errors() as error:  # not read: not known
        return Found(unknown=error_line(error))
    return Found() if config_map is None else Found(owners=owners_of(config_map))


def owners_of(config_map: Mapping[str, Any]) -> Owners:
    """The `priorities` as the autoscaler parses them (kubernetes/autoscaler@2d425888,
    cluster-autoscaler-1.35.2, expander/priority/priority.go reloadConfigMap and
    parsePrioritiesYAMLString: the key, not empty, YAML into map[int][]string)."""
    data = config_map.get("data")
    text = data.get(CONFIG_MAP_KEY) if isinstance(data, Mapping) else None
    if not isinstance(text, str):
        return Owners(unreadable=f"it has no {CONFIG_MAP_KEY} key")
    if not text:
        return Owners(unreadable=f"its {CONFIG_MAP_KEY} are empty")
    try:
        parsed = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError:
        return Owners(unreadable=f"its {CONFIG_MAP_KEY} are not YAML")
    if not isinstance(parsed, dict):
        return Owners(unreadable=f"its {CONFIG_MAP_KEY} are not a map of priorities")
    levels: dict[int, tuple[str, ...]] = {}
    for key, patterns in parsed.items():
        level = int(key) if isinstance(key, str) and _INTEGER.fullmatch(key) and len(key) <= 20 else key
        # A Go int of 64 bits (YAML's `yes` is a bool, not 1).
        if not isinstance(level, int) or isinstance(level, bool) or not -(2**63) <= level < 2**63:
            return Owners(unreadable=f"its priority {cut(repr(key))} is not an integer")
        if patterns is not None and not (isinstance(patterns, list) and all(isinstance(p, str) for p in patterns)):
            return Owners(unreadable=f"its priority {level} is not a list of patterns")
        levels[level] = tuple(patterns or ())
    return Owners(levels)


def compare(ours: Priorities, owners: Owners) -> tuple[Priorities, Priorities]:
    """The groups' lines the owner's priorities have, and those they lack: a pattern at the
    stack's priority; the catch-all at any (it only keeps every node group matched: BestOptions)."""
    catch_all = next((level for level, patterns in owners.priorities.items() if CATCH_ALL in patterns), None)
    had, lacking = [], []
    for level, patterns in ours.levels:
        for pattern in patterns:
            if pattern == CATCH_ALL and catch_all is not None:
                had.append((catch_all, pattern))
            elif pattern in owners.priorities.get(level, ()):
                had.append((level, pattern))
            else:
                lacking.append((level, pattern))
    return Priorities.of(had), Priorities.of(lacking)


def has_every_line(ours: Priorities, owners: Owners) -> bool:
    """The owner's priorities are readable and lack none of `ours`."""
    return owners.unreadable is None and not compare(ours, owners)[1].levels


def owners_line(ours: Priorities, cluster: str, owners: Owners) -> str:
    """The plan's line for the owner's ConfigMap: used, and what the owner would add (`ours`: the stack's lines)."""
    head = (
        f"gpuGroups: the ConfigMap {WHERE} in cluster {cluster} is its owner's (this stack's state does not hold it): "
        f"the stack uses it as it is and declares none, and sets the profile's expander to {EXPANDER}, so the cluster "
        "autoscaler follows the owner's priorities"
    )
    if owners.unreadable:
        return (
            f"{head}, which it cannot read ({owners.unreadable}): it keeps every option, so each group falls back in random "
            f"order; for the team's order the owner would mend key {CONFIG_MAP_KEY} and put in it, their own entries at or above its top level: "
            f"{ours.flow()} (docs/gpu.md)"
        )
    had, lacking = compare(ours, owners)
    if not lacking.levels:
        return f"{head}, which have every line of the groups' ({had.flow()}): each group's pools are scaled in the team's order"
    catch_all = f" (the '{CATCH_ALL}' only if theirs has no catch-all)" if any(CATCH_ALL in p for _, p in lacking.levels) else ""
    return (
        f"{head}, which have {had.flow() if had.levels else 'none'} of the groups' lines; for the team's order the owner "
        f"would add to key {CONFIG_MAP_KEY}, their own entries at or above its top level: {lacking.flow()}{catch_all}; until then a group's "
        "pools go in the order their lines give, at random where they give none (docs/gpu.md)"
    )


def unknown_line(cluster: str, why: str) -> str:
    return (
        f"gpuGroups: whether cluster {cluster} has the ConfigMap {WHERE} already, and whose it is, is not known ({why}): "
        "this plan declares it, and `pulumi up` reads the cluster again: one the stack's state does not hold is its "
        f"owner's, and `up` then declares none and says which of the groups' lines it lacks; {STOPS} while "
        f"the read fails; check with `{CHECK}`"
    )


def stop_line(cluster: str, why: str) -> str:
    return (
        f"preflight: whether cluster {cluster} has the ConfigMap {WHERE} already could not be read ({why}); this `up` "
        "would create it, and the cluster refuses a create of one that is there (AlreadyExists), so nothing was created, "
        f"whatever {NAMESPACE}:preflight.mode says; check with `{CHECK}`, and run `pulumi up` again once it can be read"
    )
