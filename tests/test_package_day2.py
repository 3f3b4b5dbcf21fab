"""The day after, under the package's component: another team's program declares GpuEnvironment
on its own cluster, and its second `up` reads the state its first left. The component's children
carry one more parent in their URNs (`aks-gpu:index:GpuEnvironment$aks-gpu:azure:GpuPool$...`,
as the engine names them: tests/support/package_host.py EngineUrns), and what it adopted is the
component's own output, not the consumer's stack's (docs/design/package-day2.md). Each in a
preview and a deployment; the state a run reads is the one the earlier run left: each resource's
outputs, each component's as its `register_outputs` sent them, and the consumer's own root outputs."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pytest
from pulumi.runtime.proto import engine_pb2
from support.adoption import saved_cluster, saved_list
from support.existing_cluster import T4, on_existing
from support.guide_example import STACK_FILE
from support.package_host import EngineUrns, construct_as_the_engine, inputs_of

from components.environment.gpu_environment import TYPE, GpuEnvironment
from components.errors import PreflightError
from components.ownership import stack_state
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import ProgramRun, Registration, Secret, merged_config, run_under_mocks

PROJECT, STACK = "platform", "dev"  # the consumer's project, not this one's
ROOT = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
POOL = "azure-native:containerservice:AgentPool"
NAMESPACE, DAEMON_SET = "kubernetes:core/v1:Namespace", "kubernetes:apps/v1:DaemonSet"
BOTH = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
OWNER = f"{PROJECT}/{STACK}"
UNTAGGED = {"cost-center": "ml"}  # what `az aks nodepool update --tags cost-center=ml` leaves
MARKS = ("aks-gpu-stack", "aks-gpu-adopted")
# The consumer's own export (examples/consumer-python/): none of the program's outputs.
EXPORTS = {"cluster": "team-aks"}


def consumer_run(
    inputs: Mapping[str, Any],
    reader: OfflineReader,
    preview: bool,
    exports: Mapping[str, Any] = EXPORTS,
    monitor: EngineUrns | None = None,
) -> tuple[ProgramRun, EngineUrns]:
    """A run of the consumer's program: one GpuEnvironment named gpu with `inputs`, the stack's
    config holding no `aks-gpu:` key, and `exports` as its own outputs."""
    monitor = monitor or EngineUrns(AzureMocks(reader=reader))

    def program() -> None:
        GpuEnvironment("gpu", dict(inputs), reader=reader)  # type: ignore[arg-type]
        for key, value in exports.items():
            pulumi.export(key, value)

    config = {"azure-native:location": "westeurope"}
    return run_under_mocks(program, stack=STACK, config=config, monitor=monitor, preview=preview, project=PROJECT), monitor


def plain(value: Any) -> Any:
    """A value as readStackResourceOutputs answers it to the program: secrets as their values."""
    if isinstance(value, Secret):
        return plain(value.value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def state_left_by(run: ProgramRun, monitor: EngineUrns, refreshed: bool = False) -> dict[str, dict[str, Any]]:
    """What readStackResourceOutputs answers after `run` (a deployment): every resource of the
    snapshot by URN, its type and outputs (pulumi/pulumi 1b594989 pkg/backend/backend.go
    GetStackResourceOutputs): a custom resource's outputs (the mocks echo its inputs), a
    component's as its register_outputs sent them, the root Stack's the consumer's exports.
    `refreshed`: after the owner took the stack's marks off and a `pulumi refresh` read each custom
    resource back; components keep their outputs (step.go RefreshStep.Apply)."""
    exports = {k: plain(v.value) for k, v in run.outputs.items()}
    return snapshot(run.resources, monitor.component_outputs, ROOT, exports, refreshed)


def snapshot(
    registrations: Sequence[Registration], components: Mapping[str, Any], root: str, exports: Mapping[str, Any], refreshed: bool = False
) -> dict[str, dict[str, Any]]:
    """`state_left_by` of what was registered, each component's outputs, and the root Stack's."""
    state = {}
    for r in registrations:
        outputs = copy.deepcopy(plain(r.inputs if r.custom else components.get(r.urn, {})))
        if refreshed and r.custom:
            unmark(outputs)
        state[r.urn] = {"type": r.type, "outputs": outputs}
    state[root] = {"type": "pulumi:pulumi:Stack", "outputs": dict(exports)}
    return state


def unmark(outputs: dict[str, Any]) -> None:
    metadata = outputs.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        metadata["annotations"] = {k: v for k, v in metadata["annotations"].items() if k not in MARKS}
    if isinstance(outputs.get("tags"), dict):
        outputs["tags"] = {k: v for k, v in outputs["tags"].items() if k not in MARKS}


def with_gpu_pool(tags: dict[str, str]) -> dict[str, Any]:
    """The team's cluster once the first `up` added pool gpu, with `tags` on it."""
    gpu = {"name": "gpu", "vmSize": T4, "count": 1, "mode": "User", "osType": "Linux", "tags": tags}
    return existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], gpu])


