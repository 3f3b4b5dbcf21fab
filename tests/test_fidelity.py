"""The two Kubernetes objects match the guide's manifests, except for documented additions.

The guide's manifests, byte-for-byte copies in tests/guide/ (pinned by their git blobs; its
README says where they come from), are compared field by field with what
the program declares. Every difference must be in the list below, each
with its reason (also in docs/design/guide-and-azure.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import git_blob

from components.gpu_stack.settings import DEFAULT_MNIST_IMAGE, GUIDE_DEVICE_PLUGIN_IMAGE, GUIDE_MNIST_IMAGE
from components.proof.watch_verdict import SPEC_ANNOTATION
from tools.render import manifest

GUIDE = Path(__file__).resolve().parent / "guide"
# The guide's two YAML blocks, each by its git blob (`git hash-object`; tests/guide/README.md).
GUIDE_BLOBS = {
    "nvidia-device-plugin-ds.yaml": "1fcc858c07ed257d2accc4d62bdc21387f2e7ed9",
    "samples-tf-mnist-demo.yaml": "f3fcd7d8058804206122fbaaaebed1bc735fc5f0",
}

SKU_GPU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
# The security baseline both objects gain (docs/design/security.md).
SECCOMP = {"seccompProfile": {"type": "RuntimeDefault"}}
NO_TOKEN = False

# path -> (guide's value, program's value); None means absent.
DAEMONSET_ADDITIONS = {
    # Today's guide: the GPU pool is tainted sku=gpu:NoSchedule, so the plugin tolerates it.
    "spec.template.spec.tolerations[2]": (None, SKU_GPU_TOLERATION),
    # Today's guide: the supported replacement of the critical-pod annotation.
    "spec.template.spec.priorityClassName": (None, "system-node-critical"),
    # Today's guide: idle, not crash-loop, on nodes without a GPU.
    "spec.template.spec.containers[0].env": (None, [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}]),
    # Security baseline: no API token, seccomp, a read-only root, bounded resources, fresh pulls.
    "spec.template.spec.automountServiceAccountToken": (None, NO_TOKEN),
    "spec.template.spec.securityContext": (None, SECCOMP),
    "spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem": (None, True),
    "spec.template.spec.containers[0].resources": (
        None,
        {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "256Mi"}},
    ),
    "spec.template.spec.containers[0].imagePullPolicy": (None, "Always"),
}
JOB_ADDITIONS = {
    # A smoke test's retries instead of Kubernetes' default 6 (job_deadline.BACKOFF_LIMIT says why).
    "spec.backoffLimit": (None, 2),
    # A Job that cannot start fails by itself, before `pulumi up` stops waiting (job_deadline.py):
    # a running node's pull, three tries of the guide's image and a margin.
    "spec.activeDeadlineSeconds": (None, 3105),
    # Today's guide: the Job tolerates the GPU pool's taint.
    "spec.template.spec.tolerations": (None, [SKU_GPU_TOLERATION]),
    # Each try a pod of its own, kept with its log when it fails, and the failure's last words
    # in `pulumi up`'s error (mnist_job.job_spec and container; tests/test_proof_failure_message.py).
    "spec.template.spec.restartPolicy": ("OnFailure", "Never"),
    "spec.template.spec.containers[0].terminationMessagePolicy": (None, "FallbackToLogsOnError"),
    # Security baseline: a namespace of its own (with a NetworkPolicy) instead of `default`.
    "metadata.namespace": (None, "gpu-workloads"),
    # pulumi.com/replaceUnready (mnist_job.py says why); no linter's word (security/checkov-kubernetes.yaml).
    "metadata.annotations": (None, {"pulumi.com/replaceUnready": "true"}),
    # Security baseline: a non-root user, seccomp, no API token, no capabilities, a
    # read-only root with /tmp (where the image writes) on an emptyDir.
    "spec.template.spec.automountServiceAccountToken": (None, NO_TOKEN),
    "spec.template.spec.securityContext": (
        None,
        {"runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001, **SECCOMP},
    ),
    "spec.template.spec.containers[0].securityContext": (
        None,
        {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True},
    ),
    "spec.template.spec.containers[0].volumeMounts": (None, [{"name": "scratch", "mountPath": "/tmp"}]),
    "spec.template.spec.volumes": (None, [{"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}]),
    "spec.template.spec.containers[0].env": (
        None,
        [{"name": "HOME", "value": "/tmp"}, {"name": "CUDA_CACHE_PATH", "value": "/tmp/.nv"}],
    ),
    # Security baseline: CPU and memory bounds beside the guide's GPU limit; fresh pulls of a
    # tag, which can move (a digest keeps the guide's IfNotPresent: mnist_job.pull_policy).
    "spec.template.spec.containers[0].resources.requests": (None, {"cpu": "500m", "memory": "2Gi"}),
    "spec.template.spec.containers[0].resources.limits.cpu": (None, "2"),
    "spec.template.spec.containers[0].resources.limits.memory": (None, "4Gi"),
    "spec.template.spec.containers[0].imagePullPolicy": ("IfNotPresent", "Always"),
}


def differences(guide: Any, ours: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    if isinstance(guide, dict) and isinstance(ours, dict):
        for key in sorted(set(guide) | set(ours)):
            sub = f"{path}.{key}" if path else key
            if key not in guide:
                yield sub, None, ours[key]
            elif key not in ours:
                yield sub, guide[key], None
            else:
                yield from differences(guide[key], ours[key], sub)
    elif isinstance(guide, list) and isinstance(ours, list):
        for i in range(max(len(guide), len(ours))):
            sub = f"{path}[{i}]"
            if i >= len(guide):
                yield sub, None, ours[i]
            elif i >= len(ours):
                yield sub, guide[i], None
            else:
                yield from differences(guide[i], ours[i], sub)
    elif _scalar(guide) != _scalar(ours):
        yield path, guide, ours


def _scalar(value: Any) -> Any:
    # `nvidia.com/gpu: 1` in YAML is the quantity "1" in the Kubernetes API.
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def guide_manifest(name: str) -> dict[str, Any]:
    return yaml.safe_load((GUIDE / name).read_text())


@pytest.mark.parametrize("name", GUIDE_BLOBS)
def test_the_copies_of_the_guides_manifests_are_byte_for_byte(name):
    assert git_blob((GUIDE / name).read_bytes()) == GUIDE_BLOBS[name]


def declared(run, kind: str) -> dict[str, Any]:
    """The program's object of the guide's kind and name (the device plugin, the Job). An
    awaited Job's spec hash, which its watch reads (SPEC_ANNOTATION: a sha256, whatever the
    spec), is checked here and left out of the comparison."""
    name = {"apps/v1:DaemonSet": "nvidia-device-plugin-daemonset"}.get(kind)
    found = manifest(run.one(f"kubernetes:{kind}", name))
    if kind == "batch/v1:Job":
        annotations = found["metadata"]["annotations"]
        assert re.fullmatch(r"[0-9a-f]{64}", annotations.pop(SPEC_ANNOTATION)), "the Job's watch knows it by its spec hash"
    return found


def test_the_device_plugin_is_the_guides_daemonset_plus_todays_additions_and_the_baseline(program):
    run = program(devicePlugin={"image": GUIDE_DEVICE_PLUGIN_IMAGE})
    found = {p: (g, o) for p, g, o in differences(guide_manifest("nvidia-device-plugin-ds.yaml"), declared(run, "apps/v1:DaemonSet"))}
    assert found == DAEMONSET_ADDITIONS


def test_the_default_device_plugin_image_is_the_one_todays_guide_uses(dev):
    found = {p: o for p, _, o in differences(guide_manifest("nvidia-device-plugin-ds.yaml"), declared(dev, "apps/v1:DaemonSet"))}
    assert found.pop("spec.template.spec.containers[0].image") == "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"
    assert set(found) == set(DAEMONSET_ADDITIONS)


def test_with_the_guides_image_the_job_is_the_guides_job_plus_the_toleration_and_the_security_baseline(program):
    run = program(mnistJob={"image": GUIDE_MNIST_IMAGE})
    found = {p: (g, o) for p, g, o in differences(guide_manifest("samples-tf-mnist-demo.yaml"), declared(run, "batch/v1:Job"))}
    assert found == JOB_ADDITIONS


# What the shipped proof changes in the guide's Job: its name, its image, the script it runs
# and what it is told to prove, the script's mount, and PyTorch's room (mnist_job.py says why).
PROOF_CHANGES = {
    "metadata.name": ("samples-tf-mnist-demo", "mnist-proof"),
    "metadata.labels.app": ("samples-tf-mnist-demo", "mnist-proof"),
    "spec.template.metadata.labels.app": ("samples-tf-mnist-demo", "mnist-proof"),
    "spec.template.spec.containers[0].name": ("samples-tf-mnist-demo", "mnist-proof"),
    "spec.template.spec.containers[0].image": (GUIDE_MNIST_IMAGE, DEFAULT_MNIST_IMAGE),
    "spec.template.spec.containers[0].command": (None, ["python", "/opt/aks-gpu/train_mnist.py"]),
    "spec.template.spec.containers[0].args[0]": ("--max_steps", "--max-steps"),
    "spec.template.spec.containers[0].args[2]": (None, "--max-seconds"),
    "spec.template.spec.containers[0].args[3]": (None, "120"),
    "spec.template.spec.containers[0].args[4]": (None, "--min-accuracy"),
    "spec.template.spec.containers[0].args[5]": (None, "0.9"),
    "spec.template.spec.containers[0].args[6]": (None, "--data"),
    "spec.template.spec.containers[0].args[7]": (None, "mnist"),
    "spec.template.spec.containers[0].args[8]": (None, "--data-dir"),
    "spec.template.spec.containers[0].args[9]": (None, "/tmp/mnist"),
    "spec.template.spec.containers[0].resources.requests": (None, {"cpu": "1", "memory": "2Gi"}),
    "spec.template.spec.containers[0].resources.limits.cpu": (None, "4"),
    "spec.template.spec.containers[0].resources.limits.memory": (None, "6Gi"),
    # Three tries of the script's 120 s instead of the guide's image's (job_deadline.py).
    "spec.activeDeadlineSeconds": (None, 2745),
}


def test_the_default_job_is_the_guides_job_running_the_shipped_proof_in_pytorchs_image(dev):
    found = {p: (g, o) for p, g, o in differences(guide_manifest("samples-tf-mnist-demo.yaml"), declared(dev, "batch/v1:Job"))}
    assert found.pop("spec.template.spec.containers[0].volumeMounts") == (
        None,
        [{"name": "scratch", "mountPath": "/tmp"}, {"name": "proof", "mountPath": "/opt/aks-gpu", "readOnly": True}],
    )
    [scratch, proof] = found.pop("spec.template.spec.volumes")[1]
    assert proof == {
        "name": "proof",
        "configMap": {"name": dev.one("kubernetes:core/v1:ConfigMap").inputs["metadata"]["name"], "defaultMode": 0o444},
    }
    env = found.pop("spec.template.spec.containers[0].env")[1]
    assert env[-2:] == [{"name": "PYTHONUNBUFFERED", "value": "1"}, {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}]
    # The digest-pinned image needs no Checkov skip.
    assert found.pop("metadata.annotations") == (None, {"pulumi.com/replaceUnready": "true"})
    expected = {
        **{
            k: v
            for k, v in JOB_ADDITIONS.items()
            if not k.startswith(
                (
                    "metadata.annotations",
                    "spec.template.spec.containers[0].resources",
                    "spec.template.spec.containers[0].volumeMounts",
                    "spec.template.spec.volumes",
                    "spec.template.spec.containers[0].env",
                    # Pinned by digest: the guide's IfNotPresent (mnist_job.pull_policy).
                    "spec.template.spec.containers[0].imagePullPolicy",
                )
            )
        },
        **PROOF_CHANGES,
    }
    assert found == expected


def test_max_steps_and_image_reach_the_job_container(program):
    run = program(mnistJob={"maxSteps": 40, "image": "myregistry.azurecr.io/mnist:gpu", "run": "image"})
    found = {p: (g, o) for p, g, o in differences(guide_manifest("samples-tf-mnist-demo.yaml"), declared(run, "batch/v1:Job"))}
    assert found.pop("spec.template.spec.containers[0].args[1]") == ("500", "40")
    assert found.pop("spec.template.spec.containers[0].image")[1] == "myregistry.azurecr.io/mnist:gpu"
    assert found == JOB_ADDITIONS


def test_an_image_pinned_by_digest_is_pulled_if_not_present(program):
    digest = "sha256:" + "a" * 64
    run = program(
        devicePlugin={"image": f"nvcr.io/nvidia/k8s-device-plugin:v0.18.0@{digest}"},
        mnistJob={"image": f"mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu@{digest}"},
    )
    job = declared(run, "batch/v1:Job")
    assert job["metadata"]["annotations"] == {"pulumi.com/replaceUnready": "true"}
    assert job["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent", "the guide's own policy"


def test_the_comparison_notices_a_change():
    guide = guide_manifest("samples-tf-mnist-demo.yaml")
    changed = yaml.safe_load(yaml.safe_dump(guide))
    changed["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert list(differences(guide, changed)) == [("spec.template.spec.restartPolicy", "OnFailure", "Never")]
