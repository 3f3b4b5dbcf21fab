"""The package's GpuStack: the GPU stack on an AKS cluster's own GPU pools, the cluster named by its
resource ID and the pools by name. Constructed as the engine constructs it (over gRPC,
tests/support/package_host.py), it registers the GPU stack the program registers on the same
cluster for the same pools used as they are (existing: use), with the same inputs, and no pool;
a bad input is one line naming it, in a preview and a deployment alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import grpc
import pytest
from conftest import run_cached
from support.existing_pools import GPUNP, cluster
from support.package_host import construct, construct_as_the_engine, graph, inputs_of, refused_input, with_children
from support.package_settings import run_as_a_consumer
from support.registrations import registrations_begun

from components.cluster.cluster_facts import cluster_id
from components.environment.gpu_stack import TYPE, GpuStack
from components.environment.kinds import GPU_STACK
from components.errors import ConfigError
from components.seam.reader import AzureReader
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, Registration, merged_config

RUNS = {"preview": True, "deployment": False}
# The GPU stack's components, and the Kubernetes provider they declare through.
STACK_TYPES = (
    "aks-gpu:kubernetes:NvidiaDevicePlugin",
    "aks-gpu:kubernetes:DcgmExporter",
    "aks-gpu:kubernetes:GpuOperator",
    "aks-gpu:kubernetes:CapacityExpander",
    "pulumi:providers:kubernetes",
)
# The team stack on a cluster with the guide's pool gpunp, used as it is: the program puts its
# device plugin and DCGM exporter there (the cluster runs none).
USED = {"gpuPools": {"gpunp": {"existing": "use"}}}
SETTINGS = {
    "the defaults": {},
    "its own namespace, no metrics": {"devicePlugin": {"namespace": "nvidia"}, "monitoring": {"gpuMetrics": False}},
}
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
TEAM_AKS = cluster_id(SUBSCRIPTION, "team-rg", "team-aks")


def stack_inputs(merged: Mapping[str, str], stack: str) -> dict[str, Any]:
    """A stack's GPU stack settings as GpuStack's inputs: its existingCluster as the cluster's resource
    ID in the subscription Azure answers for, and its used pools by name."""
    given = inputs_of(merged)
    reader = OfflineReader()
    reader.offline(merged, stack)
    found = given["existingCluster"]
    named = cluster_id(reader.subscription, found["resourceGroupName"], found["name"])
    names = [name for name, pool in given["gpuPools"].items() if pool == {"existing": "use"}]
    return {"clusterId": named, "gpuPoolNames": names, **{key: given[key] for key in GPU_STACK.keys or () if key in given}}


def stack_of(registrations: Sequence[Registration]) -> list[Registration]:
    """The GPU stack's components and what each registers under it, and the Kubernetes provider."""
    return with_children(registrations, STACK_TYPES)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("settings", SETTINGS)
def test_gpu_stack_constructed_over_grpc_registers_the_programs_gpu_stack_with_the_same_inputs_and_no_pool(settings, run):
    preview, overrides = RUNS[run], {**USED, **SETTINGS[settings]}
    merged = merged_config("team", overrides=overrides)
    answer = cluster(GPUNP)
    constructed = construct_as_the_engine(
        "team", preview, merged, component=TYPE, given=stack_inputs(merged, "team"), reader=OfflineReader(cluster=answer)
    )
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    program = run_cached("team", preview=preview, cluster=answer, **overrides)[0]
    component = [r for r in constructed.registrations if r.type == TYPE]  # the URN its children's are named under
    ours = graph([*component, *stack_of(constructed.registrations)], TYPE)
    assert ours == graph(stack_of(program.resources)) and any("NvidiaDevicePlugin" in line for line in ours)
    assert [r.type for r in constructed.registrations if "AgentPool" in r.type or r.type.endswith(("GpuPool", "MnistJob"))] == []


