"""An existing cluster as a deployment meets it (components/cluster/existing_cluster_checks.py):
found, readable, running, with room for this stack's pools and no one else's of the same name,
and a team's own cluster as it really is (issue #32): private, busy, on kubenet, in its own
VNet with a pod subnet, in its own subscription. What a preview says of each, and what stops
a deployment before the first GPU pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cached
from support.existing_cluster import on_existing
from support.plan import lines, lines_by, named_as_a_run, plan_warnings, planned

from components.errors import AzureReadError, ConfigError, PreflightError
from components.plan import Plan
from components.pools.gpu_pool import GpuPoolArgs
from tools import render
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
WHERE = "aks-gpu:existingCluster team-rg/team-aks"
SYSTEM = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250}
SAVED = Path(__file__).parent / "fixtures" / "clusters" / "ml-aks.json"
TEAM_SUBSCRIPTION = "55555555-5555-5555-5555-555555555555"


def with_pools(*states: str) -> dict:
    """The mocked cluster with an owner's user pool in each of `states` beside its System pool."""
    pools = [SYSTEM] + [{**SYSTEM, "name": f"apps{i}", "mode": "User", "provisioningState": state} for i, state in enumerate(states)]
    return existing_cluster(agentPoolProfiles=pools)


POOL = "azure-native:containerservice:AgentPool"

OURS = {"aks-gpu-stack": "aks-gpu/dev"}


def deploy(cluster=None, **overrides):
    """A deployment that stops at preflight: what was registered, and the error."""
    monitor = RecordingMonitor(AzureMocks(cluster=cluster or existing_cluster()))
    with pytest.raises(PreflightError) as error:
        run_program("dev", overrides=on_existing(**overrides), monitor=monitor, preview=False)
    return [r for r in monitor.registrations if not r.type.startswith("pulumi:providers:")], str(error.value)


def preflight_warnings(run) -> list[str]:
    return [w for w in run.warnings if not w.startswith(("preflight: VM size offers", "kubernetes: nothing the cluster runs was checked"))]


def deployment_plan(**kw) -> Plan:
    """The dev stack's plan on an existing cluster in a deployment, under the names a run gives Pulumi."""
    named_as_a_run("dev")
    return planned("dev", preview=False, **kw)


def declared_pools(plan: Plan) -> list[str]:
    """The pools a run of `plan` declares (__main__.py: a GpuPool per GpuPoolArgs): where a
    deployment goes on, the plan did not stop it and hands out its pool; that the Args become
    an AgentPool is test_a_healthy_cluster_passes_preflight_and_the_deployment_goes_on's run."""
    return [a.pool.name for a in plan.gpu_pools if isinstance(a, GpuPoolArgs)]


# --------------------------------------------------------------------------- a private cluster


@pytest.mark.parametrize("integration", [False, True])
def test_a_private_cluster_is_named_in_the_preview_with_the_ways_to_reach_it(integration):
    access = {"enablePrivateCluster": True, "enableVnetIntegration": integration}
    said = lines("dev", cluster=existing_cluster(apiServerAccessProfile=access), **on_existing())
    [line] = [w for w in said.warnings if "private cluster" in w]
    assert line.startswith(f"{WHERE} is a private cluster{' (API server VNet integration, private)' if integration else ''}: ")
    for way in ("in its VNet or a peered one", "VPN or ExpressRoute", "self-hosted CI runner"):
        assert way in line
    public = lines("dev", cluster=existing_cluster(), **on_existing())
    assert not [w for w in public.warnings if "private cluster" in w], "a public cluster is not called private"


# --------------------------------------------------------------------------- pools at work


@pytest.mark.parametrize("state", ["Upgrading", "Scaling", "Updating", "Creating", "SomethingNew"])
def test_an_owners_pool_in_an_operation_is_named_in_a_preview_and_stops_a_deployment(state):
    """AKS runs one operation at a time on a cluster: the first GPU pool would get a 409.
    provisioningState is a free string, so any state but Succeeded, Failed or Canceled is an
    operation in progress."""
    said = lines("dev", cluster=with_pools(state), **on_existing())
    says = f"{WHERE}: its pool apps0 is {state}, not Succeeded: AKS refuses another operation on the cluster"
    assert any(w.startswith(says) and w.endswith("(a deployment stops here)") for w in preflight_warnings(said))
    registered, error = deploy(cluster=with_pools(state))
    assert registered == [] and says in error, "stopped before anything, the first GPU pool included"


