"""Guide steps 4-5's DaemonSet as plain values: the guide's `nvidia-device-plugin-ds.yaml` field
for field, plus what today's guide adds (the GPU pool's toleration, `priorityClassName`,
FAIL_ON_INIT_ERROR=false) and the security baseline (hardening.py), built from the few inputs
the plan decides (`DevicePluginInputs`). Below both: the plan says from it what the adopting
`up` changes in the guide's DaemonSet (`adoption_plans`), and components/gpu_stack/
device_plugin.py declares it. Each difference and its reason: docs/design/guide-and-azure.md (the
DaemonSet's bullets); the baseline and its Checkov skips: docs/design/security.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi_kubernetes as k8s

from components.config.values import NAMESPACE
from components.gpu_stack import pod_hardening as hardening
from components.gpu_stack.cluster_object_checks import Adoption
from components.ownership import adoption
from components.pools.placement import on_pools
from components.pools.pool_settings import plain

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
    return hardening.container_security_context(add=["SYS_ADMIN"] if mig else None)


@dataclass(frozen=True)
class DevicePluginInputs:
    """What the namespace and the DaemonSet are made from, decided by the plan (NvidiaDevicePluginArgs)."""

    #: The namespace the stack creates (devicePlugin.namespace; the guide's gpu-resources) and the plugin's image.
    namespace: str
    image: str
    #: Tolerations for the GPU pools' taints, added after the guide's own.
    gpu_tolerations: Sequence[k8s.core.v1.TolerationArgs] = field(default_factory=tuple)
    #: The GPUs are cut into MIG instances (gpuPool.migProfile): offer each as one nvidia.com/gpu.
    mig: bool = False
    #: Run only on these pools' nodes (their agentpool label); empty: on every node that
    #: tolerates, as the guide's DaemonSet. Set wherever the cluster may hold GPU pools whose
    #: device plugin is not this one's: "Don't run multiple NVIDIA device plugin DaemonSets on
    #: the same nodes" (azure-aks-docs articles/aks/best-practices-ml-ops.md, commit 4c2b0282).
    pool_names: Sequence[str] = field(default_factory=tuple)
    #: Annotations that mark the stack's objects in a cluster it shares, which the next run's
    #: read knows them by (components/gpu_stack/cluster_objects.py STACK_ANNOTATION); none in a
    #: cluster the stack creates, which nothing else runs in.
    marks: Mapping[str, str] = field(default_factory=dict)
    #: This run takes over the guide's namespace and DaemonSet, applied by hand
    #: (devicePlugin.adopt; components/gpu_stack/cluster_object_checks.py decides the run).
    adopt: bool = False


# Taking over the DaemonSet `kubectl apply` made: an `up` takes over kubectl's field managers
# before its server-side apply, a preview does not, so its dry run would stop at conflicts on
# the fields the program changes; the annotation forces both, on the adopting run only (later
# another writer's change should conflict again). docs/existing-cluster.md, "What the cluster
# runs in Kubernetes".
PATCH_FORCE = {"pulumi.com/patchForce": "true"}


def daemon_set_annotations(plugin: DevicePluginInputs) -> dict[str, str]:
    """The DaemonSet's annotations: Checkov's skips with their reasons, the stack's marks, and
    on the adopting run the forced apply (PATCH_FORCE)."""
    skips = {
        **CHECKOV_SKIPS,
        **(MIG_CHECKOV_SKIPS if plugin.mig else {}),
        **hardening.image_digest_skip(plugin.image, "aks-gpu:devicePlugin.image"),
    }
    return {**hardening.checkov_skips(skips), **plugin.marks, **(PATCH_FORCE if plugin.adopt else {})}


def plugin_spec(plugin: DevicePluginInputs) -> k8s.apps.v1.DaemonSetSpecArgs:
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
                tolerations=[*GUIDE_TOLERATIONS, *plugin.gpu_tolerations],
                affinity=on_pools(plugin.pool_names) if plugin.pool_names else None,
                priority_class_name="system-node-critical",
                automount_service_account_token=False,
                security_context=hardening.pod_security_context(),
                containers=[
                    k8s.core.v1.ContainerArgs(
                        name=CONTAINER_NAME,
                        image=plugin.image,
                        image_pull_policy="Always",
                        env=plugin_env(plugin.mig),
                        resources=RESOURCES,
                        security_context=plugin_security_context(plugin.mig),
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


def adoption_plans(plugin: DevicePluginInputs, taken: Adoption) -> list[adoption.Plan]:
    """The adopting `up` of the guide's namespace and DaemonSet (devicePlugin.adopt): each
    imported, then updated to the stack's spec, field by field. The stack owns the plugin's spec
    from then on (the image and tolerations its config says, the hardening), so every field it
    declares otherwise is named; the selector is the guide's, or the run was refused. None for
    one the stack's state holds already (Adoption.import_namespace, import_daemon_set)."""
    key = f"{NAMESPACE}:devicePlugin"
    if not taken.live_daemon_set:
        return []  # not read: the line that says so is the check's (cluster_object_checks)
    namespace = {"metadata": {"annotations": dict(plugin.marks)}}
    daemon_set = {"metadata": {"annotations": daemon_set_annotations(plugin)}, "spec": plain(plugin_spec(plugin))}
    plans = [adoption.object_plan(key, f"Namespace {taken.namespace}", taken.namespace, taken.live_namespace, namespace)]
    plans = plans if taken.import_namespace else []
    if taken.import_daemon_set:
        plans.append(adoption.object_plan(key, f"DaemonSet {taken.daemon_set}", taken.daemon_set, taken.live_daemon_set, daemon_set))
    return plans
