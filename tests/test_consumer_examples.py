"""Another team's programs that consume the aks-gpu package (examples/consumer-*/). The Python one
runs under the mock engine unchanged, its generated SDK stood in for (tests/support/consumer_sdk.py);
the TypeScript and YAML ones cannot run here (no Pulumi CLI, no Node), so their inputs and outputs
are checked against the schema the package serves (tests/snapshots/package-schema.json)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from conftest import ROOT
from support import consumer_sdk
from support.package_host import EngineUrns
from support.registered_azure import RegisteredAzure
from test_package_day2 import plain, snapshot

from components.errors import ConfigError
from tools.azure_mocks import AzureMocks
from tools.mock_engine import ProgramRun, Registration, run_folder

EXAMPLES = ROOT / "examples"
PYTHON = EXAMPLES / "consumer-python"
CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL, JOB, DAEMON_SET = "azure-native:containerservice:AgentPool", "kubernetes:batch/v1:Job", "kubernetes:apps/v1:DaemonSet"
TYPES = {name: f"aks-gpu:index:{name}" for name in ("GpuPools", "GpuStack", "GpuProof")}
# The subscription the example's stack file names, the one the mocks' client is signed in to.
SUBSCRIPTION = "33333333-3333-3333-3333-333333333333"
PROJECT, STACK = "platform", "staging"
ROOT_URN = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
TEAMS_OWN = ["azure-native:resources:ResourceGroup", CLUSTER, "pulumi:providers:kubernetes"]


def consumer_run(
    preview: bool, folder: Path = PYTHON, earlier: ProgramRun | None = None, state: Mapping[str, Any] | None = None
) -> tuple[ProgramRun, EngineUrns]:
    """A run of the consumer's program, Azure holding what its deployments created: this run's
    registrations so far in a deployment, and those of the `earlier` deployment, whose `state` the
    stack holds (support/registered_azure.py)."""
    monitor: EngineUrns
    reader = RegisteredAzure(lambda: monitor.registrations, SUBSCRIPTION, earlier.resources if earlier else (), stack=state)
    monitor = EngineUrns(AzureMocks(reader=reader))
    return run_folder(folder, STACK, monitor, {consumer_sdk.PACKAGE: consumer_sdk.module(reader)}, preview=preview), monitor


@pytest.fixture(scope="module")
def first_up() -> tuple[ProgramRun, EngineUrns]:
    """The first `pulumi up --skip-preview`: a deployment, on nothing."""
    return consumer_run(preview=False)


def component(run: ProgramRun, name: str) -> Registration:
    [found] = run.of_type(TYPES[name])
    return found


def below(run: ProgramRun, urn: str) -> list[Registration]:
    """What was registered below `urn`, at any depth."""
    found, parents = [], {urn}
    for r in run.resources:  # a parent registers before its children
        if r.parent in parents:
            parents.add(r.urn)
            found.append(r)
    return found


def test_the_python_consumers_first_up_adds_its_t4_pool_the_device_plugin_on_it_and_the_proof_job(first_up):
    run, _ = first_up
    [pool] = [r for r in below(run, component(run, "GpuPools").urn) if r.type == POOL]
    assert (pool.inputs["resourceGroupName"], pool.inputs["resourceName"], pool.inputs["agentPoolName"]) == (
        "platform-rg",
        "platform-aks",
        "t4",
    )
    assert (pool.inputs["vmSize"], pool.inputs["minCount"], pool.inputs["maxCount"]) == ("Standard_NC4as_T4_v3", 0, 2)
    # GpuStack read the pool GpuPools created (it waited for it) and put the device plugin on it.
    [plugin] = [r for r in below(run, component(run, "GpuStack").urn) if r.type == DAEMON_SET and r.name == "nvidia-device-plugin-ds"]
    [term] = plugin.inputs["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert term["matchExpressions"] == [{"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": ["t4"]}]
    [job] = [r for r in below(run, component(run, "GpuProof").urn) if r.type == JOB]
    assert job.inputs["metadata"]["name"] == "mnist-proof-t4"
    assert job.inputs["spec"]["template"]["spec"]["nodeSelector"]["kubernetes.azure.com/agentpool"] == "t4"


def test_the_python_consumers_proof_signs_in_with_the_teams_own_kubernetes_provider(first_up):
    run, _ = first_up
    [teams] = [r for r in run.of_type("pulumi:providers:kubernetes") if r.parent == ROOT_URN]
    proof = below(run, component(run, "GpuProof").urn)
    assert {r.provider for r in proof if r.type.startswith("kubernetes:")} == {teams.urn}
    assert [r for r in proof if r.type == "pulumi:providers:kubernetes"] == []  # none of its own


def test_each_of_the_python_consumers_components_waits_for_the_one_before(first_up):
    """The stand-in's components are local, so the SDK sends what each declared in place of its URN
    (pulumi 3.272.0 runtime/rpc.py `_add_dependency` expands a local component into its children);
    a generated SDK's remote component sends its URN, answered once those children exist."""
    run, _ = first_up
    pools, stack, proof = (component(run, name) for name in TYPES)
    assert run.one(CLUSTER).urn in pools.dependencies
    assert run.one(POOL).urn in stack.dependencies
    assert run.one(DAEMON_SET, "nvidia-device-plugin-daemonset").urn in proof.dependencies