@pytest.mark.parametrize("state", ["Failed", "Canceled"])
def test_a_pool_whose_last_operation_ended_is_said_but_blocks_nothing(state):
    plan = deployment_plan(cluster=with_pools(state), **on_existing())  # a deployment's plan
    [line] = [w for w in plan_warnings(plan) if "its pool apps0" in w]
    assert line.startswith(f"{WHERE}: its pool apps0 is {state}: its last operation did not finish")
    assert declared_pools(plan) == ["gpu"], "the deployment goes on"


def test_pools_in_succeeded_say_nothing():
    said = lines("dev", cluster=with_pools("Succeeded"), **on_existing())
    assert not [w for w in said.warnings if "its pool" in w]


# --------------------------------------------------------------------------- kubenet


def test_kubenet_is_warned_with_its_retirement_date_and_deploys():
    kubenet = existing_cluster(networkProfile={"networkPlugin": "kubenet", "networkPolicy": "calico"})
    plan = deployment_plan(cluster=kubenet, **on_existing())  # a deployment's plan
    [line] = [w for w in plan_warnings(plan) if "kubenet" in w]
    assert line.startswith(f"{WHERE} uses kubenet, which AKS stops supporting on 2028-03-31")
    assert declared_pools(plan) == ["gpu"]


# --------------------------------------------------------------------------- a pod subnet


def test_a_pod_subnet_in_another_vnet_is_refused_like_a_node_subnet():
    vnet = "/subscriptions/3333/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks"
    pools = [{**SYSTEM, "vnetSubnetID": f"{vnet}/team-vnet/subnets/nodes", "podSubnetID": f"{vnet}/team-vnet/subnets/pods"}]
    cluster = existing_cluster(agentPoolProfiles=pools, networkProfile={"networkPlugin": "azure", "networkPolicy": "cilium"})
    other = f"{vnet}/other-vnet/subnets/pods"
    said = lines("dev", cluster=cluster, **on_existing(gpuPool={"vmSize": T4, "podSubnetId": other}))
    assert any(w.startswith(f"aks-gpu:gpuPool.podSubnetId {other} is not in the cluster's virtual network (") for w in said.warnings)
    registered, error = deploy(cluster=cluster, gpuPool={"vmSize": T4, "podSubnetId": other})
    assert registered == [] and "podSubnetId" in error
    same = lines("dev", cluster=cluster, **on_existing(gpuPool={"vmSize": T4, "podSubnetId": f"{vnet}/team-vnet/subnets/pods2"}))
    assert not [w for w in same.warnings if "virtual network" in w]


# --------------------------------------------------------------------------- a saved az aks show


def saved_copy(tmp_path: Path, **changes) -> str:
    doc = json.loads(SAVED.read_text())
    doc.update(changes)
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    return str(path)


ML = {"resourceGroupName": "ml-platform", "name": "ml-aks"}


@pytest.mark.parametrize(
    "existing, subscription, says",
    [
        (
            {"resourceGroupName": "other-rg", "name": "ml-aks"},
            None,
            "it describes ml-platform/ml-aks, but aks-gpu:existingCluster.resourceGroupName is 'other-rg'",
        ),
        (
            ML,
            TEAM_SUBSCRIPTION,
            f"its cluster is in subscription 33333333-3333-3333-3333-333333333333, but azure-native:subscriptionId is {TEAM_SUBSCRIPTION}",
        ),
        (
            {"resourceGroupName": "ml-platform", "name": "team-aks"},
            None,
            "it describes cluster 'ml-aks', but aks-gpu:existingCluster.name is 'team-aks'",
        ),
    ],
    ids=["another resource group", "another subscription", "another name"],
)
def test_a_saved_description_of_another_cluster_is_refused_in_one_line(existing, subscription, says):
    overrides = {"existingCluster": existing, "gpuPool": {"vmSize": T4}, "preflight": {"clusterFile": str(SAVED)}}
    if subscription:
        overrides["azure-native:subscriptionId"] = subscription
    with pytest.raises(ConfigError) as error:
        run_cached("dev", **overrides)
    message = str(error.value)
    assert "\n" not in message and message.startswith("invalid config aks-gpu:preflight.clusterFile = ") and message.endswith(says)


