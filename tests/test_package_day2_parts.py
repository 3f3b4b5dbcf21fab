"""The day after, under each of the package's smaller components, and under the three side by side
in one consumer's stack: the consumer's second `up`, with nothing changed, reads the state its first
left (every URN as the engine names it: tests/support/package_host.py EngineUrns) and the cluster as
that `up` left it, and declares the same resources again, under the same URNs, importing nothing
and refusing nothing: GpuPools' pool is held (not taken for one the owner made by hand), GpuStack's
device plugin and its namespace are held (not taken for another device plugin beside the stack's),
GpuProof's Job namespace is held, and each component's children are the stack's in the others'
runs (siblings, never strays). Each in a preview and a deployment (docs/design/package-stack-sign-in.md)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pytest
from support.existing_cluster import T4
from support.kubernetes_objects import guide_daemon_set, listed, namespace
from support.package_host import EngineUrns
from test_package_day2 import EXPORTS, PROJECT, STACK, plain, snapshot, unmark

from components.environment.gpu_pools import GpuPools
from components.environment.gpu_proof import GpuProof
from components.environment.gpu_stack import GpuStack
from components.ownership import stack_state
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import ProgramRun, Registration, run_under_mocks

BOTH = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
# The cluster as the first `up` left it, or after its owner took the stack's marks off the objects
# (and a refresh read them into the state): then only the state says they are the stack's.
MARKS = pytest.mark.parametrize("marks", ["as left", "marks taken off"])
ROOT = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
AGENT_POOL = "azure-native:containerservice:AgentPool"
NAMESPACE, DAEMON_SET = "kubernetes:core/v1:Namespace", "kubernetes:apps/v1:DaemonSet"
# What `kubectl get namespaces,daemonsets -A -o json` lists of what the stack put in the cluster.
LISTED = (NAMESPACE, DAEMON_SET)
# The team's cluster by resource ID, and the GPU pool the consumer's GpuPools adds there.
CLUSTER_ID = existing_cluster()["id"]
POOL = "gpu"
POOLS_INPUTS = {"clusterId": CLUSTER_ID, "gpuPools": {POOL: {"vmSize": T4, "minCount": 0, "maxCount": 2}}}
STACK_INPUTS = {"clusterId": CLUSTER_ID, "gpuPoolNames": [POOL]}
PROOF_INPUTS = {"clusterId": CLUSTER_ID, "gpuPoolNames": [POOL]}


@dataclass(frozen=True)
class Declared:
    """One component a consumer's program declares: its class, name and inputs (how Azure and the
    cluster answer it while it is constructed is the `Cluster` each run pairs it with)."""

    component: Callable[..., pulumi.ComponentResource]
    name: str
    inputs: Mapping[str, Any]


@dataclass(frozen=True)
class Cluster:
    """The team's cluster as Azure describes it and as `kubectl get` lists it, and the stack's state."""

    description: Mapping[str, Any]
    kubernetes: Mapping[str, Any]
    state: Mapping[str, Mapping[str, Any]] | None = None

    def reader(self) -> OfflineReader:
        return OfflineReader(
            cluster=copy.deepcopy(dict(self.description)), kubernetes=copy.deepcopy(dict(self.kubernetes)), stack=self.state
        )


def consumer_run(declared: Sequence[tuple[Declared, Cluster]], preview: bool) -> tuple[ProgramRun, EngineUrns]:
    """A run of the consumer's program (project platform), each component constructed as `Cluster`
    answers it, one after another (each depends on the one before: what it reads is there once
    the one before was created), the stack's config holding no `aks-gpu:` key, EXPORTS its outputs."""
    monitor = EngineUrns(AzureMocks(reader=declared[0][1].reader()))

    def program() -> None:
        before: list[pulumi.Resource] = []
        for component, cluster in declared:
            opts = pulumi.ResourceOptions(depends_on=list(before))
            before.append(component.component(component.name, dict(component.inputs), opts, reader=cluster.reader()))
        for key, value in EXPORTS.items():
            pulumi.export(key, value)

    config = {"azure-native:location": "westeurope"}
    return run_under_mocks(program, stack=STACK, config=config, monitor=monitor, preview=preview, project=PROJECT), monitor


def state_left_by(run: ProgramRun, monitor: EngineUrns, refreshed: bool = False) -> dict[str, dict[str, Any]]:
    """What readStackResourceOutputs answers after `run` (tests/test_package_day2.py `snapshot`);
    `refreshed`: after the owner took the stack's marks off and a `pulumi refresh` read them back."""
    exports = {k: plain(v.value) for k, v in run.outputs.items()}
    return snapshot(run.resources, monitor.component_outputs, ROOT, exports, refreshed)


