"""The whole guide in a run: the checks every stack's run passes."""

from __future__ import annotations

import json

from tools.mock_engine import ProgramRun

RG = "azure-native:resources:ResourceGroup"

AKS = "azure-native:containerservice:ManagedCluster"

POOL = "azure-native:containerservice:AgentPool"

K8S_PROVIDER = "pulumi:providers:kubernetes"

JOB = "kubernetes:batch/v1:Job"


def check_whole_guide(run: ProgramRun) -> None:
    existing = "aks-gpu:existingCluster" in run.config
    for type_ in (RG, AKS):  # an existing cluster is read, not declared
        assert len(run.of_type(type_)) == (0 if existing else 1), type_
    assert len(run.of_type(K8S_PROVIDER)) == 1
    pools = json.loads(run.config.get("aks-gpu:gpuPools", '{"gpu": {}}'))
    declared = run.of_type(POOL) + run.of_type("pulumi-python:dynamic/aksgpu:ManagedGpuPool")
    named = json.loads(run.config.get("aks-gpu:gpuPool", "{}")).get("name", "gpu")
    assert sorted(r.inputs["agentPoolName"] for r in declared) == sorted(pools if "aks-gpu:gpuPools" in run.config else [named])
    assert len(run.of_type(JOB)) == len(pools), "one proof per GPU pool"
    assert run.outputs["clusterName"].value
    stack_urn = run.resources[0].parent
    assert all(r.parent for r in run.resources), "every resource has a parent"
    assert {r.parent for r in run.resources if r.type.startswith("aks-gpu:")} == {stack_urn}
