"""The whole program, per stack: what `pulumi up` would create, in what order, and what it exports."""

from __future__ import annotations

import json
import shlex

import pytest
from conftest import project_run, run_cached
from support.program import AKS, JOB, K8S_PROVIDER, POOL, RG, check_whole_guide

from components.pools import pool_fields as pool_mutability
from tools.azure_mocks import MOCK_USER_TOKEN
from tools.mock_engine import ProgramRun, Secret
from tools.render import masked, outputs_document, resources_document
from tools.stack_files import stacks


def outside_fixed(ignored: list[str]) -> list[str]:
    """The ignored properties other than the fixed ones a refresh may fill in
    (test_refresh_drift.py pins those)."""
    return [name for name in ignored if name not in pool_mutability.fixed()]


NAMESPACE = "kubernetes:core/v1:Namespace"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"


def in_namespace(run: ProgramRun, type_: str, namespace: str):
    return next(r for r in run.of_type(type_) if r.inputs["metadata"].get("namespace", r.inputs["metadata"]["name"]) == namespace)


@pytest.mark.parametrize("stack", stacks())
def test_every_stack_declares_the_whole_guide_in_one_graph(stack):
    check_whole_guide(project_run(stack))


def test_dev_is_the_guide_one_standard_nc6_node_in_eastus(dev: ProgramRun):
    pool = dev.one(POOL).inputs
    assert (pool["vmSize"], pool["count"], pool["osType"], pool["mode"]) == ("Standard_NC6", 1, "Linux", "User")
    assert dev.one(RG).inputs["location"] == "eastus"
    assert dev.one(AKS).inputs["location"] == "eastus"


def test_the_gpu_pool_is_a_separate_tainted_user_pool(dev: ProgramRun):
    pool = dev.one(POOL)
    assert pool.inputs["nodeTaints"] == ["sku=gpu:NoSchedule"]
    assert pool.inputs["agentPoolName"] == "gpu"
    assert pool.inputs["resourceName"] == dev.one(AKS).inputs["resourceName"]
    inline = dev.one(AKS).inputs["agentPoolProfiles"]
    assert [(p["name"], p["mode"], p["osType"]) for p in inline] == [("system", "System", "Linux")]


def test_the_cluster_has_a_system_assigned_identity_and_rbac(dev: ProgramRun):
    cluster = dev.one(AKS).inputs
    assert cluster["identity"] == {"type": "SystemAssigned"}
    assert cluster["enableRBAC"] is True
    assert cluster["dnsPrefix"] == "aks-gpu-dev"
    assert "kubernetesVersion" not in cluster, "unset: the AKS default"


def test_kubernetes_version_and_system_pool_reach_the_cluster(program):
    run = program(kubernetesVersion="1.33", systemPool={"vmSize": "Standard_D4s_v5", "nodeCount": 2})
    cluster = run.one(AKS).inputs
    assert cluster["kubernetesVersion"] == "1.33"
    assert (cluster["agentPoolProfiles"][0]["vmSize"], cluster["agentPoolProfiles"][0]["count"]) == ("Standard_D4s_v5", 2)


def test_explicit_names_are_used_as_given(program):
    run = program(resourceGroupName="gpu-lab", clusterName="lab1")
    assert run.one(RG).inputs["resourceGroupName"] == "gpu-lab"
    assert run.one(AKS).inputs["resourceName"] == "lab1"
    assert run.outputs["getCredentialsCommand"].value == "az aks get-credentials --resource-group gpu-lab --name lab1"


# --------------------------------------------------------------------------- order


def depends_on(run: ProgramRun, dependent: str, dependency: str) -> bool:
    target = run.one(dependency).urn
    return target in run.one(dependent).dependencies


def test_the_job_runs_after_the_gpu_pool_and_the_device_plugin(dev: ProgramRun):
    assert depends_on(dev, JOB, POOL)
    assert dev.one(DAEMONSET, "nvidia-device-plugin-daemonset").urn in dev.one(JOB).dependencies


def test_the_kubernetes_provider_comes_after_the_cluster(dev: ProgramRun):
    assert depends_on(dev, K8S_PROVIDER, AKS)


