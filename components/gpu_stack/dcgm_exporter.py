"""GPU metrics (management: device-plugin): NVIDIA's DCGM exporter as a DaemonSet after NVIDIA's
manifest (NVIDIA/dcgm-exporter dcgm-exporter.yaml at 4.5.3-4.8.2) on the GPU pools, behind a
Service with the `prometheus.io/*` annotations and a NetworkPolicy that admits in-cluster scrapes
and no egress. Why: docs/gpu.md, "GPU metrics"; the Checkov checks it cannot pass: security/checkov-kubernetes.yaml."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.cluster import InCluster
from components.gpu_stack import pod_hardening as hardening
from components.gpu_stack.network_policy import network_policy, traffic
from components.pools.gpu_pool import AGENT_POOL_LABEL
from components.pools.placement import on_pools

NAME = "dcgm-exporter"
LABELS = {"app.kubernetes.io/name": NAME}
PORT = 9400
POD_RESOURCES = "/var/lib/kubelet/pod-resources"
SCRAPE_ANNOTATIONS = {"prometheus.io/scrape": "true", "prometheus.io/port": str(PORT), "prometheus.io/path": "/metrics"}
# NVIDIA's manifest: requests 100m/128Mi, limits 200m/256Mi.
RESOURCES = hardening.resources(requests={"cpu": "100m", "memory": "128Mi"}, limits={"cpu": "200m", "memory": "256Mi"})
# An empty namespaceSelector matches every namespace: any pod of this cluster, no address outside
# it (Kubernetes NetworkPolicy docs, "Behavior of to and from selectors").
IN_CLUSTER = k8s.networking.v1.NetworkPolicyIngressRuleArgs(
    from_=[k8s.networking.v1.NetworkPolicyPeerArgs(namespace_selector=k8s.meta.v1.LabelSelectorArgs())],
    ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=PORT)],
)


POLICY, INGRESS, EGRESS = f"{NAME}-scrapes-only", (IN_CLUSTER,), ()


def added_objects() -> list[tuple[str, str, str]]:
    """What DcgmExporter declares in the device plugin's namespace, from the constants it declares
    them with: (kind, name, what it does), as the adopting preview lists them."""
    return [
        ("DaemonSet", NAME, f"NVIDIA's DCGM exporter, a pod on each GPU node (monitoring.gpuMetrics), serving metrics on TCP {PORT}"),
        ("Service", NAME, f"the exporter's metrics endpoint, TCP {PORT}"),
        ("NetworkPolicy", POLICY, traffic(INGRESS, EGRESS)),
    ]


@dataclass(frozen=True)
class DcgmExporterArgs:
    """NVIDIA's DCGM exporter (monitoring.gpuMetrics, .dcgmExporterImage), in the device plugin's namespace."""

    image: str
    #: The pools it runs on: one by nodeSelector (the guide's single pool), several by affinity.
    gpu_pool_names: Sequence[str]
    #: The device plugin's tolerations.
    gpu_tolerations: Sequence[k8s.core.v1.TolerationArgs] = field(default_factory=tuple)


class DcgmExporter(pulumi.ComponentResource):
    network_policy: k8s.networking.v1.NetworkPolicy
    daemon_set: k8s.apps.v1.DaemonSet
    service: k8s.core.v1.Service
    metrics_url: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: DcgmExporterArgs,
        *,
        cluster: InCluster,
        namespace: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("aks-gpu:kubernetes:DcgmExporter", name, None, opts)
        on_cluster, self._namespace = cluster.options(self), namespace
        self.network_policy = network_policy(
            f"{name}-netpol", POLICY, self._namespace, LABELS, egress=EGRESS, ingress=INGRESS, opts=on_cluster
        )
        self.daemon_set = self._create_daemon_set(name, args, on_cluster)
        self.service = k8s.core.v1.Service(
            f"{name}-svc",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=NAME, namespace=self._namespace, labels=LABELS, annotations=SCRAPE_ANNOTATIONS),
            spec=k8s.core.v1.ServiceSpecArgs(
                selector=LABELS,
                ports=[k8s.core.v1.ServicePortArgs(name="metrics", port=PORT, target_port="metrics", protocol="TCP")],
            ),
            opts=on_cluster,
        )
        self.metrics_url = pulumi.Output.concat("http://", NAME, ".", self.service.metadata.namespace, ".svc:", str(PORT), "/metrics")
        self.register_outputs({"metricsUrl": self.metrics_url})

    def _create_daemon_set(self, name: str, args: DcgmExporterArgs, opts: pulumi.ResourceOptions) -> k8s.apps.v1.DaemonSet:
        probe = k8s.core.v1.ProbeArgs(
            http_get=k8s.core.v1.HTTPGetActionArgs(path="/health", port="metrics"), initial_delay_seconds=45, period_seconds=5
        )
        container = k8s.core.v1.ContainerArgs(
            name=NAME,
            image=args.image,
            image_pull_policy="Always",
            env=[
                k8s.core.v1.EnvVarArgs(name="DCGM_EXPORTER_LISTEN", value=f":{PORT}"),
                k8s.core.v1.EnvVarArgs(name="DCGM_EXPORTER_KUBERNETES", value="true"),
                k8s.core.v1.EnvVarArgs(
                    name="NODE_NAME",
                    value_from=k8s.core.v1.EnvVarSourceArgs(field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path="spec.nodeName")),
                ),
            ],
            ports=[k8s.core.v1.ContainerPortArgs(name="metrics", container_port=PORT, protocol="TCP")],
            resources=RESOURCES,
            liveness_probe=probe,
            readiness_probe=probe,
            security_context=k8s.core.v1.SecurityContextArgs(
                run_as_non_root=False,
                run_as_user=0,
                allow_privilege_escalation=False,
                capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"], add=["SYS_ADMIN"]),
            ),
            volume_mounts=[k8s.core.v1.VolumeMountArgs(name="pod-resources", mount_path=POD_RESOURCES, read_only=True)],
        )
        return k8s.apps.v1.DaemonSet(
            f"{name}-ds",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=NAME, namespace=self._namespace, labels=LABELS),
            spec=k8s.apps.v1.DaemonSetSpecArgs(
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=LABELS),
                update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(type="RollingUpdate"),
                template=k8s.core.v1.PodTemplateSpecArgs(
                    metadata=k8s.meta.v1.ObjectMetaArgs(labels=LABELS, annotations=SCRAPE_ANNOTATIONS),
                    spec=k8s.core.v1.PodSpecArgs(
                        node_selector={AGENT_POOL_LABEL: args.gpu_pool_names[0]} if len(args.gpu_pool_names) == 1 else None,
                        affinity=on_pools(args.gpu_pool_names) if len(args.gpu_pool_names) > 1 else None,
                        tolerations=list(args.gpu_tolerations) or None,
                        automount_service_account_token=False,
                        security_context=hardening.pod_security_context(),
                        containers=[container],
                        volumes=[
                            k8s.core.v1.VolumeArgs(name="pod-resources", host_path=k8s.core.v1.HostPathVolumeSourceArgs(path=POD_RESOURCES))
                        ],
                    ),
                ),
            ),
            opts=opts,
        )
