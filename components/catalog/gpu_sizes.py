"""Azure's GPU VM sizes a user of this program might pick: the GPU, how many (or what share of
one) a VM gets, the Hyper-V generations it boots, its CPU, retirements and successors, the driver
AKS installs, and what AKS does not document. Each figure's source (the sizes' pages and their
ms.date, the retirement pages, Azure/AgentBaker at 06836ee2): docs/design/gpu-sizes-and-variants.md, "GPU sizes" and
"The catalog's sources"."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from fractions import Fraction

from components.catalog import gpus
from components.catalog.gpus import Gpu


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


# "Modern CUDA compute SKUs (T4, V100, A100, H100, H200, ...) use the R580 LTS image
# (aks-gpu-cuda-lts) ... Legacy NCv1 (K80) keeps the separate "cuda" path with its pinned R470
# driver" (AgentBaker baker.go); mcr.microsoft.com/aks/aks-gpu-cuda-lts 580.159.04,
# aks-gpu-grid 570.211.01, aks-gpu-grid-v20 595.58.03 (components.json).
CUDA_LTS = Driver("CUDA", "580.159.04")
CUDA_470 = Driver("CUDA", "470.82.01")
GRID = Driver("GRID", "570.211.01")
GRID_V20 = Driver("GRID", "595.58.03")

NOT_ON_AKS_NCV6 = (
    'the RTX PRO 6000 sizes\' page says "NCv6 is currently not supported on AKS or Azure Batch" '
    "(nc-rtxpro6000-bse-v6-series-overview.md, ms.date 06/03/2026), though AKS's node image installs its GRID v20 driver"
)
NOT_ON_AKS_GRACE = (
    "no AKS page documents node pools of this size: its Grace CPUs are Arm64, and AKS's Arm64 GPU node image is "
    "not yet released (AgentBaker's GB image is frozen)"
)
NOT_ON_AKS_CONFIDENTIAL = "no AKS page documents confidential GPU node pools"

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


def _family(
    names: dict[str, tuple[int | Fraction, str | None]],
    gpu: Gpu,
    *,
    gen1: bool,
    gen2: bool,
    driver: Driver | None = CUDA_LTS,
    retired: datetime.date | None = None,
    not_on_aks: str | None = None,
    arch: str = AMD64,
) -> list[GpuSize]:
    """One size series: {size: (GPUs per VM, or its share of one; successor if retired)}."""
    return [
        GpuSize(n, gpu, max(int(g), 1), gen1, gen2, retired, r, Fraction(g) if g < 1 else Fraction(1), driver, not_on_aks, arch)
        for n, (g, r) in names.items()
    ]


SERIES_RETIRED_2026 = datetime.date(2026, 9, 30)

CATALOG: dict[str, GpuSize] = {
    s.name: s
    for s in [
        # NC v1, the guide's sizes. Gen1 only. Retired 2023-09-06 (nc-series-retirement);
        # n-series-migration: "NC-Series customers should consider moving directly across ...
        # to NC T4 v3 sizes."
        *_family(
            {
                "Standard_NC6": (1, "Standard_NC4as_T4_v3"),
                "Standard_NC12": (2, "Standard_NC16as_T4_v3"),
                "Standard_NC24": (4, "Standard_NC64as_T4_v3"),
                "Standard_NC24r": (4, "Standard_NC64as_T4_v3"),
            },
            gpus.K80,
            gen1=True,
            gen2=False,
            driver=CUDA_470,
            retired=datetime.date(2023, 9, 6),
        ),
        # NCv2, the guide's Gen2-variant sizes. Retired 2023-09-06 (ncv2-series-retirement):
        # "NCv2-Series customers should consider moving directly across to NC A100 v4 sizes."
        *_family(
            {
                "Standard_NC6s_v2": (1, "Standard_NC24ads_A100_v4"),
                "Standard_NC12s_v2": (2, "Standard_NC48ads_A100_v4"),
                "Standard_NC24s_v2": (4, "Standard_NC96ads_A100_v4"),
                "Standard_NC24rs_v2": (4, "Standard_NC96ads_A100_v4"),
            },
            gpus.P100,
            gen1=True,
            gen2=True,
            retired=datetime.date(2023, 9, 6),
        ),
        # NCv3. Retired 2025-09-30 in public regions (ncv3-retirement; US Gov 2026-06-30):
        # "Microsoft is recommending the Azure NCadsH100_v5-series."
        *_family(
            {
                "Standard_NC6s_v3": (1, "Standard_NC40ads_H100_v5"),
                "Standard_NC12s_v3": (2, "Standard_NC80adis_H100_v5"),
                "Standard_NC24s_v3": (4, "Standard_NC80adis_H100_v5"),
                "Standard_NC24rs_v3": (4, "Standard_NC80adis_H100_v5"),
            },
            gpus.V100,
            gen1=True,
            gen2=True,
            retired=datetime.date(2025, 9, 30),
        ),
        # NVv3 (Tesla M60), retired 2026-09-30: "Microsoft is recommending the Azure
        # NVadsA10_v5-series" (nvv3-series-retirement).
        *_family(
            {
                "Standard_NV12s_v3": (1, "Standard_NV36ads_A10_v5"),
                "Standard_NV24s_v3": (2, "Standard_NV72ads_A10_v5"),
                "Standard_NV48s_v3": (4, "Standard_NV72ads_A10_v5"),
            },
            gpus.M60,
            gen1=True,
            gen2=True,
            retired=SERIES_RETIRED_2026,
        ),
        # NCasT4_v3: "For AKS node pools, use a minimum size of Standard_NC4as_T4_v3"
        # (azure-aks-docs use-nvidia-gpu.md, ms.date 07/02/2026).
        *_family(
            {
                "Standard_NC4as_T4_v3": (1, None),
                "Standard_NC8as_T4_v3": (1, None),
                "Standard_NC16as_T4_v3": (1, None),
                "Standard_NC64as_T4_v3": (4, None),
            },
            gpus.T4,
            gen1=True,
            gen2=True,
        ),
        # NVadsA10 v5: 1/6, 1/3 and 1/2 of an A10 on the three smallest sizes. AKS installs
        # the GRID driver on all six (AgentBaker ConvergedGPUDriverSizes) and its end-to-end
        # tests boot the 1/6 size; no AKS page speaks of the partial sizes.
        *_family(
            {
                "Standard_NV6ads_A10_v5": (Fraction(1, 6), None),
                "Standard_NV12ads_A10_v5": (Fraction(1, 3), None),
                "Standard_NV18ads_A10_v5": (Fraction(1, 2), None),
                "Standard_NV36ads_A10_v5": (1, None),
                "Standard_NV36adms_A10_v5": (1, None),
                "Standard_NV72ads_A10_v5": (2, None),
            },
            gpus.A10,
            gen1=True,
            gen2=True,
            driver=GRID,
        ),
        # NC A100 v4, NCads H100 v5, ND A100 v4, ND H100 v5, ND H200 v5: Gen2 only.
        *_family(
            {"Standard_NC24ads_A100_v4": (1, None), "Standard_NC48ads_A100_v4": (2, None), "Standard_NC96ads_A100_v4": (4, None)},
            gpus.A100_PCIE,
            gen1=False,
            gen2=True,
        ),
        *_family({"Standard_NC40ads_H100_v5": (1, None), "Standard_NC80adis_H100_v5": (2, None)}, gpus.H100_NVL, gen1=False, gen2=True),
        *_family({"Standard_NCC40ads_H100_v5": (1, None)}, gpus.H100_NVL, gen1=False, gen2=True, not_on_aks=NOT_ON_AKS_CONFIDENTIAL),
        *_family({"Standard_ND96asr_v4": (8, None)}, gpus.A100_SXM, gen1=False, gen2=True),
        *_family({"Standard_ND96isr_H100_v5": (8, None)}, gpus.H100_SXM, gen1=False, gen2=True),
        *_family({"Standard_ND96isr_H200_v5": (8, None)}, gpus.H200, gen1=False, gen2=True),
        # NC RTX PRO 6000 BSE v6, the generally available names (the preview's 128/256/320
        # no longer deploy). GPUs per size: "0.25 - 2" on the specs page and "1/4, 1/2, 1, 2
        # GPUs" in AgentBaker (RTXPro6000GPUDriverSizes); which size has which share is read
        # from the vCPU counts, not from a published table.
        *_family(
            {
                "Standard_NC24lds_xl_RTXPRO6000BSE_v6": (Fraction(1, 4), None),
                "Standard_NC36ds_xl_RTXPRO6000BSE_v6": (Fraction(1, 4), None),
                "Standard_NC36lds_xl_RTXPRO6000BSE_v6": (Fraction(1, 4), None),
                "Standard_NC72ds_xl_RTXPRO6000BSE_v6": (Fraction(1, 2), None),
                "Standard_NC72lds_xl_RTXPRO6000BSE_v6": (Fraction(1, 2), None),
                "Standard_NC144ds_xl_RTXPRO6000BSE_v6": (1, None),
                "Standard_NC144lds_xl_RTXPRO6000BSE_v6": (1, None),
                "Standard_NC288ds_xl_RTXPRO6000BSE_v6": (2, None),
                "Standard_NC288lds_xl_RTXPRO6000BSE_v6": (2, None),
            },
            gpus.RTX_PRO_6000,
            gen1=False,
            gen2=True,
            driver=GRID_V20,
            not_on_aks=NOT_ON_AKS_NCV6,
        ),
        # ND GB200 v6 and ND GB300 v6: four Blackwell GPUs beside two Grace CPUs ("Each
        # ND-GB200-v6 VM is powered by two NVIDIA Grace CPUs", nd-gb200-v6-series-summary;
        # the same for GB300), and Grace is Arm64 (NVIDIA's Grace CPU benchmarking guide,
        # "Developing for NVIDIA Grace": "All server-class Arm64 processors ... (including
        # NVIDIA Grace)"). Their nodes pull an image's linux/arm64.
        *_family({"Standard_ND128isr_NDR_GB200_v6": (4, None)}, gpus.GB200, gen1=False, gen2=True, not_on_aks=NOT_ON_AKS_GRACE, arch=ARM64),
        *_family(
            {"Standard_ND128isr_GB300_v6": (4, None), "Standard_ND128isrG5_GB300_v6": (4, None)},
            gpus.GB300,
            gen1=False,
            gen2=True,
            not_on_aks=NOT_ON_AKS_GRACE,
            arch=ARM64,
        ),
        # AMD. "AKS currently supports the Standard_ND96isr_MI300X_v5 Azure VM size" with
        # AMD's own GPU stack (azure-aks-docs use-amd-gpus.md, ms.date 06/04/2025); NVv4
        # (MI25) "isn't supported on AKS" (use-nvidia-gpu.md) and retired 2026-09-30.
        *_family({"Standard_ND96isr_MI300X_v5": (8, None)}, gpus.MI300X, gen1=False, gen2=True, driver=None),
        *_family(
            {
                "Standard_NV4ads_V710_v5": (Fraction(1, 6), None),
                "Standard_NV8ads_V710_v5": (Fraction(1, 3), None),
                "Standard_NV12ads_V710_v5": (Fraction(1, 2), None),
                "Standard_NV24ads_V710_v5": (1, None),
                "Standard_NV28adms_V710_v5": (1, None),
            },
            gpus.V710,
            gen1=False,
            gen2=True,
            driver=None,
        ),
        *_family(
            {
                "Standard_NV4as_v4": (Fraction(1, 8), "Standard_NV4ads_V710_v5"),
                "Standard_NV8as_v4": (Fraction(1, 4), "Standard_NV8ads_V710_v5"),
                "Standard_NV16as_v4": (Fraction(1, 2), "Standard_NV12ads_V710_v5"),
                "Standard_NV32as_v4": (1, "Standard_NV24ads_V710_v5"),
            },
            gpus.MI25,
            gen1=True,
            gen2=True,
            driver=None,
            retired=SERIES_RETIRED_2026,
        ),
    ]
}

# The guide's sizes: `--node-vm-size Standard_NC6`, and Standard_NC6s_v2 for its Gen2 variant.
GUIDE_SIZE = "Standard_NC6"
GUIDE_GEN2_SIZE = "Standard_NC6s_v2"


def default_size(gen2: bool) -> str:
    return GUIDE_GEN2_SIZE if gen2 else GUIDE_SIZE


def is_gpu_family(vm_size: str) -> bool:
    """Azure's GPU families are the N-series: NC, ND, NV, NG, NCC (vm-naming-conventions)."""
    return vm_size.startswith("Standard_N")


