"""What the proof Job asks for on a pool used as it is (`existing: use`): the resource its own
device plugin offers, `nvidia.com/mig-<n>g.<mem>gb` only with a "mixed" MIG strategy (the stack's
runs "single"); refused where the catalog does not know the slice's name. The plugin's rules and
sources: docs/design/existing-cluster.md, "A used pool's MIG strategy"."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.catalog import gpu_sizes
from components.cluster.cluster_facts import ClusterFacts
from components.gpu_stack.cluster_objects import DaemonSet, PoolNodes, Seen, lands
from components.pools import pool_fields
from components.pools.settings import Pools
from components.problem import Problem

GPU = "nvidia.com/gpu"
FLAG, VARIABLE = "--mig-strategy", "MIG_STRATEGY"
CONFIG = ("--config-file", "CONFIG_FILE")


def strategy_of(daemon_set: DaemonSet) -> str | None:
    """The plugin container's MIG strategy, lowercased: its flag, else its variable, else "none";
    None where it cannot be told (a variable from a ConfigMap, or a config file)."""
    for container in _containers(daemon_set):
        # Go's flag package, which urfave/cli v2 parses with, takes one dash or two (pkg flag, "Command line flag syntax").
        words = [str(w) for w in [*(container.get("command") or ()), *(container.get("args") or ())]]
        words = [f"-{w}" if w.startswith(FLAG[1:]) else w for w in words]
        for index, word in enumerate(words):
            if word.startswith(f"{FLAG}="):
                return word.partition("=")[2].lower()
            if word == FLAG and index + 1 < len(words):
                return words[index + 1].lower()
        env = {str(e.get("name")): e for e in container.get("env") or () if isinstance(e, Mapping)}
        if VARIABLE in env:
            value = env[VARIABLE].get("value")
            return value.lower() if isinstance(value, str) else None
        if CONFIG[1] in env or any(w.startswith((CONFIG[0], CONFIG[0][1:])) for w in words):
            return None
    return "none"


def _containers(daemon_set: DaemonSet) -> list[Mapping[str, Any]]:
    pod = (daemon_set.item.get("spec") or {}).get("template", {}).get("spec") or {}
    return [c for c in pod.get("containers") or () if isinstance(c, Mapping) and "k8s-device-plugin" in str(c.get("image", ""))]


@dataclass
class UsedPoolGpus:
    #: Each used pool's Job's resource, where it is not nvidia.com/gpu.
    resources: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def resources(
    gpu_pools: Pools,
    job_enabled: bool,
    found: ClusterFacts,
    seen: Seen,
    pools: Sequence[PoolNodes],
    mine: Callable[[DaemonSet], bool],
    installs: bool,
) -> UsedPoolGpus:
    """Each used pool's plugin, its strategy, and so what its Job asks for; `mine`: the stack's own
    ("single"). `installs`: whether the run puts the GPU stack on its pools; a run of the proof alone
    does not, so a plugin of the stack's (another component's) serves as any other, and a used pool
    that none serves is a problem: its Job would never be given a GPU."""
    out = UsedPoolGpus()
    mine = mine if installs else _nobodys
    nodes = {p.name: p for p in pools}
    azure = {p.name: p for p in found.pools}
    for pool in gpu_pools.pools:
        if pool.existing != "use" or not job_enabled or pool.name not in nodes:
            continue
        facts = azure.get(pool.name)
        strategy: str | None
        if facts is not None and pool_fields.management(facts) == "aks-managed":
            strategy, where = str(facts.member("gpuProfile", "nvidia", "migStrategy") or "none").lower(), "AKS's device plugin"
        else:
            plugin = _plugin(seen, nodes[pool.name], mine, pool.mode == "gpu-operator")
            if plugin is None:
                out.problems += [] if installs else [Problem(unserved_line(gpu_pools.key(pool), pool.name))]
                continue
            strategy, where = strategy_of(plugin), plugin.where
        _decide(out, gpu_pools.key(pool), pool.name, pool.vm_size, pool.mig_profile, strategy, where)
    return out


def _nobodys(daemon_set: DaemonSet) -> bool:
    return False


def unserved_line(key: str, name: str) -> str:
    """A used pool no device plugin serves, in a run that installs none."""
    return (
        f"proof: {key} is used as it is, and no device plugin of the cluster's lands on {name} for certain: its Job would wait "
        f"Pending for {GPU} until its deadline; declare the GPU stack for it (the package's GpuStack, or GpuEnvironment), "
        "or have the cluster's owner install one"
    )


def _plugin(seen: Seen, pool: PoolNodes, mine: Callable[[DaemonSet], bool], operator: bool) -> DaemonSet | None:
    """The cluster's device plugin that lands on the pool for certain, or on a GPU Operator pool the
    Operator's, whose nodeSelector is a label NFD puts on GPU nodes, which Azure does not tell."""
    plugins = [d for d in seen.daemon_sets if d.device_plugin and not mine(d)]
    certain = next((d for d in plugins if lands(d, pool).answer == "yes"), None)
    if certain is not None or not operator:
        return certain
    return next((d for d in plugins if d.gpu_operator and lands(d, pool).answer == "maybe"), None)


def _decide(out: UsedPoolGpus, key: str, name: str, vm_size: str, profile: str | None, strategy: str | None, where: str) -> None:
    said = f"proof: {key} is used as it is, and {where}"
    if strategy is None and profile:
        out.warnings.append(
            f"{said} takes its MIG strategy from a config file or a ConfigMap, which this program does not read: the Job asks for "
            f"{GPU}, which the pool offers with strategy single; with mixed it waits Pending until its deadline"
        )
    if strategy != "mixed" or not profile:
        return
    size = gpu_sizes.CATALOG.get(vm_size)
    names = size.gpu.mig_slices if size is not None else ()
    index = list(gpu_sizes.MIG_INSTANCES_PER_GPU).index(profile) if profile in gpu_sizes.MIG_INSTANCES_PER_GPU else None
    if names and index is not None:
        resource = f"nvidia.com/mig-{names[index]}"
        out.resources[name] = resource
        out.lines.append(f"{said} runs MIG strategy mixed, which offers {profile} slices only as {resource}: the Job asks for one")
        return
    out.problems.append(
        Problem(
            f"{said} runs MIG strategy mixed, which offers {profile} slices of {vm_size} only as nvidia.com/mig-<slices>g.<memory>gb, "
            f"and this program does not know that GPU's slice names: the Job's {GPU} would wait Pending until its deadline; "
            "set the plugin's MIG_STRATEGY to single, or mnistJob.enabled to false"
        )
    )
