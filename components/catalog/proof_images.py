"""The images the MNIST proof runs in, and which GPUs each can run on. A CUDA program runs on a
GPU when it carries a cubin for the GPU's architecture (one built for compute capability X.y runs
on X.z for any z >= y, and on nothing of another major version: NVIDIA's CUDA C++ Programming
Guide, "Binary Compatibility"), or PTX the driver compiles. And on a node when it has a build for
the node's CPU: an image with none fails to pull ("no match for platform in manifest", containerd)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.catalog.gpus import capability_text


@dataclass(frozen=True)
class ProofImage:
    repository: str
    #: The image's reference as the Job names it.
    reference: str
    says: str
    #: The newest compute capability its CUDA toolkit knows of.
    newest_known: tuple[int, int]
    #: The oldest driver branch its CUDA runtime starts on.
    driver_branch: int
    #: Compute capabilities the framework carries cubins for; None: not published, and the
    #: image is taken to run on what its CUDA knows.
    cubins: tuple[tuple[int, int], ...] | None = None
    #: The platforms it is built for (`linux/amd64`): those a node can pull.
    platforms: tuple[str, ...] = ("linux/amd64",)
    #: About how many GB a node downloads (its layers, compressed) and unpacks; None: not known.
    download_gb: int | None = None
    unpacked_gb: int | None = None

    @property
    def disk_gb(self) -> int | None:
        """The node disk its pull takes: the layers as downloaded, which containerd keeps unless
        its CRI `discard_unpacked_layers` is set, and their files."""
        return None if self.download_gb is None or self.unpacked_gb is None else self.download_gb + self.unpacked_gb

    @property
    def digest(self) -> str | None:
        """`sha256:...` when the reference pins one."""
        return self.reference.split("@", 1)[1] if "@" in self.reference else None

    def builds_for(self, arch: str) -> bool:
        return f"linux/{arch}" in self.platforms

    @property
    def platforms_text(self) -> str:
        return ", ".join(self.platforms)

    def runs_on(self, capability: tuple[int, int]) -> bool:
        if self.cubins is None:
            return capability <= self.newest_known
        return any(major == capability[0] and minor <= capability[1] for major, minor in self.cubins)

    @property
    def kernels_text(self) -> str:
        if self.cubins is None:
            return f"compute capabilities up to {capability_text(self.newest_known)}"
        return " ".join(f"sm_{major}{minor}" for major, minor in self.cubins)


def _image(fields: dict[str, Any]) -> ProofImage:
    """One image of proof_images.json (its facts and their sources)."""
    lists = {"newest_known": tuple, "platforms": tuple, "cubins": lambda c: tuple(map(tuple, c))}
    return ProofImage(**{name: lists.get(name, lambda v: v)(value) for name, value in fields.items() if name != "about"})


_TABLE = json.loads((Path(__file__).parent / "proof_images.json").read_text(encoding="utf-8"))
PYTORCH, GUIDE = _image(_TABLE["PYTORCH"]), _image(_TABLE["GUIDE"])

# What to run on Arm64 (Grace) nodes: NVIDIA's NGC PyTorch container publishes its tags for
# linux/amd64 and linux/arm64 (public Dockerfiles build `FROM --platform=linux/arm64
# nvcr.io/nvidia/pytorch:25.04-py3` beside `--platform=linux/amd64` of the same tag, and guides
# for GH200 systems start `FROM --platform=linux/arm64 nvcr.io/nvidia/pytorch:25.08-py3`; read
# 2026-11-26, not pulled from here). Not a default: its size and contents were not checked.
ARM64_ALTERNATIVE = "NVIDIA's nvcr.io/nvidia/pytorch:<yy.mm>-py3 (built for linux/amd64 and linux/arm64)"

KNOWN = (PYTORCH, GUIDE)


def repository(image: str) -> str:
    """`registry/name` of an image reference, without its tag or digest."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name.rsplit(":", 1)[0]
    return name


def known(image: str) -> ProofImage | None:
    """What this program knows of an image, by its repository or by its digest (a copy in the
    team's own registry has the same digest: `az acr import` copies the manifest as it is)."""
    digest = image.split("@", 1)[1] if "@" in image else None
    return next((i for i in KNOWN if repository(image) == i.repository or (digest is not None and digest == i.digest)), None)


def why_not(image: ProofImage, capability: tuple[int, int]) -> str:
    """Why `image` cannot be expected to run on a GPU of `capability`."""
    if image.cubins is None:
        return (
            f"its CUDA knows compute capabilities up to {capability_text(image.newest_known)}, so on "
            f"{capability_text(capability)} its kernels exist only as PTX for the driver to compile, and its cuBLAS "
            "fails there (CUBLAS_STATUS_EXECUTION_FAILED on Turing: NVIDIA/nvidia-docker#1106; 'Blas GEMM launch "
            "failed' on A100: CHTC/templates-GPUs#10)"
        )
    return f"it carries kernels for {image.kernels_text}, none of which runs on compute capability {capability_text(capability)}"