def with_pools_created(registrations: Sequence[Registration], description: Mapping[str, Any], unmarked: bool = False) -> dict[str, Any]:
    """The cluster's description once the GPU pools registered were created: each AgentPool's inputs
    as one more of its agentPoolProfiles (azure-native's flattened properties, under the pool's name);
    `unmarked`: after `az aks nodepool update --tags` took the stack's tags off."""
    profiles = [*description["agentPoolProfiles"]]
    for r in registrations:
        if r.type == AGENT_POOL:
            given = plain(r.inputs)
            profile = {k: v for k, v in given.items() if k not in ("agentPoolName", "resourceName", "resourceGroupName")}
            if unmarked:
                unmark(profile)
            profiles.append({**profile, "name": given["agentPoolName"]})
    return {**description, "agentPoolProfiles": profiles}


def as_listed(registrations: Sequence[Registration], *more: Mapping[str, Any], unmarked: bool = False) -> dict[str, Any]:
    """`kubectl get` of the cluster once the namespaces and DaemonSets registered were created
    (pulumi-kubernetes sends each object whole: its apiVersion, kind, metadata and spec), with `more`;
    `unmarked`: after `kubectl annotate ... aks-gpu-stack- aks-gpu-adopted-` took the stack's marks off."""
    items = [plain(r.inputs) for r in registrations if r.type in LISTED]
    for item in items if unmarked else ():
        unmark(item)
    return listed(*more, *items)


def urns(run: ProgramRun) -> list[str]:
    return sorted(r.urn for r in run.resources)


def imported(run: ProgramRun) -> list[str]:
    return [r.urn for r in run.resources if r.options.get("import")]


def urn_of(component: str, *types: str, name: str) -> str:
    """The engine's URN of a resource `types` down under the package's `component` at the consumer's stack's top."""
    return f"urn:pulumi:{STACK}::{PROJECT}::{'$'.join([f'aks-gpu:index:{component}', *types])}::{name}"


def same_again(first: ProgramRun, second: ProgramRun) -> None:
    """The second `up` declares what the first did, under the same URNs, imports nothing, and says
    no more than the first did: nothing refused (a preview warns where a deployment stops)."""
    assert urns(second) == urns(first)
    assert imported(second) == []
    assert second.warnings == first.warnings


# --------------------------------------------------------------------------- GpuPools alone

POOLS_ALONE = Declared(GpuPools, "pools", POOLS_INPUTS)
BEFORE = existing_cluster()  # the team's cluster with its system pool alone


@pytest.fixture(scope="module")
def pools_first_up() -> tuple[ProgramRun, EngineUrns]:
    return consumer_run([(POOLS_ALONE, Cluster(BEFORE, listed()))], preview=False)


@BOTH
@MARKS
def test_a_consumers_second_up_of_gpu_pools_holds_its_pool_and_takes_it_for_no_pool_the_owner_made(pools_first_up, preview, marks):
    first, monitor = pools_first_up
    refreshed = marks == "marks taken off"
    cluster = with_pools_created(first.resources, BEFORE, unmarked=refreshed)
    second, _ = consumer_run([(POOLS_ALONE, Cluster(cluster, listed(), state_left_by(first, monitor, refreshed)))], preview)
    pool = urn_of("GpuPools", "aks-gpu:azure:GpuPool", AGENT_POOL, name=f"gpu-pool-{POOL}-agent-pool")
    assert pool in urns(second)
    if refreshed:  # the state says the pool is the stack's; the `up` puts its tag back, and says so
        [line] = [w for w in second.warnings if "lacks aks-gpu-stack" in w]
        assert line.endswith("it is this stack's, and this `up` puts the tag back") and pool in line
        second.warnings.remove(line)
    same_again(first, second)


# --------------------------------------------------------------------------- GpuStack alone

OWNERS_POOL = {"name": POOL, "vmSize": T4, "count": 1, "mode": "User", "osType": "Linux"}
TEAM = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], OWNERS_POOL])
STACK_ALONE = Declared(GpuStack, "stack", STACK_INPUTS)
PLUGIN = "aks-gpu:kubernetes:NvidiaDevicePlugin"


@pytest.fixture(scope="module")
def stack_first_up() -> tuple[ProgramRun, EngineUrns]:
    """GpuStack on the owner's pool gpu, which no device plugin serves: it adds its own."""
    return consumer_run([(STACK_ALONE, Cluster(TEAM, listed()))], preview=False)


@BOTH
@MARKS
def test_a_consumers_second_up_of_gpu_stack_holds_its_device_plugin_and_refuses_nothing(stack_first_up, preview, marks):
    """Its own plugin, in its own namespace, is not another device plugin beside the stack's
    (cluster_object_checks.beside_the_stacks), nor one that serves the pool already."""
    first, monitor = stack_first_up
    refreshed = marks == "marks taken off"
    listing = as_listed(first.resources, unmarked=refreshed)
    second, _ = consumer_run([(STACK_ALONE, Cluster(TEAM, listing, state_left_by(first, monitor, refreshed)))], preview)
    assert {
        urn_of("GpuStack", PLUGIN, NAMESPACE, name="nvidia-device-plugin-ns"),
        urn_of("GpuStack", PLUGIN, DAEMON_SET, name="nvidia-device-plugin-ds"),
    } <= set(urns(second))
    same_again(first, second)


# --------------------------------------------------------------------------- GpuProof alone