def test_the_same_cluster_in_other_letters_of_its_group_and_subscription_is_accepted():
    """ARM matches resource group names and subscription IDs without case."""
    overrides = {
        "existingCluster": {"resourceGroupName": "ML-Platform", "name": "ml-aks"},
        "gpuPool": {"vmSize": T4},
        "preflight": {"clusterFile": str(SAVED)},
        "azure-native:subscriptionId": "33333333-3333-3333-3333-333333333333".upper(),
    }
    assert declared_pools(planned("dev", **overrides))


def test_the_offline_render_signs_in_to_the_subscription_the_saved_cluster_names(tmp_path, monkeypatch, capsys):
    """The budget's scope and the managed pool's subscriptionId name the team's subscription,
    not the mock's, when the saved cluster's id names it."""
    cluster_id = (
        f"/subscriptions/{TEAM_SUBSCRIPTION}/resourcegroups/ml-platform/providers/Microsoft.ContainerService/managedClusters/ml-aks"
    )
    team = {
        "existingCluster": ML,
        "gpuPool": None,
        "gpuPools": {"t4": {"vmSize": T4, "management": "aks-managed"}},
        "preflight": {"clusterFile": saved_copy(tmp_path, id=cluster_id)},
        "cost": {"budget": {"amount": 100, "contactEmails": ["gpu@example.com"]}},
    }
    real = render.run_program
    monkeypatch.setattr(render, "run_program", lambda stack, overrides, **kw: real(stack, overrides={**overrides, **team}, **kw))
    assert render.main(["--stack", "dev", "--out", str(tmp_path / "out")]) == 0
    resources = json.loads((tmp_path / "out" / "resources.json").read_text())
    [budget] = [r for r in resources if r["type"] == "azure-native:consumption:Budget"]
    [pool] = [r for r in resources if r["type"].endswith("ManagedGpuPool")]
    assert budget["inputs"]["scope"] == f"/subscriptions/{TEAM_SUBSCRIPTION}"
    assert pool["inputs"]["subscriptionId"] == TEAM_SUBSCRIPTION


# --------------------------------------------------------------------------- found, readable, running, free


def test_a_healthy_cluster_passes_preflight_and_the_deployment_goes_on():
    run, _ = run_cached("dev", preview=False, **on_existing())
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
            "it needs Microsoft.ContainerService/managedClusters/read on the cluster, such as Reader (docs/deploying.md)",
        ),
        (
            "user_kubeconfig",
            "fetching its user credential (listClusterUserCredential): the identity running Pulumi may not read it "
            "(AuthorizationFailed); it needs Microsoft.ContainerService/managedClusters/listClusterUserCredential/action, "
            "which Reader does not have: Azure Kubernetes Service Cluster User Role on the cluster (docs/deploying.md)",
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
    "it needs Microsoft.Features/providers/features/read on the subscription, such as Reader (docs/deploying.md); "
    "or check it by hand: `az feature show --namespace Microsoft.ContainerService --name ManagedGPUExperiencePreview`"
)


@pytest.mark.parametrize("preview", [True, False])
def test_a_feature_registration_the_identity_may_not_read_warns_in_a_preview_and_stops_a_deployment(preview):
    """Preflight's own read of Azure: a preview says it in one line and goes on, a deployment
    stops on it before anything is created, naming the permission and the manual check."""
    managed = {"gpuPool": {"vmSize": T4, "management": "aks-managed"}}
    if preview:  # what the run says, from its plan
        said = lines_by(OfflineReader(refuse={"feature_state": FORBIDDEN}), "dev", True, **managed)
        assert [w for w in preflight_warnings(said) if "ManagedGPUExperiencePreview" in w] == [
            f"{FEATURE_FORBIDDEN} (a deployment stops here)"
        ]
        return
    monitor = refusing("feature_state", FORBIDDEN)
    with pytest.raises(PreflightError) as raised:
        run_program("dev", overrides=managed, monitor=monitor, preview=False)
    assert f"\n- {FEATURE_FORBIDDEN}" in str(raised.value) and monitor.registrations == []


def test_a_signed_out_run_says_to_sign_in():
    reader = OfflineReader(refuse={"cluster": "DefaultAzureCredential failed to retrieve a token: please run 'az login'"})
    with pytest.raises(AzureReadError, match=r": no Azure sign-in; run `az login` \(or azure/login in GitHub Actions\) and try again$"):
        lines_by(reader, "dev", True, **on_existing())  # the run's plan


