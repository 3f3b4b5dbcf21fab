"""What each GPU pool is, and whether the proof Job's image can run on it, said at preview: the
GPU, its compute capability, the driver, the image's kernels and whether it has a build for the
pool's CPU. A misfit is a warning, not a refusal: the guide's image stays selectable, and a
preview says before anyone pays for the node that its Job would fail on the cluster."""

from __future__ import annotations

from collections.abc import Mapping

from components.catalog import gpu_sizes, proof_images
from components.catalog.gpus import capability_text
from components.config.values import NAMESPACE
from components.gpu_stack.settings import MnistJobConfig
from components.pools.existing_pools import LivePool
from components.pools.settings import Pools


def lines(pools: Pools, job: MnistJobConfig, live: Mapping[str, LivePool] | None = None) -> tuple[list[str], list[str]]:
    """(what a preview says of each pool, what it warns of). `live`: the cluster's own pools
    the stack uses or adopts, whose OS disk Azure reports."""
    if not job.enabled:
        return [], []
    infos, warnings = [], disk_warnings(pools, job, live or {})
    image = proof_images.known(job.image)
    if job.image == proof_images.PYTORCH.reference:
        # Said once, as information: the default is the program's choice, not a problem; a
        # stack that sets the guide's image gets its warnings per pool below.
        infos.append(
            f"proof: the Job runs the shipped proof/train_mnist.py in {image.says if image else 'PyTorch'}, the successor of the guide's "
            f"image ({proof_images.GUIDE.says}), which cannot be expected to run on any GPU AKS still creates (docs/design/guide-and-azure.md, "
            f"the proof Job); set {NAMESPACE}:mnistJob.image to {proof_images.GUIDE.reference} for the guide's"
        )
    for pool in pools.pools:
        key, size = pools.key(pool), gpu_sizes.CATALOG.get(pool.vm_size)
        if size is None or size.gpu.capability is None:
            infos.append(f"proof: {key} {pool.vm_size}: its GPU is not in this program's catalog; {_image_text(job)}")
            continue
        driver = (
            "the GPU Operator's driver"
            if pool.mode == "gpu-operator"
            else f"AKS installs {size.driver.says if size.driver else 'no driver'}"
        )
        slices = f" in {gpu_sizes.MIG_INSTANCES_PER_GPU[pool.mig_profile]} MIG slices ({pool.mig_profile})" if pool.mig_profile else ""
        said = f"proof: {key} {size.name}: {size.gpus_text}{slices} (compute capability {capability_text(size.gpu.capability)}), {driver}"
        if image is None:
            infos.append(f"{said}; {_image_text(job)}")
        elif not image.builds_for(size.arch):
            infos.append(f"{said}; {image.says} has no build for its {size.cpu_text} CPUs")
            warnings.append(_no_build(job, key, size, image))
        elif image.runs_on(size.gpu.capability):
            infos.append(f"{said}; {image.says} runs on it")
        else:
            fix = (
                "remove mnistJob.image for the PyTorch proof"
                if image is proof_images.GUIDE
                else f"pick a GPU of compute capability {capability_text(image.cubins[0] if image.cubins else image.newest_known)} or later"
            )
            warnings.append(
                f"{key}.vmSize {size.name} ({size.gpu.says}) with {NAMESPACE}:mnistJob.image {job.image}: "
                f"{image.says} cannot be expected to run there: {proof_images.why_not(image, size.gpu.capability)}; "
                f"the Job would end BackoffLimitExceeded and `pulumi up` with it; {fix}"
            )
    return infos, warnings


def _no_build(job: MnistJobConfig, key: str, size: gpu_sizes.GpuSize, image: proof_images.ProofImage) -> str:
    """An image no node of the pool can pull: what happens, and what to set."""
    return (
        f"{key}.vmSize {size.name} has {size.cpu_text} CPUs, and {NAMESPACE}:mnistJob.image {job.image} "
        f"({image.says}) is built for {image.platforms_text} only: its pull fails there ('no match for platform in manifest'), "
        f"the pod waits in ImagePullBackOff and the Job fails on its deadline (DeadlineExceeded), and `pulumi up` with it; "
        f"set mnistJob.image to a CUDA image built for linux/{size.arch}, such as {proof_images.ARM64_ALTERNATIVE}, "
        "or mnistJob.enabled to false (it is one setting for every pool)"
    )


def _image_text(job: MnistJobConfig) -> str:
    image = proof_images.known(job.image)
    if image is not None:
        return f"the proof image ({image.says}) has kernels for {image.kernels_text}"
    how = "the shipped script in its python" if job.runs_script else "its own entrypoint"
    return f"the proof runs {job.image} ({how}), an image this program does not know: whether its CUDA build runs there is its own"


def disk_warnings(pools: Pools, job: MnistJobConfig, live: Mapping[str, LivePool]) -> list[str]:
    """A used or adopted pool whose OS disk, as Azure reports it, is smaller than the proof's
    image alone (downloaded and unpacked, components/catalog/proof_images.py): its pull cannot
    finish, and the Job fails at its deadline. A pool this program creates leaves osDiskSizeGB
    unset, which AKS sizes by the VM size ("0 ... the default osDisk size according to the
    vmSize specified", the agentPools API), so only a size Azure reports is checked."""
    image = proof_images.known(job.image)
    if image is None or image.disk_gb is None:
        return []
    said = []
    for pool in pools.pools:
        disk = live[pool.name].facts.member("osDiskSizeGB") if pool.name in live else None
        if not isinstance(disk, (int, float)) or isinstance(disk, bool) or not 0 < disk < image.disk_gb:
            continue
        said.append(
            f"{pools.key(pool)} ({live[pool.name].how}): its nodes' OS disk is {disk:g} GB, and {image.says} alone takes about "
            f"{image.disk_gb} GB of it ({image.download_gb} GB downloaded, {image.unpacked_gb} GB unpacked: docs/proof.md): the pull "
            f"cannot finish and the proof Job fails at its deadline; run the proof on a pool with a larger OS disk, or set "
            f"{NAMESPACE}:mnistJob.enabled to false"
        )
    return said
