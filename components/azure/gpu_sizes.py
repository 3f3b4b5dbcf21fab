"""A catalog of the Azure GPU VM sizes a user of this program might pick.

Used at config time only: it decides nothing about resources by itself, it tells the
config parser which sizes are GPU sizes, which generation they boot, and which Azure has
retired (so `pulumi preview` warns instead of `pulumi up` failing twenty minutes in).

Sources (learn.microsoft.com/azure/virtual-machines/..., from MicrosoftDocs/azure-docs and
MicrosoftDocs/azure-compute-docs):
  sizes/gpu-accelerated/nc-series, ncv2-series, ncv3-series, ncast4v3-series,
  nca100v4-series, ncadsh100v5-series, ndh100v5-series, ndasra100v4-series: GPU model,
  GPUs per VM (the specs tables), and Gen1/Gen2 (each page's "Feature support" list);
  nc-series-retirement, ncv2-series-retirement, ncv3-retirement: retirement dates;
  n-series-migration and ncv3-retirement: the replacements Microsoft recommends.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Optional

from components.errors import ConfigError


@dataclass(frozen=True)
class GpuSize:
    name: str
    gpu_model: str
    gpus: int
    gen1: bool
    gen2: bool
    retired: Optional[datetime.date] = None
    replacement: Optional[str] = None
    #: Supports multi-instance GPU (the A100 and H100 families).
    mig: bool = False


def _family(
    names: dict[str, tuple[int, Optional[str]]],
    gpu_model: str,
    *,
    gen1: bool,
    gen2: bool,
    retired: Optional[datetime.date] = None,
    mig: bool = False,
) -> list[GpuSize]:
    """One size series: {size: (GPUs per VM, recommended replacement if retired)}."""
    return [GpuSize(n, gpu_model, g, gen1, gen2, retired, r, mig) for n, (g, r) in names.items()]


CATALOG: dict[str, GpuSize] = {
    s.name: s
    for s in [
        # NC v1, the guide's sizes. Gen1 only ("Generation 2 VMs: Not Supported").
        # Retired 2023-09-06 (nc-series-retirement). Replacements from n-series-migration:
        # "NC-Series customers should consider moving directly across ... to NC T4 v3 sizes."
        *_family(
            {
                "Standard_NC6": (1, "Standard_NC4as_T4_v3"),
                "Standard_NC12": (2, "Standard_NC16as_T4_v3"),
                "Standard_NC24": (4, "Standard_NC64as_T4_v3"),
                "Standard_NC24r": (4, "Standard_NC64as_T4_v3"),
            },
            "NVIDIA Tesla K80",
            gen1=True,
            gen2=False,
            retired=datetime.date(2023, 9, 6),
        ),
        # NCv2, the guide's Gen2-variant sizes. Gen1 and Gen2. Retired 2023-09-06
        # (ncv2-series-retirement). n-series-migration: "NCv2-Series customers should
        # consider moving directly across to NC A100 v4 sizes."
        *_family(
            {
                "Standard_NC6s_v2": (1, "Standard_NC24ads_A100_v4"),
                "Standard_NC12s_v2": (2, "Standard_NC48ads_A100_v4"),
                "Standard_NC24s_v2": (4, "Standard_NC96ads_A100_v4"),
                "Standard_NC24rs_v2": (4, "Standard_NC96ads_A100_v4"),
            },
            "NVIDIA Tesla P100",
            gen1=True,
            gen2=True,
            retired=datetime.date(2023, 9, 6),
        ),
        # NCv3. Gen1 and Gen2. Retired 2025-09-30 in public regions (ncv3-retirement;
        # US Gov regions 2026-06-30). "Microsoft is recommending the Azure NCadsH100_v5-series."
        *_family(
            {
                "Standard_NC6s_v3": (1, "Standard_NC40ads_H100_v5"),
                "Standard_NC12s_v3": (2, "Standard_NC80adis_H100_v5"),
                "Standard_NC24s_v3": (4, "Standard_NC80adis_H100_v5"),
                "Standard_NC24rs_v3": (4, "Standard_NC80adis_H100_v5"),
            },
            "NVIDIA Tesla V100 16GB",
            gen1=True,
            gen2=True,
            retired=datetime.date(2025, 9, 30),
        ),
        # NCasT4_v3. Gen1 and Gen2. Current.
        *_family(
            {
                "Standard_NC4as_T4_v3": (1, None),
                "Standard_NC8as_T4_v3": (1, None),
                "Standard_NC16as_T4_v3": (1, None),
                "Standard_NC64as_T4_v3": (4, None),
            },
            "NVIDIA Tesla T4 16GB",
            gen1=True,
            gen2=True,
        ),
        # NC A100 v4. Gen2 only. Current.
        *_family(
            {
                "Standard_NC24ads_A100_v4": (1, None),
                "Standard_NC48ads_A100_v4": (2, None),
                "Standard_NC96ads_A100_v4": (4, None),
            },
            "NVIDIA A100 PCIe 80GB",
            gen1=False,
            gen2=True,
            mig=True,
        ),
        # NCads H100 v5. Gen2 only. Current.
        *_family(
            {"Standard_NC40ads_H100_v5": (1, None), "Standard_NC80adis_H100_v5": (2, None)},
            "NVIDIA H100 NVL 94GB",
            gen1=False,
            gen2=True,
            mig=True,
        ),
        # ND A100 v4 and ND H100 v5. Gen2 only ("ND H100 v5 requires the use of Generation 2 VMs").
        *_family({"Standard_ND96asr_v4": (8, None)}, "NVIDIA A100 SXM4 40GB", gen1=False, gen2=True, mig=True),
        *_family({"Standard_ND96isr_H100_v5": (8, None)}, "NVIDIA H100 SXM5 80GB", gen1=False, gen2=True, mig=True),
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


def check_pool(vm_size: str, gen2: bool, key: str) -> list[str]:
    """Refuses a GPU pool the catalog knows cannot work; returns the warnings for the rest.

    `key` is the config key the messages name (`aks-gpu:gpuPool`).
    """
    size = CATALOG.get(vm_size)
    warnings: list[str] = []
    if size is None:
        if not is_gpu_family(vm_size):
            raise ConfigError(
                f"invalid config {key}.vmSize = {vm_size!r}: not a GPU size; expected an N-series size "
                f"such as 'Standard_NC4as_T4_v3' (known: {', '.join(current_sizes())})"
            )
        # Azure adds sizes faster than this catalog: an unknown N-series size may be fine.
        warnings.append(
            f"{key}.vmSize {vm_size} is not in this program's GPU size catalog; "
            "deploying it as given (check its GPU and Gen2 support with `az vm list-skus`)"
        )
        return warnings
    if gen2 and not size.gen2:
        raise ConfigError(
            f"invalid config {key}: gen2 = true but vmSize {size.name} ({size.gpu_model}) supports Gen1 only; "
            "choose a Gen2-capable size such as Standard_NC4as_T4_v3 (or omit vmSize for the guide's "
            f"{GUIDE_GEN2_SIZE}), or set gen2 to false"
        )
    return warnings


# How many MIG instances one GPU gives per profile, the same on every A100 and H100 model
# (NVIDIA's MIG user guide, "Supported MIG Profiles": 1g x7, 2g x3, 3g x2, 4g x1, 7g x1).
MIG_INSTANCES_PER_GPU = {"MIG1g": 7, "MIG2g": 3, "MIG3g": 2, "MIG4g": 1, "MIG7g": 1}


def gpus_per_node(vm_size: str, mig_profile: Optional[str]) -> Optional[int]:
    """How many `nvidia.com/gpu` one node of the pool offers: GPUs per VM, times the slices
    per GPU with MIG (strategy single: each slice is one nvidia.com/gpu). None: unknown size."""
    size = CATALOG.get(vm_size)
    if size is None:
        return None
    return size.gpus * (MIG_INSTANCES_PER_GPU[mig_profile] if mig_profile else 1)


def retirement(vm_size: str) -> Optional[GpuSize]:
    """The catalog's entry for a size Azure has retired; None for a current or unknown size.
    A retired size is a preflight problem (components/azure/preflight.py): a preview warns, a
    deployment stops."""
    size = CATALOG.get(vm_size)
    return size if size is not None and size.retired is not None else None


# NVIDIA's architecture generations, oldest first: "the same or a better GPU" below means the
# same or a newer one (NVIDIA's data sheets: Tesla K80 Kepler, P100 Pascal, V100 Volta, T4
# Turing, A100 Ampere, H100 Hopper).
ARCHITECTURES = {"K80": 1, "P100": 2, "V100": 3, "T4": 4, "A100": 5, "H100": 6}


def architecture(size: GpuSize) -> int:
    return next(rank for chip, rank in ARCHITECTURES.items() if f" {chip} " in f" {size.gpu_model} ")


def alternatives(vm_size: str) -> list[GpuSize]:
    """Current catalog sizes with the same or a newer GPU and at least as many GPUs per VM,
    oldest architecture first. An unknown size has none."""
    wanted = CATALOG.get(vm_size)
    if wanted is None:
        return []
    return sorted(
        (s for s in CATALOG.values() if s.retired is None and s.name != vm_size
         and architecture(s) >= architecture(wanted) and s.gpus >= wanted.gpus),
        key=lambda s: (architecture(s), s.gpus, s.name),
    )  # fmt: skip


def current_sizes() -> list[str]:
    """The catalog's sizes that Azure still sells, in catalog order."""
    return [s.name for s in CATALOG.values() if s.retired is None]
