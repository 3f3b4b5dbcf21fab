"""The worked example of docs/existing-cluster.md, "Coming from the guide", end to end and
offline: the cluster ml-prod made by hand as the guide makes it (examples/guide-cluster/: its
saved `az aks show` and `kubectl get namespaces,daemonsets`, and the stack file shipped
with them), met the three ways in: used as it is, adopted, and with a new pool beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cached
from support.both_modes import declares_the_same_in_both_modes
from support.guide_example import EXAMPLE, STACK_FILE
from support.plan import plan_infos, plan_warnings, planned_by

from components.errors import ConfigError, PreflightError
from tools.azure_mocks import OfflineReader

POOL, DAEMONSET, NAMESPACE, JOB = (
    "azure-native:containerservice:AgentPool",
    "kubernetes:apps/v1:DaemonSet",
    "kubernetes:core/v1:Namespace",
    "kubernetes:batch/v1:Job",
)
GPUNP_ID = (
    "/subscriptions/33333333-3333-3333-3333-333333333333/resourceGroups/ml-rg/providers/"
    "Microsoft.ContainerService/managedClusters/ml-prod/agentPools/gpunp"
)
BOTH = [True, False]


def run(preview: bool, stack_file: Path = STACK_FILE, **overrides):
    """The example's stack run: one run per distinct input, shared by the tests that read it (run_cached)."""
    return run_cached("ml-prod", preview, stack_file=stack_file, **overrides)


def imports(done) -> dict[str, str]:
    return {f"{r.type} {r.name}": r.options["import"] for r in done.resources if "import" in r.options}


@pytest.mark.parametrize("preview", BOTH)
def test_the_guides_cluster_used_as_it_is_gets_a_proof_on_its_pool_and_nothing_of_its_own_replaced(preview):
    done, _ = run(preview)
    assert done.of_type(POOL) == [] and done.of_type(DAEMONSET) == []
    assert [n.inputs["metadata"]["name"] for n in done.of_type(NAMESPACE)] == ["gpu-workloads"]
    assert imports(done) == {}
    job = done.one(JOB).inputs["spec"]["template"]["spec"]
    assert job["nodeSelector"] == {"kubernetes.azure.com/agentpool": "gpunp"}
    assert {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in job["tolerations"]
    said = "\n".join(done.infos + done.warnings)
    assert "gpu-resources/nvidia-device-plugin-daemonset serves its GPUs already" in said
    assert "authorized IP ranges (203.0.113.0/24, 198.51.100.17/32)" in said
    assert "gpunp=gpunp" not in said and "kubernetes.azure.com/agentpool=gpunp" in done.outputs["gpuPools"].value["gpunp"]["nodesCommand"]


# Adopting: the adopting `up` is run; its preview declares from the same plan (support/modes.py).
ADOPTING = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}


def adopting_run():
    declares_the_same_in_both_modes("ml-prod", STACK_FILE, **ADOPTING)
    return run(False, **ADOPTING)


def test_adopting_the_guides_pool_and_device_plugin_imports_exactly_those_three():
    done, _ = adopting_run()
    assert imports(done) == {
        f"{POOL} gpu-pool-gpunp-agent-pool": GPUNP_ID,
        f"{NAMESPACE} nvidia-device-plugin-ns": "gpu-resources",
        f"{DAEMONSET} nvidia-device-plugin-ds": "gpu-resources/nvidia-device-plugin-daemonset",
    }
    pool = done.one(POOL).inputs
    assert (pool["vmSize"], pool["nodeTaints"], pool["minCount"], pool["maxCount"]) == (
        "Standard_NC4as_T4_v3",
        ["sku=gpu:NoSchedule"],
        0,
        3,
    )


def test_what_is_adopted_from_the_guides_cluster_is_released_on_destroy_and_marked_as_adopted():
    done, _ = adopting_run()
    adopted = [done.one(POOL), done.one(NAMESPACE, "gpu-resources"), done.one(DAEMONSET, "nvidia-device-plugin-daemonset")]
    assert [r.options["retainOnDelete"] for r in adopted] == [True, True, True]
    assert done.one(POOL).inputs["tags"]["aks-gpu-adopted"] == "aks-gpu/ml-prod"
    assert done.one(JOB).options["retainOnDelete"] is False, "the stack's own objects are deleted as before"


def test_a_new_pool_beside_the_guides_stops_a_deployment_until_the_guides_plugin_is_adopted():
    pools = {"gpunp": {"existing": "use"}, "t4": {"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2}}
    with pytest.raises(PreflightError) as error:
        run(False, gpuPools=pools)
    assert "gpu-resources/nvidia-device-plugin-daemonset runs NVIDIA's device plugin" in str(error.value)
    assert "devicePlugin.adopt: true" in str(error.value)
    done, _ = run(False, gpuPools=pools, devicePlugin={"adopt": True})
    plugin = done.one(DAEMONSET, "nvidia-device-plugin-daemonset").inputs["spec"]["template"]["spec"]
    served = plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert served["matchExpressions"][0]["values"] == ["gpunp", "t4"]
    assert {p.inputs["agentPoolName"] for p in done.of_type(POOL)} == {"t4"}


SAVED = {"clusterFile": "examples/guide-cluster/cluster.json", "kubernetesFile": "examples/guide-cluster/kubernetes.json"}


@pytest.mark.parametrize("preview", BOTH)
def test_with_preflight_off_the_saved_list_is_still_read_so_another_namespace_declares_no_second_plugin(preview):
    # Read, decided and said by the plan: no device plugin's Args, so no DaemonSet is declared (__main__.py).
    plan = planned_by(
        OfflineReader(), "ml-prod", preview, STACK_FILE, preflight={"mode": "off", **SAVED}, devicePlugin={"namespace": "gpu-plugin"}
    )
    assert plan.device_plugin is None and plan.dcgm_exporter is None
    said = "\n".join(plan_infos(plan) + plan_warnings(plan))
    assert "gpu-resources/nvidia-device-plugin-daemonset serves its GPUs already" in said
    assert "was not read" not in said


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize("adopt", [False, True])
def test_the_guides_list_saved_without_all_namespaces_is_refused_as_incomplete_instead_of_advising_a_deletion(tmp_path, preview, adopt):
    listed = json.loads((EXAMPLE / "kubernetes.json").read_text())
    listed["items"] = [i for i in listed["items"] if i["kind"] == "Namespace"]  # `kubectl get` in namespace default, which runs none
    saved = tmp_path / "kubernetes.json"
    saved.write_text(json.dumps(listed))
    with pytest.raises(ConfigError) as error:
        run(preview, preflight={**SAVED, "kubernetesFile": str(saved)}, devicePlugin={"adopt": adopt})
    message = str(error.value)
    assert "\n" not in message and "an incomplete list: no DaemonSet" in message and "--all-namespaces --show-managed-fields" in message
    assert "kubectl delete" not in message and "remove adopt" not in message


def test_the_example_names_only_files_it_ships():
    text = STACK_FILE.read_text()
    for name in ("cluster.json", "kubernetes.json"):
        assert f"examples/guide-cluster/{name}" in text and (EXAMPLE / name).is_file()
