"""The program's three dynamic resources (the AKS-managed pool, the deployer's grant's wait, the
proof's watch) under the package (docs/design/package-dynamic.md).

Their providers are pickled by module path (`components.proof.proof_watch.ProofWatchProvider`),
and the engine runs them in `python -u -m pulumi.dynamic` started in the consumer's project
directory with the consumer's Python: there `components` is not importable. So the package's
GpuEnvironment declares none: it plans the proof without its watch, its Jobs awaited by
pulumi-kubernetes alone, and says so in one line; and it refuses, in one line naming the input
and before anything is registered, each setting that would declare one of the other two."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest
from conftest import ROOT, run_cached
from google.protobuf import struct_pb2
from support.package_host import construct_as_the_engine, graph, inputs_of, refused_input
from support.package_settings import package_overrides, without_watches
from support.provider_host import HostError, start_host
from support.registrations import registrations_begun
from test_gpu_environment import STACKS, environment_run

from components.errors import ConfigError
from components.proof import proof_watch
from components.proof.mnist_job import SKIP_AWAIT_ANNOTATION
from tools.mock_engine import merged_config

DYNAMIC = "pulumi-python:dynamic/aksgpu:"
T4 = "Standard_NC4as_T4_v3"
MANAGED_POOL = {"gpuPool": {"name": "gpu", "vmSize": T4, "management": "aks-managed"}}
NO_WAIT = {"mnistJob": {"waitForCompletion": False}}
NO_PROOF = {"mnistJob": {"enabled": False}}


def dynamic_types(stack: str, **overrides: Any) -> set[str]:
    """The dynamic resources the program declares for `stack` with `overrides`, in a preview."""
    return {r.type for r in run_cached(stack, **overrides)[0].resources if r.type.startswith(DYNAMIC)}


def unwatched_lines(infos: list[str]) -> list[str]:
    """The line the package's plan says of a proof awaited without its watch (job_deadline.unwatched_line)."""
    return [line for line in infos if line.startswith("proof: without its watch, a Pulumi dynamic resource this run cannot declare, ")]


def refused(stack: str, **overrides: Any) -> str | None:
    """GpuEnvironment's refusal of `stack`'s settings with `overrides`, or None where it declares them."""
    try:
        environment_run(stack, inputs_of(merged_config(stack, overrides=overrides)))
    except ConfigError as error:
        return str(error)
    return None


# --------------------------------------------------------------------------- why: the consumer's host


def pickled_providers() -> dict[str, struct_pb2.Struct]:
    """Each dynamic resource's inputs on the wire, `__provider` and all, as the program (and the
    package, which imports the same modules from the same root) registers them."""
    runs = [run_cached("dev")[0], run_cached("prod")[0], run_cached("dev", **MANAGED_POOL)[0]]
    return {r.type: r.wire for run in runs for r in run.resources if r.type.startswith(DYNAMIC)}


@pytest.mark.parametrize("its_own_components", [False, True], ids=["a-consumers-folder", "one-with-its-own-components-package"])
def test_the_dynamic_host_a_consumers_program_starts_cannot_load_the_components_providers(tmp_path, its_own_components):
    """Why the package refuses them: the host as the engine starts it for a consumer (its project
    directory, its Python; this one has every package aks-gpu needs, a consumer's has fewer)
    fails each provider's first call. Where this ever loads, the refusals can go."""
    consumer = tmp_path / "consumer"
    shutil.copytree(ROOT / "examples" / "consumer-python", consumer)
    if its_own_components:  # a common folder name in a team's program
        (consumer / "components").mkdir()
        (consumer / "components" / "__init__.py").write_text("")
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    pickles = pickled_providers()
    assert set(pickles) == {f"{DYNAMIC}ManagedGpuPool", f"{DYNAMIC}ProofWatch", f"{DYNAMIC}AccessWait"}
    for host in start_host({**environment, "PULUMI_PROJECT": "platform"}, cwd=consumer):
        for kind, news in pickles.items():
            with pytest.raises(HostError) as failed:
                host.check(news)
            assert "ModuleNotFoundError: No module named 'components" in str(failed.value), kind


# --------------------------------------------------------------------------- the proof, awaited without its watch


