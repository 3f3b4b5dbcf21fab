"""Stack output values that combine what several components built."""

from __future__ import annotations

from typing import Any, Optional

import pulumi

# AKS-managed GPU nodes run NVIDIA's DCGM exporter themselves: "exposes Prometheus metrics
# (for example, DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_GPU_TEMP) on port 19400"
# (azure-aks-docs articles/aks/aks-managed-gpu-nodes.md).
AKS_MANAGED_METRICS = "port 19400 on each GPU node (AKS-managed DCGM exporter)"


def gpu_metrics_location(mode: str, enabled: bool, exporter: Optional[Any], operator: Optional[Any]) -> pulumi.Input[str]:
    """Where the GPU metrics are: a Service URL inside the cluster, or what serves them."""
    if mode == "aks-managed":
        return AKS_MANAGED_METRICS
    if not enabled:
        return "off (monitoring.gpuMetrics: false)"
    source = exporter if mode == "device-plugin" else operator
    return source.metrics_url
