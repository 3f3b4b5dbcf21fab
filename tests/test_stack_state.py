"""What the stack already holds is known from the engine's state (components/azure/stack_state.py),
not from a tag alone: `az aks nodepool update --tags` replaces a pool's whole tag set (#45)."""

from __future__ import annotations

import pytest
from test_existing_cluster import on_existing
from test_existing_cluster_checks import T4, deploy

from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

# --------------------------------------------------------------------------- a pool the state holds (#45)


def held_gpu_pool_without_its_tag():
    """The stack's own pool after `az aks nodepool update --tags` replaced its tag set, and the
    state's record of it (pulumi:pulumi:readStackResourceOutputs' shape)."""
    untagged = {"name": "gpu", "vmSize": T4, "count": 2, "mode": "User", "tags": {"cost-center": "ml"}}
    cluster = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], untagged])
    pool_id = f"{cluster['id']}/agentPools/gpu"
    state = {
        "urn:pulumi:dev::aks-gpu::azure-native:containerservice:AgentPool::gpu": {
            "type": "azure-native:containerservice:AgentPool",
            "outputs": {"id": pool_id, "name": "gpu", "tags": {}},
        }
    }
    return cluster, state


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_the_stacks_own_pool_that_lost_its_tag_is_not_called_somebody_elses_and_the_tag_is_put_back(preview):
    cluster, state = held_gpu_pool_without_its_tag()
    monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(cluster=cluster, stack=state)))
    run = run_program("dev", overrides=on_existing(), monitor=monitor, preview=preview)
    said = " ".join(run.warnings)
    assert "which this stack did not add" not in said and "pick another pool name" not in said
    assert "lacks aks-gpu-stack" in said and "this run puts the tag back" in said


def test_without_the_state_a_pool_that_lost_its_tag_still_stops_a_deployment_as_before():
    cluster, _ = held_gpu_pool_without_its_tag()
    created, error = deploy(cluster=cluster)
    assert created == [] and "which this stack did not add (it has no aks-gpu-stack tag)" in error
