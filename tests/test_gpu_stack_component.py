"""The package's GpuStack: the GPU stack on an AKS cluster's own GPU pools, the cluster named by its
resource ID and the pools by name. Constructed as the engine constructs it (over gRPC,
tests/support/package_host.py), it registers the GPU stack the program registers on the same
cluster for the same pools used as they are (existing: use), with the same inputs, and no pool;
a bad input is one line naming it, in a preview and a deployment alike."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc
import pulumi
import pulumi_kubernetes as k8s
import pytest
from conftest import ROOT, run_cached
from support.existing_pools import GPUNP, cluster
from support.package_host import construct, construct_as_the_engine, graph, inputs_of, property_errors, refused_input, with_children
from support.package_settings import run_as_a_consumer
from support.registrations import registrations_begun
from test_gpu_proof import (
    CONSUMERS_KUBECONFIG,
    CONSUMERS_OPTIONS,
    KUBERNETES_PROVIDER,
    kubernetes_objects,
)
from test_package_construct import SECRET

from components.cluster.cluster_facts import cluster_id
from components.environment.gpu_stack import TYPE, GpuStack
from components.environment.kinds import GPU_STACK
from components.errors import ConfigError
from components.seam.reader import AzureReader
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import ProgramRun, RecordingMonitor, Registration, Secret, merged_config

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
    stack_file = ROOT / "examples" / "guide-cluster" / "Pulumi.ml-prod.yaml"
    merged = merged_config("ml-prod", stack_file=stack_file)
    constructed = construct_as_the_engine("ml-prod", True, merged, component=TYPE, given=stack_inputs(merged, "ml-prod"))
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    assert [r.type for r in constructed.registrations] == [TYPE, "aks-gpu:azure:ExistingCluster"]
    said = [line for _, line in constructed.log.lines]
    assert any("serves its GPUs already: this stack adds no device plugin there" in line for line in said)


def stack_run(inputs: Mapping[str, Any], preview: bool = True, opts: Callable[[], pulumi.ResourceOptions] | None = None) -> ProgramRun:
    """GpuStack declared by a program under the mock engine, in-process, as a Python consumer declares
    it; `opts`: a function of nothing that returns the component's options (a consumer's provider)."""

    def build(reader: AzureReader) -> GpuStack:
        return GpuStack("gpu-stack", inputs, opts() if opts else None, reader=reader)  # type: ignore[arg-type]

    monitor = RecordingMonitor(AzureMocks(cluster=cluster(GPUNP)))
    return run_as_a_consumer(build, "team", merged_config("team"), monitor, preview)


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


# --------------------------------------------------------------------------- signing in, as GpuProof does

# The team stack's gpunp, used as it is, by GpuStack's inputs: the program's device plugin and DCGM exporter there.
TEAM_INPUTS = stack_inputs(merged_config("team", overrides=USED), "team")
# What GpuStack declares there of Kubernetes' (docs/design/package-parts.md): the device plugin's
# namespace, DaemonSet and network policy, the DCGM exporter's objects.


@functools.cache
def default_objects() -> int:
    """How many Kubernetes objects GpuStack declares there signed in its own way."""
    return len(kubernetes_objects(stack_run(TEAM_INPUTS).resources))


def consumers_provider(how: str) -> Callable[[], pulumi.ResourceOptions]:
    return lambda: CONSUMERS_OPTIONS[how](k8s.Provider("consumers-k8s", kubeconfig=CONSUMERS_KUBECONFIG))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("how", CONSUMERS_OPTIONS)
def test_gpu_stack_signs_every_kubernetes_object_in_with_a_consumers_provider_and_declares_none_of_its_own(how, run):
    """As a `providers` map, a `providers` list, or `provider`: the consumer's, and not said to be unused."""
    built = stack_run(TEAM_INPUTS, RUNS[run], opts=consumers_provider(how))
    [consumers] = built.of_type(KUBERNETES_PROVIDER)
    assert consumers.name == "consumers-k8s"
    objects = kubernetes_objects(built.resources)
    assert default_objects() > 0 and len(objects) == default_objects() and {r.provider for r in objects} == {consumers.urn}
    assert built.of_type("kubernetes:apps/v1:DaemonSet") and not [w for w in built.warnings if "providers" in w]


@pytest.mark.parametrize("run", RUNS)
def test_gpu_stack_signs_its_clusters_provider_in_with_a_consumers_kubeconfig_and_keeps_it_secret(run):
    for kubeconfig in (CONSUMERS_KUBECONFIG, pulumi.Output.secret(CONSUMERS_KUBECONFIG)):
        built = stack_run({**TEAM_INPUTS, "kubeconfig": kubeconfig}, RUNS[run])
        [provider] = built.of_type(KUBERNETES_PROVIDER)
        assert provider.name == "existing-cluster-k8s"
        sent = provider.inputs["kubeconfig"]
        assert isinstance(sent, Secret) and sent.value == CONSUMERS_KUBECONFIG
        objects = kubernetes_objects(built.resources)
        assert len(objects) == default_objects() and {r.provider for r in objects} == {provider.urn}


