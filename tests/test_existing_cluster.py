"""The guide's other entry point: GPU pools added to a cluster the stack does not own
(aks-gpu:existingCluster). The cluster is read, never registered; preflight meets it as a
deployment would; the stack's pools carry its tag."""

from __future__ import annotations

import json

import pytest
from conftest import run_cached
from test_config import parsed, refused

from components.config import ConfigError
from components.errors import AzureReadError, PreflightError
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
POOL = "azure-native:containerservice:AgentPool"
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}
OURS = {"aks-gpu-stack": "aks-gpu/dev"}


def on_existing(**overrides):
    """The dev stack's keys pointed at the mocked existing cluster, with a current size."""
    return {"existingCluster": TEAM, "gpuPool": {"vmSize": T4}, **overrides}


def deploy(cluster=None, **overrides):
    """A deployment that stops at preflight: what was registered, and the error."""
    monitor = RecordingMonitor(AzureMocks(cluster=cluster or existing_cluster()))
    with pytest.raises(PreflightError) as error:
        run_program("dev", overrides=on_existing(**overrides), monitor=monitor, preview=False)
    return [r for r in monitor.registrations if not r.type.startswith("pulumi:providers:")], str(error.value)


def preflight_warnings(run) -> list[str]:
    return [w for w in run.warnings if not w.startswith(("preflight: VM size offers", "aks-gpu:mnistJob.image: "))]


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
    assert pool.options["ignoreChanges"] == ["count", "orchestratorVersion"]


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


def test_a_healthy_cluster_passes_preflight_and_the_deployment_goes_on():
    run = run_program("dev", overrides=on_existing(), preview=False, monitor=RecordingMonitor(AzureMocks()))
    assert preflight_warnings(run) == []
    assert run.of_type(POOL)


@pytest.mark.parametrize("preview", [True, False])
def test_a_cluster_that_does_not_exist_is_one_line_before_anything_is_registered(preview):
    monitor = RecordingMonitor(AzureMocks(cluster=existing_cluster()))
    with pytest.raises(AzureReadError) as raised:
        run_program(
            "dev", overrides=on_existing(existingCluster={"resourceGroupName": "team-rg", "name": "nope"}), monitor=monitor, preview=preview
        )
    assert str(raised.value) == (
        "aks-gpu:existingCluster team-rg/nope: reading the cluster (getManagedCluster): Azure says it does not exist "
        "(ResourceNotFound); check existingCluster.resourceGroupName and name, and the subscription "
        "(`az aks show --resource-group team-rg --name nope`)"
    )
    assert monitor.registrations == [] and monitor.mocks.reader.reads.count("cluster") == 1


def refusing(read: str, error: str) -> RecordingMonitor:
    """Azure refusing one read (an AzureReader method), with azure-native's words."""
    return RecordingMonitor(AzureMocks(reader=OfflineReader(refuse={read: error})))


FORBIDDEN = (
    "GET https://management.azure.com/subscriptions/3333/resourceGroups/team-rg/providers/Microsoft.ContainerService/"
    "managedClusters/team-aks\n----\nRESPONSE 403: 403 Forbidden\nERROR CODE: AuthorizationFailed\n----\n"
    '{"error": {"code": "AuthorizationFailed", "message": "The client does not have authorization to perform action"}}'
)


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize(
    "read, says",
    [
        (
            "cluster",
            "reading the cluster (getManagedCluster): the identity running Pulumi may not read it (AuthorizationFailed); "
            "it needs Microsoft.ContainerService/managedClusters/read on the cluster, such as Reader (docs/permissions.md)",
        ),
        (
            "user_kubeconfig",
            "fetching its user credential (listClusterUserCredential): the identity running Pulumi may not read it "
            "(AuthorizationFailed); it needs Microsoft.ContainerService/managedClusters/listClusterUserCredential/action, "
            "which Reader does not have: Azure Kubernetes Service Cluster User Role on the cluster (docs/permissions.md)",
        ),
    ],
)
def test_a_cluster_the_identity_may_not_read_is_one_line_naming_the_role(read, says, preview):
    monitor = refusing(read, FORBIDDEN)
    with pytest.raises(AzureReadError) as raised:
        run_program("dev", overrides=on_existing(), monitor=monitor, preview=preview)
    assert str(raised.value) == f"aks-gpu:existingCluster team-rg/team-aks: {says}"
    assert monitor.registrations == []


