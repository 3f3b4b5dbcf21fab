"""The package's GpuPools: GPU pools on an AKS cluster another program owns, named by its resource ID.
Constructed as the engine constructs it (over gRPC, tests/support/package_host.py) with the pool
settings of a sample stack on an existing cluster, it registers the pools the program registers
for those settings, with the same inputs, and nothing in the cluster; a bad input is one line
naming it, in a preview and a deployment alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import grpc
import pulumi
import pytest
from conftest import ROOT, run_cached
from pulumi.runtime.proto import engine_pb2
from support.existing_cluster import on_existing
from support.package_host import construct, construct_as_the_engine, graph, inputs_of, refused_input, with_children
from support.package_settings import run_as_a_consumer
from support.registrations import registrations_begun

from components.cluster.cluster_facts import cluster_id
from components.environment.gpu_pools import TYPE, GpuPools
from components.environment.kinds import GPU_POOLS
from components.errors import ConfigError
from components.seam.reader import AzureReader
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import RecordingMonitor, Registration, merged_config

# The sample stacks on an existing cluster: the team's two new pools (tests/fixtures/stacks/), the
# guide's hand-made cluster with its pool used as it is (examples/guide-cluster/), and the team's
# cluster with a capacity group of two new pools (the group's label on each).
T4 = {"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2}
GROUP = {"gpuPools": {"t4": T4, "t4b": {**T4, "vmSize": "Standard_NC8as_T4_v3"}}, "gpuGroups": {"inference": ["t4", "t4b"]}}
SAMPLES: dict[str, tuple[str, Any, dict[str, Any]]] = {
    "team": ("team", None, {}),
    "ml-prod": ("ml-prod", ROOT / "examples" / "guide-cluster" / "Pulumi.ml-prod.yaml", {}),
    "team-group": ("team", None, GROUP),
}
RUNS = {"preview": True, "deployment": False}
POOL = "aks-gpu:azure:GpuPool"
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
TEAM_AKS = cluster_id(SUBSCRIPTION, "team-rg", "team-aks")


def pools_inputs(merged: Mapping[str, str], stack: str) -> dict[str, Any]:
    """A stack's pool settings as GpuPools' inputs, its existingCluster as the cluster's resource ID
    in the subscription Azure answers for (the saved cluster's, or the signed-in one's)."""
    given = inputs_of(merged)
    reader = OfflineReader()
    reader.offline(merged, stack)
    cluster = given["existingCluster"]
    named = cluster_id(reader.subscription, cluster["resourceGroupName"], cluster["name"])
    return {"clusterId": named, **{key: given[key] for key in GPU_POOLS.keys or () if key in given}}


def pools_of(registrations: Sequence[Registration]) -> list[Registration]:
    """The GPU pools and what each registers under it."""
    return with_children(registrations, {POOL})


@pytest.mark.parametrize(("sample", "run"), [(s, r) for s in SAMPLES for r in RUNS], ids=[f"{s}-{r}" for s in SAMPLES for r in RUNS])
def test_gpu_pools_constructed_over_grpc_registers_the_programs_pools_with_the_same_inputs_and_nothing_in_the_cluster(sample, run):
    preview, (stack, stack_file, overrides) = RUNS[run], SAMPLES[sample]
    merged = merged_config(stack, overrides=overrides, stack_file=stack_file)
    constructed = construct_as_the_engine(stack, preview, merged, component=TYPE, given=pools_inputs(merged, stack))
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    program = run_cached(stack, preview=preview, stack_file=stack_file, **overrides)[0]
    component = [r for r in constructed.registrations if r.type == TYPE]  # the URN its children's are named under
    assert graph([*component, *pools_of(constructed.registrations)], TYPE) == graph(pools_of(program.resources))
    assert [r.name for r in pools_of(program.resources) if r.type == POOL] == [f"gpu-pool-{n}" for n in merged_pools(merged)]
    # No Kubernetes provider, and nothing of the GPU stack or the proof: GpuStack's and GpuProof's.
    assert [r.type for r in constructed.registrations if "kubernetes" in r.type or r.type.startswith("aks-gpu:kubernetes:")] == []


def merged_pools(merged: Mapping[str, str]) -> list[str]:
    """The pools a stack's config adds or adopts (existing: use registers nothing), in name order."""
    pools = inputs_of(merged).get("gpuPools", {})
    return sorted(name for name, pool in pools.items() if pool.get("existing") != "use")


