"""The GPUs behind Azure's GPU sizes: who makes each, its architecture and, for NVIDIA's, its
CUDA compute capability.

Compute capabilities from NVIDIA's tables (developer.nvidia.com/cuda-gpus: "12.0 NVIDIA RTX
PRO 6000 Blackwell Server Edition", "10.3 NVIDIA GB300", "10.0 NVIDIA GB200", "9.0 NVIDIA
H200 NVIDIA H100", "8.6 ... NVIDIA A10", 8.0 A100, 7.5 T4; developer.nvidia.com/cuda-legacy-gpus:
"7.0 NVIDIA V100", "6.0 Tesla P100", "5.2 Tesla M60", 3.7 Tesla K80). AMD's GPUs have none:
CUDA does not run on them.
"""

from __future__ import annotations

from dataclasses import dataclass

# NVIDIA's architectures, oldest first: "the same or a newer GPU" means a later one here.
ARCHITECTURES = ("Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Hopper", "Blackwell")


@dataclass(frozen=True)
class Gpu:
    model: str
    vendor: str
    architecture: str
    #: CUDA compute capability (major, minor); None for a GPU CUDA cannot use.
    capability: tuple[int, int] | None = None
    #: Multi-instance GPU (NVIDIA's A100, H100 and H200: "Multi-instance GPU is currently
    #: supported on NVIDIA A100, H100, and H200 series GPU VM sizes on AKS", azure-aks-docs
    #: gpu-multi-instance.md, ms.date 05/22/2026).
    mig: bool = False
    #: NVIDIA's names of the MIG profiles AKS's MIG1g, MIG2g, MIG3g, MIG4g and MIG7g cut
    #: (NVIDIA MIG User Guide, "Supported MIG Profiles"; for the A100 PCIe 80GB, H100 NVL and
    #: H200 also NVIDIA/mig-parted config-default.yaml, which names those cards). AKS's own
    #: page tabulates only the A100 40GB (gpu-multi-instance.md, ms.date 05/22/2026).
    mig_slices: tuple[str, ...] = ()

    @property
    def nvidia(self) -> bool:
        return self.vendor == "NVIDIA"

    @property
    def generation(self) -> int:
        """Position among ARCHITECTURES (AMD's: -1)."""
        return ARCHITECTURES.index(self.architecture) if self.nvidia else -1

    @property
    def says(self) -> str:
        """The GPU as a preview names it: model and compute capability."""
        if self.capability is None:
            return f"{self.model} ({self.vendor}, no CUDA)"
        return f"{self.model}, compute capability {capability_text(self.capability)}"


def capability_text(capability: tuple[int, int]) -> str:
    return f"{capability[0]}.{capability[1]}"


K80 = Gpu("NVIDIA Tesla K80", "NVIDIA", "Kepler", (3, 7))
M60 = Gpu("NVIDIA Tesla M60", "NVIDIA", "Maxwell", (5, 2))
P100 = Gpu("NVIDIA Tesla P100", "NVIDIA", "Pascal", (6, 0))
V100 = Gpu("NVIDIA Tesla V100 16GB", "NVIDIA", "Volta", (7, 0))
T4 = Gpu("NVIDIA Tesla T4 16GB", "NVIDIA", "Turing", (7, 5))
A10 = Gpu("NVIDIA A10 24GB", "NVIDIA", "Ampere", (8, 6))
_SLICES_80GB = ("1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")
A100_PCIE = Gpu("NVIDIA A100 PCIe 80GB", "NVIDIA", "Ampere", (8, 0), mig=True, mig_slices=_SLICES_80GB)
A100_SXM = Gpu(
    "NVIDIA A100 SXM4 40GB", "NVIDIA", "Ampere", (8, 0), mig=True, mig_slices=("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
)
H100_NVL = Gpu(
    "NVIDIA H100 NVL 94GB", "NVIDIA", "Hopper", (9, 0), mig=True, mig_slices=("1g.12gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb")
)
H100_SXM = Gpu("NVIDIA H100 SXM5 80GB", "NVIDIA", "Hopper", (9, 0), mig=True, mig_slices=_SLICES_80GB)
H200 = Gpu("NVIDIA H200 141GB", "NVIDIA", "Hopper", (9, 0), mig=True, mig_slices=("1g.18gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"))
RTX_PRO_6000 = Gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition 96GB", "NVIDIA", "Blackwell", (12, 0))
GB200 = Gpu("NVIDIA GB200 (Blackwell) 192GB", "NVIDIA", "Blackwell", (10, 0))
GB300 = Gpu("NVIDIA GB300 (Blackwell Ultra) 288GB", "NVIDIA", "Blackwell", (10, 3))
MI25 = Gpu("AMD Radeon Instinct MI25", "AMD", "CDNA")
MI300X = Gpu("AMD Instinct MI300X 192GB", "AMD", "CDNA")
V710 = Gpu("AMD Radeon Pro V710", "AMD", "RDNA")
