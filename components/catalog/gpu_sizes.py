"""Azure's GPU VM sizes a user of this program might pick, read from gpu_sizes.json (the table,
and each figure's source), and what the program asks of them."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from components.catalog.gpus import GPUS, TABLE, Gpu


@dataclass(frozen=True)
class Driver:
    kind: str
    version: str

    @property
    def branch(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def says(self) -> str:
        return f"the {self.kind} driver {self.version}"


# A VM's CPU architecture, as Kubernetes labels its node (`kubernetes.io/arch`, Go's GOARCH)
# and as an image names its platforms (`linux/amd64`, `linux/arm64`: the OCI image index's
# `platform.architecture`).
AMD64 = "amd64"
ARM64 = "arm64"
CPU_TEXT = {AMD64: "x86-64", ARM64: "Arm64"}


@dataclass(frozen=True)
class GpuSize:
    name: str
    gpu: Gpu
    #: GPU devices a VM sees (a share of one GPU is one device).
    gpus: int
    gen1: bool
    gen2: bool
    retired: datetime.date | None = None
    replacement: str | None = None
    #: The share of each GPU a VM gets: below 1 on partitioned sizes (1/6 of an A10).
    share: Fraction = Fraction(1)
    #: The driver AKS installs; None on a GPU CUDA cannot use.
    driver: Driver | None = None
    #: Why AKS may not run this size, when its docs say or show so.
    not_on_aks: str | None = None
    #: The CPU architecture of its VMs (AMD64, ARM64): which platform of an image a node pulls.
    arch: str = AMD64

    @property
    def gpu_model(self) -> str:
        return self.gpu.model

    @property
    def mig(self) -> bool:
        """Multi-instance GPU: on a whole A100, H100 or H200."""
        return self.gpu.mig and self.share == 1

    @property
    def gpus_text(self) -> str:
        """`1/6 of an NVIDIA A10 24GB`, `8 x NVIDIA H100 ...`."""
        if self.share < 1:
            return f"{self.share} of one {self.gpu.model}"
        return f"{self.gpus} x {self.gpu.model}"

    @property
    def cpu_text(self) -> str:
        """`Arm64 (linux/arm64)`: the CPU, and the platform its nodes pull."""
        return f"{CPU_TEXT[self.arch]} (linux/{self.arch})"


def _sizes(family: dict[str, Any]) -> list[GpuSize]:
    """One family of gpu_sizes.json: its sizes, each with its GPUs per VM (or share of one)."""
    driver, retired, replacements = family.get("driver", "CUDA_LTS"), family.get("retired"), family.get("replacements", {})
    return [
        GpuSize(
            name,
            GPUS[family["gpu"]],
            max(int(Fraction(g)), 1),
            family["gen1"],
            family["gen2"],
            datetime.date.fromisoformat(retired) if retired else None,
            replacements.get(name),
            min(Fraction(g), Fraction(1)),
            Driver(*TABLE["drivers"][driver]) if driver else None,
            TABLE["notOnAks"].get(family.get("notOnAks")),
            family.get("arch", AMD64),
        )
        for name, g in family["sizes"].items()
    ]


CATALOG: dict[str, GpuSize] = {s.name: s for family in TABLE["families"] for s in _sizes(family)}

# The guide's sizes: `--node-vm-size Standard_NC6`, and Standard_NC6s_v2 for its Gen2 variant.
GUIDE_SIZE = "Standard_NC6"
GUIDE_GEN2_SIZE = "Standard_NC6s_v2"


def default_size(gen2: bool) -> str:
    return GUIDE_GEN2_SIZE if gen2 else GUIDE_SIZE


def is_gpu_family(vm_size: str) -> bool:
    """Azure's GPU families are the N-series: NC, ND, NV, NG, NCC (vm-naming-conventions)."""
    return vm_size.startswith("Standard_N")


def generation(vm_size: str) -> str:
    """Which Hyper-V generation AKS boots the pool on: "2", "1", or "unknown". AKS Linux pools get
    the Gen2 image whenever the size supports it (azure-aks-docs articles/aks/generation-2-vms.md)."""
    size = CATALOG.get(vm_size)
    return "unknown" if size is None else "2" if size.gen2 else "1"


# How many MIG instances one GPU gives per profile, the same on every A100, H100 and H200 model
# (NVIDIA's MIG user guide, "Supported MIG Profiles": 1g x7, 2g x3, 3g x2, 4g x1, 7g x1).
MIG_INSTANCES_PER_GPU = {"MIG1g": 7, "MIG2g": 3, "MIG3g": 2, "MIG4g": 1, "MIG7g": 1}


def gpus_per_node(vm_size: str, mig_profile: str | None) -> int | None:
    """How many `nvidia.com/gpu` one node of the pool offers: GPUs per VM, times the slices
    per GPU with MIG (strategy single: each slice is one nvidia.com/gpu). None: unknown size."""
    size = CATALOG.get(vm_size)
    return None if size is None else size.gpus * (MIG_INSTANCES_PER_GPU[mig_profile] if mig_profile else 1)


def mig_slices(vm_size: str, mig_profile: str) -> str:
    """A pool's MIG slices as a person reads them: "7 slices of 1g.10gb per GPU" (NVIDIA's
    profile name, where the catalog knows the GPU), "7 MIG1g slices per GPU" otherwise."""
    if mig_profile not in MIG_INSTANCES_PER_GPU:
        return f"profile {mig_profile}"
    count = MIG_INSTANCES_PER_GPU[mig_profile]
    size = CATALOG.get(vm_size)
    names = size.gpu.mig_slices if size is not None else ()
    slices = f"slice{'' if count == 1 else 's'}"
    if not names:
        return f"{count} {mig_profile} {slices} per GPU"
    return f"{count} {slices} of {names[list(MIG_INSTANCES_PER_GPU).index(mig_profile)]} per GPU"


def retirement(vm_size: str) -> GpuSize | None:
    """The catalog's entry for a size Azure has retired (a preflight problem); None for a current or unknown size."""
    size = CATALOG.get(vm_size)
    return size if size is not None and size.retired is not None else None


def _current(size: GpuSize) -> bool:
    """A size of whole NVIDIA GPUs that Azure still sells and AKS documents."""
    return size.retired is None and size.gpu.nvidia and size.share == 1 and size.not_on_aks is None


def alternatives(vm_size: str) -> list[GpuSize]:
    """Current sizes with the same or a newer GPU and at least as many whole GPUs per VM, oldest
    architecture first. An unknown size has none."""
    wanted = CATALOG.get(vm_size)
    if wanted is None:
        return []
    return sorted(
        (
            s
            for s in CATALOG.values()
            if _current(s) and s.name != vm_size and s.gpu.generation >= wanted.gpu.generation and s.gpus >= wanted.gpus
        ),
        key=lambda s: (s.gpu.generation, s.gpus, s.name),
    )


def current_sizes() -> list[str]:
    """The catalog's current sizes (`_current`), in catalog order."""
    return [s.name for s in CATALOG.values() if _current(s)]