def test_gpu_pools_answers_construct_with_its_outputs_the_programs_that_apply():
    merged = merged_config("team")
    constructed = construct_as_the_engine("team", False, merged, component=TYPE, given=pools_inputs(merged, "team"))
    program = run_cached("team", preview=False)[0]
    assert constructed.answer.urn == "urn:pulumi:team::aks-gpu::aks-gpu:index:GpuPools::env"
    outputs = set(constructed.answer.state.fields)
    assert outputs == {"resourceGroupName", "clusterName", "gpuPools", "estimatedCost"} and outputs <= set(program.outputs)
    pools = constructed.answer.state.fields["gpuPools"].struct_value
    assert set(pools.fields) == {"t4", "a100"} and "mnistJob" not in pools.fields["t4"].struct_value.fields


def pools_run(inputs: Mapping[str, Any], stack: str = "team", preview: bool = True) -> list[Registration]:
    """GpuPools declared by a program under the mock engine, in-process, as a Python consumer declares it."""

    def build(reader: AzureReader) -> GpuPools:
        return GpuPools("pools", inputs, reader=reader)  # type: ignore[arg-type]

    return run_as_a_consumer(build, stack, merged_config(stack), RecordingMonitor(AzureMocks()), preview).resources


BAD = {
    "clusterId": ({"clusterId": "team-aks"}, "clusterId", "invalid config clusterId = 'team-aks': expected an AKS cluster's resource ID, "),
    "a pool": (
        {"clusterId": TEAM_AKS, "gpuPools": {"t4": {"vmSize": "NC6"}}},
        "gpuPools.t4.vmSize",
        "invalid config aks-gpu:gpuPools.t4.vmSize = 'NC6': expected an Azure VM size name",
    ),
    "an AKS-managed pool": (
        {"clusterId": TEAM_AKS, "gpuPools": {"t4": {"vmSize": "Standard_NC4as_T4_v3", "management": "aks-managed"}}},
        "gpuPools.t4.management",
        "gpuPools.t4.management = aks-managed: the AKS-managed GPU pool is a Pulumi dynamic resource",
    ),
    "a key it does not take": ({"clusterId": TEAM_AKS, "clusterName": "other"}, "clusterName", "clusterName is not an input of GpuPools"),
}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("bad", BAD)
def test_a_bad_input_to_gpu_pools_is_one_line_naming_it_before_anything_is_registered(bad, run, monkeypatch):
    inputs, name, reason = BAD[bad]
    begun = registrations_begun(monkeypatch)
    with pytest.raises(ConfigError) as refused:
        pools_run(inputs, preview=RUNS[run])
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == []  # the mock run's own root stack aside
    message = str(refused.value)
    assert message.startswith(f"GpuPools pools: input {name}: {reason}"), message
    assert "\n" not in message


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("bad", ["clusterId", "a pool"])
def test_a_bad_input_to_gpu_pools_over_construct_is_refused_as_pulumi_refuses_a_bad_input_naming_it(bad, run):
    inputs, name, reason = BAD[bad]
    engine, answer = construct("GpuPools", inputs, preview=RUNS[run])
    path, said = refused_input(answer, engine.registered)
    assert path == name and said.startswith(reason)


def test_gpu_pools_without_its_cluster_is_refused_naming_clusterid():
    engine, answer = construct("GpuPools", {"gpuPools": {"t4": {"vmSize": "Standard_NC4as_T4_v3"}}})
    # The SDK's own check of a required input (pulumi 3.272.0 provider/experimental/component.py map_inputs).
    assert refused_input(answer, engine.registered) == ("clusterId", "Missing required input 'clusterId' on 'GpuPools'")


