"""The guide's "confirm that GPUs are schedulable" step as a stack output: for every GPU pool
the one command that lists its nodes with the `nvidia.com/gpu` each offers the scheduler,
beside the Job's logs command."""

from __future__ import annotations

import shlex

import pytest
from conftest import run_cached

from components.outputs import nodes_command
from tools.azure_mocks import existing_cluster

T4 = "Standard_NC4as_T4_v3"
A100 = "Standard_NC24ads_A100_v4"
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}
GUIDE = "kubectl get nodes -l kubernetes.azure.com/agentpool=gpu -o custom-columns='NAME:.metadata.name,GPUS:.status.allocatable.nvidia\\.com/gpu'"


def test_the_command_selects_the_pools_nodes_and_reads_their_allocatable_gpus_as_the_shell_passes_it():
    assert shlex.split(nodes_command("t4")) == [
        "kubectl",
        "get",
        "nodes",
        "-l",
        "kubernetes.azure.com/agentpool=t4",
        "-o",
        # kubectl reads a backslash-escaped dot as part of the key (client-go util/jsonpath).
        r"custom-columns=NAME:.metadata.name,GPUS:.status.allocatable.nvidia\.com/gpu",
    ]


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_the_guides_pool_exports_its_nodes_command_beside_the_jobs_logs_command(preview):
    outputs = run_cached("dev", preview=preview, gpuPool={"vmSize": T4})[0].outputs
    assert outputs["gpuPools"].value["gpu"]["nodesCommand"] == GUIDE
    assert "jobLogsCommand" in outputs


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_each_of_several_pools_has_its_own_nodes_command(preview):
    pools = {"t4": {"vmSize": T4}, "a100": {"vmSize": A100, "migProfile": "MIG1g"}}
    outputs = run_cached("dev", preview=preview, gpuPool=None, gpuPools=pools)[0].outputs
    described = outputs["gpuPools"].value
    assert {name: entry["nodesCommand"] for name, entry in described.items()} == {name: nodes_command(name) for name in pools}


def test_a_pool_added_to_an_existing_cluster_has_its_nodes_command():
    outputs = run_cached("dev", cluster=existing_cluster(), existingCluster=TEAM, gpuPool={"vmSize": T4})[0].outputs
    assert outputs["gpuPools"].value["gpu"]["nodesCommand"] == GUIDE


@pytest.mark.parametrize("how", ["use", "adopt"])
def test_a_pool_of_the_clusters_owner_that_the_stack_uses_or_adopts_has_its_nodes_command(how):
    system = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250, "osType": "Linux"}
    owners = {"name": "owners", "mode": "User", "vmSize": T4, "count": 1, "osType": "Linux", "nodeTaints": ["sku=gpu:NoSchedule"]}
    run = run_cached(
        "dev",
        cluster=existing_cluster(agentPoolProfiles=[system, {**owners, "provisioningState": "Succeeded"}]),
        existingCluster=TEAM,
        gpuPool=None,
        gpuPools={"owners": {"existing": how}, "t4": {"vmSize": T4}},
    )[0]
    described = run.outputs["gpuPools"].value
    assert {name: entry["nodesCommand"] for name, entry in described.items()} == {
        "owners": nodes_command("owners"),
        "t4": nodes_command("t4"),
    }
