"""A GPU pool this stack already runs in an existing cluster keeps the subnet, pod subnet and
maxPods it has in Azure when the cluster's owner moves the System pool (AKS fixes all three
when a pool is created, so following the System pool would delete and recreate the GPU pool).
Only the stack's own config moves it, and the preview says that this replaces the pool. Each
case runs as `pulumi preview` and as `pulumi up` would."""

from __future__ import annotations

import pytest
from conftest import run_cached
from support import both_modes
from support.config import parsed
from support.plan import plan_infos, plan_warnings, planned
from support.pool_network import (
    NEW_NODES,
    NEW_PODS,
    NODES,
    PODS,
    T4,
    VNET,
    moved_cluster,
    network_of,
    replace_warnings,
)

from components.cluster.cluster_facts import OWNER_TAG, parse
from components.ownership.stack_state import StackState
from components.pools import pool_network
from tools.azure_mocks import OfflineReader

POOL = "azure-native:containerservice:AgentPool"
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}
GPU_NODES = f"{VNET}/gpu-nodes"
MODES = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])


def run(description: dict, preview: bool, **pool):
    """The graph, in one mode: a preview's plan and a deployment's are first shown to hand the
    components the same Args (the program branches on the mode only in its plan, tests/support/both_modes.py)."""
    both_modes.same_in_both_modes(lambda: OfflineReader(cluster=description), "dev", existingCluster=TEAM, gpuPool={"vmSize": T4, **pool})
    return run_cached("dev", preview=preview, cluster=description, existingCluster=TEAM, gpuPool={"vmSize": T4, **pool})[0]


class Decided:
    """What the plan decides for the pool gpu, with no run: its network as the pool's Args hand
    it to the agent pool (`network_of`'s order), and the plan's warnings and lines."""

    def __init__(self, description: dict, preview: bool, **pool) -> None:
        both_modes.named_as_a_run("dev")
        plan = planned("dev", preview, cluster=description, existingCluster=TEAM, gpuPool={"vmSize": T4, **pool})
        [args] = plan.gpu_pools
        network = args.network
        assert network is not None
        self.network = (network.vnet_subnet_id, network.pod_subnet_id, network.max_pods)
        self.warnings, self.infos = plan_warnings(plan), plan_infos(plan)


@MODES
def test_the_owner_moving_the_system_pool_moves_no_gpu_pool_of_the_stack(preview):
    if preview:  # the graph: the plan's network reaches the agent pool
        assert network_of(run(moved_cluster(), True).one(POOL).inputs) == (NODES, PODS, 30)
    result = Decided(moved_cluster(), preview)
    assert result.network == (NODES, PODS, 30), "the pool's own subnets and pods per node, not the System pool's"
    assert replace_warnings(result.warnings) == []
    assert (
        "network: aks-gpu:gpuPool joins Azure CNI with dynamic pod IPs: subnet team-vnet/nodes (kept from the live pool), "
        "pod subnet team-vnet/pods (kept from the live pool), maxPods 30 (kept from the live pool)"
    ) in result.infos


@MODES
def test_a_new_subnet_in_the_config_moves_the_pool_and_the_preview_says_it_is_replaced(preview):
    if not preview:  # the graph, in the deployment that replaces the pool
        assert network_of(run(moved_cluster(), False, vnetSubnetId=GPU_NODES, maxPods=40).one(POOL).inputs) == (GPU_NODES, PODS, 40)
    result = Decided(moved_cluster(), preview, vnetSubnetId=GPU_NODES, maxPods=40)
    assert result.network == (GPU_NODES, PODS, 40)
    (warning,) = replace_warnings(result.warnings)
    assert warning.startswith(
        "aks-gpu:gpuPool.vnetSubnetId is team-vnet/gpu-nodes and the live pool's team-vnet/nodes; "
        "aks-gpu:gpuPool.maxPods is 40 and the live pool's 30: AKS fixes a pool's subnet, pod subnet and maxPods when it "
        "creates the pool, so `pulumi up` replaces pool gpu, deleting it first"
    )
    assert (
        "network: aks-gpu:gpuPool joins Azure CNI with dynamic pod IPs: subnet team-vnet/gpu-nodes (aks-gpu:gpuPool.vnetSubnetId; "
        "the live pool has team-vnet/nodes: replaces it), pod subnet team-vnet/pods (kept from the live pool), maxPods 40 "
        "(aks-gpu:gpuPool.maxPods; the live pool has 30: replaces it)"
    ) in result.infos