def generation(vm_size: str) -> str:
    """Which Hyper-V generation AKS boots the pool on: "2", "1", or "unknown".

    AKS Linux pools get the Gen2 image whenever the size supports it
    (azure-aks-docs articles/aks/generation-2-vms.md).
    """
    size = CATALOG.get(vm_size)
    if size is None:
        return "unknown"
    return "2" if size.gen2 else "1"


# How many MIG instances one GPU gives per profile, the same on every A100, H100 and H200 model
# (NVIDIA's MIG user guide, "Supported MIG Profiles": 1g x7, 2g x3, 3g x2, 4g x1, 7g x1).
MIG_INSTANCES_PER_GPU = {"MIG1g": 7, "MIG2g": 3, "MIG3g": 2, "MIG4g": 1, "MIG7g": 1}


def gpus_per_node(vm_size: str, mig_profile: str | None) -> int | None:
    """How many `nvidia.com/gpu` one node of the pool offers: GPUs per VM, times the slices
    per GPU with MIG (strategy single: each slice is one nvidia.com/gpu). None: unknown size."""
    size = CATALOG.get(vm_size)
    if size is None:
        return None
    return size.gpus * (MIG_INSTANCES_PER_GPU[mig_profile] if mig_profile else 1)


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
    """The catalog's entry for a size Azure has retired; None for a current or unknown size.
    A retired size is a preflight problem (components/preflight/preflight.py): a preview warns, a
    deployment stops."""
    size = CATALOG.get(vm_size)
    return size if size is not None and size.retired is not None else None


def alternatives(vm_size: str) -> list[GpuSize]:
    """Current NVIDIA sizes AKS runs, with the same or a newer GPU and at least as many whole
    GPUs per VM, oldest architecture first. An unknown size has none."""
    wanted = CATALOG.get(vm_size)
    if wanted is None:
        return []
    return sorted(
        (
            s
            for s in CATALOG.values()
            if s.retired is None
            and s.name != vm_size
            and s.gpu.nvidia
            and s.not_on_aks is None
            and s.share == 1
            and s.gpu.generation >= wanted.gpu.generation
            and s.gpus >= wanted.gpus
        ),
        key=lambda s: (s.gpu.generation, s.gpus, s.name),
    )


def current_sizes() -> list[str]:
    """The catalog's sizes of whole NVIDIA GPUs that Azure still sells and AKS documents, in catalog order."""
    return [s.name for s in CATALOG.values() if s.retired is None and s.gpu.nvidia and s.share == 1 and s.not_on_aks is None]