def test_the_python_consumer_exports_the_components_outputs(first_up):
    outputs = first_up[0].outputs
    assert outputs["cluster"].value == "platform-aks"
    assert set(outputs["gpuPools"].value) == {"t4"}
    assert outputs["proofLogs"].value == "kubectl logs --namespace gpu-workloads job/mnist-proof-t4"


def test_the_python_consumers_first_preview_stops_at_its_pools_in_one_line_as_the_readme_says():
    """A preview creates nothing: GpuPools cannot read the cluster (the example's README: the first
    `up` skips the preview)."""
    with pytest.raises(pulumi.RunError) as refused:
        consumer_run(preview=True)
    message = str(refused.value)
    assert message.startswith(
        "aks-gpu:existingCluster platform-rg/platform-aks: reading the cluster (getManagedCluster): Azure says it does not exist (ResourceNotFound)"
    ), message
    assert "\n" not in message


def test_the_python_consumers_second_preview_declares_what_its_first_up_created_again(first_up):
    run, monitor = first_up
    state = snapshot(run.resources, monitor.component_outputs, ROOT_URN, {k: plain(v.value) for k, v in run.outputs.items()})
    again, second = consumer_run(preview=True, earlier=run, state=state)
    assert run.one(POOL).urn in second.mocks.reader.held_state  # the components read what the stack holds
    assert [(r.urn, json.dumps(r.inputs, default=repr)) for r in again.resources] == [
        (r.urn, json.dumps(r.inputs, default=repr)) for r in run.resources
    ]


def test_a_bad_input_from_the_python_consumer_is_one_line_naming_it_with_only_the_teams_own_resources_registered(tmp_path):
    for name in ("__main__.py", "Pulumi.yaml"):
        shutil.copy(PYTHON / name, tmp_path / name)
    stack_file = (PYTHON / "Pulumi.staging.yaml").read_text().replace("Standard_NC4as_T4_v3", "NC6")
    (tmp_path / "Pulumi.staging.yaml").write_text(stack_file)
    monitor: EngineUrns
    reader = RegisteredAzure(lambda: monitor.registrations, SUBSCRIPTION)
    monitor = EngineUrns(AzureMocks(reader=reader))
    with pytest.raises(ConfigError) as refused:
        run_folder(tmp_path, STACK, monitor, {consumer_sdk.PACKAGE: consumer_sdk.module(reader)}, preview=False)
    message = str(refused.value)
    assert message.startswith("GpuPools gpu-pools: input gpuPools.t4.vmSize: invalid config "), message
    assert " = 'NC6': expected " in message and "\n" not in message
    # The team's resource group and cluster, and perhaps its provider: nothing of the components'.
    assert {r.type for r in monitor.registrations} - set(TEAMS_OWN) == set()
    assert {"azure-native:resources:ResourceGroup", CLUSTER} <= {r.type for r in monitor.registrations}


# --------------------------------------------------------------------------- the schema's names