@pytest.mark.parametrize(
    "change, says",
    [
        ({"provisioningState": "Updating"}, "is Updating, not Succeeded"),
        ({"provisioningState": "Failed"}, "is Failed, not Succeeded"),
        ({"provisioningState": None}, "is without a provisioningState, not Succeeded"),
        ({"powerState": {"code": "Stopped"}}, 'is stopped: "You can only perform start or delete operations'),
    ],
)
def test_a_cluster_aks_would_not_add_a_pool_to_stops_a_deployment(change, says):
    created, error = deploy(cluster=existing_cluster(**change))
    assert created == [] and says in error


def test_a_preview_of_a_stopped_cluster_warns_and_says_how_to_start_it():
    said = lines("dev", cluster=existing_cluster(powerState={"code": "Stopped"}), **on_existing())
    [warning] = [w for w in preflight_warnings(said) if "stopped" in w]
    assert "`az aks start --resource-group team-rg --name team-aks`" in warning and warning.endswith("(a deployment stops here)")


def test_somebody_elses_pool_of_the_same_name_stops_a_deployment():
    # The state is not known here (the mock engine holds none): the line says how to tell a
    # pool that lost the stack's tag from somebody else's (tests/test_stack_state.py).
    theirs = {"name": "gpu", "vmSize": T4, "count": 2, "mode": "User", "tags": {"owner": "ml-team"}}
    cluster = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], theirs])
    created, error = deploy(cluster=cluster)
    assert created == []
    assert "aks-gpu:gpuPool: the cluster already has a pool named 'gpu' (it has no aks-gpu-stack tag)" in error
    assert "if not, it is somebody else's: then pick another pool name" in error


def test_this_stacks_own_pool_is_no_conflict_on_the_next_up():
    ours = {"name": "gpu", "vmSize": T4, "count": 1, "mode": "User", "tags": OURS}
    cluster = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], ours])
    named_as_a_run("dev")  # the pool's tag is this stack's only under the names a run gives Pulumi
    said = lines("dev", preview=False, cluster=cluster, **on_existing())
    assert preflight_warnings(said) == []


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
    said = lines("dev", cluster=cluster, **on_existing())
    assert preflight_warnings(said) == []


def test_a_kubernetes_version_nvidia_does_not_support_the_operator_on_warns():
    cluster = existing_cluster(currentKubernetesVersion="1.31.9")
    said = lines("dev", cluster=cluster, **on_existing(gpuPool={"vmSize": T4, "management": "gpu-operator"}))
    [warning] = [w for w in preflight_warnings(said) if "Kubernetes 1.31.9" in w]
    assert "1.33 to 1.36" in warning and "(a deployment stops here)" not in warning


def test_a_cluster_without_network_policy_warns_that_the_policies_do_nothing():
    cluster = existing_cluster(networkProfile={"networkPlugin": "azure"})
    said = lines("dev", cluster=cluster, **on_existing())
    assert any("enforces no NetworkPolicy" in w for w in preflight_warnings(said))


def test_quota_is_checked_in_the_clusters_region_without_a_system_pool(tmp_path):
    from support.preflight import FIXTURES

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


# --------------------------------------------------------------------------- node auto-provisioning

NAP = {"mode": "Auto", "defaultNodePools": "Auto"}
CAS_BLOCK = "autoscaling.azure.com/cas-block=true:NoSchedule"
T4_8 = "Standard_NC8as_T4_v3"
GROUP = {
    "gpuPool": None,
    "gpuPools": {"t4": {"vmSize": T4, "minCount": 0, "maxCount": 2}, "t4b": {"vmSize": T4_8, "minCount": 0, "maxCount": 2}},
}
GROUPED = {**GROUP, "gpuGroups": {"inference": ["t4", "t4b"]}}
# The owner's autoscaled GPU pool, tainted for the cluster autoscaler beside NAP, adopted.
GPUNP = {
    **SYSTEM,
    "name": "gpunp",
    "mode": "User",
    "vmSize": T4,
    "count": 0,
    "enableAutoScaling": True,
    "minCount": 0,
    "maxCount": 2,
    "nodeTaints": ["sku=gpu:NoSchedule", CAS_BLOCK],
}
ADOPTED = {"gpuPool": None, "gpuPools": {"gpunp": {"existing": "adopt"}}}
NAP_SAYS = f"{WHERE} runs node auto-provisioning (nodeProvisioningProfile.mode Auto), where AKS refuses autoscaled pools"


def nap_cluster(*pools: dict) -> dict:
    return existing_cluster(agentPoolProfiles=[SYSTEM, *pools], nodeProvisioningProfile=NAP)