FEATURE_FORBIDDEN = (
    "aks-gpu:gpuPool.management = aks-managed (AKS-managed GPU nodes): reading the subscription feature "
    "Microsoft.ContainerService/ManagedGPUExperiencePreview: the identity running Pulumi may not read it (AuthorizationFailed); "
    "it needs Microsoft.Features/providers/features/read on the subscription, such as Reader (docs/permissions.md); "
    "or check it by hand: `az feature show --namespace Microsoft.ContainerService --name ManagedGPUExperiencePreview`"
)


@pytest.mark.parametrize("preview", [True, False])
def test_a_feature_registration_the_identity_may_not_read_warns_in_a_preview_and_stops_a_deployment(preview):
    """Preflight's own read of Azure: a preview says it in one line and goes on, a deployment
    stops on it before anything is created, naming the permission and the manual check."""
    monitor = refusing("feature_state", FORBIDDEN)
    managed = {"gpuPool": {"vmSize": T4, "management": "aks-managed"}}
    if preview:
        run = run_program("dev", overrides=managed, monitor=monitor, preview=True)
        assert [w for w in preflight_warnings(run) if "ManagedGPUExperiencePreview" in w] == [
            f"{FEATURE_FORBIDDEN} (a deployment stops here)"
        ]
        return
    with pytest.raises(PreflightError) as raised:
        run_program("dev", overrides=managed, monitor=monitor, preview=False)
    assert f"\n- {FEATURE_FORBIDDEN}" in str(raised.value) and monitor.registrations == []


def test_a_signed_out_run_says_to_sign_in():
    monitor = refusing("cluster", "DefaultAzureCredential failed to retrieve a token: please run 'az login'")
    with pytest.raises(AzureReadError, match=r": no Azure sign-in; run `az login` \(or azure/login in GitHub Actions\) and try again$"):
        run_program("dev", overrides=on_existing(), monitor=monitor, preview=True)


@pytest.mark.parametrize(
    "change, says",
    [
        ({"provisioningState": "Updating"}, "is Updating, not Succeeded"),
        ({"provisioningState": "Failed"}, "is Failed, not Succeeded"),
        ({"powerState": {"code": "Stopped"}}, 'is stopped: "You can only perform start or delete operations'),
    ],
)
def test_a_cluster_aks_would_not_add_a_pool_to_stops_a_deployment(change, says):
    created, error = deploy(cluster=existing_cluster(**change))
    assert created == [] and says in error


def test_a_preview_of_a_stopped_cluster_warns_and_says_how_to_start_it():
    run, _ = run_cached("dev", cluster=existing_cluster(powerState={"code": "Stopped"}), **on_existing())
    [warning] = [w for w in preflight_warnings(run) if "stopped" in w]
    assert "`az aks start --resource-group team-rg --name team-aks`" in warning and warning.endswith("(a deployment stops here)")


def test_somebody_elses_pool_of_the_same_name_stops_a_deployment():
    theirs = {"name": "gpu", "vmSize": T4, "count": 2, "mode": "User", "tags": {"owner": "ml-team"}}
    cluster = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], theirs])
    created, error = deploy(cluster=cluster)
    assert created == []
    assert (
        "aks-gpu:gpuPool: the cluster already has a pool named 'gpu', which this stack did not add (it has no aks-gpu-stack tag)" in error
    )


def test_this_stacks_own_pool_is_no_conflict_on_the_next_up():
    ours = {"name": "gpu", "vmSize": T4, "count": 1, "mode": "User", "tags": OURS}
    cluster = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], ours])
    run = run_program("dev", overrides=on_existing(), preview=False, monitor=RecordingMonitor(AzureMocks(cluster=cluster)))
    assert preflight_warnings(run) == []


def test_another_stacks_pool_of_the_same_name_is_a_conflict_too():
    other = {"name": "gpu", "vmSize": T4, "count": 1, "mode": "User", "tags": {"aks-gpu-stack": "aks-gpu/prod"}}
    cluster = existing_cluster(agentPoolProfiles=[other])
    _, error = deploy(cluster=cluster)
    assert "(it carries aks-gpu-stack = aks-gpu/prod)" in error


def test_the_gpu_operator_beside_other_teams_gpu_pools_stops_a_deployment():
    theirs = {"name": "infer", "vmSize": "Standard_NC8as_T4_v3", "count": 1, "mode": "User"}
    cluster = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], theirs])
    _, error = deploy(cluster=cluster, gpuPool={"vmSize": T4, "management": "gpu-operator"})
    assert "GPU pools this stack does not manage: infer (Standard_NC8as_T4_v3)" in error


