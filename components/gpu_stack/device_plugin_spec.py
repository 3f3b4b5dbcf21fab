"""Guide steps 4-5's DaemonSet as plain values: the guide's `nvidia-device-plugin-ds.yaml` field
for field, what today's guide adds (the GPU pool's toleration, `priorityClassName`,
FAIL_ON_INIT_ERROR=false) and the security baseline (pod_hardening.py), from the plan's inputs.
The plan says from it what the adopting `up` changes (`adoption_plans`); device_plugin.py
declares it. Each difference and its reason: docs/design/guide-and-azure.md; the baseline and
the Checkov checks it cannot pass: security/checkov-kubernetes.yaml."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi_kubernetes as k8s

from components.config.values import NAMESPACE
from components.gpu_stack import pod_hardening as hardening
from components.gpu_stack.cluster_object_checks import Adoption
from components.gpu_stack.cluster_objects import GUIDE_DAEMONSET, GUIDE_SELECTOR
from components.ownership import adoption
from components.pools.placement import on_pools
from components.pools.pool_settings import plain

DAEMONSET_NAME, POD_LABELS = GUIDE_DAEMONSET, GUIDE_SELECTOR
CONTAINER_NAME = "nvidia-device-plugin-ctr"
# The kubelet's device-plugin socket directory: the plugin registers `nvidia.com/gpu` there
# (kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins).
DEVICE_PLUGIN_PATH = "/var/lib/kubelet/device-plugins"
# A small Go binary; the limits leave it ample room (an OOM kill takes nvidia.com/gpu off the node).
RESOURCES = hardening.resources(requests={"cpu": "50m", "memory": "64Mi"}, limits={"cpu": "200m", "memory": "256Mi"})
# The guide's own tolerations, in its order; CriticalAddonsOnly: "Allow this pod to be rescheduled
# while the node is in 'critical add-ons only' mode."
GUIDE_TOLERATIONS = (
    k8s.core.v1.TolerationArgs(key="CriticalAddonsOnly", operator="Exists"),
    k8s.core.v1.TolerationArgs(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),
)
# With MIG, the "single" strategy (every MIG instance is one `nvidia.com/gpu`, so the Job runs on a
# slice unchanged) and NVIDIA_MIG_MONITOR_DEVICES=all, as NVIDIA's chart sets them with a MIG
# strategy, with the CAP_SYS_ADMIN it needs (docs/gpu.md, "Multi-instance GPU"). The chart adds it
# whenever a MIG strategy is not none (_helpers.tpl `requiresCapSysAdmin`), and nothing else. The
# API server takes it beside `allowPrivilegeEscalation: false` because it is spelled SYS_ADMIN: its
# pod validation refuses the pair only for "CAP_SYS_ADMIN" (kubernetes pkg/apis/core/validation/
# validation.go ValidateSecurityContext). no_new_privs is no boundary for CAP_SYS_ADMIN: what
# bounds the plugin is the one capability, its read-only root and that it talks to nothing.
MIG_ENV = (
    k8s.core.v1.EnvVarArgs(name="MIG_STRATEGY", value="single"),
    k8s.core.v1.EnvVarArgs(name="NVIDIA_MIG_MONITOR_DEVICES", value="all"),
)
# Taking over what `kubectl apply` made: an `up` takes over kubectl's field managers before its
# server-side apply, a preview does not, so its dry run would stop at conflicts; the annotation
# forces both (pulumi/pulumi-kubernetes@94977969 provider/pkg/await/await.go patchForce), on the adopting
# run only, so that later another writer's change conflicts again (docs/existing-cluster.md, "What the
# cluster runs in Kubernetes").
PATCH_FORCE = {"pulumi.com/patchForce": "true"}


@dataclass(frozen=True)
class DevicePluginInputs:
    """What the namespace and the DaemonSet are made from, decided by the plan (NvidiaDevicePluginArgs)."""

    #: The namespace the stack creates (devicePlugin.namespace) and the plugin's image.
    namespace: str
    image: str
    #: Tolerations for the GPU pools' taints, after the guide's own.
    gpu_tolerations: Sequence[k8s.core.v1.TolerationArgs] = field(default_factory=tuple)
    #: The GPUs are cut into MIG instances (gpuPool.migProfile): offer each as one nvidia.com/gpu.
    mig: bool = False
    #: Run only on these pools' nodes; empty: on every node that tolerates, as the guide's. Set
    #: wherever the cluster may hold GPU pools another plugin serves: "Don't run multiple NVIDIA device
    #: plugin DaemonSets on the same nodes" (azure-aks-docs articles/aks/best-practices-ml-ops.md, commit 4c2b0282).
    pool_names: Sequence[str] = field(default_factory=tuple)
    #: The stack's marks in a cluster it shares (cluster_objects.STACK_ANNOTATION); none in one it creates.
    marks: Mapping[str, str] = field(default_factory=dict)
    #: This run takes over the guide's namespace and DaemonSet (devicePlugin.adopt).
    adopt: bool = False


def daemon_set_annotations(plugin: DevicePluginInputs) -> dict[str, str]:
    """The stack's marks, and on the adopting run PATCH_FORCE. No linter's word goes on the object:
    the Checkov checks it cannot pass are skipped in security/checkov-kubernetes.yaml, with why."""
    return {**plugin.marks, **(PATCH_FORCE if plugin.adopt else {})}


def plugin_spec(plugin: DevicePluginInputs) -> k8s.apps.v1.DaemonSetSpecArgs:
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
                        env=[k8s.core.v1.EnvVarArgs(name="FAIL_ON_INIT_ERROR", value="false"), *(MIG_ENV if plugin.mig else ())],
                        resources=RESOURCES,
                        security_context=hardening.container_security_context(add=["SYS_ADMIN"] if plugin.mig else None),
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
    """What the adopting `up` changes in the guide's namespace and DaemonSet, field by field: each
    imported, then given the stack's spec (the selector is the guide's, or the run was refused).
    None for one the stack's state holds already."""
    key = f"{NAMESPACE}:devicePlugin"
    if not taken.live_daemon_set:
        return []  # not read: the line that says so is the check's (cluster_object_checks)
    namespace = {"metadata": {"annotations": dict(plugin.marks)}}
    daemon_set = {"metadata": {"annotations": daemon_set_annotations(plugin)}, "spec": plain(plugin_spec(plugin))}
    plans = [(taken.import_namespace, "Namespace", taken.namespace, taken.live_namespace, namespace)]
    plans += [(taken.import_daemon_set, "DaemonSet", taken.daemon_set, taken.live_daemon_set, daemon_set)]
    return [adoption.object_plan(key, f"{kind} {name}", name, live, ours) for imported, kind, name, live, ours in plans if imported]
