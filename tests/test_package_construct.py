"""Construct of the package's GpuEnvironment over gRPC, as the engine drives it: the provider host
started as the CLI starts a plugin, a fake engine and resource monitor (tests/support/package_host.py).
What a consumer's `pulumi up` prints when the component refuses: one line, never a traceback; a bad
input as Pulumi names a bad input (pulumi/pulumi 1b594989 pkg/resource/deploy/source_eval.go
`errorToMessage`: "property <path> with value '<value>' has a problem: <reason>").

A valid Construct, as the engine drives it against the mock engine's monitor over gRPC, with the
package's provider served in this process and handed the mock engine's fake Azure as its reader
(tests/support/package_host.py construct_as_the_engine): it registers what the program registers
for the same settings, one parent more, and says what the program says."""

from __future__ import annotations

import grpc
import pulumi
import pytest
from conftest import ROOT, run_cached
from pulumi.runtime.proto import engine_pb2
from support.package_host import construct, construct_as_the_engine, graph, property_errors
from support.package_settings import package_config, package_overrides, watches, without_watches

from components.proof import proof_watch

# The tests' sample stacks (tests/fixtures/stacks/), and the examples' two: the guide's hand-made
# cluster with its pool used (examples/guide-cluster/) and a capacity group (examples/gpu-groups/).
SAMPLES = {
    "dev": None,
    "prod": None,
    "team": None,
    "ml-prod": ROOT / "examples" / "guide-cluster" / "Pulumi.ml-prod.yaml",
    "inference": ROOT / "examples" / "gpu-groups" / "Pulumi.inference.yaml",
}
RUNS = {"preview": True, "deployment": False}
# What the package's plan says where it awaits the proof without its watch (job_deadline.unwatched_line).
UNWATCHED = "proof: without its watch, a Pulumi dynamic resource this run cannot declare, "


def test_a_bad_input_to_construct_is_refused_as_pulumi_refuses_a_bad_input_naming_it():
    engine, answer = construct("GpuEnvironment", {"gpuPool": {"vmSize": "NC6"}})
    assert isinstance(answer, grpc.RpcError)
    assert answer.code() == grpc.StatusCode.INVALID_ARGUMENT
    [(path, reason)] = property_errors(answer)
    assert path == "gpuPool.vmSize"
    assert reason.startswith("invalid config aks-gpu:gpuPool.vmSize = 'NC6': expected an Azure VM size name") and "\n" not in reason
    assert not [line for line in engine.logs if line.startswith("registering resource")] and engine.registered == []


def test_a_refusal_while_the_plan_reads_azure_inside_construct_is_one_line():
    """The plan reads the existing cluster through the engine (an invoke), with the deployer's
    credentials; the fake monitor implements no invoke, so the read fails, in one line."""
    _, answer = construct("GpuEnvironment", {"existingCluster": {"resourceGroupName": "rg", "name": "aks"}})
    assert isinstance(answer, grpc.RpcError)
    assert answer.code() == grpc.StatusCode.INVALID_ARGUMENT
    message = answer.details()
    assert message.startswith("aks-gpu:existingCluster rg/aks: reading the cluster (getManagedCluster): ") and "\n" not in message
    assert property_errors(answer) == []


# A secret's envelope on the wire (pulumi/runtime/rpc.py _special_sig_key, _special_secret_sig).
SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}


def test_a_secret_input_is_refused_naming_it_since_every_input_must_be_a_plain_value():
    """The engine hands a secret (or an input with dependencies) to the component as an Output,
    which cannot decide what is declared before anything is."""
    _, answer = construct("GpuEnvironment", {"clusterName": {**SECRET, "value": "gpu-aks"}})
    assert isinstance(answer, grpc.RpcError)
    [(path, reason)] = property_errors(answer)
    assert path == "clusterName"
    assert reason.startswith("clusterName is an output (known only once another resource exists, or a secret)") and "\n" not in reason


@pytest.mark.parametrize(("stack", "run"), [(s, r) for s in SAMPLES for r in RUNS], ids=[f"{s}-{r}" for s in SAMPLES for r in RUNS])
def test_construct_over_grpc_registers_the_programs_children_for_each_sample_stack(stack, run):
    """Same types, names, parents (one more at the top), providers, dependencies, inputs and
    options as the program's, its ProofWatch children and their provider hosts aside (the package
    awaits each proof Job without one), and the program's warnings and info lines, in the engine's
    log, with one more info line that says what the proof gives up without its watch."""
    preview, stack_file = RUNS[run], SAMPLES[stack]
    # Each sample as the package takes it: no deployer's grant, whose wait it refuses (test_package_dynamic.py).
    constructed = construct_as_the_engine(stack, preview, package_config(stack, stack_file))
    try:
        program = run_cached(stack, preview=preview, stack_file=stack_file, **package_overrides(stack, stack_file))[0]
    except pulumi.RunError as refused:  # dev's deployment: preflight stops it (its GPU size is retired)
        assert isinstance(constructed.answer, grpc.RpcError)
        assert constructed.answer.details() == str(refused)
        assert constructed.registrations == []  # the program registers nothing, and so does the component
        return
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    assert graph(constructed.registrations) == graph(without_watches(program.resources))
    assert constructed.log.said(engine_pb2.WARNING) == program.warnings
    infos = constructed.log.said(engine_pb2.INFO)
    unwatched = [line for line in infos if line.startswith(UNWATCHED)]
    assert [line for line in infos if line not in unwatched] == program.infos
    assert len(unwatched) == (1 if any(r.type == proof_watch.TYPE for r in watches(program.resources)) else 0)


def test_construct_answers_with_the_environment_and_its_outputs_under_the_engines_urns():
    constructed = construct_as_the_engine("prod", preview=False, config=package_config("prod"))
    program = run_cached("prod", preview=False, **package_overrides("prod"))[0]
    answer = constructed.answer
    assert answer.urn == "urn:pulumi:prod::aks-gpu::aks-gpu:index:GpuEnvironment::env"
    assert set(answer.state.fields) == set(program.outputs) - {"jobResultCommand"}  # the watch's, which the package has not
    # The proof Job is the component's grandchild: the engine's URN names the whole chain.
    job = "urn:pulumi:prod::aks-gpu::aks-gpu:index:GpuEnvironment$aks-gpu:kubernetes:MnistJob$kubernetes:batch/v1:Job::mnist-job"
    assert answer.state.fields["mnistJobUrn"].string_value == job
