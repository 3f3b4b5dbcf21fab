"""The GPUs behind Azure's GPU sizes: who makes each, its architecture and, for NVIDIA's, its
CUDA compute capability; the table and its sources are gpu_sizes.json's `gpus`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# NVIDIA's architectures, oldest first: "the same or a newer GPU" means a later one here.
ARCHITECTURES = ("Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Hopper", "Blackwell")
TABLE = json.loads((Path(__file__).parent / "gpu_sizes.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Gpu:
    model: str
    vendor: str
    architecture: str
    #: CUDA compute capability (major, minor); None for a GPU CUDA cannot use.
    capability: tuple[int, int] | None = None
    #: NVIDIA's names of the MIG profiles MIG1g ... MIG7g cut; () without multi-instance GPU.
    mig_slices: tuple[str, ...] = ()

    @property
    def mig(self) -> bool:
        return bool(self.mig_slices)

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


GPUS = {
    key: Gpu(
        g["model"], g["vendor"], g["architecture"], tuple(g["capability"]) if "capability" in g else None, tuple(g.get("migSlices", ()))
    )
    for key, g in TABLE["gpus"].items()
    if key != "about"
}
