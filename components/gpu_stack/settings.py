"""The keys of what runs on the GPU pools (`devicePlugin`, `gpuOperator`, `monitoring`, `mnistJob`)
and their rules across pools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field
from pydantic.dataclasses import dataclass

from components.catalog import proof_images, proof_names
from components.cluster.existing_settings import ON_DESTROY, check_on_destroy
from components.config.messages import fail
from components.config.values import MODEL, NAMESPACE, Allowed, Bool, Image, OwnedNamespace, one_of, pattern, whole_number
from components.errors import ConfigError
from components.pools.groups import GpuGroups
from components.pools.settings import GpuPoolConfig, Pools

# The device plugin today's AKS guide applies (azure-aks-docs articles/aks/use-nvidia-gpu.md), and the 2020 guide's.
DEFAULT_DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"
GUIDE_DEVICE_PLUGIN_IMAGE = "mcr.microsoft.com/oss/nvidia/k8s-device-plugin:1.11"
# PyTorch on CUDA 12.8, whose kernels run on every NVIDIA GPU AKS still creates (catalog/proof_images.py).
DEFAULT_MNIST_IMAGE = proof_images.PYTORCH.reference
GUIDE_MNIST_IMAGE = proof_images.GUIDE.reference
# The shipped script (proof/train_mnist.py) in the image's Python, or the image's entrypoint with `--max_steps`.
MNIST_RUNS = ("script", "image")
# NVIDIA's DCGM exporter and GPU Operator chart, pinned (docs/gpu.md says where they come from).
DEFAULT_DCGM_EXPORTER_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless"
DEFAULT_GPU_OPERATOR_VERSION = "v26.7.0"


# NVIDIA's chart index lists its versions with a leading v (`v26.7.0`), and Helm matches the
# version string as listed: `26.7.0` is "chart not found" at deploy time.
ChartVersion = pattern(
    r"^v\d{1,6}\.\d{1,6}\.\d{1,6}$", "a chart version with its leading v, as NVIDIA's chart index lists it, such as 'v26.7.0'"
)


@dataclass(frozen=True, config=MODEL)
class DevicePluginConfig:
    """The NVIDIA device plugin DaemonSet (guide steps 4-5)."""

    namespace: OwnedNamespace = "gpu-resources"
    """The device plugin's namespace (the guide's gpu-resources), created and deleted by this program."""
    image: Image = DEFAULT_DEVICE_PLUGIN_IMAGE
    """The device plugin image; the 2020 guide's is mcr.microsoft.com/oss/nvidia/k8s-device-plugin:1.11."""
    adopt: Bool = False
    """existingCluster only: take over the guide's DaemonSet nvidia-device-plugin-daemonset and its namespace (devicePlugin.namespace), applied by hand, instead of refusing them; the stack's spec replaces the guide's (docs/existing-cluster.md#what-the-cluster-runs-in-kubernetes)."""
    on_destroy: one_of(*ON_DESTROY) | None = None
    """adopt only: what `pulumi destroy` does to the adopted namespace and DaemonSet. release (unset): Pulumi forgets them and the cluster keeps them; delete: the stack may delete them, and all in the namespace (docs/existing-cluster.md)."""


Accuracy = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False), Allowed("a fraction above 0 and at most 1, such as 0.9")]


@dataclass(frozen=True, config=MODEL)
class MnistJobConfig:
    """The MNIST training Job that proves each GPU pool works (guide steps 8-9)."""

    enabled: Bool = True
    """false: no Job."""
    image: Image = DEFAULT_MNIST_IMAGE
    """The training image: PyTorch on CUDA 12.8, pinned by digest; the guide's is mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu (a preview warns on GPUs it cannot run on)."""
    run: one_of(*MNIST_RUNS) | None = None
    """script: the shipped proof/train_mnist.py in the image's python (needs PyTorch); image: the image's own entrypoint with --max_steps. Unset: image for the guide's image, else script."""
    max_steps: whole_number(1, 1_000_000) = 500
    """Training steps at most (--max-steps, or the guide's --max_steps)."""
    max_seconds: whole_number(10, 3600) = 120
    """script only: training seconds at most, whichever of steps and seconds comes first."""
    min_accuracy: Accuracy = 0.9
    """script only: the least test accuracy that passes; under it the Job fails."""
    egress: Bool = True
    """true: MNIST from its mirror, checked by SHA-256 (on an existing cluster with an HTTP proxy at an IP address, the NetworkPolicy allows the proxy too; docs/existing-cluster.md#its-way-out-a-proxy-a-firewall). false: the pod may reach nothing (its NetworkPolicy allows no egress) and the script trains on digits it draws; not with the guide's image."""
    wait_for_completion: Bool = True
    """false: pulumi up returns once the Job is created (pulumi.com/skipAwait); its name then carries a hash of its spec."""
    # The guide's `kubectl apply` lands the Job in `default`; a namespace of its own lets it
    # have its own NetworkPolicy and keeps workloads out of `default` (Checkov CKV_K8S_21).
    namespace: OwnedNamespace = "gpu-workloads"
    """The Job's namespace, other than the device plugin's, created and deleted by this program."""

    @property
    def runs_script(self) -> bool:
        if self.run is not None:
            return self.run == "script"
        return proof_images.known(self.image) is not proof_images.GUIDE