TEAM_INPUTS = inputs_of(merged_config(STACK, overrides=on_existing()))


@pytest.fixture(scope="module")
def first_up() -> dict[str, dict[str, Any]]:
    """The state the consumer's first `up` on the team's cluster left: GpuEnvironment added pool gpu."""
    run, monitor = consumer_run(TEAM_INPUTS, OfflineReader(cluster=existing_cluster()), preview=False)
    return state_left_by(run, monitor)


@BOTH
def test_a_consumers_second_up_with_nothing_changed_declares_the_same_pool_again(first_up, preview):
    # The state it reads, as the engine names it: one parent more than the program's URN.
    assert f"urn:pulumi:{STACK}::{PROJECT}::{TYPE}$aks-gpu:azure:GpuPool${POOL}::gpu-pool-gpu-agent-pool" in first_up
    assert first_up[ROOT]["outputs"] == EXPORTS, "the consumer's own outputs, none of the program's"
    run, _ = consumer_run(TEAM_INPUTS, OfflineReader(cluster=with_gpu_pool({"aks-gpu-stack": OWNER}), stack=first_up), preview)
    [pool] = run.of_type(POOL)
    assert pool.urn in first_up and "import" not in pool.options


@BOTH
def test_a_consumers_second_up_holds_the_pools_its_gpu_environment_created(first_up, preview):
    """The pool lost the stack's tag (`az aks nodepool update --tags` sets the whole set): the
    state holds it under the GpuEnvironment, so it is the stack's, and the `up` puts the tag back."""
    run, _ = consumer_run(TEAM_INPUTS, OfflineReader(cluster=with_gpu_pool(UNTAGGED), stack=first_up), preview)
    [line] = [w for w in run.warnings if "lacks aks-gpu-stack" in w]
    assert line.startswith(f"aks-gpu:gpuPool: the pool 'gpu' lacks aks-gpu-stack = {OWNER} (it has no aks-gpu-stack tag)")
    assert line.endswith("it is this stack's, and this `up` puts the tag back")
    [pool] = run.of_type(POOL)
    assert pool.urn in line and pool.urn in first_up and pool.inputs["tags"]["aks-gpu-stack"] == OWNER


@BOTH
def test_a_consumers_stack_that_exports_nothing_is_not_read_and_its_second_up_says_so(first_up, preview):
    """A stack with no outputs is not asked for its snapshot (a diy stack that never deployed would
    crash the CLI), so the run checks as a first `up` does; where the cluster carries the stack's
    mark, the stack has deployed, and the run says what it cannot see and how to let it."""
    silent = {**first_up, ROOT: {"type": "pulumi:pulumi:Stack", "outputs": {}}}
    reader = OfflineReader(cluster=with_gpu_pool({"aks-gpu-stack": OWNER}), stack=silent, stack_outputs={})
    run, _ = consumer_run(TEAM_INPUTS, reader, preview, exports={})
    [line] = [w for w in run.warnings if "it has no outputs" in w]
    assert line.startswith(
        f"GpuEnvironment gpu: the cluster's pool gpu carries this stack's mark ({OWNER}), so the stack has deployed here"
    )
    assert line.endswith(
        "export one of GpuEnvironment gpu's outputs from the program (`pulumi.export`), and the runs after the next `up` read it"
    )
    assert "\n" not in line
    first, _ = consumer_run(TEAM_INPUTS, OfflineReader(cluster=existing_cluster(), stack=silent, stack_outputs={}), preview, exports={})
    assert not [w for w in first.warnings if "it has no outputs" in w], "a first `up` is one: the cluster has no pool of the stack's"