@pytest.mark.parametrize("run", RUNS)
def test_a_kubeconfig_beside_a_consumers_provider_is_refused_by_gpu_stack_in_one_line_naming_kubeconfig(run, monkeypatch):
    begun = registrations_begun(monkeypatch)
    with pytest.raises(ConfigError) as refused:
        stack_run({**TEAM_INPUTS, "kubeconfig": CONSUMERS_KUBECONFIG}, RUNS[run], opts=consumers_provider("providers list"))
    message = str(refused.value)
    assert message.startswith("GpuStack gpu-stack: input kubeconfig: a kubeconfig is given, and a Kubernetes provider is passed")
    assert "\n" not in message
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == [KUBERNETES_PROVIDER]  # the consumer's alone


def construct_team(preview: bool, given: Mapping[str, Any], providers: Mapping[str, str] | None = None) -> Any:
    """GpuStack of the team stack's gpunp, constructed as the engine constructs it."""
    merged = merged_config("team", overrides=USED)
    reader = OfflineReader(cluster=cluster(GPUNP))
    return construct_as_the_engine("team", preview, merged, component=TYPE, given=given, reader=reader, providers=providers)


CONSUMERS_PROVIDER = "urn:pulumi:team::aks-gpu::pulumi:providers:kubernetes::consumers-k8s"


@pytest.mark.parametrize("run", RUNS)
def test_gpu_stack_constructed_with_a_consumers_provider_signs_every_kubernetes_object_in_with_it(run):
    """The engine hands the consumer's providers option to Construct by package, "<urn>::<id>"
    (pulumi/pulumi 1b594989 source_eval.go providerRefs); the host rebuilds the provider by its URN."""
    constructed = construct_team(RUNS[run], TEAM_INPUTS, providers={"kubernetes": f"{CONSUMERS_PROVIDER}::0f4a6b1e"})
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    assert [r for r in constructed.registrations if r.type == KUBERNETES_PROVIDER] == []
    objects = kubernetes_objects(constructed.registrations)
    assert len(objects) == default_objects() and {r.provider for r in objects} == {CONSUMERS_PROVIDER}


@pytest.mark.parametrize("run", RUNS)
def test_gpu_stack_constructed_with_a_secret_kubeconfig_signs_its_clusters_provider_in_with_it(run):
    """A secret reaches the component as an Output (pulumi 3.272.0 provider/server.py `_select_value`),
    which every other input refuses (test_package_construct.py)."""
    constructed = construct_team(RUNS[run], {**TEAM_INPUTS, "kubeconfig": {**SECRET, "value": CONSUMERS_KUBECONFIG}})
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    [provider] = [r for r in constructed.registrations if r.type == KUBERNETES_PROVIDER]
    sent = provider.inputs["kubeconfig"]
    assert isinstance(sent, Secret) and sent.value == CONSUMERS_KUBECONFIG
    assert {r.provider for r in kubernetes_objects(constructed.registrations)} == {provider.urn}


@pytest.mark.parametrize("run", RUNS)
def test_gpu_stack_constructed_with_a_kubeconfig_and_a_consumers_provider_is_refused_as_pulumi_names_a_bad_input(run):
    given = {**TEAM_INPUTS, "kubeconfig": CONSUMERS_KUBECONFIG}
    constructed = construct_team(RUNS[run], given, providers={"kubernetes": f"{CONSUMERS_PROVIDER}::0f4a6b1e"})
    answer = constructed.answer
    assert isinstance(answer, grpc.RpcError) and answer.code() == grpc.StatusCode.INVALID_ARGUMENT
    [(path, reason)] = property_errors(answer)
    assert path == "kubeconfig" and reason.startswith("a kubeconfig is given, and a Kubernetes provider is passed") and "\n" not in reason
    assert constructed.registrations == []


def test_gpu_stacks_schema_takes_a_kubeconfig_as_its_one_input_that_is_no_plain_value():
    """As the host answers GetSchema (the snapshot tests/test_package_schema.py holds to it)."""
    schema = json.loads((ROOT / "tests" / "snapshots" / "package-schema.json").read_text())
    inputs = schema["resources"][TYPE]["inputProperties"]
    assert sorted(inputs) == sorted([*GPU_STACK.own, *(GPU_STACK.keys or ())])
    assert [name for name, spec in inputs.items() if spec.get("plain") is not True] == ["kubeconfig"]
    assert inputs["kubeconfig"]["type"] == "string" and "GPU stack's Kubernetes objects" in inputs["kubeconfig"]["description"]
