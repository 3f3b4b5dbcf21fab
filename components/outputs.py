"""Stack output values that combine what several components built."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.pools.gpu_pool import AGENT_POOL_LABEL
from components.pools.groups import GROUP_LABEL

# AKS labels each node with its VM size (azure-aks-docs use-labels.md, "Reserved system labels":
# `node.kubernetes.io/instance-type`, "<VM size>").
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

AKS_MANAGED_METRICS = "port 19400 on each GPU node (AKS-managed DCGM exporter)"
# servedBy where the watch saw no node run the proof: it could not start, or the stack's state is
# from before the watch recorded it (the next proof's watch does).
NOT_SERVED = "not known: the watch saw no node run this proof"


@dataclass(frozen=True)
class OutputsArgs:
    """What the stack exports beside what the components built (__main__.py export_outputs)."""

    #: The guide's one pool (gpuPool, not a gpuPools map): its outputs keep the names earlier releases exported.
    guide_pool: bool
    #: Each capacity group with a pool the run declares (gpuGroups): its pools, first choice first (gpuGroups output).
    proof_groups: Mapping[str, tuple[str, ...]]
    #: What the run will cost per hour, as exported (estimatedCost); None: not estimated.
    estimated_cost: Mapping[str, Any] | None
    #: Who manages the GPU stack over the run's pools, and whether GPU metrics are on (gpuMetrics).
    modes: frozenset[str]
    gpu_metrics: bool


def gpu_metrics_location(modes: frozenset[str], enabled: bool, exporter: Any | None, operator: Any | None) -> pulumi.Input[str]:
    """Where the GPU metrics are: a Service URL inside the cluster, or what serves them.
    The GPU Operator never shares a cluster with another mode (config._check_modes)."""
    if modes == {"aks-managed"}:
        return AKS_MANAGED_METRICS
    if not enabled:
        return "off (monitoring.gpuMetrics: false)"
    source = operator if "gpu-operator" in modes else exporter
    if source is None:  # only pools used as they are, whose GPU stack the cluster runs already
        return "none from this stack: its pools' GPU stack is the cluster's own (existing: use)"
    if "aks-managed" in modes:
        return pulumi.Output.concat(source.metrics_url, " (device-plugin pools); ", AKS_MANAGED_METRICS, " of aks-managed pools")
    return source.metrics_url


def nodes_command(pool_name: str) -> str:
    """The guide's "Confirm that GPUs are schedulable" step (`kubectl get nodes`, then
    `kubectl describe node`, whose Capacity shows `nvidia.com/gpu: 1`: azure-aks-docs
    use-nvidia-gpu.md, ms.date 07/02/2026, at fb060abe) as one command: the pool's nodes, by
    the label AKS puts on each (AGENT_POOL_LABEL), with the GPUs the scheduler may place on
    each. A custom-columns path is a JSONPath (kubectl@dee3483a pkg/cmd/get/customcolumn.go,
    RelaxedJSONPathExpression), in which a backslash keeps the dot of `nvidia.com` inside the
    key ("advance scans until next non-escaped terminator", client-go@57e69770
    util/jsonpath/parser.go); the single quotes keep the backslash from the shell. A node
    whose device plugin has not yet registered shows `<none>`. Pure, for any pool a stack
    names, whether it declares it or not."""
    return (
        f"kubectl get nodes -l {AGENT_POOL_LABEL}={pool_name} "
        "-o custom-columns='NAME:.metadata.name,GPUS:.status.allocatable.nvidia\\.com/gpu'"
    )


def pool_outputs(pools: Sequence[Any], job: Any | None, groups: Mapping[str, Sequence[str]] | None = None) -> dict[str, dict[str, Any]]:
    """The gpuPools output: each pool's size, GPUs per node, management mode, the command
    that lists its nodes' GPUs, and its Job (with the command that reads its watch's outcome);
    a pool of a capacity group (`groups`, OutputsArgs.proof_groups) names its group instead, whose
    one Job the gpuGroups output has (group_outputs)."""
    group_of = {name: group for group, names in (groups or {}).items() for name in names}
    vm_sizes = {pool.name: pool.vm_size for pool in pools}
    described = {}
    for pool in pools:
        entry: dict[str, Any] = {
            "vmSize": pool.vm_size,
            "generation": pool.generation,
            "gpusPerNode": pool.gpus_per_node,
            "management": pool.management,
            "nodesCommand": nodes_command(pool.name),
        }
        if pool.name in group_of:
            entry["group"] = group_of[pool.name]
        elif job is not None:
            entry["job"] = job_output(job.jobs[pool.name], vm_sizes)
        described[pool.name] = entry
    return described


def job_output(run: Any, vm_sizes: Mapping[str, str]) -> dict[str, Any]:
    """A proof Job as the outputs describe it: its name, namespace, the command that shows its
    log, its URN, the command that reads its watch's outcome, and which pool and size served it."""
    described: dict[str, Any] = {"name": run.name, "namespace": run.namespace, "logsCommand": run.logs_command, "urn": run.urn}
    if run.result_command is not None:  # the last proof's line, after the Job is gone (docs/proof.md)
        described["resultCommand"] = run.result_command
    if run.watch is not None:  # which pool, and so which size, ran the proof (docs/proof.md)
        described["servedBy"] = served_by(run.watch, vm_sizes)
    return described


def group_nodes_command(group: str) -> str:
    """A capacity group's nodes, each with its size and its pool: which size Azure supplied. AKS
    labels each node with its VM size (use-labels.md, "Reserved system labels":
    node.kubernetes.io/instance-type) and its pool; `-L` shows a label as a column
    (`kubectl get --label-columns`)."""
    return f"kubectl get nodes -l {GROUP_LABEL}={group} -L {INSTANCE_TYPE_LABEL} -L {AGENT_POOL_LABEL}"


def group_outputs(groups: Mapping[str, Sequence[str]], pools: Sequence[Any], job: Any | None) -> dict[str, dict[str, Any]]:
    """The gpuGroups output: each capacity group's pools, first choice first, with each one's
    size, the command that lists the group's nodes, and the group's one Job."""
    by_name = {pool.name: pool for pool in pools}
    described = {}
    for group, names in groups.items():
        entry: dict[str, Any] = {
            "pools": [{"name": name, "vmSize": by_name[name].vm_size} for name in names],
            "nodesCommand": group_nodes_command(group),
        }
        if job is not None:
            entry["job"] = job_output(job.jobs[group], {p.name: p.vm_size for p in pools})
        described[group] = entry
    return described


def served_by(watch: Any, vm_sizes: Mapping[str, str]) -> pulumi.Output[str]:
    """`<pool> (<vmSize>)` of the node that ran the proof, as its watch recorded it
    (ProofWatch.served_pool, served_vm_size); a watch not told the sizes (a Job of one pool)
    names its pool, whose size is the declared one. NOT_SERVED where it saw none."""
    return pulumi.Output.all(watch.served_pool, watch.served_vm_size).apply(lambda served: served_words(served[0], served[1], vm_sizes))


def served_words(pool: str | None, vm_size: str | None, vm_sizes: Mapping[str, str]) -> str:
    if not pool:
        return NOT_SERVED
    size = vm_size or vm_sizes.get(pool, "")
    return f"{pool} ({size})" if size else pool