@BOTH
def test_over_construct_the_second_up_holds_the_pool_the_first_created_under_its_engine_urn(preview):
    """The same, driven as the engine drives the package: Construct over gRPC, the component named
    env in the consumer's stack of this project; the first `up` a deployment, the second after
    the pool lost the stack's tag."""
    config = merged_config(STACK, overrides=on_existing())
    day1 = construct_as_the_engine(STACK, False, config, OfflineReader(cluster=existing_cluster()))
    root = f"urn:pulumi:{STACK}::aks-gpu::pulumi:pulumi:Stack::aks-gpu-{STACK}"
    state = snapshot(day1.registrations, day1.component_outputs, root, EXPORTS)
    day2 = construct_as_the_engine(STACK, preview, config, OfflineReader(cluster=with_gpu_pool(UNTAGGED), stack=state))
    [line] = [w for w in day2.log.said(engine_pb2.WARNING) if "lacks aks-gpu-stack" in w]
    assert line.endswith("it is this stack's, and this `up` puts the tag back")
    [pool] = [r for r in day2.registrations if r.type == POOL]
    assert pool.urn == f"urn:pulumi:{STACK}::aks-gpu::{TYPE}$aks-gpu:azure:GpuPool${POOL}::gpu-pool-gpu-agent-pool"
    assert pool.urn in state and pool.urn in line


# --------------------------------------------------------------------------- what it adopted


ADOPTING = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
GUIDE_INPUTS = {k: v for k, v in inputs_of(merged_config("ml-prod", stack_file=STACK_FILE)).items() if k != "preflight"}


def guide_reader(stack: dict[str, dict[str, Any]] | None = None) -> OfflineReader:
    """The guide's cluster as `az aks show` and `kubectl get` saved it (no mark of any stack)."""
    return OfflineReader(cluster=saved_cluster(), kubernetes=saved_list(), stack=stack)


@pytest.fixture(scope="module")
def adopting_up() -> tuple[ProgramRun, EngineUrns]:
    """The consumer's `up` whose GpuEnvironment adopted the guide's pool gpunp and its device plugin."""
    return consumer_run({**GUIDE_INPUTS, **ADOPTING}, guide_reader(), preview=False)


@BOTH
def test_what_a_gpu_environment_adopted_is_read_from_its_own_outputs_after_a_refresh(adopting_up, preview):
    """The owner stripped the stack's marks and refreshed: only the component's record says the
    device plugin is the stack's adoption, and dropping devicePlugin.adopt is refused before
    anything is registered, where the stack's own outputs (the consumer's) record nothing."""
    state = state_left_by(*adopting_up, refreshed=True)
    [record] = [e["outputs"]["adopted"] for e in state.values() if e["type"] == TYPE]
    assert record["stack"] == OWNER and record["namespaces"] == {"gpu-resources": "release"}
    assert "adopted" not in state[ROOT]["outputs"], "the consumer's stack exports only what it chose to"
    inputs = {**GUIDE_INPUTS, **ADOPTING, "devicePlugin": {"adopt": False}}
    monitor = EngineUrns(AzureMocks(reader=guide_reader(state)))
    with pytest.raises(PreflightError) as refused:
        consumer_run(inputs, guide_reader(state), preview, monitor=monitor)
    said = str(refused.value)
    assert said.startswith("preflight: aks-gpu:devicePlugin.adopt is not true, but the namespace gpu-resources and its DaemonSet")
    assert "which this stack adopted (GpuEnvironment gpu's output adopted records it, though its marks are gone)" in said
    assert monitor.registrations == []


# --------------------------------------------------------------------------- the names the state is read by

GPU_ENVIRONMENT = stack_state.Declarer(TYPE, "gpu")


def read_state(state: Mapping[str, Any], cluster: tuple[str, str] | None = ("team-rg", "team-aks")) -> stack_state.StackState:
    """What GpuEnvironment gpu's run in the consumer's stack reads of `state`."""
    return stack_state.read(OfflineReader(stack=state), cluster, project=PROJECT, stack=STACK, by=GPU_ENVIRONMENT)


def moved(state: Mapping[str, Any], old: str, new: str) -> dict[str, Any]:
    """The state with every URN's `old` qualified-type part written `new`."""
    return {u.replace(f"::{old}", f"::{new}"): copy.deepcopy(e) for u, e in state.items()}


def test_a_gpu_environments_children_are_held_where_its_own_entry_is_and_another_package_components_are_the_stacks_too(first_up):
    """Under a consumer's own component the GpuEnvironment's children still are its own; under another
    of the package's components (GpuPools, say) a pool is the stack's (no stray), but not this run's."""
    assert read_state(first_up).pools() == {"gpu"}
    nested = moved(first_up, TYPE, f"platform:index:Team${TYPE}")
    assert read_state(nested).pools() == {"gpu"} and read_state(nested).under == f"platform:index:Team${TYPE}"
    pools = "aks-gpu:index:GpuPools"
    sibling = {**first_up, **{u.replace(f"::{TYPE}$", f"::{pools}$"): e for u, e in first_up.items() if e["type"] == POOL}}
    sibling = {u: e for u, e in sibling.items() if not (u.startswith(f"urn:pulumi:{STACK}::{PROJECT}::{TYPE}$") and e["type"] == POOL)}
    state = read_state(sibling)
    assert state.known and state.pools() == frozenset() and state.strays == ()


