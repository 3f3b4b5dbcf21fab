"""The package's GpuEnvironment, built under the mock engine as another team's program would build
it: the stack file's settings as its inputs, no `aks-gpu:` key in the stack's config. It declares
what the program declares for the same settings (one code path: components/environment/declare.py),
and a bad input is one line naming the input, before anything is registered. Its schema, as the
provider host serves it: tests/test_package_schema.py."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cached
from support.package_host import graph, inputs_of
from support.package_settings import package_config, package_overrides, run_as_a_consumer, watches, without_watches
from support.registrations import registrations_begun

from components.config.messages import snake
from components.environment.gpu_environment import TYPE, GpuEnvironment
from components.errors import ConfigError
from components.seam.reader import AzureReader
from tools.azure_mocks import AzureMocks
from tools.mock_engine import ProgramRun, RecordingMonitor, merged_config

STACKS = ["dev", "prod", "team"]  # the tests' own copies (tests/fixtures/stacks/)


def environment_run(
    stack: str, inputs: Mapping[str, Any] | None = None, monitor: RecordingMonitor | None = None
) -> tuple[ProgramRun, list[GpuEnvironment]]:
    """A preview of a program that declares one GpuEnvironment with `stack`'s settings as the package
    takes them (support/package_settings.py), or `inputs`, its stack config holding no `aks-gpu:`
    key; Azure answers as it does for the program's run of `stack`."""
    built: list[GpuEnvironment] = []
    given = inputs_of(package_config(stack)) if inputs is None else dict(inputs)

    def build(reader: AzureReader) -> None:
        built.append(GpuEnvironment("env", given, reader=reader))  # type: ignore[arg-type]

    return run_as_a_consumer(build, stack, merged_config(stack), monitor or RecordingMonitor(AzureMocks())), built


@pytest.mark.parametrize("stack", STACKS)
def test_a_gpu_environment_declares_what_the_program_declares_for_the_same_settings_but_the_proofs_watches(stack):
    """The program's graph without its ProofWatch children and their provider hosts: the package
    awaits each proof Job with pulumi-kubernetes alone (test_package_dynamic.py)."""
    program = run_cached(stack, **package_overrides(stack))[0]
    run, _ = environment_run(stack)
    [environment] = [r for r in run.resources if r.type == TYPE]
    # The program's components (the cluster, the pools, ...) are the GpuEnvironment's children.
    assert {r.parent for r in run.resources if r.type.startswith("aks-gpu:") and r.type != TYPE} == {environment.urn}
    assert watches(program.resources)  # every sample awaits its proof
    assert graph(run.resources) == graph(without_watches(program.resources))


@pytest.mark.parametrize("stack", STACKS)
def test_a_gpu_environments_outputs_are_the_programs_stack_outputs_but_the_watchs_result_command(stack):
    program = run_cached(stack, **package_overrides(stack))[0]
    _, [environment] = environment_run(stack)
    set_there = {key for key in program.outputs if getattr(environment, snake(key), None) is not None}
    assert set_there == set(program.outputs) - {"jobResultCommand"}


def test_a_gpu_environment_says_the_programs_warnings():
    program = run_cached("dev", **package_overrides("dev"))[0]
    run, _ = environment_run("dev")
    assert run.warnings == program.warnings and program.warnings


@pytest.mark.parametrize(
    ("inputs", "key", "value"),
    [
        ({"gpuPool": {"vmSize": "NC6"}}, "gpuPool.vmSize", "'NC6'"),
        ({"gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "nodeCount": -1}}, "gpuPool.nodeCount", "-1"),
        ({"clusterTier": "Gold"}, "clusterTier", "'Gold'"),
        ({"location": "East US"}, "location", "'East US'"),
    ],
)
def test_a_bad_input_is_refused_in_one_line_naming_the_input_before_anything_is_registered(inputs, key, value, monkeypatch):
    begun = registrations_begun(monkeypatch)
    with pytest.raises(ConfigError) as refused:
        environment_run("dev", inputs)
    message = str(refused.value)
    assert message.startswith(f"GpuEnvironment env: input {key}: invalid config "), message
    assert f" = {value}: expected " in message and "\n" not in message
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == []  # the mock run's own root stack aside


def test_no_module_of_the_package_reads_the_stack_config():
    """A component reads its inputs, never `pulumi.Config` or the stack's flat config."""
    package = [*(ROOT / "components" / "environment").glob("*.py"), ROOT / "package" / "__main__.py"]
    reading = [
        str(p.relative_to(ROOT))
        for p in package
        if any(word in Path(p).read_text() for word in ("pulumi.Config", "current_raw_config", "config.load(", "get_config("))
    ]
    assert reading == []