def deploy_on(cluster: dict, feature_state: str = "Registered", **overrides) -> tuple[list, str]:
    """A deployment that stops at preflight, with the subscription feature's state Azure answers."""
    monitor = RecordingMonitor(AzureMocks(cluster=cluster, feature_state=feature_state))
    with pytest.raises(PreflightError) as error:
        run_program("dev", overrides=on_existing(**overrides), monitor=monitor, preview=False)
    return [r for r in monitor.registrations if not r.type.startswith("pulumi:providers:")], str(error.value)


def test_a_groups_pools_on_a_cluster_that_runs_nap_are_said_at_preview_and_stop_a_deployment():
    said = lines("dev", cluster=nap_cluster(), **on_existing(**GROUPED))
    [line] = [w for w in said.warnings if w.startswith(NAP_SAYS)]
    assert "this stack would declare the autoscaled pools aks-gpu:gpuPools.t4, aks-gpu:gpuPools.t4b" in line
    assert f"the taint {CAS_BLOCK} on every cluster-autoscaler pool (t4, t4b would have none" in line
    assert "AllowClusterAutoscalerAndNAP" not in line, "Registered: only the taint is missing"
    assert "(a capacity group's pools always autoscale)" in line and line.endswith("(a deployment stops here)")
    registered, error = deploy_on(nap_cluster(), **GROUPED)
    assert registered == [] and NAP_SAYS in error and "\n- " + NAP_SAYS in error
    # A pool in no group may be fixed instead, which AKS still creates beside NAP.
    [alone] = [w for w in lines("dev", cluster=nap_cluster(), **on_existing(**GROUP)).warnings if w.startswith(NAP_SAYS)]
    assert "; or give aks-gpu:gpuPools.t4, aks-gpu:gpuPools.t4b a fixed nodeCount" in alone
    assert not [w for w in lines("dev", cluster=nap_cluster(), **on_existing()).warnings if "node auto-provisioning" in w]
    assert not [w for w in lines("dev", cluster=existing_cluster(), **on_existing(**GROUPED)).warnings if "node auto-provisioning" in w]


def test_a_tainted_pool_on_a_nap_cluster_without_the_feature_flag_is_said_with_the_command_that_registers_it():
    cluster = nap_cluster(GPUNP)
    said = lines("dev", cluster=cluster, feature_state="NotRegistered", **on_existing(**ADOPTED))
    [line] = [w for w in said.warnings if w.startswith(NAP_SAYS)]
    assert (
        "AKS needs the subscription feature Microsoft.ContainerService/AllowClusterAutoscalerAndNAP registered (it is NotRegistered: "
        in line
    )
    assert "`az feature register --namespace Microsoft.ContainerService --name AllowClusterAutoscalerAndNAP`" in line
    assert "cas-block" not in line.split("AKS needs", 1)[1], "the pool carries the taint"
    registered, error = deploy_on(cluster, "NotRegistered", **ADOPTED)
    assert registered == [] and "it is NotRegistered" in error


def test_a_nap_cluster_with_the_feature_flag_and_the_taint_on_each_autoscaled_pool_warns_of_double_provisioning_and_deploys():
    plan = deployment_plan(cluster=nap_cluster(GPUNP), feature_state="Registered", **on_existing(**ADOPTED))
    [line] = [w for w in plan_warnings(plan) if "node auto-provisioning" in w]
    assert line.startswith(
        f"{WHERE} runs node auto-provisioning (nodeProvisioningProfile.mode Auto) beside the cluster autoscaler of aks-gpu:gpuPools.gpunp"
    )
    assert '"can lead to double provisioning of nodes"' in line and not line.endswith("(a deployment stops here)")
    assert declared_pools(plan) == ["gpunp"], "the deployment goes on"


def test_a_saved_description_of_a_nap_cluster_is_said_in_the_offline_preview(tmp_path):
    saved = saved_copy(tmp_path, nodeProvisioningProfile=NAP)
    pools = {"t4": {"vmSize": T4, "minCount": 0, "maxCount": 1}}
    said = lines("dev", existingCluster=ML, gpuPool=None, gpuPools=pools, preflight={"clusterFile": saved})
    [line] = [w for w in said.warnings if "node auto-provisioning" in w]
    assert line.startswith("aks-gpu:existingCluster ml-platform/ml-aks runs node auto-provisioning (nodeProvisioningProfile.mode Auto)")
    assert "aks-gpu:gpuPools.t4" in line and CAS_BLOCK in line
