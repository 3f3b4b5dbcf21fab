"""The proof image must have a build for the pool's CPU: the catalog knows each size's CPU
architecture, each proof image the platforms it is built for, and a preview (and a deployment)
says plainly when a pool's nodes cannot pull the image, and what to set."""

from __future__ import annotations

import pytest
from support.plan import plan_infos, plan_warnings, planned

from components.catalog import gpu_sizes, proof_images
from components.gpu_stack.settings import DEFAULT_MNIST_IMAGE, GUIDE_MNIST_IMAGE

GRACE = ("Standard_ND128isr_NDR_GB200_v6", "Standard_ND128isr_GB300_v6", "Standard_ND128isrG5_GB300_v6")
GB200 = GRACE[0]
NO_BUILD = "is built for linux/amd64 only"


def platform_warnings(plan) -> list[str]:
    return [w for w in plan_warnings(plan) if NO_BUILD in w]


# --------------------------------------------------------------------------- the catalog


def test_the_grace_sizes_are_arm64_and_every_other_size_x86_64():
    assert {s.name for s in gpu_sizes.CATALOG.values() if s.arch == gpu_sizes.ARM64} == set(GRACE)
    assert {s.arch for s in gpu_sizes.CATALOG.values() if s.name not in GRACE} == {gpu_sizes.AMD64}
    assert gpu_sizes.CATALOG[GB200].cpu_text == "Arm64 (linux/arm64)"
    assert gpu_sizes.CATALOG["Standard_NC4as_T4_v3"].cpu_text == "x86-64 (linux/amd64)"


@pytest.mark.parametrize("image", [proof_images.PYTORCH, proof_images.GUIDE], ids=["PyTorch's", "the guide's"])
def test_each_proof_image_is_built_for_linux_amd64_alone(image):
    assert image.platforms == ("linux/amd64",)
    assert image.builds_for(gpu_sizes.AMD64) and not image.builds_for(gpu_sizes.ARM64)


def test_a_copy_in_the_teams_registry_is_known_by_its_digest():
    digest = proof_images.PYTORCH.digest
    assert digest is not None and DEFAULT_MNIST_IMAGE.endswith(f"@{digest}")
    assert proof_images.known(f"myacr.azurecr.io/pytorch/pytorch@{digest}") is proof_images.PYTORCH
    assert proof_images.known(f"myacr.azurecr.io/mirror/torch:2.9.1@{digest}") is proof_images.PYTORCH
    assert proof_images.known(f"myacr.azurecr.io/mirror/torch@sha256:{'c' * 64}") is None, "another digest is another image"
    assert proof_images.GUIDE.digest is None


# --------------------------------------------------------------------------- what a preview says


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
@pytest.mark.parametrize("size", GRACE)
def test_an_arm64_pool_under_the_default_image_is_warned_with_what_to_set(preview, size):
    plan = planned("dev", preview=preview, gpuPool={"vmSize": size, "gen2": True})
    [warning] = platform_warnings(plan)
    assert warning.startswith(
        f"aks-gpu:gpuPool.vmSize {size} has Arm64 (linux/arm64) CPUs, and aks-gpu:mnistJob.image {DEFAULT_MNIST_IMAGE} "
        "(PyTorch 2.9.1 on CUDA 12.8) is built for linux/amd64 only: its pull fails there ('no match for platform in manifest')"
    )
    assert "ImagePullBackOff" in warning and "DeadlineExceeded" in warning
    assert "set mnistJob.image to a CUDA image built for linux/arm64, such as NVIDIA's nvcr.io/nvidia/pytorch" in warning
    assert warning.endswith("or mnistJob.enabled to false (it is one setting for every pool)") and "\n" not in warning
    [info] = [i for i in plan_infos(plan) if i.startswith(f"proof: aks-gpu:gpuPool {size}:")]
    assert info.endswith("PyTorch 2.9.1 on CUDA 12.8 has no build for its Arm64 (linux/arm64) CPUs")
    assert "runs on it" not in info


@pytest.mark.parametrize(
    "size", ["Standard_NC4as_T4_v3", "Standard_NV36ads_A10_v5", "Standard_NC24ads_A100_v4", "Standard_ND96isr_H200_v5"]
)
def test_an_x86_pool_gets_no_platform_warning(size):
    plan = planned("dev", gpuPool={"vmSize": size, "gen2": True})
    assert not platform_warnings(plan)
    assert any(i.startswith(f"proof: aks-gpu:gpuPool {size}:") and i.endswith("runs on it") for i in plan_infos(plan))


def test_the_guides_image_on_an_arm64_pool_is_warned_for_its_platform_first():
    plan = planned("dev", gpuPool={"vmSize": GB200, "gen2": True}, mnistJob={"image": GUIDE_MNIST_IMAGE})
    [warning] = platform_warnings(plan)
    assert "(TensorFlow 1.4 on CUDA 8 (2017)) is built for linux/amd64 only" in warning
    assert not [w for w in plan_warnings(plan) if "cannot be expected to run there" in w], "a pull that fails trains nothing"


def test_a_copy_of_the_default_image_in_the_teams_registry_is_warned_the_same():
    image = f"myacr.azurecr.io/pytorch/pytorch@{proof_images.PYTORCH.digest}"
    plan = planned("dev", gpuPool={"vmSize": GB200, "gen2": True}, mnistJob={"image": image})
    [warning] = platform_warnings(plan)
    assert f"aks-gpu:mnistJob.image {image} (PyTorch 2.9.1 on CUDA 12.8)" in warning


def test_an_image_the_program_does_not_know_is_not_warned_for_its_platform():
    plan = planned("dev", gpuPool={"vmSize": GB200, "gen2": True}, mnistJob={"image": "nvcr.io/nvidia/pytorch:25.08-py3"})
    assert not platform_warnings(plan)
    assert any(
        "nvcr.io/nvidia/pytorch:25.08-py3 (the shipped script in its python), an image this program does not know" in i
        for i in plan_infos(plan)
    )


def test_with_gpupools_only_the_arm64_pool_is_warned():
    pools = {"gb": {"vmSize": GB200, "gen2": True, "nodeCount": 1}, "t4": {"vmSize": "Standard_NC4as_T4_v3", "nodeCount": 1}}
    plan = planned("dev", gpuPool=None, gpuPools=pools)
    [warning] = platform_warnings(plan)
    assert warning.startswith(f"aks-gpu:gpuPools.gb.vmSize {GB200} has Arm64")


def test_without_the_job_nothing_is_said_of_platforms():
    plan = planned("dev", gpuPool={"vmSize": GB200, "gen2": True}, mnistJob={"enabled": False})
    assert not platform_warnings(plan)
