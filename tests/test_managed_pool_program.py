"""How the program declares the AKS-managed GPU pool (gpuPool.management = aks-managed, or the guide's
dedicatedVhd): a dynamic resource over the agentPools API (components/pools/managed_gpu_pool.py),
with no device plugin, no cluster autoscaler, and the resource options a real `pulumi up` and
`pulumi destroy` act on. (Its provider against a fake AKS: test_managed_pool_provider.py and the
others of test_managed_pool_*.py; what Azure must allow first: test_managed_pool_checks.py.)"""

from __future__ import annotations

import json

import pytest
from conftest import run_cached
from support.config import refused

from components.errors import ConfigError
from components.stack import parse

AKS = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
MANAGED_POOL = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
JOB = "kubernetes:batch/v1:Job"
T4 = "Standard_NC4as_T4_v3"
A100 = "Standard_NC24ads_A100_v4"
MANAGED = {"vmSize": T4, "dedicatedVhd": True}


def dev(preview: bool = True, feature_state: str = "Registered", **overrides):
    return run_cached("dev", preview=preview, feature_state=feature_state, **overrides)


def run(**overrides):
    return run_cached("dev", **overrides)[0]


# --------------------------------------------------------------------------- the dynamic resource


def test_the_managed_gpu_pool_is_a_dynamic_resource_over_the_agent_pools_api():
    """No az CLI (core azure-cli 2.91 has no --enable-managed-gpu; only aks-preview does): a
    dynamic resource PUTs gpuProfile.nvidia.managementMode Managed (tests/test_managed_pool_provider.py
    plays its create, refresh, update, replace and delete against a fake of the REST calls)."""
    for preview in (True, False):
        run, _ = dev(preview=preview, gpuPool=MANAGED)
        assert run.of_type(POOL) == [] and run.of_type("azure-native:resources:Resource") == []
        pool = run.one(MANAGED_POOL)
        assert pool.inputs["properties"]["gpuProfile"] == {"driver": "Install", "nvidia": {"managementMode": "Managed"}}
        assert (pool.inputs["resourceGroupName"], pool.inputs["clusterName"], pool.inputs["agentPoolName"]) == (
            "aks-gpu-dev-rg",
            "aks-gpu-dev",
            "gpu",
        )
        assert pool.inputs["subscriptionId"] == "33333333-3333-3333-3333-333333333333", "azure-native's subscription"
        assert pool.inputs["apiVersion"] == "2026-08-01"


def test_the_managed_pools_location_is_plain_config_so_a_cluster_update_preview_shows_no_change():
    """The names are the config's strings, known in every preview of a cluster update, and an
    unknown cluster UID is no change to the resource's diff (managed_gpu_pool.diff_pool)."""
    pool = dev(gpuPool=MANAGED)[0].one(MANAGED_POOL)
    assert all(isinstance(pool.inputs[k], str) for k in ("resourceGroupName", "clusterName", "agentPoolName"))
    assert "clusterResourceUid" in pool.inputs, "a cluster created anew is told by its resourceUID"


def test_the_managed_pool_is_replaced_delete_first_and_leaves_count_and_version_to_its_own_diff():
    """The name is fixed: delete first. ignoreChanges would compare the refreshed state with
    the old inputs (pulumi/pulumi processIgnoreChanges), so the diff itself skips them."""
    pool = dev(gpuPool=MANAGED)[0].one(MANAGED_POOL)
    assert pool.options["deleteBeforeReplace"] is True and pool.options["ignoreChanges"] == []


