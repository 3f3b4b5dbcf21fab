"""A team's own cluster as it really is (issue #32): private, busy, on kubenet, in its own
VNet with a pod subnet, in its own subscription. What a preview says of each, and what stops
a deployment before the first GPU pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cached
from test_existing_cluster import deploy, on_existing, preflight_warnings

from components.config import ConfigError
from tools import render
from tools.azure_mocks import existing_cluster

T4 = "Standard_NC4as_T4_v3"
WHERE = "aks-gpu:existingCluster team-rg/team-aks"
SYSTEM = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250}
SAVED = Path(__file__).parent / "fixtures" / "clusters" / "ml-aks.json"
TEAM_SUBSCRIPTION = "55555555-5555-5555-5555-555555555555"


def with_pools(*states: str) -> dict:
    """The mocked cluster with an owner's user pool in each of `states` beside its System pool."""
    pools = [SYSTEM] + [{**SYSTEM, "name": f"apps{i}", "mode": "User", "provisioningState": state} for i, state in enumerate(states)]
    return existing_cluster(agentPoolProfiles=pools)


# --------------------------------------------------------------------------- a private cluster


@pytest.mark.parametrize("integration", [False, True])
def test_a_private_cluster_is_named_in_the_preview_with_the_ways_to_reach_it(integration):
    access = {"enablePrivateCluster": True, "enableVnetIntegration": integration}
    run, _ = run_cached("dev", cluster=existing_cluster(apiServerAccessProfile=access), **on_existing())
    [line] = [w for w in run.warnings if "private cluster" in w]
    assert line.startswith(f"{WHERE} is a private cluster{' (API server VNet integration, private)' if integration else ''}: ")
    for way in ("in its VNet or a peered one", "VPN or ExpressRoute", "self-hosted CI runner"):
        assert way in line
    public, _ = run_cached("dev", cluster=existing_cluster(), **on_existing())
    assert not [w for w in public.warnings if "private cluster" in w], "a public cluster is not called private"


# --------------------------------------------------------------------------- pools at work


@pytest.mark.parametrize("state", ["Upgrading", "Scaling", "Updating", "Creating", "SomethingNew"])
def test_an_owners_pool_in_an_operation_is_named_in_a_preview_and_stops_a_deployment(state):
    """AKS runs one operation at a time on a cluster: the first GPU pool would get a 409.
    provisioningState is a free string, so any state but Succeeded, Failed or Canceled is an
    operation in progress."""
    run, _ = run_cached("dev", cluster=with_pools(state), **on_existing())
    says = f"{WHERE}: its pool apps0 is {state}, not Succeeded: AKS refuses another operation on the cluster"
    assert any(w.startswith(says) and w.endswith("(a deployment stops here)") for w in preflight_warnings(run))
    registered, error = deploy(cluster=with_pools(state))
    assert registered == [] and says in error, "stopped before anything, the first GPU pool included"


@pytest.mark.parametrize("state", ["Failed", "Canceled"])
def test_a_pool_whose_last_operation_ended_is_said_but_blocks_nothing(state):
    run, _ = run_cached("dev", preview=False, cluster=with_pools(state), **on_existing())
    [line] = [w for w in run.warnings if "its pool apps0" in w]
    assert line.startswith(f"{WHERE}: its pool apps0 is {state}: its last operation did not finish")
    assert run.of_type("azure-native:containerservice:AgentPool"), "the deployment goes on"


def test_pools_in_succeeded_say_nothing():
    run, _ = run_cached("dev", cluster=with_pools("Succeeded"), **on_existing())
    assert not [w for w in run.warnings if "its pool" in w]


# --------------------------------------------------------------------------- kubenet


def test_kubenet_is_warned_with_its_retirement_date_and_deploys():
    kubenet = existing_cluster(networkProfile={"networkPlugin": "kubenet", "networkPolicy": "calico"})
    run, _ = run_cached("dev", preview=False, cluster=kubenet, **on_existing())
    [line] = [w for w in run.warnings if "kubenet" in w]
    assert line.startswith(f"{WHERE} uses kubenet, which AKS stops supporting on 2028-03-31")
    assert run.of_type("azure-native:containerservice:AgentPool")


# --------------------------------------------------------------------------- a pod subnet


def test_a_pod_subnet_in_another_vnet_is_refused_like_a_node_subnet():
    vnet = "/subscriptions/3333/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks"
    pools = [{**SYSTEM, "vnetSubnetID": f"{vnet}/team-vnet/subnets/nodes", "podSubnetID": f"{vnet}/team-vnet/subnets/pods"}]
    cluster = existing_cluster(agentPoolProfiles=pools, networkProfile={"networkPlugin": "azure", "networkPolicy": "cilium"})
    other = f"{vnet}/other-vnet/subnets/pods"
    run, _ = run_cached("dev", cluster=cluster, **on_existing(gpuPool={"vmSize": T4, "podSubnetId": other}))
    assert any(w.startswith(f"aks-gpu:gpuPool.podSubnetId {other} is not in the cluster's virtual network (") for w in run.warnings)
    registered, error = deploy(cluster=cluster, gpuPool={"vmSize": T4, "podSubnetId": other})
    assert registered == [] and "podSubnetId" in error
    same, _ = run_cached("dev", cluster=cluster, **on_existing(gpuPool={"vmSize": T4, "podSubnetId": f"{vnet}/team-vnet/subnets/pods2"}))
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
    assert run_cached("dev", **overrides)[0].of_type("azure-native:containerservice:AgentPool")


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
