"""GPU pools that fit the network of the cluster they join: the clusters AKS builds (their
own VNet, Azure CNI with or without overlay, dynamic pod IPs, kubenet), each described as
getManagedCluster answers, and what the program declares for a pool in each."""

from __future__ import annotations

import pytest
from conftest import run_cached
from support import both_modes
from support.arm_schemas import bodies, schema_errors
from support.plan import plan_infos, plan_warnings, planned

from components.errors import ConfigError, PreflightError
from tools.azure_mocks import AzureMocks, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
POOL = "azure-native:containerservice:AgentPool"
MANAGED = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}
VNET = "/subscriptions/3333/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/team-vnet/subnets"
NODES, PODS, GPU_NODES = f"{VNET}/nodes", f"{VNET}/pods", f"{VNET}/gpu-nodes"


def cluster(network: dict, **system) -> dict:
    """A cluster with the given networkProfile and a System pool with the given members."""
    pool = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "osType": "Linux", **system}
    return existing_cluster(networkProfile=network, agentPoolProfiles=[pool])


OVERLAY_IN_OWN_VNET = cluster(
    {"networkPlugin": "azure", "networkPluginMode": "overlay", "networkPolicy": "cilium"}, vnetSubnetID=NODES, maxPods=250
)
LEGACY_AZURE_CNI = cluster({"networkPlugin": "azure", "networkPolicy": "calico"}, vnetSubnetID=NODES, maxPods=30)
DYNAMIC_POD_IPS = cluster(
    {"networkPlugin": "azure", "networkPolicy": "cilium", "networkDataplane": "cilium"}, vnetSubnetID=NODES, podSubnetID=PODS, maxPods=50
)
KUBENET_IN_OWN_VNET = cluster({"networkPlugin": "kubenet", "networkPolicy": "calico"}, vnetSubnetID=NODES, maxPods=110)


def decided(description: dict, **pool) -> tuple[tuple, list[str]]:
    """What the plan decides for the GPU pool's network in that cluster, with no run: (subnet,
    pod subnet, maxPods), as the pool's Args hand them to its agent pool, and the plan's info
    lines. That the Args reach the agent pool's inputs is the graph tests' below (several pools,
    the typed and the managed pool's bodies)."""
    both_modes.named_as_a_run("dev")
    plan = planned("dev", cluster=description, existingCluster=TEAM, gpuPool={"vmSize": T4, **pool})
    [args] = plan.gpu_pools
    network = args.network
    assert network is not None and network == plan.networks["gpu"]
    return (network.vnet_subnet_id, network.pod_subnet_id, network.max_pods), plan_infos(plan)


@pytest.mark.parametrize(
    "description, subnet, pod_subnet, max_pods, says",
    [
        (OVERLAY_IN_OWN_VNET, NODES, None, 250, "joins Azure CNI Overlay: subnet team-vnet/nodes (the System pool's), maxPods 250"),
        (
            LEGACY_AZURE_CNI,
            NODES,
            None,
            30,
            "joins Azure CNI (pods on the node subnet): subnet team-vnet/nodes (the System pool's), maxPods 30 (the System pool's: every pod takes a subnet address)",
        ),
        (
            DYNAMIC_POD_IPS,
            NODES,
            PODS,
            50,
            "joins Azure CNI with dynamic pod IPs: subnet team-vnet/nodes (the System pool's), pod subnet team-vnet/pods (the System pool's), maxPods 50 (the System pool's: every pod takes a subnet address)",
        ),
        (KUBENET_IN_OWN_VNET, NODES, None, 250, "joins kubenet: subnet team-vnet/nodes (the System pool's), maxPods 250"),
        (existing_cluster(), None, None, 250, "joins Azure CNI Overlay: maxPods 250"),
    ],
    ids=["overlay in its own VNet", "legacy Azure CNI", "dynamic pod IPs", "kubenet in its own VNet", "overlay, AKS's VNet"],
)
def test_a_pool_takes_the_system_pools_subnets_and_the_pods_per_node_its_network_allows(description, subnet, pod_subnet, max_pods, says):
    network, infos = decided(description)
    assert network == (subnet, pod_subnet, max_pods)
    assert f"network: aks-gpu:gpuPool {says}" in infos, "preflight says what it decided, one line per pool"