def test_the_managed_pool_carries_spot_and_a_version_pin_in_its_body():
    """spot-node-pool.md's settings; a version pin without an upgrade channel reaches the pool."""
    run, _ = dev(kubernetesVersion="1.34", gpuPool={**MANAGED, "spot": True})
    body = run.one(MANAGED_POOL).inputs["properties"]
    assert (body["scaleSetPriority"], body["scaleSetEvictionPolicy"], body["spotMaxPrice"]) == ("Spot", "Delete", -1)
    assert body["nodeTaints"] == ["sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    assert body["orchestratorVersion"] == "1.34"
    moved = dev(kubernetesVersion="1.34", upgrade={"channel": "patch"}, gpuPool=MANAGED)[0].one(MANAGED_POOL)
    assert "orchestratorVersion" not in moved.inputs["properties"], "the channel moves it"


def test_the_program_declares_no_command_in_any_stack_or_mode():
    """Core azure-cli 2.91 rejects --enable-managed-gpu and --gpu-mig-strategy (aks-preview
    only), so nothing the program runs may need the az CLI, and it declares no command at all."""
    variants = [
        {},
        {"gpuPool": MANAGED},
        {"gpuPool": {**MANAGED, "vmSize": "Standard_NC24ads_A100_v4", "migProfile": "MIG1g"}},
        {"gpuPool": {"vmSize": T4, "management": "gpu-operator"}},
    ]
    runs = [run_cached(stack)[0] for stack in ("dev", "prod")] + [dev(**v)[0] for v in variants]
    for run in runs:
        assert [r.urn for r in run.resources if r.type.startswith("command:")] == []


def test_the_job_waits_for_the_managed_pool():
    run, _ = dev(gpuPool=MANAGED)
    assert run.one(MANAGED_POOL).urn in run.one(JOB).dependencies


def test_a_destroy_deletes_the_managed_pool_before_the_cluster():
    """Pulumi deletes dependents first: the pool depends on the cluster."""
    run, _ = dev(gpuPool=MANAGED)
    assert run.one(AKS).urn in run.one(MANAGED_POOL).dependencies


# --------------------------------------------------------------------------- dedicatedVhd and management: aks-managed


def test_a_dedicated_vhd_pool_gets_no_device_plugin(program):
    run = program(gpuPool=MANAGED)
    assert not [r for r in run.resources if "DaemonSet" in r.type or "DevicePlugin" in r.type]
    namespaces = [r.inputs["metadata"]["name"] for r in run.of_type("kubernetes:core/v1:Namespace")]
    assert namespaces == ["gpu-workloads"], "only the Job's"
    assert "devicePluginNamespace" not in run.outputs
    assert run.outputs["gpuPools"].value["gpu"]["management"] == "aks-managed (preview)"


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


def test_managed_gpu_nodes_take_any_kubernetes_version_the_cluster_takes():
    """aks-managed-gpu-nodes.md dropped "requires Kubernetes version 1.34 or later" in
    azure-aks-docs f21c5e447 (2025-10-29); the page at f63267b4 names no minimum."""
    base = {"aks-gpu:gpuPool": json.dumps(MANAGED)}
    assert parse({**base, "aks-gpu:kubernetesVersion": "1.33"}, "aks-gpu", "dev").kubernetes_version == "1.33"


def test_managed_gpu_nodes_cut_slices_with_the_mig_strategy_single_over_the_preview_api():
    """aks-managed-gpu-nodes.md: --gpu-instance-profile MIG1g --gpu-mig-strategy Single, which is
    gpuProfile.nvidia.migStrategy, a member of preview agentPools versions only."""
    r = run(gpuPool={"vmSize": A100, "management": "aks-managed", "migProfile": "MIG2g"})
    pool = r.one(MANAGED_POOL).inputs
    assert pool["properties"]["gpuInstanceProfile"] == "MIG2g"
    assert pool["properties"]["gpuProfile"] == {"driver": "Install", "nvidia": {"managementMode": "Managed", "migStrategy": "Single"}}
    assert pool["apiVersion"] == "2026-01-02-preview"
    assert any("PREVIEW agentPools API 2026-01-02-preview" in w for w in r.warnings), "a preview says so"


def test_management_aks_managed_is_what_dedicated_vhd_selects():
    by_key = run(gpuPool={"vmSize": T4, "dedicatedVhd": True})
    by_mode = run(gpuPool={"vmSize": T4, "management": "aks-managed"})
    for r in (by_key, by_mode):
        assert r.one(MANAGED_POOL) and not r.of_type(DAEMONSET) and not r.of_type(POOL)
        assert r.outputs["gpuPools"].value["gpu"]["management"] == "aks-managed (preview)"
        assert r.outputs["gpuMetrics"].value == "port 19400 on each GPU node (AKS-managed DCGM exporter)"


def test_dedicated_vhd_with_another_mode_is_refused():
    refused(
        r"gpuPool.management = 'gpu-operator' with aks-gpu:gpuPool.dedicatedVhd = true",
        gpuPool={"vmSize": T4, "dedicatedVhd": True, "management": "gpu-operator"},
    )
