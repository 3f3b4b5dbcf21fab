"""Guide steps 4-5: the `gpu-resources` namespace and the NVIDIA device plugin DaemonSet, declared
from the spec device_plugin_spec.py builds, with the NetworkPolicy the guide does not have (the
plugin neither serves nor calls anything over the network)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.cluster import InCluster
from components.gpu_stack.device_plugin_spec import (
    DAEMONSET_NAME,
    POD_LABELS,
    DevicePluginInputs,
    daemon_set_annotations,
    plugin_spec,
)
from components.gpu_stack.network_policy import network_policy, traffic

# It talks to the kubelet over a unix socket only: no traffic at all.
POLICY = "nvidia-device-plugin-deny-all"


def added_objects() -> list[tuple[str, str, str]]:
    """What NvidiaDevicePlugin declares in its namespace beside the namespace and the DaemonSet,
    which adoption takes over: (kind, name, what it does), as the adopting preview lists them."""
    return [("NetworkPolicy", POLICY, f"{traffic((), ())} (the device plugin's)")]


@dataclass(frozen=True, kw_only=True)
class NvidiaDevicePluginArgs(DevicePluginInputs):
    """The device plugin's namespace and DaemonSet, as the plan decides them (components/plan.py)."""

    #: Which of (namespace, DaemonSet) the adopting run imports: not one the stack's state holds already.
    imports: tuple[bool, bool] = (True, True)
    #: The namespace and DaemonSet are the owner's, adopted (devicePlugin.adopt, on this run or
    #: before): a destroy releases them (`retainOnDelete`; devicePlugin.onDestroy: delete sets it false).
    retain_on_delete: bool = False


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """The namespace and the DaemonSet that advertise `nvidia.com/gpu` on GPU nodes."""

    namespace: k8s.core.v1.Namespace
    network_policy: k8s.networking.v1.NetworkPolicy
    daemon_set: k8s.apps.v1.DaemonSet
    namespace_name: pulumi.Output[str]

    def __init__(self, name: str, args: NvidiaDevicePluginArgs, *, cluster: InCluster, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-gpu:kubernetes:NvidiaDevicePlugin", name, None, opts)
        on_cluster = cluster.options(self)
        # The import IDs are pulumi-kubernetes' resource IDs, `<namespace>/<name>` or `<name>`
        # (provider/pkg/provider/util.go parseFqName); set on the adopting run only, and never on
        # one the state holds (pulumi/pulumi pkg/resource/deploy/step_generator.go `isImport` at 1b594989).
        # What was adopted is released, not deleted: the engine's delete of a resource whose state
        # says retainOnDelete sends nothing to the API server (pulumi/pulumi pkg/resource/deploy/
        # step.go DeleteStep.Apply at 1b594989); the NetworkPolicy is the stack's own, and goes.
        ids = (args.namespace, f"{args.namespace}/{DAEMONSET_NAME}")
        adopted = [
            pulumi.ResourceOptions.merge(
                on_cluster, pulumi.ResourceOptions(import_=i if args.adopt and wanted else None, retain_on_delete=args.retain_on_delete)
            )
            for i, wanted in zip(ids, args.imports, strict=True)
        ]
        # Step 4: kubectl create namespace gpu-resources
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns", metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace, annotations=dict(args.marks) or None), opts=adopted[0]
        )
        self.network_policy = network_policy(f"{name}-netpol", POLICY, self.namespace.metadata.name, POD_LABELS, egress=[], opts=on_cluster)
        # Step 5: kubectl apply -f nvidia-device-plugin-ds.yaml
        self.daemon_set = k8s.apps.v1.DaemonSet(
            f"{name}-ds",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=DAEMONSET_NAME, namespace=self.namespace.metadata.name, annotations=daemon_set_annotations(args) or None
            ),
            spec=plugin_spec(args),
            opts=adopted[1],
        )
        self.namespace_name = self.namespace.metadata.name
        self.register_outputs({"namespace": self.namespace_name})
