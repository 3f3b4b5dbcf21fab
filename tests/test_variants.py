"""The guide's GPU pool variants, as switches on aks-gpu:gpuPool, and the size catalog."""

from __future__ import annotations

import json

import pytest

from components import config
from components.catalog import gpu_sizes
from components.config import ConfigError, parse

POOL = "azure-native:containerservice:AgentPool"
JOB = "kubernetes:batch/v1:Job"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"


def pool_config(**pool):
    return parse({"aks-gpu:gpuPool": json.dumps(pool)}, "aks-gpu", "dev")


def tolerations(run, type_):
    name = "nvidia-device-plugin-daemonset" if type_ == DAEMONSET else None
    return run.one(type_, name).inputs["spec"]["template"]["spec"]["tolerations"]


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
    assert run.outputs["gpuPoolGeneration"].value == "2"
    assert not any(k.lower().startswith("usegen2") for k in run.one(POOL).inputs), "no header, no extra property"


@pytest.mark.parametrize("size, generation", [("Standard_NC6", "1"), ("Standard_NC24ads_A100_v4", "2"), ("Standard_NC999_new", "unknown")])
def test_the_generation_output_says_what_the_pool_boots(program, size, generation):
    assert program(gpuPool={"vmSize": size}).outputs["gpuPoolGeneration"].value == generation


# --------------------------------------------------------------------------- autoscaling


def test_min_and_max_turn_the_autoscaler_on(program):
    run = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 3})
    pool = run.one(POOL)
    assert (pool.inputs["enableAutoScaling"], pool.inputs["minCount"], pool.inputs["maxCount"], pool.inputs["count"]) == (True, 0, 3, 0)
    assert pool.options["ignoreChanges"] == ["count"], "pulumi up must not fight the autoscaler"


def test_a_fixed_pool_keeps_its_count_managed(dev):
    pool = dev.one(POOL)
    assert "enableAutoScaling" not in pool.inputs
    assert pool.options["ignoreChanges"] == []


def test_the_job_waits_longer_when_the_pool_may_start_from_zero(program):
    from_zero = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2})
    warm = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "minCount": 1, "maxCount": 2})
    assert from_zero.one(JOB).options["customTimeouts"]["create"] == "60m"
    assert warm.one(JOB).options["customTimeouts"]["create"] == "30m"


# --------------------------------------------------------------------------- spot


def test_spot_pools_delete_on_eviction_without_a_price_cap(program):
    pool = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "spot": True}).one(POOL).inputs
    assert (pool["scaleSetPriority"], pool["scaleSetEvictionPolicy"], pool["spotMaxPrice"]) == ("Spot", "Delete", -1)
    assert pool["nodeTaints"] == ["sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]


def test_the_device_plugin_and_the_job_tolerate_the_spot_taint(program):
    run = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "spot": True})
    spot = {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
    assert spot in tolerations(run, JOB)
    assert spot in tolerations(run, DAEMONSET)


def test_regular_pools_have_no_spot_settings(dev):
    pool = dev.one(POOL).inputs
    assert not {"scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice"} & set(pool)
    assert all("scalesetpriority" not in t["key"] for t in tolerations(dev, JOB))


# --------------------------------------------------------------------------- dedicatedVhd


MANAGED = {"vmSize": "Standard_NC4as_T4_v3", "dedicatedVhd": True}


def test_a_dedicated_vhd_pool_gets_no_device_plugin(program):
    run = program(gpuPool=MANAGED)
    assert not [r for r in run.resources if "DaemonSet" in r.type or "DevicePlugin" in r.type]
    namespaces = [r.inputs["metadata"]["name"] for r in run.of_type("kubernetes:core/v1:Namespace")]
    assert namespaces == ["gpu-workloads"], "only the Job's"
    assert "devicePluginNamespace" not in run.outputs
    assert run.outputs["gpuManagement"].value == "aks-managed (preview)"


def test_dedicated_vhd_warns_that_it_is_a_preview(program):
    [warning] = [w for w in program(gpuPool=MANAGED).warnings if "dedicatedVhd" in w]
    assert "PREVIEW" in warning and "retired on 2025-01-10" in warning and "no device plugin" in warning


def test_dedicated_vhd_with_device_plugin_settings_is_refused():
    with pytest.raises(ConfigError, match=r"aks-gpu:devicePlugin is set but aks-gpu:gpuPool.dedicatedVhd = true"):
        parse({"aks-gpu:gpuPool": json.dumps(MANAGED), "aks-gpu:devicePlugin": json.dumps({"image": "x/y:1"})}, "aks-gpu", "dev")


@pytest.mark.parametrize("managed", [MANAGED, {"vmSize": "Standard_NC4as_T4_v3", "management": "aks-managed"}])
def test_a_managed_gpu_pool_refuses_the_cluster_autoscaler(managed):
    """aks-managed-gpu-nodes.md, Limitations (azure-aks-docs f2493a9d, 2026-04-23; still at
    f63267b4, 2026-07-15): "Cluster autoscaler isn't supported on managed GPU node pools
    during preview. Scale these pools manually." """
    raw = {"aks-gpu:gpuPool": json.dumps({**managed, "minCount": 0, "maxCount": 2})}
    with pytest.raises(
        ConfigError,
        match=r"^invalid config aks-gpu:gpuPool.minCount/maxCount = 0/2 with aks-gpu:gpuPool\.(dedicatedVhd = true|management = aks-managed): AKS does not support the cluster autoscaler on managed GPU node pools",
    ) as error:
        parse(raw, "aks-gpu", "dev")
    assert "\n" not in str(error.value)


def test_the_preview_names_the_key_that_asked_for_managed_gpu_nodes():
    """dedicatedVhd is the guide's retired image, so its warning says so; management:
    aks-managed asked for AKS-managed GPU nodes directly, and its warning does not."""
    by_vhd = parse({"aks-gpu:gpuPool": json.dumps(MANAGED)}, "aks-gpu", "dev").warnings
    by_mode = parse(
        {"aks-gpu:gpuPool": json.dumps({"vmSize": "Standard_NC4as_T4_v3", "management": "aks-managed"})}, "aks-gpu", "dev"
    ).warnings
    assert any(
        w.startswith("aks-gpu:gpuPool.dedicatedVhd = true: the guide's AKS GPU image (UseGPUDedicatedVHD) was retired") for w in by_vhd
    )
    assert any(w.startswith("aks-gpu:gpuPool.management = aks-managed: AKS-managed GPU nodes") for w in by_mode)
    assert not [w for w in by_mode if "dedicatedVhd" in w or "UseGPUDedicatedVHD" in w]
    assert not [w for w in by_vhd + by_mode if "az CLI" in w or "aks-preview" in w], "nothing needs the az CLI now"


def test_the_config_and_the_pool_agree_on_the_preview_api_for_managed_mig():
    from components.resources import managed_gpu_pool

    assert config.MANAGED_MIG_API_VERSION == managed_gpu_pool.MIG_API_VERSION


def test_managed_gpu_nodes_take_any_kubernetes_version_the_cluster_takes():
    """aks-managed-gpu-nodes.md dropped "requires Kubernetes version 1.34 or later" in
    azure-aks-docs f21c5e447 (2025-10-29); the page at f63267b4 names no minimum."""
    base = {"aks-gpu:gpuPool": json.dumps(MANAGED)}
    assert parse({**base, "aks-gpu:kubernetesVersion": "1.33"}, "aks-gpu", "dev").kubernetes_version == "1.33"
