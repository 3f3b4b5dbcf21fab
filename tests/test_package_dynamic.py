"""The program's three dynamic resources (the AKS-managed pool, the deployer's grant's wait, the
proof's watch) under the package (docs/design/package-dynamic.md).

Their providers are pickled by module path (`components.proof.proof_watch.ProofWatchProvider`),
and the engine runs them in `python -u -m pulumi.dynamic` started in the consumer's project
directory with the consumer's Python: there `components` is not importable. So the package's
GpuEnvironment refuses, in one line naming the input and before anything is registered, each
setting that would declare one; and it refuses nothing the program declares without one."""

from __future__ import annotations

import os
import shutil
from typing import Any

import grpc
import pulumi
import pytest
from conftest import ROOT, run_cached
from google.protobuf import struct_pb2
from support.package_host import construct_as_the_engine, inputs_of
from support.package_settings import package_overrides
from support.provider_host import HostError, start_host
from test_gpu_environment import environment_run
from test_package_construct import property_errors

from components.errors import ConfigError
from tools.mock_engine import merged_config

DYNAMIC = "pulumi-python:dynamic/aksgpu:"
T4 = "Standard_NC4as_T4_v3"
MANAGED_POOL = {"gpuPool": {"name": "gpu", "vmSize": T4, "management": "aks-managed"}}
NO_WAIT = {"mnistJob": {"waitForCompletion": False}}
NO_PROOF = {"mnistJob": {"enabled": False}}


def dynamic_types(stack: str, **overrides: Any) -> set[str]:
    """The dynamic resources the program declares for `stack` with `overrides`, in a preview."""
    return {r.type for r in run_cached(stack, **overrides)[0].resources if r.type.startswith(DYNAMIC)}


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


# --------------------------------------------------------------------------- the refusals


@pytest.mark.parametrize(
    ("stack", "overrides", "key", "value"),
    [
        ("dev", {}, "mnistJob.waitForCompletion", "true"),
        ("prod", NO_WAIT, "access.deployerType", "ServicePrincipal"),
        ("dev", {**NO_WAIT, **MANAGED_POOL}, "gpuPool.management", "aks-managed"),
        ("dev", {**NO_PROOF, "gpuPool": {"name": "gpu", "vmSize": T4, "dedicatedVhd": True}}, "gpuPool.dedicatedVhd", "true"),
    ],
    ids=["the-proofs-watch", "the-deployers-grant-wait", "an-aks-managed-pool", "a-dedicated-vhd-pool"],
)
def test_a_setting_that_declares_a_dynamic_resource_is_refused_in_one_line_naming_the_input_before_anything_is_registered(
    stack, overrides, key, value, monkeypatch
):
    begun: list[str] = []
    register = pulumi.Resource.__init__
    monkeypatch.setattr(pulumi.Resource, "__init__", lambda self, t, name, *a, **k: (begun.append(t), register(self, t, name, *a, **k))[1])
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
        ("dev", {**NO_WAIT, **MANAGED_POOL}),
        ("prod", {}),
        ("prod", NO_WAIT),
        ("prod", package_overrides("prod")),
        ("team", {}),
        ("team", package_overrides("team")),
    ],
    ids=lambda v: v if isinstance(v, str) else "+".join(f"{k}{v[k]}" for k in sorted(v)).replace(" ", "") or "as-is",
)
def test_the_package_refuses_exactly_the_settings_for_which_the_program_declares_a_dynamic_resource(stack, overrides):
    assert (refused(stack, **overrides) is not None) == bool(dynamic_types(stack, **overrides))


def test_over_construct_the_refusal_is_pulumis_bad_property_error_naming_the_input():
    """A consumer's `pulumi preview` of the dev stack's settings, the proof awaited (the default)."""
    constructed = construct_as_the_engine("dev", preview=True)
    answer = constructed.answer
    assert isinstance(answer, grpc.RpcError) and answer.code() == grpc.StatusCode.INVALID_ARGUMENT
    [(path, reason)] = property_errors(answer)
    assert path == "mnistJob.waitForCompletion"
    assert reason.startswith("mnistJob.waitForCompletion = true: the proof's watch is a Pulumi dynamic resource") and "\n" not in reason
    assert constructed.registrations == []
