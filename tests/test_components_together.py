"""The package's components side by side in one stack: GpuPools creates a pool, which carries the
stack's tag, and GpuStack and GpuProof of the same stack use it by name (examples/consumer-python/).
A run that registers no pool cannot unregister one by using it, so the rule that refuses `use` of
the stack's own pool (components/pools/existing_pools.py) is the pools' run's alone."""

from __future__ import annotations

from typing import Any

import pytest
from support.existing_pools import GPUNP, cluster

from components.environment.gpu_proof import GpuProof
from components.environment.gpu_stack import GpuStack
from components.errors import PreflightError
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program, run_under_mocks

PROJECT, STACK = "platform", "staging"
# The pool GpuPools created in this stack: the stack's tag on it (cluster_facts.OWNER_TAG).
CREATED = {**GPUNP, "tags": {"aks-gpu-stack": f"{PROJECT}/{STACK}"}}
CLUSTER_ID = "/subscriptions/33333333-3333-3333-3333-333333333333/resourceGroups/team-rg/providers/Microsoft.ContainerService/managedClusters/team-aks"
COMPONENTS: dict[str, Any] = {"GpuStack": GpuStack, "GpuProof": GpuProof}


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
@pytest.mark.parametrize("name", COMPONENTS)
def test_a_component_without_the_pools_uses_the_pool_its_stacks_gpu_pools_created(name, preview):
    reader = OfflineReader(cluster=cluster(CREATED))
    monitor = RecordingMonitor(AzureMocks(reader=reader))

    def body() -> None:
        COMPONENTS[name]("gpu", {"clusterId": CLUSTER_ID, "gpuPoolNames": ["gpunp"]}, reader=reader)

    run = run_under_mocks(body, stack=STACK, project=PROJECT, monitor=monitor, preview=preview)
    assert run.of_type(f"aks-gpu:index:{name}")
    assert run.of_type("azure-native:containerservice:AgentPool") == []  # used, never registered
    [said] = [line for line in run.infos if "gpunp" in line and "read from Azure" in line]
    assert "this stack's own, which another of its components declares (GpuPools)" in said and "the owner's" not in said


def test_the_program_still_refuses_to_use_a_pool_it_created():
    monitor = RecordingMonitor(AzureMocks(cluster=cluster({**GPUNP, "tags": {"aks-gpu-stack": "aks-gpu/team"}})))
    with pytest.raises(PreflightError, match=r"gpuPools.gpunp.existing = use: the pool carries this stack's tag"):
        run_program("team", overrides={"gpuPools": {"gpunp": {"existing": "use"}}}, monitor=monitor)
    assert monitor.registrations == []
