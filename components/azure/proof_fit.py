"""What each GPU pool is, and whether the proof Job's image can run on it, said at preview:
the GPU, its compute capability, the driver that serves it, and the image's kernels.

An image that cannot be expected to run on a pool's GPU is a warning, not a refusal: the
guide's image stays selectable (`mnistJob.image`), and its Job then fails on the cluster,
which is what a preview should say before anyone pays for the node."""

from __future__ import annotations

from components.catalog import gpu_sizes, proof_images
from components.catalog.gpus import capability_text
from components.config import NAMESPACE, StackConfig


def lines(cfg: StackConfig) -> tuple[list[str], list[str]]:
    """(what a preview says of each pool, what it warns of)."""
    if not cfg.mnist_job.enabled:
        return [], []
    infos, warnings = [], []
    image = proof_images.known(cfg.mnist_job.image)
    for pool in cfg.gpu_pools:
        key, size = cfg.pool_key(pool), gpu_sizes.CATALOG.get(pool.vm_size)
        if size is None or size.gpu.capability is None:
            infos.append(f"proof: {key} {pool.vm_size}: its GPU is not in this program's catalog; {_image_text(cfg)}")
            continue
        driver = (
            "the GPU Operator's driver"
            if pool.mode == "gpu-operator"
            else f"AKS installs {size.driver.says if size.driver else 'no driver'}"
        )
        slices = f" in {gpu_sizes.MIG_INSTANCES_PER_GPU[pool.mig_profile]} MIG slices ({pool.mig_profile})" if pool.mig_profile else ""
        said = f"proof: {key} {size.name}: {size.gpus_text}{slices} (compute capability {capability_text(size.gpu.capability)}), {driver}"
        if image is None:
            infos.append(f"{said}; {_image_text(cfg)}")
        elif image.runs_on(size.gpu.capability):
            infos.append(f"{said}; {image.says} runs on it")
        else:
            fix = (
                "remove mnistJob.image for the PyTorch proof"
                if image is proof_images.GUIDE
                else f"pick a GPU of compute capability {capability_text(image.cubins[0] if image.cubins else image.newest_known)} or later"
            )
            warnings.append(
                f"{key}.vmSize {size.name} ({size.gpu.says}) with {NAMESPACE}:mnistJob.image {cfg.mnist_job.image}: "
                f"{image.says} cannot be expected to run there: {proof_images.why_not(image, size.gpu.capability)}; "
                f"the Job would end BackoffLimitExceeded and `pulumi up` with it; {fix}"
            )
    return infos, warnings


def _image_text(cfg: StackConfig) -> str:
    job = cfg.mnist_job
    image = proof_images.known(job.image)
    if image is not None:
        return f"the proof image ({image.says}) has kernels for {image.kernels_text}"
    how = "the shipped script in its python" if job.runs_script else "its own entrypoint"
    return f"the proof runs {job.image} ({how}), an image this program does not know: whether its CUDA build runs there is its own"