ADOPT = {"gpuPools": {"gpunp": {"existing": "adopt"}}}
GUIDE_CLUSTER = ROOT / "examples" / "guide-cluster" / "Pulumi.ml-prod.yaml"


def test_gpu_pools_adopts_the_owners_pool_as_the_program_does_and_says_so_in_its_adopted_output():
    merged = merged_config("ml-prod", overrides=ADOPT, stack_file=GUIDE_CLUSTER)
    constructed = construct_as_the_engine("ml-prod", True, merged, component=TYPE, given=pools_inputs(merged, "ml-prod"))
    program = run_cached("ml-prod", preview=True, stack_file=GUIDE_CLUSTER, **ADOPT)[0]
    component = [r for r in constructed.registrations if r.type == TYPE]
    assert graph([*component, *pools_of(constructed.registrations)], TYPE) == graph(pools_of(program.resources))
    [agent_pool] = [r for r in pools_of(constructed.registrations) if r.options.get("import")]
    assert agent_pool.options["import"].endswith("/managedClusters/ml-prod/agentPools/gpunp")
    assert "adopted" in constructed.answer.state.fields


def test_gpu_pools_adopts_a_pool_whose_gpu_stack_the_cluster_runs_where_the_program_would_stop_at_its_own_device_plugin():
    """The guide's cluster runs the guide's device plugin on gpunp: the program, which declares its
    own plugin for a pool it adopts, stops there (never two on one node); GpuPools declares none."""
    merged = merged_config("ml-prod", overrides=ADOPT, stack_file=GUIDE_CLUSTER)
    with pytest.raises(pulumi.RunError, match="never two device plugins on one node"):
        run_cached("ml-prod", preview=False, stack_file=GUIDE_CLUSTER, **ADOPT)
    constructed = construct_as_the_engine("ml-prod", False, merged, component=TYPE, given=pools_inputs(merged, "ml-prod"))
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    assert [r.name for r in constructed.registrations if r.type == POOL] == ["gpu-pool-gpunp"]


@pytest.mark.parametrize("run", RUNS)
def test_gpu_pools_second_up_holds_the_pool_its_first_created_under_its_engine_urn(run):
    """The day after under GpuPools (docs/design/package-day2.md): the first `up` a deployment, the
    second after the pool lost the stack's tag; the state holds it under GpuPools, so it is the stack's."""
    from test_package_day2 import EXPORTS, UNTAGGED, snapshot, with_gpu_pool

    config = merged_config("dev", overrides=on_existing())
    given = {"clusterId": existing_cluster()["id"], "gpuPool": {"vmSize": on_existing()["gpuPool"]["vmSize"]}}
    day1 = construct_as_the_engine("dev", False, config, OfflineReader(cluster=existing_cluster()), component=TYPE, given=given)
    root = "urn:pulumi:dev::aks-gpu::pulumi:pulumi:Stack::aks-gpu-dev"
    state = snapshot(day1.registrations, day1.component_outputs, root, EXPORTS)
    reader = OfflineReader(cluster=with_gpu_pool(UNTAGGED), stack=state)
    day2 = construct_as_the_engine("dev", RUNS[run], config, reader, component=TYPE, given=given)
    [line] = [w for w in day2.log.said(engine_pb2.WARNING) if "lacks aks-gpu-stack" in w]
    assert line.endswith("it is this stack's, and this `up` puts the tag back")
    [pool] = [r for r in day2.registrations if r.type == "azure-native:containerservice:AgentPool"]
    assert (
        pool.urn
        == f"urn:pulumi:dev::aks-gpu::{TYPE}$aks-gpu:azure:GpuPool$azure-native:containerservice:AgentPool::gpu-pool-gpu-agent-pool"
    )
    assert pool.urn in state and "import" not in pool.options
