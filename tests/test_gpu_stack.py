"""GPUs the way AKS runs them today: MIG slices, who manages the GPU stack, GPU metrics."""

from __future__ import annotations

import pytest
from conftest import run_cached
from support.config import refused

POOL = "azure-native:containerservice:AgentPool"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
RELEASE = "kubernetes:helm.sh/v3:Release"
SERVICE = "kubernetes:core/v1:Service"
JOB = "kubernetes:batch/v1:Job"
A100 = "Standard_NC24ads_A100_v4"
T4 = "Standard_NC4as_T4_v3"
SKU_GPU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def run(**overrides):
    return run_cached("dev", **overrides)[0]


def daemonsets(r) -> dict[str, dict]:
    return {d.inputs["metadata"]["name"]: d.inputs for d in r.of_type(DAEMONSET)}


# --------------------------------------------------------------------------- MIG


def test_a_mig_profile_reaches_the_pool_and_the_device_plugin_offers_each_slice_as_a_gpu():
    r = run(gpuPool={"vmSize": A100, "migProfile": "MIG1g"})
    assert r.one(POOL).inputs["gpuInstanceProfile"] == "MIG1g"
    env = daemonsets(r)["nvidia-device-plugin-daemonset"]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "MIG_STRATEGY", "value": "single"} in env
    assert r.one(JOB).inputs["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1", (
        "the Job runs unchanged on a slice"
    )


@pytest.mark.parametrize("mig", [True, False])
def test_the_mig_device_plugin_runs_as_nvidias_chart_runs_it_and_only_with_mig(mig):
    """NVIDIA's chart v0.18.0 (_helpers.tpl): with a MIG strategy, NVIDIA_MIG_MONITOR_DEVICES=all
    and CAP_SYS_ADMIN, which the container toolkit needs to honour it; without, no capability."""
    r = run(gpuPool={"vmSize": A100, "migProfile": "MIG1g"} if mig else {"vmSize": A100})
    plugin = daemonsets(r)["nvidia-device-plugin-daemonset"]
    [container] = plugin["spec"]["template"]["spec"]["containers"]
    context = container["securityContext"]
    assert ({"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"} in container["env"]) is mig
    assert context["capabilities"] == ({"drop": ["ALL"], "add": ["SYS_ADMIN"]} if mig else {"drop": ["ALL"]})
    assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False


@pytest.mark.parametrize(
    "size, profile, gpus",
    [
        ("Standard_NC6", None, 1),
        (A100, "MIG1g", 7),
        (A100, "MIG3g", 2),
        (A100, "MIG7g", 1),
        ("Standard_ND96asr_v4", "MIG2g", 24),
        ("Standard_NC999_new", None, None),
    ],
)
def test_gpus_per_node_is_gpus_per_vm_times_slices_per_gpu(size, profile, gpus):
    pool = {"vmSize": size, **({"migProfile": profile} if profile else {})}
    assert run(gpuPool=pool).outputs["gpuPools"].value["gpu"]["gpusPerNode"] == gpus


def test_without_mig_the_pool_and_the_plugin_are_the_guides():
    r = run()
    assert "gpuInstanceProfile" not in r.one(POOL).inputs
    env = daemonsets(r)["nvidia-device-plugin-daemonset"]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}]


def test_mig_on_a_size_without_mig_is_refused():
    refused(
        r"^invalid config aks-gpu:gpuPool.migProfile = 'MIG1g' with vmSize Standard_NC4as_T4_v3: NVIDIA Tesla T4 16GB has no multi-instance GPU; expected one of Standard_NC24ads_A100_v4",
        gpuPool={"vmSize": T4, "migProfile": "MIG1g"},
    )


def test_an_unknown_mig_profile_is_refused():
    refused(
        r"^invalid config aks-gpu:gpuPool.migProfile = 'MIG5g': expected one of MIG1g, MIG2g, MIG3g, MIG4g, MIG7g$",
        gpuPool={"vmSize": A100, "migProfile": "MIG5g"},
    )


def test_the_pool_is_replaced_when_its_mig_profile_or_driver_setting_changes():
    """gpu-multi-instance.md: "You can't change the applied GPU instance profile after node pool
    creation"; azure-native's forceNewMap has gpuInstanceProfile but not gpuProfile (PR #3655)."""
    assert {"gpuProfile", "gpuInstanceProfile"} <= set(run().one(POOL).options["replaceOnChanges"])


# --------------------------------------------------------------------------- management modes


def test_the_gpu_operator_mode_skips_the_aks_driver_and_installs_nvidias_chart():
    r = run(gpuPool={"vmSize": T4, "management": "gpu-operator"})
    assert r.one(POOL).inputs["gpuProfile"] == {"driver": "None"}
    assert not r.of_type(DAEMONSET), "no DaemonSet of this program's"
    release = r.one(RELEASE).inputs
    assert (release["chart"], release["version"], release["repositoryOpts"]["repo"]) == (
        "gpu-operator",
        "v26.7.0",
        "https://helm.ngc.nvidia.com/nvidia",
    )
    assert release["namespace"] == "gpu-operator"
    values = release["values"]
    assert SKU_GPU in values["daemonsets"]["tolerations"] and SKU_GPU in values["node-feature-discovery"]["worker"]["tolerations"]
    assert values["dcgmExporter"]["enabled"] is True and values["mig"] == {"strategy": "single"}
    assert r.one(RELEASE).urn in r.one(JOB).dependencies, "the Job waits for the operator"
    assert r.outputs["gpuMetrics"].value == "http://nvidia-dcgm-exporter.gpu-operator.svc:9400/metrics"