def test_a_pool_may_choose_its_own_subnet_and_pods_per_node():
    network, infos = decided(LEGACY_AZURE_CNI, vnetSubnetId=GPU_NODES, maxPods=40)
    assert (network[0], network[2]) == (GPU_NODES, 40)
    assert (
        "network: aks-gpu:gpuPool joins Azure CNI (pods on the node subnet): subnet team-vnet/gpu-nodes, maxPods 40 (aks-gpu:gpuPool.maxPods)"
        in infos
    ), "the line names the subnet by its VNet and name; the inputs carry the ID"


def several_pools():
    """The dev stack's pools t4 (the System pool's network) and big (its own subnet and maxPods) in a cluster with dynamic pod IPs."""
    pools = {"t4": {"vmSize": T4}, "big": {"vmSize": T4, "maxPods": 64, "vnetSubnetId": GPU_NODES}}
    return run_cached("dev", cluster=DYNAMIC_POD_IPS, existingCluster=TEAM, gpuPool=None, gpuPools=pools)[0]


def test_several_pools_each_get_the_network_and_their_own_choices():
    run = several_pools()
    got = {r.inputs["agentPoolName"]: (r.inputs["vnetSubnetID"], r.inputs["podSubnetID"], r.inputs["maxPods"]) for r in run.of_type(POOL)}
    assert got == {"t4": (NODES, PODS, 50), "big": (GPU_NODES, PODS, 64)}
    assert len([i for i in run.infos if i.startswith("network: ")]) == 2
    # In a cluster in AKS's own VNet, no subnet is declared (the decision: the test above). The run
    # test_existing_cluster_checks.py's healthy cluster deploys, which any cluster a stack names answers.
    solo = run_cached("dev", preview=False, existingCluster=TEAM, gpuPool={"vmSize": T4})[0]
    assert (solo.one(POOL).inputs.get("vnetSubnetID"), solo.one(POOL).inputs.get("podSubnetID")) == (None, None)
    assert "network: aks-gpu:gpuPool joins Azure CNI Overlay: maxPods 250" in solo.infos


def test_the_managed_pool_carries_the_subnets_in_the_rest_spelling_and_validates():
    run = run_cached("dev", cluster=DYNAMIC_POD_IPS, existingCluster=TEAM, gpuPool={"vmSize": T4, "management": "aks-managed"})[0]
    body = run.one(MANAGED).inputs["properties"]
    assert (body["vnetSubnetID"], body["podSubnetID"], body["maxPods"]) == (NODES, PODS, 50)
    assert [e for b in bodies(run) for e in schema_errors(b)] == []


def test_the_typed_pools_body_with_subnets_validates_against_azures_schema():
    """Both typed pools of `several_pools`: the System pool's subnets, and a subnet of the pool's own."""
    run = several_pools()
    inputs = {r.inputs["agentPoolName"]: r.inputs for r in run.of_type(POOL)}["t4"]
    assert (inputs["vnetSubnetID"], inputs["podSubnetID"], inputs["maxPods"]) == (NODES, PODS, 50), "the plan's network, declared"
    assert [e for b in bodies(run) for e in schema_errors(b)] == []


