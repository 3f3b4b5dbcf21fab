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
    """What the stack exports beside what the components built (components/environment/declare.py outputs)."""

    #: The guide's one pool (gpuPool, not a gpuPools map): its outputs keep the names earlier releases exported.
    guide_pool: bool
    #: Each capacity group with a pool the run declares (gpuGroups): its pools, first choice first (gpuGroups output).
    proof_groups: Mapping[str, tuple[str, ...]]
    #: What the run will cost per hour, as exported (estimatedCost); None: not estimated.
    estimated_cost: Mapping[str, Any] | None
    #: Who manages the GPU stack over the run's pools, and whether GPU metrics are on (gpuMetrics).
    modes: frozenset[str]
    gpu_metrics: bool
    #: What the stack adopted, carried forward each run (ownership/adopted_record.py): the
    #: `adopted` output, which a refresh does not change; None: nothing adopted.
    adopted: Mapping[str, Any] | None = None
    #: Whether the run declares the GPU stack, whose metrics gpuMetrics locates.
    gpu_stack: bool = True
    #: The run declares the proof alone (the package's GpuProof): mnistJobName and the Job's other
    #: outputs name its first Job (its first pool's).
    proof_alone: bool = False


def gpu_metrics_location(modes: frozenset[str], enabled: bool, exporter: Any | None, operator: Any | None) -> pulumi.Input[str]:
    """Where the GPU metrics are: a Service URL inside the cluster, or what serves them."""
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
    """The guide's "Confirm that GPUs are schedulable" step (azure-aks-docs use-nvidia-gpu.md at
    fb060abe) as one command: the pool's nodes with the GPUs the scheduler may place on each. In
    the JSONPath a backslash keeps the dot of `nvidia.com` in the key (client-go@57e69770
    util/jsonpath/parser.go); the single quotes keep it from the shell."""
    return (
        f"kubectl get nodes -l {AGENT_POOL_LABEL}={pool_name} "
        "-o custom-columns='NAME:.metadata.name,GPUS:.status.allocatable.nvidia\\.com/gpu'"
    )


def pool_outputs(pools: Sequence[Any], job: Any | None, groups: Mapping[str, Sequence[str]] | None = None) -> dict[str, dict[str, Any]]:
    """The gpuPools output: each pool's size, GPUs, management, nodes command and Job; a pool of a
    capacity group names its group instead, whose one Job the gpuGroups output has."""
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
    """A proof Job as the outputs describe it, with which pool and size served it."""
    described: dict[str, Any] = {"name": run.name, "namespace": run.namespace, "logsCommand": run.logs_command, "urn": run.urn}
    if run.result_command is not None:  # the last proof's line, after the Job is gone (docs/proof.md)
        described["resultCommand"] = run.result_command
    if run.watch is not None:  # which pool, and so which size, ran the proof (docs/proof.md)
        described["servedBy"] = served_by(run.watch, vm_sizes)
    return described


def group_outputs(groups: Mapping[str, Sequence[str]], pools: Sequence[Any], job: Any | None) -> dict[str, dict[str, Any]]:
    """The gpuGroups output: each capacity group's pools, first choice first, with each one's size,
    the group's nodes with each one's size and pool (which size Azure supplied), and its one Job."""
    vm_sizes = {pool.name: pool.vm_size for pool in pools}
    described = {}
    for group, names in groups.items():
        entry: dict[str, Any] = {
            "pools": [{"name": name, "vmSize": vm_sizes[name]} for name in names],
            "nodesCommand": f"kubectl get nodes -l {GROUP_LABEL}={group} -L {INSTANCE_TYPE_LABEL} -L {AGENT_POOL_LABEL}",
        }
        if job is not None:
            entry["job"] = job_output(job.jobs[group], vm_sizes)
        described[group] = entry
    return described


def served_by(watch: Any, vm_sizes: Mapping[str, str]) -> pulumi.Output[str]:
    """`<pool> (<vmSize>)` of the node that ran the proof, as its watch recorded it; a Job of one
    pool's watch is not told the sizes: its pool's declared one."""
    return pulumi.Output.all(watch.served_pool, watch.served_vm_size).apply(lambda served: served_words(served[0], served[1], vm_sizes))


def served_words(pool: str | None, vm_size: str | None, vm_sizes: Mapping[str, str]) -> str:
    if not pool:
        return NOT_SERVED
    size = vm_size or vm_sizes.get(pool, "")
    return f"{pool} ({size})" if size else pool