PROOF_ALONE = Declared(GpuProof, "proof", PROOF_INPUTS)
# The owner's device plugin, the guide's, serving the owner's pool gpu: the proof runs there.
OWNERS_PLUGIN = (namespace("gpu-resources"), guide_daemon_set("gpu-resources"))
JOB = "aks-gpu:kubernetes:MnistJob"


@pytest.fixture(scope="module")
def proof_first_up() -> tuple[ProgramRun, EngineUrns]:
    return consumer_run([(PROOF_ALONE, Cluster(TEAM, listed(*OWNERS_PLUGIN)))], preview=False)


@BOTH
@MARKS
def test_a_consumers_second_up_of_gpu_proof_holds_its_jobs_namespace_and_refuses_nothing(proof_first_up, preview, marks):
    first, monitor = proof_first_up
    refreshed = marks == "marks taken off"
    listing = as_listed(first.resources, *OWNERS_PLUGIN, unmarked=refreshed)
    second, _ = consumer_run([(PROOF_ALONE, Cluster(TEAM, listing, state_left_by(first, monitor, refreshed)))], preview)
    [job_namespace] = [r for r in second.resources if r.type == NAMESPACE]
    assert job_namespace.urn.startswith(urn_of("GpuProof", JOB, NAMESPACE, name=""))
    same_again(first, second)


# --------------------------------------------------------------------------- the three side by side

TEAM_RG_AKS = ("team-rg", "team-aks")


def by(component: str, declared: Sequence[Declared]) -> stack_state.Declarer:
    """Who declares in the run of the consumer's `component` (its type token and name)."""
    [name] = [d.name for d in declared if d.component.__name__ == component]
    return stack_state.Declarer(f"aks-gpu:index:{component}", name)


TRIO = (Declared(GpuPools, "pools", POOLS_INPUTS), Declared(GpuStack, "stack", STACK_INPUTS), Declared(GpuProof, "proof", PROOF_INPUTS))


@pytest.fixture(scope="module")
def trio_first_up() -> tuple[ProgramRun, EngineUrns]:
    """The consumer's first `up` of GpuPools, GpuStack and GpuProof in one program, each depending on
    the one before, so each is constructed once the one before was created: the SDK sends a
    resource's registration once its dependencies' URNs resolve (pulumi 3.272.0
    runtime/resource.py `prepare_resource`), a remote component's once its Construct is done ("the
    construction of a remote component always waits on the construction of its children",
    runtime/rpc.py `_add_dependency`), and the engine answers a custom resource's registration once
    its step is done (pulumi/pulumi 1b594989 source_eval.go RegisterResource, "block waiting for the
    operation to finish"). So GpuStack reads the pool GpuPools created, and GpuProof the device
    plugin GpuStack created."""
    pools, _ = consumer_run([(TRIO[0], Cluster(BEFORE, listed()))], preview=False)
    created = with_pools_created(pools.resources, BEFORE)
    stacked, _ = consumer_run([(TRIO[0], Cluster(BEFORE, listed())), (TRIO[1], Cluster(created, listed()))], preview=False)
    plugin = as_listed([r for r in stacked.resources if r.urn.startswith(urn_of("GpuStack", name="").removesuffix("::"))])
    return consumer_run(
        [(TRIO[0], Cluster(BEFORE, listed())), (TRIO[1], Cluster(created, listed())), (TRIO[2], Cluster(created, plugin))], preview=False
    )


@BOTH
@MARKS
def test_a_consumers_second_up_of_gpu_pools_gpu_stack_and_gpu_proof_side_by_side_declares_the_same_and_refuses_nothing(
    trio_first_up, preview, marks
):
    """Each component's children are the stack's in the others' runs (another of the package's
    components at the same place: stack_state `siblings`), never strays to take out of the state."""
    first, monitor = trio_first_up
    refreshed = marks == "marks taken off"
    state = state_left_by(first, monitor, refreshed)
    cluster = Cluster(
        with_pools_created(first.resources, BEFORE, unmarked=refreshed), as_listed(first.resources, unmarked=refreshed), state
    )
    for component, theirs in (("GpuPools", stack_state.PLUGIN_DAEMON_SET), ("GpuStack", (AGENT_POOL, f"gpu-pool-{POOL}-agent-pool"))):
        read = stack_state.read(OfflineReader(stack=state), TEAM_RG_AKS, project=PROJECT, stack=STACK, by=by(component, TRIO))
        assert read.known and read.strays == () and theirs in read.siblings and theirs not in read.held
    second, _ = consumer_run([(declared, cluster) for declared in TRIO], preview)
    assert {
        urn_of("GpuPools", "aks-gpu:azure:GpuPool", AGENT_POOL, name=f"gpu-pool-{POOL}-agent-pool"),
        urn_of("GpuStack", PLUGIN, DAEMON_SET, name="nvidia-device-plugin-ds"),
    } <= set(urns(second))
    if refreshed:
        [line] = [w for w in second.warnings if "lacks aks-gpu-stack" in w]
        second.warnings.remove(line)
    same_again(first, second)