@pytest.mark.parametrize("stack", STACKS)  # the tests' own copies, each with its proof awaited
def test_under_the_package_pulumi_kubernetes_awaits_each_proof_job_with_no_watch_and_the_run_says_so(stack):
    """The default (mnistJob.waitForCompletion true) is not refused: each Job is the program's, with
    no skipAwait annotation and the program's customTimeouts, so pulumi-kubernetes awaits it until
    it completes or fails (pulumi-kubernetes@94977969 provider/pkg/await/await.go `Creation`,
    awaiters.go `jobAwaiter`); no watch nor host of one is registered; one info line says what that
    gives up, with each Job's deadline."""
    program = run_cached(stack, **package_overrides(stack))[0]
    run, _ = environment_run(stack)
    jobs = {r.name: r for r in run.resources if r.type == "kubernetes:batch/v1:Job"}
    programs = {r.name: r for r in program.resources if r.type == "kubernetes:batch/v1:Job"}
    assert jobs and set(jobs) == set(programs)
    for name, job in jobs.items():
        assert SKIP_AWAIT_ANNOTATION not in job.inputs["metadata"]["annotations"]
        assert (job.inputs, job.options["customTimeouts"]) == (programs[name].inputs, programs[name].options["customTimeouts"])
    assert {r.type for r in program.resources if r.type.startswith(("pulumi-python:", "pulumi:providers:pulumi-python"))}
    assert [r.type for r in run.resources if r.type.startswith(("pulumi-python:", "pulumi:providers:pulumi-python"))] == []
    [line] = unwatched_lines(run.infos)
    deadlines = [f"{job.inputs['metadata']['name']}: {job.inputs['spec']['activeDeadlineSeconds']} s" for job in jobs.values()]
    assert all(deadline in line for deadline in deadlines), line
    assert "servedBy, resultCommand and jobResultCommand" in line and "\n" not in line
    assert unwatched_lines(program.infos) == []  # the program keeps its watch


def test_under_the_package_a_proof_not_awaited_is_declared_as_the_program_declares_it_and_nothing_is_said():
    program = run_cached("dev", **NO_WAIT)[0]
    run, _ = environment_run("dev", inputs_of(merged_config("dev", overrides=NO_WAIT)))
    assert graph(run.resources) == graph(without_watches(program.resources)) == graph(program.resources)
    assert unwatched_lines(run.infos) == []


# --------------------------------------------------------------------------- the refusals


@pytest.mark.parametrize(
    ("stack", "overrides", "key", "value"),
    [
        ("prod", {}, "access.deployerType", "ServicePrincipal"),
        ("dev", MANAGED_POOL, "gpuPool.management", "aks-managed"),
        ("dev", {**NO_PROOF, "gpuPool": {"name": "gpu", "vmSize": T4, "dedicatedVhd": True}}, "gpuPool.dedicatedVhd", "true"),
    ],
    ids=["the-deployers-grant-wait", "an-aks-managed-pool", "a-dedicated-vhd-pool"],
)
def test_a_setting_that_declares_a_dynamic_resource_other_than_the_watch_is_refused_in_one_line_naming_the_input_before_anything_is_registered(
    stack, overrides, key, value, monkeypatch
):
    begun = registrations_begun(monkeypatch)
    message = refused(stack, **overrides)
    assert message is not None and message.startswith(f"GpuEnvironment env: input {key}: {key} = {value}: "), message
    assert "dynamic resource" in message and "allowed under the package: " in message and "\n" not in message
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == []  # the mock run's own root stack aside


@pytest.mark.parametrize(
    ("stack", "overrides"),
    [
        ("dev", {}),
        ("dev", NO_WAIT),
        ("dev", NO_PROOF),
        ("dev", MANAGED_POOL),
        ("dev", {**NO_WAIT, **MANAGED_POOL}),
        ("prod", {}),
        ("prod", NO_WAIT),
        ("prod", package_overrides("prod")),
        ("team", {}),
    ],
    ids=lambda v: v if isinstance(v, str) else "+".join(f"{k}{v[k]}" for k in sorted(v)).replace(" ", "") or "as-is",
)
def test_the_package_refuses_exactly_the_settings_for_which_the_program_declares_a_dynamic_resource_other_than_the_watch(stack, overrides):
    assert (refused(stack, **overrides) is not None) == bool(dynamic_types(stack, **overrides) - {proof_watch.TYPE})


def test_over_construct_the_refusal_is_pulumis_bad_property_error_naming_the_input():
    """A consumer's `pulumi preview` of the prod stack's settings, which grant the deployer cluster-admin."""
    constructed = construct_as_the_engine("prod", preview=True)
    path, reason = refused_input(constructed.answer, constructed.registrations)
    assert path == "access.deployerType"
    assert reason.startswith(
        "access.deployerType = ServicePrincipal: the wait until the deployer's cluster-admin grant takes is a Pulumi dynamic resource"
    )