@dataclass(frozen=True, config=MODEL)
class MonitoringConfig:
    """GPU metrics (docs/gpu.md)."""

    gpu_metrics: Bool = True
    """NVIDIA's DCGM exporter on the GPU nodes: this program's DaemonSet (device-plugin) or the chart's (gpu-operator); false deploys none. Not settable with aks-managed: AKS runs its own."""
    dcgm_exporter_image: Image = DEFAULT_DCGM_EXPORTER_IMAGE
    """The DCGM exporter image the device-plugin mode deploys; device-plugin only."""


@dataclass(frozen=True, config=MODEL)
class GpuOperatorConfig:
    """NVIDIA's GPU Operator Helm chart (gpuPool.management: gpu-operator)."""

    version: ChartVersion = DEFAULT_GPU_OPERATOR_VERSION
    """The gpu-operator chart version, from NVIDIA's chart repository; gpu-operator only."""
    namespace: OwnedNamespace = "gpu-operator"
    """The operator's namespace (NVIDIA's install guide uses gpu-operator), other than mnistJob.namespace, created and deleted by this program; gpu-operator only."""


def check_modes(pools: tuple[GpuPoolConfig, ...], keys: Mapping[str, str]) -> None:
    """The GPU Operator cannot share a cluster with pools of another mode: "By default, the GPU
    Operator operands are deployed on all GPU worker nodes in the cluster" (NVIDIA/cloud-native-docs
    gpu-operator/getting-started.rst, docs 26.7), a second device plugin the guide warns against
    (azure-aks-docs best-practices-ml-ops.md). NVIDIA's opt-out, the node label
    nvidia.com/gpu.deploy.operands=false, is refused as a mix instead (docs/gpu.md)."""
    operator = [p for p in pools if p.mode == "gpu-operator"]
    others = [p for p in pools if p.mode != "gpu-operator"]
    if operator and others:
        raise ConfigError(
            f"invalid config {keys[operator[0].name]}.management = 'gpu-operator' beside {keys[others[0].name]} "
            f"({others[0].mode}): the GPU Operator installs its driver and device plugin on every NVIDIA GPU node "
            "of the cluster, which would give that pool a second device plugin; give every pool management "
            "gpu-operator, or none of them (docs/gpu.md)"
        )


# Which modes use each setting, and why another mode does not: a setting no pool's mode uses is refused.
_SETTING_USERS = {
    "devicePlugin": (("device-plugin",), "this program deploys no device plugin in that mode"),
    "gpuOperator": (("gpu-operator",), "the GPU Operator is installed only with management gpu-operator"),
    "monitoring": (("device-plugin", "gpu-operator"), "AKS runs its own DCGM exporter on managed GPU nodes (port 19400)"),
}


def _where_management(pools: tuple[GpuPoolConfig, ...], keys: Mapping[str, str]) -> str:
    key = keys[pools[0].name]
    return f"{key}.management" if len(pools) == 1 else f"{key.rsplit('.', 1)[0]}.*.management"


def _unused_setting_message(setting: str, pools: tuple[GpuPoolConfig, ...], keys: Mapping[str, str]) -> str:
    pool, where = pools[0], _where_management(pools, keys)
    if len(pools) == 1 and pool.dedicated_vhd and setting == "devicePlugin":  # the guide's own warning, in its words
        return (
            f"invalid config {NAMESPACE}:devicePlugin is set but {keys[pool.name]}.dedicatedVhd = true: "
            "AKS installs the device plugin on managed GPU nodes and this program deploys none "
            "(the guide warns against both); remove one of them"
        )
    modes = ", ".join(sorted({p.mode for p in pools}))
    return f"invalid config {NAMESPACE}:{setting} is set but {where} is {modes}: {_SETTING_USERS[setting][1]}; remove it"


# The members only the shipped script reads.
_SCRIPT_MEMBERS = {"maxSeconds": "--max-seconds", "minAccuracy": "--min-accuracy"}