@pytest.mark.parametrize(
    "mode, says",
    [
        ("gpu-operator", "switching a deployed pool between this mode and device-plugin replaces it"),
        ("aks-managed", "a deployed pool cannot switch to or from this mode; a run that would is refused before anything changes"),
    ],
)
def test_a_preview_says_what_switching_to_a_mode_does(mode, says):
    warnings = run(gpuPool={"vmSize": T4, "management": mode}).warnings
    assert [w for w in warnings if w.startswith(f"aks-gpu:gpuPool.management = {mode}: {says}")]


def test_the_default_mode_does_not_warn_about_switching():
    assert not [w for w in run().warnings if "switch" in w]


@pytest.mark.parametrize(
    "pool, keys, message",
    [
        (
            {"management": "gpu-operator"},
            {"devicePlugin": {"image": "x/y:1"}},
            r"devicePlugin is set but aks-gpu:gpuPool.management is gpu-operator",
        ),
        (
            {"management": "aks-managed"},
            {"devicePlugin": {"image": "x/y:1"}},
            r"devicePlugin is set but aks-gpu:gpuPool.management is aks-managed",
        ),
        ({}, {"gpuOperator": {"version": "v25.10.1"}}, r"gpuOperator is set but aks-gpu:gpuPool.management is device-plugin"),
        (
            {"management": "aks-managed"},
            {"monitoring": {"gpuMetrics": False}},
            r"monitoring is set but .* AKS runs its own DCGM exporter on managed GPU nodes \(port 19400\)",
        ),
        (
            {"management": "gpu-operator"},
            {"monitoring": {"dcgmExporterImage": "x/y:1"}},
            r"monitoring.dcgmExporterImage with .*'gpu-operator': the GPU Operator deploys its own",
        ),
        (
            {"management": "gpu-operator"},
            {"mnistJob": {"namespace": "gpu-operator"}},
            r"mnistJob.namespace = 'gpu-operator': expected a namespace other than aks-gpu:gpuOperator.namespace",
        ),
    ],
)
def test_settings_a_mode_does_not_use_are_refused(pool, keys, message):
    refused(message, gpuPool={"vmSize": T4, **pool}, **keys)


# --------------------------------------------------------------------------- GPU metrics


def test_the_dcgm_exporter_runs_on_the_gpu_pool_only_and_serves_port_9400():
    r = run()
    exporter = daemonsets(r)["dcgm-exporter"]
    pod = exporter["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.azure.com/agentpool": "gpu"}
    assert SKU_GPU in pod["tolerations"]
    container = pod["containers"][0]
    assert container["image"] == "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless"
    assert container["ports"] == [{"name": "metrics", "containerPort": 9400, "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {"path": "/health", "port": "metrics"}
    assert {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"} in container["env"]
    service = r.one(SERVICE).inputs
    assert service["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    assert service["metadata"]["annotations"]["prometheus.io/port"] == "9400"
    assert service["spec"]["selector"] == exporter["spec"]["selector"]["matchLabels"]


def test_the_exporter_follows_the_gpu_pools_name_and_spot_taint():
    pod = daemonsets(run(gpuPool={"vmSize": T4, "name": "gpuspot", "spot": True}))["dcgm-exporter"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.azure.com/agentpool": "gpuspot"}
    assert any(t["key"] == "kubernetes.azure.com/scalesetpriority" for t in pod["tolerations"])


def test_gpu_metrics_off_deploys_no_exporter():
    r = run(monitoring={"gpuMetrics": False})
    assert set(daemonsets(r)) == {"nvidia-device-plugin-daemonset"} and not r.of_type(SERVICE)
    assert r.outputs["gpuMetrics"].value == "off (monitoring.gpuMetrics: false)"
    operator = run(gpuPool={"vmSize": T4, "management": "gpu-operator"}, monitoring={"gpuMetrics": False})
    assert operator.one(RELEASE).inputs["values"]["dcgmExporter"]["enabled"] is False


def test_the_operator_release_waits_longer_than_helms_default():
    """pulumi-kubernetes helm_release.go: defaultTimeoutSeconds = 300, which the operator's
    own DaemonSets overrun; the release is created in the program's own namespace."""
    r = run(gpuPool={"vmSize": T4, "management": "gpu-operator"})
    release = r.one(RELEASE)
    assert release.inputs["timeout"] == 1200
    assert "createNamespace" not in release.inputs or release.inputs["createNamespace"] is False
    namespace = r.one("kubernetes:core/v1:Namespace", "gpu-operator")
    assert namespace.urn in release.dependencies


def test_a_destroy_or_a_mode_switch_takes_the_operators_crds_with_it():
    """values.yaml v26.7.0: `cleanupCRD: false` by default; true runs the chart's pre-delete
    hook (templates/cleanup_crd.yaml, `manage-crds delete`), which pulumi-kubernetes' Release
    delete runs and waits for (helm_release.go Delete: hooks on, uninstall.Wait)."""
    values = run(gpuPool={"vmSize": T4, "management": "gpu-operator"}).one(RELEASE).inputs["values"]
    assert values["operator"] == {"cleanupCRD": True}


def test_an_operator_version_without_its_leading_v_is_refused():
    """NVIDIA's chart index lists `version: v26.7.0` (NVIDIA/gpu-operator gh-pages
    stable/index.yaml); Helm looks the string up as given, so `26.7.0` is chart-not-found."""
    refused(
        r"^invalid config aks-gpu:gpuOperator.version = '26.7.0': expected a chart version with its leading v",
        gpuPool={"vmSize": T4, "management": "gpu-operator"},
        gpuOperator={"version": "26.7.0"},
    )
