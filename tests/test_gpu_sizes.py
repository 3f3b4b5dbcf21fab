"""The GPU sizes (components/catalog/gpu_sizes.py): the catalog of the guide's sizes and today's
families, retired sizes and their replacements, sizes outside the catalog, and Gen2."""

from __future__ import annotations

import json

import pytest

from components.catalog import gpu_sizes
from components.errors import ConfigError
from components.stack import parse

POOL = "azure-native:containerservice:AgentPool"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"


def pool_config(**pool):
    return parse({"aks-gpu:gpuPool": json.dumps(pool)}, "aks-gpu", "dev")


# --------------------------------------------------------------------------- catalog


def test_the_catalog_covers_the_guides_sizes_and_todays_families():
    for size in [
        "Standard_NC6",
        "Standard_NC12",
        "Standard_NC24",
        "Standard_NC6s_v2",
        "Standard_NC12s_v2",
        "Standard_NC24s_v2",
        "Standard_NC6s_v3",
        "Standard_NC4as_T4_v3",
        "Standard_NC24ads_A100_v4",
        "Standard_NC40ads_H100_v5",
        "Standard_ND96isr_H100_v5",
    ]:
        assert size in gpu_sizes.CATALOG, size


def test_every_retired_size_names_a_current_replacement():
    for size in gpu_sizes.CATALOG.values():
        if size.retired:
            replacement = gpu_sizes.CATALOG[size.replacement]
            assert replacement.retired is None, size.name


def test_a_current_size_does_not_warn():
    assert [w for w in pool_config(vmSize="Standard_NC4as_T4_v3").warnings if "vmSize" in w] == []


@pytest.mark.parametrize("size", ["Standard_D4s_v5", "Standard_E8s_v5", "Standard_B2s"])
def test_a_size_that_is_not_a_gpu_size_is_refused(size):
    with pytest.raises(ConfigError, match=rf"aks-gpu:gpuPool.vmSize = '{size}': not a GPU size"):
        pool_config(vmSize=size)


def test_an_unknown_gpu_size_passes_with_a_warning():
    cfg = pool_config(vmSize="Standard_NC128ds_XYZ_v9")
    assert cfg.gpu_pools[0].vm_size == "Standard_NC128ds_XYZ_v9"
    assert "not in this program's GPU size catalog" in cfg.warnings[0]


# --------------------------------------------------------------------------- gen2


def test_gen2_without_a_size_selects_the_guides_gen2_size():
    assert pool_config(gen2=True).gpu_pools[0].vm_size == "Standard_NC6s_v2"


def test_gen2_with_a_gen1_only_size_is_refused_naming_both_keys():
    with pytest.raises(ConfigError, match=r"aks-gpu:gpuPool: gen2 = true but vmSize Standard_NC6 .* supports Gen1 only"):
        pool_config(gen2=True, vmSize="Standard_NC6")


def test_gen2_with_a_gen2_capable_size_deploys_it_as_given(program):
    run = program(gpuPool={"gen2": True, "vmSize": "Standard_NC4as_T4_v3"})
    assert run.one(POOL).inputs["vmSize"] == "Standard_NC4as_T4_v3"
    assert run.outputs["gpuPools"].value["gpu"]["generation"] == "2"
    assert not any(k.lower().startswith("usegen2") for k in run.one(POOL).inputs), "no header, no extra property"


@pytest.mark.parametrize("size, generation", [("Standard_NC6", "1"), ("Standard_NC24ads_A100_v4", "2"), ("Standard_NC999_new", "unknown")])
def test_the_generation_output_says_what_the_pool_boots(program, size, generation):
    assert program(gpuPool={"vmSize": size}).outputs["gpuPools"].value["gpu"]["generation"] == generation
