"""Stack output values that combine what several components built."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

AKS_MANAGED_METRICS = "port 19400 on each GPU node (AKS-managed DCGM exporter)"


def gpu_metrics_location(modes: frozenset[str], enabled: bool, exporter: Any | None, operator: Any | None) -> pulumi.Input[str]:
    """Where the GPU metrics are: a Service URL inside the cluster, or what serves them.
    The GPU Operator never shares a cluster with another mode (config._check_modes)."""
    if modes == {"aks-managed"}:
        return AKS_MANAGED_METRICS
    if not enabled:
        return "off (monitoring.gpuMetrics: false)"
    source = operator if "gpu-operator" in modes else exporter
    assert source is not None, "metrics are on: the exporter or the operator serves them"
    if "aks-managed" in modes:
        return pulumi.Output.concat(source.metrics_url, " (device-plugin pools); ", AKS_MANAGED_METRICS, " of aks-managed pools")
    return source.metrics_url


def pool_outputs(pools: Sequence[Any], job: Any | None) -> dict[str, dict[str, Any]]:
    """The gpuPools output: each pool's size, GPUs per node, management mode and its Job."""
    described = {}
    for pool in pools:
        entry: dict[str, Any] = {
            "vmSize": pool.vm_size,
            "generation": pool.generation,
            "gpusPerNode": pool.gpus_per_node,
            "management": pool.management,
        }
        if job is not None:
            run = job.jobs[pool.name]
            entry["job"] = {"name": run.name, "namespace": run.namespace, "logsCommand": run.logs_command, "urn": run.urn}
        described[pool.name] = entry
    return described