def test_the_pool_is_added_to_the_cluster_and_the_daemonset_to_its_namespace(dev: ProgramRun):
    assert depends_on(dev, POOL, AKS)
    assert depends_on(dev, AKS, RG)
    namespace = in_namespace(dev, NAMESPACE, "gpu-resources")
    assert namespace.urn in dev.one(DAEMONSET, "nvidia-device-plugin-daemonset").dependencies


def test_the_job_gets_a_namespace_of_its_own_and_starts_behind_its_network_policy(dev: ProgramRun):
    job = dev.one(JOB)
    assert job.inputs["metadata"]["namespace"] == "gpu-workloads"
    assert in_namespace(dev, NAMESPACE, "gpu-workloads").urn in job.dependencies
    assert in_namespace(dev, NETPOL, "gpu-workloads").urn in job.dependencies


def test_the_job_namespace_is_configurable(program):
    run = program(mnistJob={"namespace": "training"})
    assert run.one(JOB).inputs["metadata"]["namespace"] == "training"
    assert run.outputs["jobLogsCommand"].value == "kubectl logs --namespace training job/mnist-proof"


def test_every_kubernetes_object_uses_the_clusters_provider(dev: ProgramRun):
    provider = dev.one(K8S_PROVIDER).urn
    objects = [r for r in dev.resources if r.type.startswith("kubernetes:")]
    assert {r.type for r in objects} == {NAMESPACE, NETPOL, DAEMONSET, JOB, "kubernetes:core/v1:Service", "kubernetes:core/v1:ConfigMap"}
    assert all(r.provider == provider for r in objects)


# --------------------------------------------------------------------------- job


def test_the_job_waits_long_enough_for_a_cold_node_and_the_image_pull(dev: ProgramRun):
    job = dev.one(JOB)
    assert job.options["customTimeouts"]["create"] == "51m"
    assert "pulumi.com/skipAwait" not in job.inputs["metadata"]["annotations"], "pulumi-kubernetes awaits completion"
    assert "ttlSecondsAfterFinished" not in job.inputs["spec"]


def test_wait_for_completion_false_skips_the_await(program):
    job = program(mnistJob={"waitForCompletion": False}).one(JOB)
    assert job.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"


def test_a_disabled_job_is_not_declared_nor_exported(program):
    run = program(mnistJob={"enabled": False})
    assert run.of_type(JOB) == []
    assert not {"mnistJobName", "mnistJobNamespace", "jobLogsCommand", "jobResultCommand"} & set(run.outputs)
    assert run.one(DAEMONSET, "nvidia-device-plugin-daemonset")


# --------------------------------------------------------------------------- protection


def test_protect_guards_the_resource_group_and_the_cluster_only(program):
    run = program(protect=True)
    protected = {r.type for r in run.resources if r.options["protect"]}
    assert protected == {RG, AKS}


def test_unprotected_by_default(dev: ProgramRun):
    assert not any(r.options["protect"] for r in dev.resources)


# --------------------------------------------------------------------------- outputs


NODES = "kubectl get nodes -l kubernetes.azure.com/agentpool=gpu -o custom-columns='NAME:.metadata.name,GPUS:.status.allocatable.nvidia\\.com/gpu'"


# The last proof's line, which the Job's watch keeps after the Job is gone (docs/proof.md).
RESULT = "kubectl get configmap mnist-proof-result --namespace gpu-workloads --output jsonpath='{.data.line}'"


