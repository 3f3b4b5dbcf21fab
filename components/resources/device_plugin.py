"""Guide steps 4-5: the `gpu-resources` namespace and the NVIDIA device plugin DaemonSet: the
guide's `nvidia-device-plugin-ds.yaml` field for field, plus what today's guide adds (the GPU pool's
toleration, `priorityClassName`, FAIL_ON_INIT_ERROR=false) and the security baseline
(components/resources/hardening.py). Each difference and its reason: docs/guide-and-azure.md (the
DaemonSet's bullets); the baseline and its Checkov skips: docs/security.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.resources import hardening
from components.resources.placement import on_pools

DAEMONSET_NAME = "nvidia-device-plugin-daemonset"
POD_LABELS = {"name": "nvidia-device-plugin-ds"}
CONTAINER_NAME = "nvidia-device-plugin-ctr"
# The kubelet's device-plugin socket directory: the plugin registers `nvidia.com/gpu` there
# (kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins).
DEVICE_PLUGIN_PATH = "/var/lib/kubelet/device-plugins"

# The plugin is a small Go binary; the limits leave it ample room (an OOM kill would take
# nvidia.com/gpu off the node until it restarts).
RESOURCES = hardening.resources(requests={"cpu": "50m", "memory": "64Mi"}, limits={"cpu": "200m", "memory": "256Mi"})

# Checks the plugin cannot pass, and why. It registers with the kubelet by creating a unix
# socket in the root-owned hostPath above, so it runs as root (NVIDIA's own manifests and
# Helm chart run it as root too); it serves only that gRPC socket, and neither NVIDIA's
# static manifest nor its Helm chart defines a probe.
CHECKOV_SKIPS = {
    "CKV_K8S_23": "runs as root to create its socket in the root-owned hostPath /var/lib/kubelet/device-plugins",
    "CKV_K8S_40": "runs as root (UID 0) to create its socket in the root-owned kubelet device-plugins hostPath",
    "CKV_K8S_8": "no liveness endpoint: the plugin serves only a gRPC socket to the kubelet (none upstream either)",
    "CKV_K8S_9": "no readiness endpoint: the plugin serves only a gRPC socket to the kubelet (none upstream either)",
}

# The guide's own tolerations, in its order.
GUIDE_TOLERATIONS = (
    # "Allow this pod to be rescheduled while the node is in 'critical add-ons only' mode."
    k8s.core.v1.TolerationArgs(key="CriticalAddonsOnly", operator="Exists"),
    k8s.core.v1.TolerationArgs(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),
)


def plugin_env(mig: bool) -> list[k8s.core.v1.EnvVarArgs]:
    """FAIL_ON_INIT_ERROR=false, and with MIG the "single" strategy (every MIG instance is one
    `nvidia.com/gpu`, so the MNIST Job runs on a slice unchanged) and NVIDIA_MIG_MONITOR_DEVICES=all,
    as NVIDIA's chart sets it with a MIG strategy; `plugin_security_context` adds the CAP_SYS_ADMIN it
    needs. Sources: docs/gpu.md, "Multi-instance GPU" ("Strategy `single`", "The MIG device plugin")."""
    env = [k8s.core.v1.EnvVarArgs(name="FAIL_ON_INIT_ERROR", value="false")]
    if mig:
        env.append(k8s.core.v1.EnvVarArgs(name="MIG_STRATEGY", value="single"))
        env.append(k8s.core.v1.EnvVarArgs(name="NVIDIA_MIG_MONITOR_DEVICES", value="all"))
    return env


# The checks a MIG plugin cannot pass, as NVIDIA's chart runs it (plugin_env says why).
MIG_CHECKOV_SKIPS = {
    "CKV_K8S_39": "CAP_SYS_ADMIN, as NVIDIA's chart adds it with a MIG strategy: NVIDIA_MIG_MONITOR_DEVICES needs it",
    "CKV_K8S_25": "adds CAP_SYS_ADMIN and nothing else, as NVIDIA's chart does with a MIG strategy (MIG monitor devices)",
}


def plugin_security_context(mig: bool) -> k8s.core.v1.SecurityContextArgs:
    """The guide's context (no escalation, no capabilities) plus a read-only root filesystem:
    the plugin writes only its socket. With MIG, CAP_SYS_ADMIN is added back, as NVIDIA's chart
    adds it whenever a MIG strategy is not none (_helpers.tpl `requiresCapSysAdmin`), and
    nothing else (the DCGM exporter's context is the same). The API server takes it beside
    `allowPrivilegeEscalation: false` because the capability is spelled SYS_ADMIN: its pod
    validation refuses the pair only for the literal "CAP_SYS_ADMIN" (kubernetes
    pkg/apis/core/validation/validation.go ValidateSecurityContext). That flag sets
    no_new_privs, which is no boundary for a process holding CAP_SYS_ADMIN: what bounds the
    plugin is the one capability, its read-only root and that it talks to nothing."""
    context = hardening.container_security_context()
    if mig:
        context = k8s.core.v1.SecurityContextArgs(
            allow_privilege_escalation=False,
            capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"], add=["SYS_ADMIN"]),
            read_only_root_filesystem=True,
        )
    return context


@dataclass(frozen=True)
class NvidiaDevicePluginArgs:
    provider: k8s.Provider
    namespace: str
    image: str
    #: Tolerations for the GPU pool's taints, added after the guide's own.
    gpu_tolerations: Sequence[k8s.core.v1.TolerationArgs] = field(default_factory=tuple)
    #: The GPUs are cut into MIG instances (gpuPool.migProfile): offer each as one nvidia.com/gpu.
    mig: bool = False
    #: Run only on these pools' nodes (their agentpool label); empty: on every node that
    #: tolerates, as the guide's DaemonSet. Set wherever the cluster may hold GPU pools whose
    #: device plugin is not this one's: "Don't run multiple NVIDIA device plugin DaemonSets on
    #: the same nodes" (azure-aks-docs articles/aks/best-practices-ml-ops.md, commit 4c2b0282).
    pool_names: Sequence[str] = field(default_factory=tuple)
    #: Annotations that mark the stack's objects in a cluster it shares, which the next run's
    #: read knows them by (components/deciding/existing/cluster_objects.py STACK_ANNOTATION); none in a
    #: cluster the stack creates, which nothing else runs in.
    marks: Mapping[str, str] = field(default_factory=dict)
    #: This run takes over the guide's namespace and DaemonSet, applied by hand
    #: (devicePlugin.adopt; components/deciding/existing/cluster_object_checks.py decides the run).
    adopt: bool = False
    #: Which of (namespace, DaemonSet) the adopting run imports: not one the stack's state
    #: holds already (cluster_object_checks.Adoption).
    imports: tuple[bool, bool] = (True, True)
    #: The namespace and DaemonSet are the owner's, adopted (devicePlugin.adopt, on this run or
    #: before): a destroy releases them (`retainOnDelete`; devicePlugin.onDestroy: delete sets it false).
    retain_on_delete: bool = False
    #: The cluster this stack creates: its delete takes these objects with it (`deletedWith`,
    #: docs/lifecycle.md "pulumi destroy"), so a destroy sends none of them to the API server.
    #: None on an existing cluster, which is not the stack's.
    deleted_with: pulumi.Resource | None = None
    #: What every object here waits for (`dependsOn`): the deployer's access to the cluster
    #: (GpuCluster.access); empty on an existing cluster.
    depends_on: Sequence[pulumi.Input[pulumi.Resource]] = field(default_factory=tuple)


# Taking over the DaemonSet `kubectl apply` made: an `up` takes over kubectl's field managers
# before its server-side apply, a preview does not, so its dry run would stop at conflicts on
# the fields the program changes; the annotation forces both, on the adopting run only (later
# another writer's change should conflict again). docs/existing-cluster.md, "What the cluster
# runs in Kubernetes".
PATCH_FORCE = {"pulumi.com/patchForce": "true"}


def daemon_set_annotations(args: NvidiaDevicePluginArgs) -> dict[str, str]:
    """The DaemonSet's annotations: Checkov's skips with their reasons, the stack's marks, and
    on the adopting run the forced apply (PATCH_FORCE)."""
    skips = {
        **CHECKOV_SKIPS,
        **(MIG_CHECKOV_SKIPS if args.mig else {}),
        **hardening.image_digest_skip(args.image, "aks-gpu:devicePlugin.image"),
    }
    return {**hardening.checkov_skips(skips), **args.marks, **(PATCH_FORCE if args.adopt else {})}


def plugin_spec(args: NvidiaDevicePluginArgs) -> k8s.apps.v1.DaemonSetSpecArgs:
    """The DaemonSet's spec: the guide's, with today's additions and the hardening (the module's docstring)."""
    return k8s.apps.v1.DaemonSetSpecArgs(
        selector=k8s.meta.v1.LabelSelectorArgs(match_labels=POD_LABELS),
        update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(type="RollingUpdate"),
        template=k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(
                annotations={"scheduler.alpha.kubernetes.io/critical-pod": ""},
                labels=POD_LABELS,
            ),
            spec=k8s.core.v1.PodSpecArgs(
                tolerations=[*GUIDE_TOLERATIONS, *args.gpu_tolerations],
                affinity=on_pools(args.pool_names) if args.pool_names else None,
                priority_class_name="system-node-critical",
                automount_service_account_token=False,
                security_context=hardening.pod_security_context(),
                containers=[
                    k8s.core.v1.ContainerArgs(
                        name=CONTAINER_NAME,
                        image=args.image,
                        image_pull_policy="Always",
                        env=plugin_env(args.mig),
                        resources=RESOURCES,
                        security_context=plugin_security_context(args.mig),
                        volume_mounts=[
                            k8s.core.v1.VolumeMountArgs(name="device-plugin", mount_path=DEVICE_PLUGIN_PATH),
                        ],
                    )
                ],
                volumes=[
                    k8s.core.v1.VolumeArgs(
                        name="device-plugin",
                        host_path=k8s.core.v1.HostPathVolumeSourceArgs(path=DEVICE_PLUGIN_PATH),
                    )
                ],
            ),
        ),
    )


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """The namespace and the DaemonSet that advertise `nvidia.com/gpu` on GPU nodes."""

    namespace: k8s.core.v1.Namespace
    network_policy: k8s.networking.v1.NetworkPolicy
    daemon_set: k8s.apps.v1.DaemonSet
    namespace_name: pulumi.Output[str]

    def __init__(self, name: str, args: NvidiaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-gpu:kubernetes:NvidiaDevicePlugin", name, None, opts)
        on_cluster = pulumi.ResourceOptions(
            parent=self, provider=args.provider, deleted_with=args.deleted_with, depends_on=list(args.depends_on)
        )
        # The import IDs are pulumi-kubernetes' resource IDs, `<namespace>/<name>` or `<name>`
        # (provider/pkg/provider/util.go parseFqName); set on the adopting run only, and never on
        # one the state holds (pulumi/pulumi pkg/resource/deploy/step_generator.go `isImport` at 1b594989).
        ids = (args.namespace, f"{args.namespace}/{DAEMONSET_NAME}")
        imports = tuple(i if args.adopt and wanted else None for i, wanted in zip(ids, args.imports, strict=True))
        # What was adopted is released, not deleted: the engine's delete of a resource whose state
        # says retainOnDelete sends nothing to the API server (pulumi/pulumi pkg/resource/deploy/
        # step.go DeleteStep.Apply at 1b594989); the NetworkPolicy is the stack's own, and goes.

        # Step 4: kubectl create namespace gpu-resources
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace, annotations=dict(args.marks) or None),
            opts=pulumi.ResourceOptions.merge(
                on_cluster, pulumi.ResourceOptions(import_=imports[0], retain_on_delete=args.retain_on_delete)
            ),
        )

        # Not in the guide: the plugin neither serves nor calls anything over the network.
        self.network_policy = hardening.network_policy(
            f"{name}-netpol", "nvidia-device-plugin-deny-all", self.namespace.metadata.name, POD_LABELS, egress=[], opts=on_cluster
        )

        # Step 5: kubectl apply -f nvidia-device-plugin-ds.yaml
        self.daemon_set = k8s.apps.v1.DaemonSet(
            f"{name}-ds",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=DAEMONSET_NAME, namespace=self.namespace.metadata.name, annotations=daemon_set_annotations(args)
            ),
            spec=plugin_spec(args),
            opts=pulumi.ResourceOptions.merge(
                on_cluster, pulumi.ResourceOptions(import_=imports[1], retain_on_delete=args.retain_on_delete)
            ),
        )

        self.namespace_name = self.namespace.metadata.name
        self.register_outputs({"namespace": self.namespace_name})