def test_the_device_plugin_beside_other_teams_gpu_pools_is_fine():
    theirs = {"name": "infer", "vmSize": "Standard_NC8as_T4_v3", "count": 1, "mode": "User"}
    cluster = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], theirs])
    run, _ = run_cached("dev", cluster=cluster, **on_existing())
    assert preflight_warnings(run) == []


def test_a_kubernetes_version_nvidia_does_not_support_the_operator_on_warns():
    cluster = existing_cluster(currentKubernetesVersion="1.31.9")
    run, _ = run_cached("dev", cluster=cluster, **on_existing(gpuPool={"vmSize": T4, "management": "gpu-operator"}))
    [warning] = [w for w in preflight_warnings(run) if "Kubernetes 1.31.9" in w]
    assert "1.33 to 1.36" in warning and "(a deployment stops here)" not in warning


def test_a_cluster_without_network_policy_warns_that_the_policies_do_nothing():
    cluster = existing_cluster(networkProfile={"networkPlugin": "azure"})
    run, _ = run_cached("dev", cluster=cluster, **on_existing())
    assert any("enforces no NetworkPolicy" in w for w in preflight_warnings(run))


def test_quota_is_checked_in_the_clusters_region_without_a_system_pool(tmp_path):
    from test_preflight import FIXTURES

    usages = json.loads((FIXTURES / "eastus-usage.json").read_text())
    for usage in usages:
        if usage["name"]["value"] == "standardNCASv3_T4Family":
            usage["currentValue"], usage["limit"] = 0, 8
    (tmp_path / "usage.json").write_text(json.dumps(usages))
    files = {"skusFile": str(FIXTURES / "eastus-skus.json"), "usageFile": str(tmp_path / "usage.json")}
    cluster = existing_cluster(location="eastus")
    pools = {"a": {"vmSize": T4, "nodeCount": 1}, "b": {"vmSize": "Standard_NC8as_T4_v3", "nodeCount": 1}}
    _, error = deploy(cluster=cluster, gpuPool=None, gpuPools=pools, preflight=files)
    # One family, summed: 4 + 8 vCPUs of 8 free; the System pool is the cluster's, not counted.
    assert (
        "aks-gpu:gpuPools.a.vmSize Standard_NC4as_T4_v3 (1 x 4 vCPUs), aks-gpu:gpuPools.b.vmSize Standard_NC8as_T4_v3 (1 x 8 vCPUs) need 12 vCPUs"
        in error
    )
    assert "systemPool" not in error


def test_a_pool_mode_error_in_config_beats_the_cluster_read():
    with pytest.raises(ConfigError):
        run_program("dev", overrides=on_existing(gpuPool={"vmSize": T4, "management": "aks-managed", "minCount": 0, "maxCount": 1}))


@pytest.mark.parametrize("preview", [True, False])
def test_the_team_stack_adds_two_pools_and_two_proofs_to_an_existing_cluster(preview):
    run, _ = run_cached("team", preview=preview)
    assert sorted(r.inputs["agentPoolName"] for r in run.of_type(POOL)) == ["a100", "t4"]
    assert all(r.inputs["tags"] == {"aks-gpu-stack": "aks-gpu/team"} for r in run.of_type(POOL))
    jobs = sorted(r.inputs["metadata"]["name"] for r in run.of_type("kubernetes:batch/v1:Job"))
    assert jobs == ["mnist-proof-a100", "mnist-proof-t4"]
    assert sorted(run.outputs["gpuPools"].value) == ["a100", "t4"]


def test_a_preview_says_which_namespaces_it_creates_since_it_cannot_see_the_clusters():
    run = run_cached(
        "dev", **on_existing(gpuPool=None, gpuPools={"t4": {"vmSize": T4}, "op": {"vmSize": T4, "management": "aks-managed"}})
    )[0]
    [line] = [i for i in run.infos if i.startswith("namespaces:")]
    assert line.startswith("namespaces: this stack creates gpu-resources, gpu-workloads in team-aks and deletes them on destroy; ")
    assert "`kubectl get namespace gpu-resources gpu-workloads`" in line
    assert not [i for i in run_cached("dev")[0].infos if i.startswith("namespaces:")], "a cluster this stack creates has none of others'"