def test_outputs_name_what_was_built(dev: ProgramRun):
    values = {k: v.value for k, v in dev.outputs.items() if not v.secret}
    # Offline, the shipped price snapshot prices the stack (tests/test_price_snapshot.py).
    assert values.pop("estimatedCost")["source"].startswith("the shipped snapshot components/catalog/prices.json")
    assert values == {
        "resourceGroupName": "aks-gpu-dev-rg",
        "clusterName": "aks-gpu-dev",
        "gpuMetrics": "http://dcgm-exporter.gpu-resources.svc:9400/metrics",
        "devicePluginNamespace": "gpu-resources",
        "mnistJobName": "mnist-proof",
        "mnistJobNamespace": "gpu-workloads",
        "getCredentialsCommand": "az aks get-credentials --resource-group aks-gpu-dev-rg --name aks-gpu-dev",
        "jobLogsCommand": "kubectl logs --namespace gpu-workloads job/mnist-proof",
        "mnistJobUrn": "urn:pulumi:dev::aks-gpu::aks-gpu:kubernetes:MnistJob$kubernetes:batch/v1:Job::mnist-job",
        "jobResultCommand": RESULT,
        "gpuPools": {
            "gpu": {
                "vmSize": "Standard_NC6",
                "generation": "1",
                "gpusPerNode": 1,
                "management": "device-plugin-daemonset",
                "nodesCommand": NODES,
                "job": {
                    "name": "mnist-proof",
                    "namespace": "gpu-workloads",
                    "logsCommand": "kubectl logs --namespace gpu-workloads job/mnist-proof",
                    "urn": "urn:pulumi:dev::aks-gpu::aks-gpu:kubernetes:MnistJob$kubernetes:batch/v1:Job::mnist-job",
                    "resultCommand": RESULT,
                    # Which pool and size ran the proof: unknown until the watch has seen it (a preview).
                    "servedBy": None,
                },
            }
        },
    }


def test_the_credentials_command_survives_copy_and_paste_with_any_allowed_group_name():
    """A resource group name may hold '(' and ')' (config.ResourceGroupName): quoted, the
    shell reads the names back unchanged."""
    run = run_cached("dev", resourceGroupName="gpu(lab)")[0]
    words = shlex.split(run.outputs["getCredentialsCommand"].value)
    assert words == ["az", "aks", "get-credentials", "--resource-group", "gpu(lab)", "--name", "aks-gpu-dev"]


def test_the_kubeconfig_output_is_a_secret_holding_the_user_credential(dev: ProgramRun):
    kubeconfig = dev.outputs["kubeconfig"]
    assert kubeconfig.secret
    assert MOCK_USER_TOKEN in kubeconfig.value  # decoded from base64, not the raw ARM value
    assert kubeconfig.value.startswith("apiVersion: v1")


def test_the_provider_receives_the_kubeconfig_as_a_secret(dev: ProgramRun):
    assert isinstance(dev.one(K8S_PROVIDER).inputs["kubeconfig"], Secret)


def test_no_credential_in_plain_text_anywhere_outside_secrets(dev: ProgramRun):
    plain = [v.value for v in dev.outputs.values() if not v.secret]
    plain += [masked(r.inputs) for r in dev.resources]
    assert MOCK_USER_TOKEN not in json.dumps(plain)
    assert MOCK_USER_TOKEN not in json.dumps(resources_document(dev)) + json.dumps(outputs_document(dev))


def test_dev_warns_that_its_gpu_size_is_retired(dev: ProgramRun):
    assert any("Standard_NC6 " in w and "retired" in w for w in dev.warnings)


# --------------------------------------------------------------------------- prod


def test_prod_is_production_shaped():
    run = run_cached("prod")[0]
    assert not [w for w in run.warnings if "retired" in w], "a current GPU size"
    pool = run.one(POOL)
    assert pool.inputs["vmSize"] == "Standard_NC4as_T4_v3"
    assert (pool.inputs["enableAutoScaling"], pool.inputs["minCount"], pool.inputs["count"]) == (True, 0, 0)
    assert outside_fixed(pool.options["ignoreChanges"]) == ["count", "orchestratorVersion"], "autoscaler and patch channel"
    assert run.outputs["gpuPools"].value["gpu"]["generation"] == "2"
    aks = run.one(AKS)
    assert aks.inputs["sku"]["tier"] == "Standard"
    assert aks.inputs["autoUpgradeProfile"] == {"upgradeChannel": "patch", "nodeOSUpgradeChannel": "NodeImage"}
    assert aks.inputs["disableLocalAccounts"] is True
    assert aks.inputs["agentPoolProfiles"][0]["count"] == 3
    assert {r.type for r in run.resources if r.options["protect"]} == {RG, AKS}
    assert run.one(JOB).options["customTimeouts"]["create"] == "81m", "room for a scale-up from zero"