def test_a_pool_at_the_programs_own_urn_in_a_consumers_stack_is_a_stray_the_gpu_environment_names():
    """Not one of the package's components' children: registered by hand, and the run stops at it."""
    environment = f"urn:pulumi:{STACK}::{PROJECT}::{TYPE}::gpu"
    by_hand = f"urn:pulumi:{STACK}::{PROJECT}::aks-gpu:azure:GpuPool${POOL}::gpu-pool-gpu-agent-pool"
    state = read_state({environment: {"type": TYPE, "outputs": {}}, by_hand: {"type": POOL, "outputs": {}}})
    assert state.strays == (by_hand,)
    said = stack_state.stray_refusal(state, PROJECT, STACK) or ""
    mine = f"urn:pulumi:{STACK}::{PROJECT}::{TYPE}$aks-gpu:azure:GpuPool${POOL}::gpu-pool-gpu-agent-pool"
    assert f"which GpuEnvironment gpu does not register (it declares it as '{mine}')" in said


def test_the_programs_own_run_still_takes_a_pool_under_a_package_component_for_a_stray(first_up):
    """The program's stack holds nothing of a component: the program's rules are as they were."""
    program = {u.replace(f"::{PROJECT}::", "::aks-gpu::"): e for u, e in first_up.items()}
    state = stack_state.read(OfflineReader(stack=program), ("team-rg", "team-aks"), project="aks-gpu", stack=STACK)
    strays = sorted(stack_state.type_and_name(u)[1] for u in state.strays)
    assert state.pools() == frozenset() and strays == ["gpu-pool-gpu-agent-pool", "nvidia-device-plugin-ds", "nvidia-device-plugin-ns"]


def test_a_gpu_environment_not_yet_in_the_state_is_its_first_up_whatever_else_the_stack_holds(first_up):
    without = {u: e for u, e in first_up.items() if e["type"] != TYPE}
    state = read_state(without)
    assert state.undeployed and not state.known
    assert state.why == "the stack's state holds no GpuEnvironment gpu yet: its first `up`"


def test_what_a_gpu_environment_holds_is_read_in_the_cluster_its_own_outputs_name_not_the_consumers(first_up):
    """Its own outputs say where it deployed; the consumer's outputs, whatever they are named, are not its record."""
    assert read_state(first_up, ("team-rg", "team-aks")).pools() == {"gpu"}
    assert read_state(first_up, ("other-rg", "other-aks")).pools() == frozenset()
    theirs = {**first_up, ROOT: {"type": "pulumi:pulumi:Stack", "outputs": {"adopted": "the platform team's own", "clusterName": "x"}}}
    state = read_state(theirs)
    assert state.pools() == {"gpu"} and state.adopted.empty()


@BOTH
def test_a_pool_another_of_the_package_components_holds_is_refused_where_the_gpu_environment_declares_it_too(first_up, preview):
    """The pool gpu in the state under GpuPools, and GpuEnvironment declaring gpu as well: two
    entries for one Azure pool, and an `up` that drops either deletes it. Refused before anything
    is registered, though the pool still carries the stack's tag."""
    pools = "aks-gpu:index:GpuPools"
    moved_pool = {u.replace(f"::{TYPE}$", f"::{pools}$") if e["type"] == POOL else u: e for u, e in first_up.items()}
    monitor = EngineUrns(AzureMocks(reader=OfflineReader(cluster=with_gpu_pool({"aks-gpu-stack": OWNER}), stack=moved_pool)))
    with pytest.raises(PreflightError) as refused:
        consumer_run(TEAM_INPUTS, monitor.mocks.reader, preview, monitor=monitor)
    said = str(refused.value)
    theirs = f"urn:pulumi:{STACK}::{PROJECT}::{pools}$aks-gpu:azure:GpuPool${POOL}::gpu-pool-gpu-agent-pool"
    assert said.startswith(f"preflight: the stack's state holds the GPU pool gpu as '{theirs}', under another of the package's components")
    assert "and GpuEnvironment gpu declares it too" in said and "\n" not in said
    assert monitor.registrations == []
