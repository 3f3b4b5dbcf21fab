"""NVIDIA's GPU Operator (gpuPool.management: gpu-operator), the alternative AKS documents for
owning the GPU driver (azure-aks-docs articles/aks/nvidia-gpu-operator.md): NVIDIA's chart, pinned,
as a `helm.v3.Release`. Its values and their sources: docs/design/gpu-stack.md, "Who manages the GPU stack"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.cluster import InCluster

CHART = "gpu-operator"
REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
# The operator's operands (driver, toolkit) roll out after Helm's wait; 300 s, the provider's
# default (helm_release.go defaultTimeoutSeconds), is too short for the charts' own DaemonSets.
TIMEOUT_SECONDS = 1200


@dataclass(frozen=True)
class GpuOperatorArgs:
    """NVIDIA's GPU Operator chart: gpuOperator.namespace and .version, monitoring.gpuMetrics."""

    namespace: str
    version: str
    gpu_metrics: bool
    #: What its DaemonSets tolerate: each of its pools' tolerations, once.
    gpu_tolerations: Sequence[k8s.core.v1.TolerationArgs] = field(default_factory=tuple)
    #: The stack's marks in a cluster it shares (cluster_objects.STACK_ANNOTATION); none in one it creates.
    marks: Mapping[str, str] = field(default_factory=dict)


def chart_values(args: GpuOperatorArgs) -> dict[str, Any]:
    tolerations = [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},  # the chart's default
        *({"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect} for t in args.gpu_tolerations),
    ]
    return {
        "operator": {"cleanupCRD": True},
        "daemonsets": {"tolerations": tolerations},
        "node-feature-discovery": {"worker": {"tolerations": tolerations}},
        "mig": {"strategy": "single"},
        "dcgmExporter": {"enabled": args.gpu_metrics, "serviceMonitor": {"enabled": False}},
    }


class GpuOperator(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace
    release: k8s.helm.v3.Release
    metrics_url: pulumi.Output[str] | None

    def __init__(self, name: str, args: GpuOperatorArgs, *, cluster: InCluster, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-gpu:kubernetes:GpuOperator", name, None, opts)
        # No GPU pool among its dependencies: the operator and NFD run on the System pool, and the
        # operator sets up each GPU node as it joins, as the cluster autoscaler relies on.
        on_cluster = cluster.options(self)
        # The program's own namespace (NVIDIA's guide has helm create it): a destroy removes it too.
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns", metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace, annotations=dict(args.marks) or None), opts=on_cluster
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=CHART,
            chart=CHART,
            version=args.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=REPOSITORY),
            namespace=self.namespace.metadata.name,
            values=chart_values(args),
            timeout=TIMEOUT_SECONDS,
            opts=on_cluster,
        )
        # The chart's exporter Service: nvidia-dcgm-exporter, port 9400 (NVIDIA/gpu-operator
        # assets/state-dcgm-exporter/0400_service.yaml).
        metrics_url = pulumi.Output.concat("http://nvidia-dcgm-exporter.", self.namespace.metadata.name, ".svc:9400/metrics")
        self.metrics_url = metrics_url if args.gpu_metrics else None
        self.register_outputs({})