def check_mnist_job(job: MnistJobConfig, given: Mapping[str, Any]) -> None:
    """Refused where a member would do nothing, or the image cannot do what is asked of it."""
    key = f"{NAMESPACE}:mnistJob"
    guide = proof_images.known(job.image) is proof_images.GUIDE
    if guide and job.run == "script":
        raise fail(
            f"{key}.run",
            job.run,
            "the guide's image has TensorFlow 1.4 and no PyTorch, so it cannot run the shipped script; "
            "set run to image, or remove image for the PyTorch proof",
        )
    if not job.runs_script:
        for member, flag in _SCRIPT_MEMBERS.items():
            if member in given:
                raise fail(
                    f"{key}.{member}",
                    given[member],
                    f"only the shipped script takes {flag}, and this Job runs the image's own entrypoint "
                    "(the guide's --max_steps only); remove it, or run the script",
                )
    if guide and not job.egress:
        raise fail(
            f"{key}.egress",
            False,
            "the guide's image downloads MNIST when it starts, so it needs egress; remove egress, "
            "or remove image for the PyTorch proof, which trains on digits it draws without egress",
        )


def check(
    pools: tuple[GpuPoolConfig, ...],
    keys: Mapping[str, str],
    values: Mapping[str, Any],
    device_plugin: DevicePluginConfig,
    mnist_job: MnistJobConfig,
    operator: GpuOperatorConfig,
) -> None:
    """The workloads' rules across pools: modes that may share a cluster, settings no pool's mode
    uses, how the Job runs, and the namespaces each workload owns."""
    check_modes(pools, keys)
    check_on_destroy(None, "", device_plugin)
    modes = {p.mode for p in pools}
    for setting, (users, _) in _SETTING_USERS.items():
        if setting in values and not modes.intersection(users):
            raise ConfigError(_unused_setting_message(setting, pools, keys))
    if "dcgmExporterImage" in values.get("monitoring", {}) and "device-plugin" not in modes:
        raise ConfigError(
            f"invalid config {NAMESPACE}:monitoring.dcgmExporterImage with {_where_management(pools, keys)} = "
            "'gpu-operator': the GPU Operator deploys its own DCGM exporter; remove it"
        )
    check_mnist_job(mnist_job, values.get("mnistJob", {}))
    # Each component creates and deletes its own namespace; two cannot own one.
    for mode, namespace, key in (
        ("device-plugin", device_plugin.namespace, "devicePlugin"),
        ("gpu-operator", operator.namespace, "gpuOperator"),
    ):
        if mnist_job.enabled and mode in modes and mnist_job.namespace == namespace:
            raise fail(
                f"{NAMESPACE}:mnistJob.namespace",
                mnist_job.namespace,
                f"expected a namespace other than {NAMESPACE}:{key}.namespace: each is created and deleted by its own component",
            )


def check_object_names(job: MnistJobConfig, pools: Pools, groups: GpuGroups, pool_map: bool) -> None:
    """Every object the proof declares (the Job of each pool in no group and of each group, and the
    ConfigMap each awaited Job's watch writes) has a name Kubernetes accepts, or the key that makes
    it is refused before the pools are created and bill (catalog/proof_names.py)."""
    if not job.enabled:
        return
    grouped = {name for names in groups.groups.values() for name in names}
    owners = [(pools.key(p), p.name if pool_map else None) for p in pools.pools if p.name not in grouped]
    owners += [(groups.key(group), group) for group in groups.groups]
    for key, owner in owners:
        _check_proof_name(key, owner, job)


def _check_proof_name(key: str, owner: str | None, job: MnistJobConfig) -> None:
    base, hashed = proof_names.job_base(job.runs_script), not job.wait_for_completion
    name = proof_names.job_name(base, owner, "0" * proof_names.SPEC_HASH_DIGITS if hashed else None)
    shown = proof_names.job_name(base, owner) + ("-<8 hex digits of its spec hash>" if hashed else "")
    spare = proof_names.JOB_NAME_MOST - (len(name) - len(owner or ""))
    fix = f"; name it in at most {spare} characters" if owner and spare > 0 else ""
    if problem := proof_names.subdomain_problem(name, proof_names.JOB_NAME_MOST):
        raise fail(key, owner or name, f"its proof Job would be named {shown!r} ({problem}): {proof_names.JOB_NAME_WHY}{fix}")
    result = proof_names.result_name(name)
    if not hashed and (problem := proof_names.subdomain_problem(result, proof_names.SUBDOMAIN_MOST)):
        raise fail(
            key, owner or name, f"its proof's watch would write the ConfigMap {result!r} ({problem}): {proof_names.SUBDOMAIN_WHY}{fix}"
        )