def type_of(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """What a property's value is: an object type's properties, a map's (`*`), or None (a scalar)."""
    if "$ref" in spec:
        return consumer_sdk.SCHEMA["types"][spec["$ref"].removeprefix("#/types/")]["properties"]
    if "additionalProperties" in spec:
        return {"*": spec["additionalProperties"]}
    return None


def unknown_names(given: Mapping[str, Any], properties: Mapping[str, Any], path: str = "") -> list[str]:
    """The keys of `given` (nested) that the schema does not have."""
    wrong = []
    for key, value in given.items():
        spec = properties.get(key, properties.get("*"))
        if spec is None:
            wrong.append(f"{path}{key}")
        elif isinstance(value, Mapping) and (inner := type_of(spec)) is not None:
            wrong += unknown_names(value, inner, f"{path}{key}.")
    return wrong


# A TypeScript expression's tokens: a string, a word, or one character.
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\w+|\S')


def typescript_object(text: str) -> dict[str, Any]:
    """A TypeScript object literal's keys, nested: an object value as a dict, any other None."""
    found, _ = object_at(TOKEN.findall(text), 0)
    return found


def object_at(tokens: list[str], i: int) -> tuple[dict[str, Any], int]:
    """The object literal whose `{` is tokens[i], and the index after its `}`."""
    found: dict[str, Any] = {}
    i += 1
    while tokens[i] != "}":
        key, i = tokens[i].strip('"'), i + 1
        found[key] = None  # `{ resourceGroupName }`: a shorthand
        if tokens[i] == ":" and tokens[i + 1] == "{":
            found[key], i = object_at(tokens, i + 1)
        elif tokens[i] == ":":
            depth = 0
            while depth or tokens[i] not in (",", "}"):
                depth += (tokens[i] in "([") - (tokens[i] in ")]")
                i += 1
        i += tokens[i] == ","
    return found, i + 1


def resource(token: str) -> Mapping[str, Any]:
    return consumer_sdk.SCHEMA["resources"][token]


def misnamed(token: str, inputs: Mapping[str, Any], outputs: set[str]) -> list[str]:
    """What a program passes a component or reads from it that its schema does not have, and the
    required inputs it leaves out."""
    spec = resource(token)
    missing = [f"(missing) {name}" for name in spec.get("requiredInputs", []) if name not in inputs]
    return unknown_names(inputs, spec["inputProperties"]) + missing + sorted(f"(output) {o}" for o in outputs - set(spec["properties"]))


# `const <variable> = new aksGpu.<Component>("<name>", { <inputs> \n}`
TYPESCRIPT_COMPONENT = re.compile(r"const (\w+) = new aksGpu\.(\w+)\(\"[^\"]*\", (\{.*?\n\})", re.DOTALL)


def test_the_typescript_consumer_uses_the_inputs_and_outputs_the_schema_has():
    text = (EXAMPLES / "consumer-typescript" / "index.ts").read_text()
    found = {name: (variable, typescript_object(inputs)) for variable, name, inputs in TYPESCRIPT_COMPONENT.findall(text)}
    assert set(found) == set(TYPES)  # the same program as the Python one
    for name, (variable, inputs) in found.items():
        outputs = set(re.findall(rf"\b{variable}\.(\w+)", text))
        assert outputs, name
        assert misnamed(TYPES[name], inputs, outputs) == [], name
    assert re.search(r"new aksGpu\.GpuProof\([^;]*providers: \{ kubernetes \}", text, re.DOTALL)


def test_the_yaml_consumer_uses_the_inputs_and_outputs_the_schema_has():
    program = yaml.safe_load((EXAMPLES / "consumer-yaml" / "Pulumi.yaml").read_text())
    components = {key: r for key, r in program["resources"].items() if r["type"].startswith("aks-gpu:")}
    assert sorted(r["type"] for r in components.values()) == sorted(TYPES.values())
    for key, declared in components.items():
        outputs = {m for value in program["outputs"].values() for m in re.findall(rf"\$\{{{key}\.(\w+)\}}", value)}
        assert outputs, key
        assert misnamed(declared["type"], declared["properties"], outputs) == [], key
    [proof] = [r for r in components.values() if r["type"] == TYPES["GpuProof"]]
    assert proof["options"]["providers"] == ["${kubernetes}"]
    assert program["resources"]["kubernetes"]["type"] == "pulumi:providers:kubernetes"


def test_the_schema_check_finds_a_name_the_schema_does_not_have():
    inputs = typescript_object('{ clusterId: f("x"), gpuPools: { t4: { vmSize: "x,}", minNodes: 0 } } }')
    assert misnamed(TYPES["GpuPools"], inputs, {"gpuPools", "poolNames"}) == ["gpuPools.t4.minNodes", "(output) poolNames"]
    assert misnamed(TYPES["GpuStack"], {"clusterId": None}, set()) == ["(missing) gpuPoolNames"]