@pytest.mark.parametrize(
    "description, member, rest",
    [(existing_cluster(), "vnetSubnetId", "vnetSubnetID"), (LEGACY_AZURE_CNI, "podSubnetId", "podSubnetID")],
)
def test_a_subnet_on_a_cluster_whose_pools_have_none_warns_at_preview_and_stops_a_deployment(description, member, rest):
    message = (
        f"aks-gpu:gpuPool.{member} is set, but the cluster's pools have no {rest}, and AKS takes it on all of a "
        "cluster's pools or none; remove it"
    )
    said = plan_warnings(planned("dev", cluster=description, existingCluster=TEAM, gpuPool={"vmSize": T4, member: GPU_NODES}))
    assert any(w.startswith(message) for w in said)
    monitor = RecordingMonitor(AzureMocks(cluster=description))
    with pytest.raises(PreflightError, match=rf"- {message}"):
        run_program("dev", overrides={"existingCluster": TEAM, "gpuPool": {"vmSize": T4, member: GPU_NODES}}, monitor=monitor)
    assert monitor.registrations == []


@pytest.mark.parametrize("member", ["vnetSubnetId", "podSubnetId"])
def test_subnets_are_refused_for_a_cluster_this_program_creates(member):
    with pytest.raises(ConfigError, match=rf"^invalid config aks-gpu:gpuPool\.{member} = .*only with aks-gpu:existingCluster"):
        planned("dev", gpuPool={"vmSize": T4, member: GPU_NODES})


@pytest.mark.parametrize("value", ["not-a-subnet", f"{VNET}"])
def test_a_malformed_subnet_id_is_refused_by_name(value):
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:gpuPool\.vnetSubnetId = .*a subnet's resource ID"):
        planned("dev", existingCluster=TEAM, gpuPool={"vmSize": T4, "vnetSubnetId": value})


def test_max_pods_on_a_created_cluster_is_the_pools_own():
    """Fewer than 30 too, where the pool has room for 30 (test_fewer_than_30_pods_per_node_needs_room_for_30_in_the_pool).
    The plan's decision, in the pool's network Args, which become the agent pool's maxPods as in
    an existing cluster (pool_fields' maxPods row; the graph tests above)."""
    pools = {"a": {"vmSize": T4, "maxPods": 110}, "b": {"vmSize": T4, "maxPods": 10, "nodeCount": 3}}
    plan = planned("dev", gpuPool=None, gpuPools=pools)
    assert {a.pool.name: a.network.max_pods for a in plan.gpu_pools if a.network} == {"a": 110, "b": 10}
    assert not [i for i in plan_infos(plan) if i.startswith("network: ")], "nothing to decide in a cluster this stack creates"


def test_a_subnet_of_another_virtual_network_is_refused():
    other = "/subscriptions/3333/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/other-vnet/subnets/gpu"
    said = plan_warnings(planned("dev", cluster=LEGACY_AZURE_CNI, existingCluster=TEAM, gpuPool={"vmSize": T4, "vnetSubnetId": other}))
    assert any(w.startswith(f"aks-gpu:gpuPool.vnetSubnetId {other} is not in the cluster's virtual network (") for w in said)


def test_without_the_system_pools_count_the_aks_default_of_the_model_applies():
    no_count = cluster({"networkPlugin": "azure"}, vnetSubnetID=NODES, podSubnetID=PODS)
    assert decided(no_count)[0][2] == 110, "Azure CNI Pod subnet's default"
    assert decided(cluster({"networkPlugin": "azure"}, vnetSubnetID=NODES))[0][2] == 30, "legacy Azure CNI's"


def test_fewer_than_30_pods_per_node_needs_room_for_30_in_the_pool():
    with pytest.raises(
        ConfigError,
        match=r"^invalid config aks-gpu:gpuPool\.maxPods = 10: AKS takes fewer than 30 pods per node only when .*set maxPods to at least 30",
    ):
        planned("dev", gpuPool={"vmSize": T4, "maxPods": 10})
    # With room for 30 (3 nodes) it is declared: test_max_pods_on_a_created_cluster_is_the_pools_own.
    planned("dev", gpuPool={"vmSize": T4, "maxPods": 10, "nodeCount": 3})