@MODES
def test_a_config_that_names_what_the_pool_has_replaces_nothing(preview):
    result = Decided(moved_cluster(), preview, vnetSubnetId=NODES, podSubnetId=PODS, maxPods=30)
    assert result.network == (NODES, PODS, 30)
    assert replace_warnings(result.warnings) == []


@MODES
def test_a_new_pool_still_takes_the_system_pools_network(preview):
    result = Decided(moved_cluster(gpu_name="other"), preview)
    assert result.network == (NEW_NODES, NEW_PODS, 50)
    assert any("subnet team-vnet/nodes-2026 (the System pool's)" in i for i in result.infos)


def test_a_pool_of_the_same_name_that_another_stack_added_is_not_kept():
    """Its name is refused (a deployment stops: test_existing_cluster.py); a preview shows what
    this stack would declare, the System pool's network, not the other stack's pool's."""
    result = Decided(moved_cluster(gpu_tags={OWNER_TAG: "aks-gpu/prod"}), True)
    assert result.network == (NEW_NODES, NEW_PODS, 50)
    assert replace_warnings(result.warnings) == []


def test_the_managed_pool_keeps_the_live_network_too():
    result = run(moved_cluster(), True, management="aks-managed")
    body = result.one("pulumi-python:dynamic/aksgpu:ManagedGpuPool").inputs["properties"]
    assert (body["vnetSubnetID"], body["podSubnetID"], body["maxPods"]) == (NODES, PODS, 30)


def test_subnet_ids_that_differ_only_in_case_are_the_same_subnet():
    """ARM's IDs compare without case, and the az CLI writes `resourcegroups`."""
    found = parse(moved_cluster(), "team-rg")
    live = next(p for p in found.pools if p.name == "gpu")
    network = pool_network.plan(found, "aks-gpu:gpuPool", None, NODES.replace("resourceGroups", "resourcegroups"), None, live)
    assert network.replaces is None


def test_a_live_pool_without_max_pods_in_its_description_takes_what_a_new_pool_would():
    """A saved description may leave maxPods out: nothing to keep, and nothing said to move."""
    description = moved_cluster()
    del description["agentPoolProfiles"][1]["maxPods"]
    found = parse(description, "team-rg")
    live = next(p for p in found.pools if p.name == "gpu")
    network = pool_network.plan(found, "aks-gpu:gpuPool", None, current=live)
    assert (network.max_pods, network.replaces) == (50, None)
    assert pool_network.plan(found, "aks-gpu:gpuPool", 40, current=live).replaces is None


def test_a_pool_taken_over_by_name_is_kept_like_the_stacks_own():
    """`live` hands plan_pools a pool the stack adopts, which carries no tag of this stack."""
    found = parse(moved_cluster(gpu_tags=None), "team-rg")
    cfg = parsed(existingCluster=TEAM, gpuPool={"vmSize": T4})
    # The state known, and not holding it: the stack's config would add a new pool.
    assert pool_network.plan_pools(cfg.pools, found, "dev", state=StackState(True))["gpu"].vnet_subnet_id == NEW_NODES
    live = {p.name: p for p in found.pools if p.name == "gpu"}
    assert pool_network.plan_pools(cfg.pools, found, "dev", live)["gpu"].vnet_subnet_id == NODES