def test_gpu_stack_answers_construct_with_its_outputs_the_programs_that_apply():
    merged = merged_config("team", overrides=USED)
    answer = cluster(GPUNP)
    constructed = construct_as_the_engine(
        "team", False, merged, component=TYPE, given=stack_inputs(merged, "team"), reader=OfflineReader(cluster=answer)
    )
    program = run_cached("team", preview=False, cluster=answer, **USED)[0]
    outputs = set(constructed.answer.state.fields)
    assert outputs == {"resourceGroupName", "clusterName", "gpuPools", "gpuMetrics", "devicePluginNamespace"}
    assert outputs <= set(program.outputs)
    assert constructed.answer.state.fields["devicePluginNamespace"].string_value == "gpu-resources"


def test_gpu_stack_leaves_a_pool_to_the_device_plugin_that_serves_it_and_declares_no_kubernetes_provider_for_nothing():
    """The guide's cluster (examples/guide-cluster/): its own device plugin serves gpunp already."""
    from conftest import ROOT

    stack_file = ROOT / "examples" / "guide-cluster" / "Pulumi.ml-prod.yaml"
    merged = merged_config("ml-prod", stack_file=stack_file)
    constructed = construct_as_the_engine("ml-prod", True, merged, component=TYPE, given=stack_inputs(merged, "ml-prod"))
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    assert [r.type for r in constructed.registrations] == [TYPE, "aks-gpu:azure:ExistingCluster"]
    said = [line for _, line in constructed.log.lines]
    assert any("serves its GPUs already: this stack adds no device plugin there" in line for line in said)


def stack_run(inputs: Mapping[str, Any], preview: bool = True) -> list[Registration]:
    """GpuStack declared by a program under the mock engine, in-process, as a Python consumer declares it."""

    def build(reader: AzureReader) -> GpuStack:
        return GpuStack("gpu-stack", inputs, reader=reader)  # type: ignore[arg-type]

    monitor = RecordingMonitor(AzureMocks(cluster=cluster(GPUNP)))
    return run_as_a_consumer(build, "team", merged_config("team"), monitor, preview).resources


BAD = {
    "clusterId": (
        {"clusterId": "/subscriptions/x", "gpuPoolNames": ["gpunp"]},
        "clusterId",
        "invalid config clusterId = '/subscriptions/x': expected an AKS cluster's resource ID, ",
    ),
    "no pool": (
        {"clusterId": TEAM_AKS, "gpuPoolNames": []},
        "gpuPoolNames",
        "invalid config gpuPoolNames = []: expected a list of 1 or more",
    ),
    "a pool twice": (
        {"clusterId": TEAM_AKS, "gpuPoolNames": ["gpunp", "gpunp"]},
        "gpuPoolNames",
        'invalid config gpuPoolNames = ["gpunp", "gpunp"]: \'gpunp\' is listed twice',
    ),
    "a pool's name": ({"clusterId": TEAM_AKS, "gpuPoolNames": ["GPU_1"]}, "gpuPoolNames", "invalid config aks-gpu:gpuPools"),
    "a setting": (
        {"clusterId": TEAM_AKS, "gpuPoolNames": ["gpunp"], "devicePlugin": {"namespace": "kube-system"}},
        "devicePlugin.namespace",
        "invalid config aks-gpu:devicePlugin.namespace = 'kube-system'",
    ),
}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("bad", BAD)
def test_a_bad_input_to_gpu_stack_is_one_line_naming_it_before_anything_is_registered(bad, run, monkeypatch):
    inputs, name, reason = BAD[bad]
    begun = registrations_begun(monkeypatch)
    with pytest.raises(ConfigError) as refused:
        stack_run(inputs, preview=RUNS[run])
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == []  # the mock run's own root stack aside
    message = str(refused.value)
    assert message.startswith(f"GpuStack gpu-stack: input {name}: {reason}"), message
    assert "\n" not in message


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("bad", ["clusterId", "a pool twice", "a setting"])
def test_a_bad_input_to_gpu_stack_over_construct_is_refused_as_pulumi_refuses_a_bad_input_naming_it(bad, run):
    inputs, name, reason = BAD[bad]
    engine, answer = construct("GpuStack", inputs, preview=RUNS[run])
    path, said = refused_input(answer, engine.registered)
    assert path == name and said.startswith(reason)
