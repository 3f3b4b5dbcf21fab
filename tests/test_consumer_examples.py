"""Another team's programs that consume the aks-gpu package (examples/consumer-*/). The Python one
runs under the mock engine unchanged, its generated SDK stood in for (tests/support/consumer_sdk.py);
the TypeScript and YAML ones cannot run here (no Pulumi CLI, no Node), so their inputs and outputs
are checked against the schema the package serves (tests/snapshots/package-schema.json)."""

from __future__ import annotations

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
from support.registrations import registrations_begun

from components.environment.gpu_environment import TYPE
from components.errors import ConfigError
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import ProgramRun, RecordingMonitor, Registration, run_folder

EXAMPLES = ROOT / "examples"
PYTHON = EXAMPLES / "consumer-python"
CLUSTER = "azure-native:containerservice:ManagedCluster"
RESOURCE = consumer_sdk.SCHEMA["resources"][TYPE]


def consumer_run(folder: Path = PYTHON, reader: OfflineReader | None = None) -> ProgramRun:
    """A preview of the consumer's program, Azure answering for the cluster it declares as it
    will once that cluster exists (GpuEnvironment reads it while it is constructed)."""
    reader = reader or OfflineReader(cluster=existing_cluster("platform-aks", "platform-rg", "westeurope"))
    monitor = RecordingMonitor(AzureMocks(reader=reader))
    return run_folder(folder, "staging", monitor, {consumer_sdk.PACKAGE: consumer_sdk.module(reader)})


def below(run: ProgramRun, urn: str) -> list[Registration]:
    """What was registered below `urn`, at any depth."""
    found, parents = [], {urn}
    for r in run.resources:  # a parent registers before its children
        if r.parent in parents:
            parents.add(r.urn)
            found.append(r)
    return found


def test_the_python_consumer_declares_its_own_cluster_and_the_components_pools_and_proof_under_the_component():
    run = consumer_run()
    cluster = run.one(CLUSTER)
    [environment] = run.of_type(TYPE)
    assert cluster.parent == environment.parent  # both the consumer's, at the top of its stack
    assert cluster.inputs["resourceName"] == "platform-aks"
    children = below(run, environment.urn)
    # The component's pools, GPU stack and proof are all under it: nothing of aks-gpu's is the consumer's.
    assert {r.urn for r in run.resources if r.type.startswith(("aks-gpu:", "kubernetes:"))} - {environment.urn} <= {r.urn for r in children}
    [pool] = [r for r in children if r.type == "azure-native:containerservice:AgentPool"]
    # Awaited, by pulumi-kubernetes alone: the watch, whose provider could not load in this program, is left out (test_package_dynamic.py).
    [job] = [r for r in children if r.type == "kubernetes:batch/v1:Job"]
    assert job.inputs["metadata"]["name"] == "mnist-proof-t4" and "pulumi.com/skipAwait" not in job.inputs["metadata"]["annotations"]
    assert [r.type for r in run.resources if r.type.startswith(("pulumi-python:", "pulumi:providers:pulumi-python"))] == []
    assert (pool.inputs["resourceName"], pool.inputs["vmSize"]) == ("platform-aks", "Standard_NC4as_T4_v3")


def test_the_python_consumers_component_waits_for_its_cluster_and_reads_the_cluster_it_declares():
    run = consumer_run()
    cluster = run.one(CLUSTER)
    [environment] = run.of_type(TYPE)
    assert cluster.urn in environment.dependencies
    # What the reader answered for is the cluster the program declares, so the existing cluster's checks saw it.
    described = existing_cluster("platform-aks", "platform-rg", "westeurope")["networkProfile"]
    assert {k: cluster.inputs["networkProfile"][k] for k in described} == described


def test_the_python_consumer_exports_the_components_outputs():
    outputs = consumer_run().outputs
    assert outputs["cluster"].value == "platform-aks"
    assert set(outputs["gpuPools"].value) == {"t4"}
    assert outputs["getCredentials"].value == "az aks get-credentials --resource-group platform-rg --name platform-aks"


def test_a_bad_input_from_the_python_consumer_is_one_line_naming_it_before_the_component_registers_anything(tmp_path, monkeypatch):
    for name in ("__main__.py", "Pulumi.yaml"):
        shutil.copy(PYTHON / name, tmp_path / name)
    (tmp_path / "Pulumi.staging.yaml").write_text("config:\n  azure-native:location: westeurope\n  platform:gpuVmSize: NC6\n")
    begun = registrations_begun(monkeypatch)
    with pytest.raises(ConfigError) as refused:
        consumer_run(tmp_path)
    message = str(refused.value)
    assert message.startswith("GpuEnvironment gpu: input gpuPools.t4.vmSize: invalid config "), message
    assert " = 'NC6': expected " in message and "\n" not in message
    # The consumer's own resources only (its run's root stack aside): nothing of the component's.
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == ["azure-native:resources:ResourceGroup", CLUSTER]


def test_before_the_consumers_cluster_exists_the_component_stops_in_one_line_naming_it():
    """A first preview: the cluster is not created, so GpuEnvironment cannot read it (the
    example's README: the first `up` skips the preview)."""
    absent = "ResourceNotFound: The Resource 'Microsoft.ContainerService/managedClusters/platform-aks' was not found"
    with pytest.raises(pulumi.RunError) as refused:
        consumer_run(reader=OfflineReader(refuse={"cluster": absent}))
    assert str(refused.value).startswith(
        "aks-gpu:existingCluster platform-rg/platform-aks: reading the cluster (getManagedCluster): Azure says it does not exist"
    )


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


def test_the_typescript_consumer_uses_the_inputs_and_outputs_the_schema_has():
    text = (EXAMPLES / "consumer-typescript" / "index.ts").read_text()
    call = re.search(r"new aksGpu\.GpuEnvironment\(\"gpu\", (\{.*?\n\})", text, re.DOTALL)
    assert call is not None
    inputs = typescript_object(call.group(1))
    assert set(inputs) == {"existingCluster", "gpuPools"}
    assert unknown_names(inputs, RESOURCE["inputProperties"]) == []
    assert set(re.findall(r"\bgpu\.(\w+)", text)) - set(RESOURCE["properties"]) == set()


def test_the_yaml_consumer_uses_the_inputs_and_outputs_the_schema_has():
    program = yaml.safe_load((EXAMPLES / "consumer-yaml" / "Pulumi.yaml").read_text())
    gpu = program["resources"]["gpu"]
    assert gpu["type"] == TYPE
    assert unknown_names(gpu["properties"], RESOURCE["inputProperties"]) == []
    used = {m for value in program["outputs"].values() for m in re.findall(r"\$\{gpu\.(\w+)\}", value)}
    assert used and used - set(RESOURCE["properties"]) == set()


def test_the_schema_check_finds_a_name_the_schema_does_not_have():
    inputs = typescript_object('{ existingCluster: { resourceGroupName, name: f("x") }, gpuPools: { t4: { vmSize: "x,}", minNodes: 0 } } }')
    assert unknown_names(inputs, RESOURCE["inputProperties"]) == ["gpuPools.t4.minNodes"]
