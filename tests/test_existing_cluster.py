"""The guide's other entry point: GPU pools added to a cluster the stack does not own
(aks-gpu:existingCluster). The cluster is read, never registered; the stack's pools carry its tag.
(What a deployment meets there, the checks: test_existing_cluster_checks.py.)"""

from __future__ import annotations

import pytest
from conftest import run_cached
from support.config import parsed, refused
from support.existing_cluster import T4, TEAM, on_existing
from support.plan import lines

from components.pools import pool_fields as pool_mutability
from tools.azure_mocks import existing_cluster


def outside_fixed(ignored: list[str]) -> list[str]:
    """The ignored properties other than the fixed ones a refresh may fill in
    (test_refresh_drift.py pins those)."""
    return [name for name in ignored if name not in pool_mutability.fixed()]


POOL = "azure-native:containerservice:AgentPool"
OURS = {"aks-gpu-stack": "aks-gpu/dev"}


# --------------------------------------------------------------------------- config


def test_an_existing_cluster_names_the_cluster_the_pools_go_into():
    cfg = parsed(existingCluster=TEAM)
    assert (cfg.resource_group_name, cfg.cluster_name) == ("team-rg", "team-aks")
    assert cfg.existing_cluster is not None and cfg.select_pools


@pytest.mark.parametrize("missing", ["resourceGroupName", "name"])
def test_a_missing_member_of_the_existing_cluster_is_refused_by_name(missing):
    given = {k: v for k, v in TEAM.items() if k != missing}
    refused(rf"^invalid config aks-gpu:existingCluster\.{missing} is missing: expected ", existingCluster=given)


@pytest.mark.parametrize(
    "key, value",
    [
        ("resourceGroupName", "rg2"),
        ("clusterName", "aks2"),
        ("kubernetesVersion", "1.33"),
        ("systemPool", {"nodeCount": 3}),
        ("clusterTier", "Standard"),
        ("network", {"policy": "calico"}),
        ("upgrade", {"channel": "patch"}),
        ("protect", "true"),
        ("access", {"mode": "entra"}),
        ("access", {"authorizedIpRanges": ["203.0.113.0/24"]}),
    ],
)
def test_keys_of_a_created_cluster_are_refused_with_an_existing_one(key, value):
    message = refused(
        rf"^invalid config aks-gpu:{key} = .*: not used with aks-gpu:existingCluster \(", existingCluster=TEAM, **{key: value}
    )
    assert message.endswith("remove it, or remove existingCluster to create a cluster")


def test_the_project_files_defaults_of_cluster_keys_are_not_refused():
    # The CLI hands Pulumi.yaml's defaults (clusterTier Free, protect false, "" names) to every run.
    cfg = parsed(existingCluster=TEAM, clusterTier="Free", protect="false", resourceGroupName="", clusterName="")
    assert cfg.cluster_name == "team-aks"


# --------------------------------------------------------------------------- the program


@pytest.mark.parametrize("preview", [True, False])
def test_the_cluster_is_read_never_declared_and_the_pool_goes_into_it(preview):
    run, monitor = run_cached("dev", preview=preview, **on_existing())
    assert not run.of_type("azure-native:containerservice:ManagedCluster")
    assert not run.of_type("azure-native:resources:ResourceGroup")
    assert not run.of_type("azure-native:authorization:RoleAssignment")
    assert "cluster" in monitor.mocks.reader.reads
    pool = run.one(POOL)
    assert (pool.inputs["resourceGroupName"], pool.inputs["resourceName"]) == ("team-rg", "team-aks")
    assert pool.inputs["tags"] == OURS
    assert run.outputs["getCredentialsCommand"].value == "az aks get-credentials --resource-group team-rg --name team-aks"
    assert run.one("kubernetes:batch/v1:Job").inputs["spec"]["template"]["spec"]["nodeSelector"] == {
        "kubernetes.azure.com/agentpool": "gpu"
    }


def test_the_pools_version_is_left_to_whoever_upgrades_the_cluster():
    run, _ = run_cached("dev", **on_existing(gpuPool={"vmSize": T4, "minCount": 0, "maxCount": 2}))
    pool = run.one(POOL)
    assert "orchestratorVersion" not in pool.inputs
    assert outside_fixed(pool.options["ignoreChanges"]) == ["count", "orchestratorVersion"]


def test_the_device_plugin_runs_only_on_this_stacks_pools_of_an_existing_cluster():
    run, _ = run_cached("dev", **on_existing())
    spec = run.one("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-daemonset").inputs["spec"]["template"]["spec"]
    [term] = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": ["gpu"]}]


def test_an_entra_cluster_gives_a_kubeconfig_that_signs_in_without_a_prompt():
    entra = existing_cluster(aadProfile={"managed": True, "enableAzureRBAC": True}, disableLocalAccounts=True)
    run, _ = run_cached("dev", cluster=entra, **on_existing())
    kubeconfig = run.outputs["kubeconfig"].value
    assert "--login" in kubeconfig and "azurecli" in kubeconfig and "devicecode" not in kubeconfig


def test_a_local_accounts_cluster_gives_its_token():
    run, _ = run_cached("dev", **on_existing())
    assert "kubelogin" not in run.outputs["kubeconfig"].value


def test_destroy_removes_only_what_the_stack_added():
    # What a stack holds is what it registered: pools, Kubernetes objects, components, a provider.
    run, _ = run_cached("dev", **on_existing())
    azure = {r.type for r in run.resources if r.type.startswith("azure-native:")}
    assert azure == {POOL}


# --------------------------------------------------------------------------- preflight


@pytest.mark.parametrize("preview", [True, False])
def test_the_team_stack_adds_two_pools_and_two_proofs_to_an_existing_cluster(preview):
    run, _ = run_cached("team", preview=preview)
    assert sorted(r.inputs["agentPoolName"] for r in run.of_type(POOL)) == ["a100", "t4"]
    assert all(r.inputs["tags"] == {"aks-gpu-stack": "aks-gpu/team"} for r in run.of_type(POOL))
    jobs = sorted(r.inputs["metadata"]["name"] for r in run.of_type("kubernetes:batch/v1:Job"))
    assert jobs == ["mnist-proof-a100", "mnist-proof-t4"]
    assert sorted(run.outputs["gpuPools"].value) == ["a100", "t4"]


def test_a_preview_says_which_namespaces_it_creates_since_it_cannot_see_the_clusters():
    said = lines("dev", **on_existing(gpuPool=None, gpuPools={"t4": {"vmSize": T4}, "op": {"vmSize": T4, "management": "aks-managed"}}))
    [line] = [i for i in said.infos if i.startswith("namespaces:")]
    assert line.startswith("namespaces: this stack creates gpu-resources, gpu-workloads in team-aks and deletes them on destroy; ")
    assert "`kubectl get namespace gpu-resources gpu-workloads`" in line
    assert not [i for i in run_cached("dev")[0].infos if i.startswith("namespaces:")], "a cluster this stack creates has none of others'"
