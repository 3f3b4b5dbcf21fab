"""What the stack already holds is known from the engine's state (components/ownership/stack_state.py),
not from a tag alone: `az aks nodepool update --tags` replaces a pool's whole tag set (#45, item 1).
A pool, namespace or DaemonSet an earlier run registered is the stack's whatever its marks say;
where the state is not known, no line advises what would delete it. Each in a preview and a
deployment; the state an earlier run left is that run's own registrations."""

from __future__ import annotations

import copy
import functools
import threading
from typing import Any

import pytest
from conftest import run_cached
from support.adoption import guide_as_listed, saved_cluster, saved_list, the_guides
from support.existing_cluster import T4, on_existing
from support.guide_example import STACK_FILE
from support.kubernetes_objects import guide_daemon_set, listed, namespace
from support.plan import Lines, lines_by, plan_warnings, planned_by, refusals
from support.pool_network import NODES, PODS, moved_cluster, network_of, replace_warnings
from support.stack_export import exported, saved

from components.errors import PreflightError
from components.live_reader import LiveReader
from components.ownership import stack_state
from components.seam.reader import NotRead
from tools.azure_mocks import STACK_OUTPUTS_TOKEN, STACK_RESOURCES_TOKEN, AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import ProgramRun, RecordingMonitor, run_program, run_under_mocks

POOL = "azure-native:containerservice:AgentPool"
NAMESPACE = "kubernetes:core/v1:Namespace"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
BOTH = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
UNTAGGED = {"cost-center": "ml"}  # what `az aks nodepool update --tags cost-center=ml` leaves


def state_of(run: ProgramRun, leave_out: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """The state a deployment leaves, as readStackResourceOutputs answers it: each custom
    resource's URN, type and outputs (the mock engine echoes inputs as outputs). A copy: the
    run may be shared (guide_as_listed), and the reader handed this state must not reach it."""
    return {r.urn: {"type": r.type, "outputs": copy.deepcopy(r.inputs)} for r in run.resources if r.custom and r.type not in leave_out}


def read_state(state: dict, cluster: tuple[str, str] | None = None, stack: str = "dev") -> stack_state.StackState:
    """What the dev stack's run reads of `state`."""
    return stack_state.read(OfflineReader(stack=state), cluster, project="aks-gpu", stack=stack)


def run_with(cluster: dict, state: dict | None, preview: bool, **overrides: Any) -> ProgramRun:
    reader = OfflineReader(cluster=cluster, stack=state)
    return run_program("dev", overrides=on_existing(**overrides), monitor=RecordingMonitor(AzureMocks(reader=reader)), preview=preview)


def said_with(cluster: dict, state: dict | None, preview: bool, **overrides: Any) -> Lines:
    """What `run_with` of the same arguments says before it declares anything, from its plan
    (tests/support/plan.py), with no run."""
    return lines_by(OfflineReader(cluster=cluster, stack=state), "dev", preview, **on_existing(**overrides))


def shared_run(preview: bool, **overrides: Any) -> ProgramRun:
    """`run_with(existing_cluster(), None, preview, **overrides)`, the run shared in a test
    session (conftest's run_cached): read-only."""
    return run_cached("dev", preview=preview, cluster=existing_cluster(), **on_existing(**overrides))[0]


def with_gpu_pool(tags: dict | None, **pool: Any) -> dict:
    gpu = {"name": "gpu", "vmSize": T4, "count": 1, "mode": "User", "osType": "Linux", **pool, **({"tags": tags} if tags else {})}
    return existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], gpu])


@pytest.fixture(scope="module")
def earlier() -> dict[str, dict[str, Any]]:
    """What the stack's first `up` on the team's cluster left in its state."""
    return state_of(shared_run(preview=False))


# --------------------------------------------------------------------------- the names the state is read by


def test_the_names_the_state_is_read_by_are_the_ones_the_program_registers(earlier):
    state = read_state(earlier)
    assert state.pools() == {"gpu"} and state.pool_urn("gpu") == shared_run(True).one(POOL).urn
    assert state.holds(*stack_state.PLUGIN_NAMESPACE) and state.holds(*stack_state.PLUGIN_DAEMON_SET)
    assert state.kubernetes_ids(DAEMON_SET) >= {"gpu-resources/nvidia-device-plugin-daemonset"}
    managed = shared_run(True, gpuPool={"vmSize": T4, "management": "aks-managed"})
    assert read_state(state_of(managed)).pools() == {"gpu"}


# --------------------------------------------------------------------------- a pool that lost the stack's tag


@BOTH
def test_the_stacks_own_pool_that_lost_its_tag_is_the_stacks_and_the_up_puts_the_tag_back(earlier, preview):
    run = run_with(with_gpu_pool(UNTAGGED), earlier, preview)
    said = " ".join(run.warnings)
    assert "did not add" not in said and "pick another pool name" not in said
    [line] = [w for w in run.warnings if "lacks aks-gpu-stack" in w]
    assert line.startswith("aks-gpu:gpuPool: the pool 'gpu' lacks aks-gpu-stack = aks-gpu/dev (it has no aks-gpu-stack tag)")
    assert line.endswith("it is this stack's, and this `up` puts the tag back") and "\n" not in line
    pool = run.one(POOL)
    assert pool.urn in line and pool.inputs["tags"]["aks-gpu-stack"] == "aks-gpu/dev" and "import" not in pool.options


def untagged_gpu_said(state: dict, preview: bool) -> str:
    """What a run says of an untagged pool 'gpu' under the state `state`: a preview's warnings,
    or the line a deployment stops with (enforce), from its plan."""
    if preview:
        return " ".join(said_with(with_gpu_pool(UNTAGGED), state, preview).warnings)
    with pytest.raises(PreflightError) as error:
        said_with(with_gpu_pool(UNTAGGED), state, preview)
    return str(error.value)


@BOTH
def test_a_pool_the_state_does_not_hold_is_somebody_elses_and_may_be_renamed(earlier, preview):
    not_ours = {u: e for u, e in earlier.items() if e["type"] != POOL}
    said = untagged_gpu_said(not_ours, preview)
    assert "which this stack did not add (it has no aks-gpu-stack tag; the stack's state does not hold it); pick another pool name" in said


ROOT = "urn:pulumi:dev::aks-gpu::pulumi:pulumi:Stack::aks-gpu-dev"


def deployed_into(earlier: dict, group: str, name: str) -> dict:
    """The state with its root Stack's outputs, as __main__.py exports them, naming a cluster."""
    root = {"type": "pulumi:pulumi:Stack", "outputs": {"resourceGroupName": group, "clusterName": name}}
    return {ROOT: root, **earlier}


@BOTH
def test_a_pool_the_state_holds_in_another_cluster_is_not_this_clusters_pool_of_the_same_name(earlier, preview):
    """existingCluster moved to another cluster: the state's pool 'gpu' is in the old one, so the
    new cluster's untagged 'gpu' is somebody else's, not a pool whose tag this run puts back."""
    state = deployed_into(earlier, "old-rg", "old-aks")
    said = untagged_gpu_said(state, preview)
    assert "puts the tag back" not in said
    assert "which this stack did not add (it has no aks-gpu-stack tag; the stack's state does not hold it); pick another pool name" in said


def test_the_states_cluster_is_compared_as_arm_compares_names_without_case(earlier):
    same = read_state(deployed_into(earlier, "TEAM-RG", "Team-AKS"), ("team-rg", "team-aks"))
    other = read_state(deployed_into(earlier, "team-rg", "other-aks"), ("team-rg", "team-aks"))
    assert same.pools() == {"gpu"} and same.holds(*stack_state.PLUGIN_DAEMON_SET)
    assert other.known and other.pools() == frozenset() and not other.holds(*stack_state.PLUGIN_DAEMON_SET)


@BOTH
def test_without_the_state_a_pool_that_lost_its_tag_gets_how_to_check_not_advice_that_deletes(preview):
    if preview:
        [said] = [w for w in said_with(with_gpu_pool(UNTAGGED), None, preview).warnings if "pool named 'gpu'" in w]
    else:
        with pytest.raises(PreflightError) as error:
            said_with(with_gpu_pool(UNTAGGED), None, preview)
        said = str(error.value)
    assert "what this stack's state holds is not known (the offline render has no stack state)" in said
    assert "check with `pulumi stack export | grep -e gpu-pool-gpu-agent-pool -e gpu-pool-gpu-managed`" in said
    # Each action that would delete a pool the stack holds comes only after "if not".
    keep, _, rest = said.partition("if not, it is somebody else's")
    assert "keep this entry as it is (a new name or `existing` would delete it)" in keep and "pick another pool name" not in keep
    assert "pick another pool name" in rest


@BOTH
def test_using_the_stacks_own_pool_that_lost_its_tag_is_refused_naming_its_urn(earlier, preview):
    with pytest.raises(PreflightError) as error:
        said_with(with_gpu_pool(UNTAGGED, vmSize=T4), earlier, preview, gpuPool={"existing": "use"})
    message = str(error.value)
    urn = read_state(earlier).pool_urn("gpu")
    assert f"the stack's state holds it ({urn})" in message and f"`pulumi state delete '{urn}'`" in message
    assert "\n" not in message


def planned_network(cluster: dict, state: dict | None, preview: bool, **overrides: Any) -> tuple[tuple, list[str]]:
    """The GPU pool's network as the plan fits it (what GpuPool declares: plan.py gpu_pools), and the plan's warnings."""
    plan = planned_by(OfflineReader(cluster=cluster, stack=state), "dev", preview, **on_existing(**overrides))
    network = plan.networks["gpu"]
    return (network.vnet_subnet_id, network.pod_subnet_id, network.max_pods), plan_warnings(plan)


@BOTH
def test_under_warn_a_held_pool_that_lost_its_tag_keeps_its_own_network_when_the_system_pool_moved(earlier, preview):
    cluster = moved_cluster(gpu_tags=UNTAGGED)
    run = run_with(cluster, earlier, preview, preflight={"mode": "warn"})
    assert network_of(run.one(POOL).inputs) == (NODES, PODS, 30), "not the System pool's: that would replace the pool delete-first"
    assert replace_warnings(run.warnings) == []
    # Not known either: a pool under the new pool's name keeps its own values.
    unknown = run_with(cluster, None, preview, preflight={"mode": "warn"})
    assert network_of(unknown.one(POOL).inputs) == (NODES, PODS, 30)
    # Under off too. preflight.mode is read by preflight's checks alone (components/preflight/preflight.py
    # `run`), after the plan has fitted each pool's network (plan.py resolve_pools), which the pool
    # declares as the plan has it (the warn runs' network, the plan's): asked of the plan.
    assert planned_network(cluster, earlier, preview, preflight={"mode": "warn"})[0] == network_of(run.one(POOL).inputs)
    network, warnings = planned_network(cluster, earlier, preview, preflight={"mode": "off"})
    assert network == (NODES, PODS, 30) and replace_warnings(warnings) == []
    assert planned_network(cluster, None, preview, preflight={"mode": "off"})[0] == (NODES, PODS, 30)


# --------------------------------------------------------------------------- adoption decided by the state


@BOTH
def test_what_the_state_holds_is_the_stacks_and_not_imported_again_whatever_its_tags_and_annotations(preview):
    """The adopted pool, namespace and DaemonSet the state holds, with the stack's tags gone from
    the pool and its annotations from both objects (the guide's objects, as listed): one run."""
    first = guide_as_listed(preview=False)
    cluster = saved_cluster()
    for pool in cluster["agentPoolProfiles"]:
        pool["tags"] = UNTAGGED  # the stack's tags gone
    listed = saved_list()  # the stack's annotations gone from both: the guide's objects, as listed
    reader = OfflineReader(cluster=cluster, kubernetes=listed, stack=state_of(first))
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
    run = run_program(
        "ml-prod", overrides=overrides, monitor=RecordingMonitor(AzureMocks(reader=reader)), preview=preview, stack_file=STACK_FILE
    )
    assert first.one(POOL).options["import"], "the first run imported it"
    assert "import" not in run.one(POOL).options
    assert not [line for line in run.infos if line.startswith("adopt: aks-gpu:gpuPools.gpunp:")]
    assert "adopted earlier (the stack's state holds it)" in " ".join(run.infos)
    assert (
        "import" not in run.one(DAEMON_SET, "nvidia-device-plugin-daemonset").options
        and "import" not in run.one(NAMESPACE, "gpu-resources").options
    )
    assert "two device plugins" not in " ".join(run.warnings)
    assert the_guides(listed)["metadata"]["name"] == "nvidia-device-plugin-daemonset"


def test_a_pool_that_carries_the_stacks_tag_but_the_state_lost_is_imported_again():
    """`pulumi state delete` took it out; its tag stayed: the state decides, and it is imported."""
    first = guide_as_listed(preview=False)
    cluster = saved_cluster()
    for pool in cluster["agentPoolProfiles"]:
        if pool["name"] == "gpunp":
            pool["tags"] = {**(pool.get("tags") or {}), "aks-gpu-stack": "aks-gpu/ml-prod", "aks-gpu-adopted": "aks-gpu/ml-prod"}
    reader = OfflineReader(cluster=cluster, kubernetes=saved_list(), stack=state_of(first, leave_out=(POOL,)))
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
    run = run_program(
        "ml-prod", overrides=overrides, monitor=RecordingMonitor(AzureMocks(reader=reader)), preview=False, stack_file=STACK_FILE
    )
    assert run.one(POOL).options["import"] == first.one(POOL).options["import"]


def namespace_adopted(listed: dict[str, Any]) -> dict[str, Any]:
    """The guide's list after an adopting `up` that imported and marked the namespace, then
    failed at the DaemonSet's import: the DaemonSet is the guide's still, unmarked."""
    listed = copy.deepcopy(listed)
    for item in listed["items"]:
        if item["kind"] == "Namespace" and item["metadata"]["name"] == "gpu-resources":
            item["metadata"]["annotations"] = {"aks-gpu-stack": "aks-gpu/ml-prod", "aks-gpu-adopted": "aks-gpu/ml-prod"}
    return listed


@pytest.mark.parametrize("known", [True, False], ids=["state known", "state not known"])
@BOTH
def test_a_daemonset_whose_import_failed_after_its_namespaces_is_imported_again_not_created(preview, known):
    first = guide_as_listed(preview=False)
    listed = namespace_adopted(saved_list())
    state = state_of(first, leave_out=(DAEMON_SET,)) if known else None
    reader = OfflineReader(cluster=saved_cluster(), kubernetes=listed, stack=state)
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
    run = run_program(
        "ml-prod", overrides=overrides, monitor=RecordingMonitor(AzureMocks(reader=reader)), preview=preview, stack_file=STACK_FILE
    )
    assert run.one(DAEMON_SET, "nvidia-device-plugin-daemonset").options["import"] == "gpu-resources/nvidia-device-plugin-daemonset"
    assert "import" not in run.one(NAMESPACE, "gpu-resources").options
    lines = [line for line in run.infos if line.startswith("adopt: aks-gpu:devicePlugin: `pulumi up` imports")]
    assert len(lines) == 1 and "imports DaemonSet gpu-resources/nvidia-device-plugin-daemonset" in lines[0]
    assert "(namespace gpu-resources is the stack's already)" in " ".join(run.infos)


# --------------------------------------------------------------------------- the live read, in the engine's order


def read_live(reader: OfflineReader, **live: Any) -> tuple[Any, AzureMocks]:
    mocks = AzureMocks(reader=reader)
    seen: dict[str, Any] = {}

    def body() -> None:
        try:
            seen["answer"] = LiveReader(**live).stack_resources()
        except NotRead as why:
            seen["answer"] = why

    run_under_mocks(body, monitor=RecordingMonitor(mocks))
    return seen["answer"], mocks


def test_a_stack_that_never_deployed_is_not_asked_for_its_snapshot_which_would_panic_the_cli():
    """The diy backend's snapshot of a stack that never deployed is nil, and
    readStackResourceOutputs ranges over it unchecked: it is asked only after the stack's own
    outputs say a deployment completed (components/live_reader.py cites both)."""
    answer, mocks = read_live(OfflineReader())
    assert isinstance(answer, NotRead) and str(answer) == "the stack has no outputs yet: no deployment of it has completed"
    assert mocks.state_reads == [STACK_OUTPUTS_TOKEN]


def test_a_stack_that_deployed_is_read_outputs_first_then_its_resources_by_its_full_name():
    held = {
        "urn:pulumi:dev::aks-gpu::pulumi:pulumi:Stack$aks-gpu:azure:GpuPool$" + POOL + "::gpu-pool-gpu-agent-pool": {
            "type": POOL,
            "outputs": {"name": "gpu", "tags": {}},
        }
    }
    answer, mocks = read_live(OfflineReader(stack=held))
    assert answer == held and mocks.state_reads == [STACK_OUTPUTS_TOKEN, STACK_RESOURCES_TOKEN]
    [name] = set(mocks.stack_names)
    assert name.count("/") == 2 and name.split("/")[1] == "aks-gpu"  # organization/project/stack


def test_a_state_read_that_fails_is_not_known_in_one_line():
    reader = OfflineReader(stack={})
    reader.refused[STACK_OUTPUTS_TOKEN] = "backend: 503 Service Unavailable"
    answer, _ = read_live(reader)
    assert isinstance(answer, NotRead) and str(answer).startswith("the stack's state could not be read: ")
    assert "503 Service Unavailable" in str(answer) and "\n" not in str(answer)


def test_a_state_read_past_its_deadline_is_not_known_and_holds_nothing_up():
    release = threading.Event()
    reader = OfflineReader(stack={})
    reader.stall[STACK_OUTPUTS_TOKEN] = release
    try:
        answer, _ = read_live(reader, state_seconds=0.05)
    finally:
        release.set()
    assert isinstance(answer, NotRead) and "readStackOutputs got no answer within 0.05 s" in str(answer)


@BOTH
def test_an_adopted_pool_that_lost_its_tags_is_still_guarded_by_the_tags_its_state_recorded(preview):
    """The entry lost `existing: adopt`: declared as a new pool it would be replaced, the
    owner's pool deleted first. The live tags are gone; the state's record of them says adopted."""
    first = guide_as_listed(preview=False)
    cluster = saved_cluster()
    for pool in cluster["agentPoolProfiles"]:
        pool["tags"] = UNTAGGED
    reader = OfflineReader(cluster=cluster, kubernetes=saved_list(), stack=state_of(first))
    overrides = {"gpuPools": {"gpunp": {"vmSize": "Standard_NC4as_T4_v3"}}, "devicePlugin": {"adopt": True}}
    with pytest.raises(PreflightError) as error:
        lines_by(reader, "ml-prod", preview, STACK_FILE, **overrides)
    assert "the pool gpunp is the owner's, adopted by this stack" in str(error.value) and "\n" not in str(error.value)


@BOTH
def test_using_an_untagged_pool_while_the_state_could_not_be_read_stops_a_deployment_and_warns_a_preview(preview):
    """`use` would delete the pool if the stack held it: where the state read failed, not on
    a stack's first run (tests above: the mock engine's reader holds no state)."""
    reader = OfflineReader(cluster=with_gpu_pool(UNTAGGED), refuse={"stack_resources": "backend: 503 Service Unavailable"})
    monitor = RecordingMonitor(AzureMocks(reader=reader))
    overrides = on_existing(gpuPool={"existing": "use"})
    if preview:
        [said] = [w for w in lines_by(reader, "dev", True, **overrides).warnings if "existing = use" in w]
    else:
        with pytest.raises(PreflightError) as error:
            run_program("dev", overrides=overrides, monitor=monitor, preview=False)
        said = str(error.value)
        assert said.endswith("; nothing was created") and [r for r in monitor.registrations if r.custom] == []
    assert "what this stack's state holds is not known (InvokeFailed: backend: 503 Service Unavailable)" in said
    assert (
        "`use` would delete the pool gpu if the stack added it: check with `pulumi stack export | grep -e gpu-pool-gpu-agent-pool" in said
    )
    assert "\n" not in said
    first = said_with(with_gpu_pool(UNTAGGED), None, preview, gpuPool={"existing": "use"})
    assert not [w for w in first.warnings if "existing = use" in w], "a stack's first run holds nothing"


def test_a_diy_backend_in_the_legacy_layout_is_read_by_the_stacks_name_alone():
    """It refuses `organization/<project>/<stack>` (diy/store.go legacyReferenceStore.ParseReference,
    tokens.ParseStackName at 1b594989): the state is read by the stack's name alone, not left unknown."""
    held = {f"urn:pulumi:test::aks-gpu::aks-gpu:azure:GpuPool${POOL}::gpu-pool-gpu-agent-pool": {"type": POOL, "outputs": {}}}
    reader = OfflineReader(stack=held)
    reader.legacy_layout = True
    answer, mocks = read_live(reader)
    assert answer == held
    assert mocks.stack_names == ["test", "test"], "the qualified name was refused; the stack's name answered both reads"
    assert mocks.state_reads == [STACK_OUTPUTS_TOKEN, STACK_OUTPUTS_TOKEN, STACK_RESOURCES_TOKEN]


# --------------------------------------------------------------------------- held: the whole URN the program registers


def test_the_urns_held_are_the_ones_the_program_registers(earlier):
    run = shared_run(True)
    registered = {(r.type, r.name): r.urn for r in run.resources}
    for type_, name in [(POOL, "gpu-pool-gpu-agent-pool"), stack_state.PLUGIN_NAMESPACE, stack_state.PLUGIN_DAEMON_SET]:
        assert stack_state.program_urn("aks-gpu", "dev", type_, name) == registered[(type_, name)]
    managed = {(r.type, r.name): r.urn for r in shared_run(True, gpuPool={"vmSize": T4, "management": "aks-managed"}).resources}
    name = "gpu-pool-gpu-managed"
    assert stack_state.program_urn("aks-gpu", "dev", stack_state.MANAGED_POOL, name) == managed[(stack_state.MANAGED_POOL, name)]
    assert read_state(earlier).strays == ()


def imported_by_hand(earlier: dict, urn: str) -> dict:
    """`earlier` with its GPU pool held at `urn`, as `pulumi import` at another parent leaves it."""
    [pool] = [u for u, e in earlier.items() if e["type"] == POOL]
    return {**{u: e for u, e in earlier.items() if u != pool}, urn: earlier[pool]}


TOP_LEVEL = f"urn:pulumi:dev::aks-gpu::{POOL}::gpu-pool-gpu-agent-pool"


@pytest.mark.parametrize("urn", [TOP_LEVEL, f"urn:pulumi:dev::aks-gpu::aks-gpu:azure:ExistingCluster${POOL}::gpunp"])
def test_a_pool_imported_by_hand_at_another_urn_is_not_held_and_is_refused_with_what_to_do(earlier, urn):
    """Refused by the plan, of a preview and of a deployment, before anything is declared (support/plan.py `refusals`)."""
    state = imported_by_hand(earlier, urn)
    reader = functools.partial(OfflineReader, cluster=with_gpu_pool(UNTAGGED, vmSize=T4), stack=state)
    for message in refusals(
        PreflightError, "^preflight: the stack's state holds the GPU pool", reader, **on_existing(gpuPool={"existing": "adopt"})
    ):
        assert message.startswith(f"preflight: the stack's state holds the GPU pool '{urn}', which this program does not register")
        assert f"`pulumi state delete --force '{urn}'`, then run again" in message and "\n" not in message
    assert read_state(state).pools() == frozenset(), "not held: the program imports it under its own URN once it is gone"


@pytest.mark.parametrize("stack, project", [("prod", "aks-gpu"), ("dev", "other-project")])
@BOTH
def test_a_pool_in_the_state_under_another_stack_or_project_is_not_held(earlier, preview, stack, project):
    theirs = {u.replace("urn:pulumi:dev::aks-gpu::", f"urn:pulumi:{stack}::{project}::"): e for u, e in earlier.items()}
    said = untagged_gpu_said(theirs, preview)
    assert "puts the tag back" not in said
    assert "which this stack did not add (it has no aks-gpu-stack tag; the stack's state does not hold it); pick another pool name" in said


# --------------------------------------------------------------------------- the adopted plugin guarded by the state


@pytest.mark.parametrize("read", [True, False], ids=["cluster read", "cluster not read"])
def test_dropping_device_plugin_adopt_is_refused_by_the_states_record_when_the_marks_were_stripped(read):
    """`kubectl annotate ... aks-gpu-stack- aks-gpu-adopted-` took the live marks off; the state
    still records them, and without adopt a destroy would delete the owner's gpu-resources.
    Refused by the plan, of a preview and of a deployment, before anything is declared."""
    state = state_of(guide_as_listed(preview=False))
    cluster = saved_cluster()
    reader = functools.partial(OfflineReader, cluster=cluster, kubernetes=saved_list() if read else None, stack=state)
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": False}}
    for message in refusals(
        PreflightError, r"^preflight: aks-gpu:devicePlugin\.adopt is not true", reader, "ml-prod", STACK_FILE, **overrides
    ):
        assert message.startswith("preflight: aks-gpu:devicePlugin.adopt is not true, but the namespace gpu-resources")
        assert "a destroy would delete them" in message and "\n" not in message


# --------------------------------------------------------------------------- a second plugin in the stack's namespace


def another_plugin(namespace_name: str = "gpu-resources") -> dict[str, Any]:
    found = guide_daemon_set(namespace_name, tolerations=[{"operator": "Exists"}])
    found["metadata"]["name"] = "team-device-plugin"
    return found


@pytest.mark.parametrize("known", [True, False], ids=["state known", "state not known"])
def test_a_second_device_plugin_in_the_stacks_own_namespace_is_not_taken_for_the_stacks(earlier, known):
    """A preview warns; a deployment's plan stops, before anything is declared."""
    ours = {"aks-gpu-stack": "aks-gpu/dev"}
    listed_now = listed(namespace("gpu-resources", **ours), guide_daemon_set(), another_plugin())
    listed_now["items"][1]["metadata"]["annotations"] = dict(ours)
    reader = functools.partial(
        OfflineReader, cluster=with_gpu_pool({"aks-gpu-stack": "aks-gpu/dev"}), kubernetes=listed_now, stack=earlier if known else None
    )
    said = "kubernetes: DaemonSet gpu-resources/team-device-plugin runs NVIDIA's device plugin"
    warnings = lines_by(reader(), "dev", True, **on_existing()).warnings
    assert any(w.startswith(said) and "two device plugins on one node" in w for w in warnings)
    assert not any("gpu-resources/nvidia-device-plugin-daemonset runs" in w for w in warnings), "the stack's own is the stack's"
    with pytest.raises(PreflightError, match="never two device plugins on one node"):
        lines_by(reader(), "dev", False, **on_existing())


TAINTED = {"aks-gpu-stack": "aks-gpu/dev"}
OWN_NS = "kubernetes: DaemonSet gpu-resources/{} runs NVIDIA's device plugin"


def beside(known: bool, earlier: dict, *items: dict[str, Any]) -> functools.partial:
    """The dev stack's cluster, its GPU pool tainted sku=gpu (the guide's tolerations do not
    reach it), listing the stack's namespace and `items` in it."""
    cluster = with_gpu_pool(TAINTED, nodeTaints=["sku=gpu:NoSchedule"])
    listed_now = listed(namespace("gpu-resources", **TAINTED), *items)
    return functools.partial(OfflineReader, cluster=cluster, kubernetes=listed_now, stack=earlier if known else None)


def named_beside(reader: functools.partial, name: str) -> str:
    """The preview's one warning of that DaemonSet; the deployment's plan stops before anything is declared."""
    warnings = lines_by(reader(), "dev", True, **on_existing()).warnings
    [said] = [w for w in warnings if w.startswith(OWN_NS.format(name))]
    with pytest.raises(PreflightError, match=r"^preflight: never two device plugins on one node") as stopped:
        lines_by(reader(), "dev", False, **on_existing())
    assert OWN_NS.format(name) in str(stopped.value)
    assert "\n" not in said
    return said


def test_a_device_plugin_the_state_does_not_hold_in_the_stacks_namespace_is_named_though_it_lands_on_none_of_its_pools(earlier):
    """The state holds the stack's own plugin there; another beside it, pinned off the stack's
    pools, would still have the stack declare its plugin beside it: named with the way out."""
    own = guide_daemon_set()
    own["metadata"]["annotations"] = dict(TAINTED)
    said = named_beside(
        beside(True, earlier, own, guide_daemon_set() | {"metadata": {"name": "team-device-plugin", "namespace": "gpu-resources"}}),
        "team-device-plugin",
    )
    assert "in this stack's own namespace (aks-gpu:devicePlugin.namespace = gpu-resources), and the stack's state does not hold it" in said
    assert "this stack would put its plugin on gpu beside it (it lands on none of them now)" in said
    assert "remove it (`kubectl delete daemonset --namespace gpu-resources team-device-plugin`), or let it serve" in said
    assert "devicePlugin.adopt" not in said, "only the guide's DaemonSet can be adopted"


@pytest.mark.parametrize("marked", [False, True], ids=["the guide's name, unmarked", "another name, marked"])
def test_a_device_plugin_in_the_stacks_namespace_is_not_taken_for_the_stacks_where_the_state_is_not_known(earlier, marked):
    """Not known (no state read): the stack's own carries both its mark and its name; one without
    its mark, or of another name, is said with what cannot be told, never taken for the stack's."""
    found = guide_daemon_set()
    if marked:
        found["metadata"] |= {"name": "team-device-plugin", "annotations": dict(TAINTED)}
    said = named_beside(beside(False, earlier, found), found["metadata"]["name"])
    if marked:
        assert "it carries the stack's mark (aks-gpu-stack = aks-gpu/dev) but not the name of the stack's own" in said
    else:
        assert "whether it is the stack's cannot be told (it lacks the stack's mark, aks-gpu-stack = aks-gpu/dev, and what" in said
        assert "what the stack's state holds is not known: the offline render has no stack state;" in said
        assert "declare its own plugin for gpu under that very name, and `pulumi up` would stop at it (AlreadyExists)" in said
    assert ("take it over with aks-gpu:devicePlugin.adopt: true" in said) is not marked


def test_a_second_device_plugin_beside_the_guides_one_the_stack_takes_over_is_named_too(earlier):
    """devicePlugin.adopt takes the guide's DaemonSet over; another in that namespace stays the owner's, beside it."""
    team = guide_daemon_set()
    team["metadata"]["name"] = "team-device-plugin"
    reader = beside(False, earlier, guide_daemon_set(), team)
    warnings = lines_by(reader(), "dev", True, **on_existing(devicePlugin={"adopt": True})).warnings
    [said] = [w for w in warnings if w.startswith(OWN_NS.format("team-device-plugin"))]
    assert "this stack would put its plugin on gpu beside it (it lands on none of them now); remove it" in said
    with pytest.raises(PreflightError, match=r"^preflight: never two device plugins on one node"):
        lines_by(reader(), "dev", False, **on_existing(devicePlugin={"adopt": True}))


# --------------------------------------------------------------------------- reads stay linear


class Counted(str):
    """A name that counts how often it is compared, and stops a search that is not linear."""

    compared = 0
    budget = 0

    def __eq__(self, other: object) -> bool:
        Counted.compared += 1
        assert Counted.compared <= Counted.budget, "a quadratic search: each name compared with each"
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_ninety_thousand_adopted_marked_objects_are_read_and_the_slip_refused():
    """Each of 45,000 namespaces and 45,000 DaemonSets carries this stack's adopted mark: the
    guard and the checks read them a few times each, never each against each. A preview's plan
    alone (some 2 s of CPU to read them): the read and the guard (cluster_objects.parse,
    ownership.check_objects) take no mode, and the plan reaches them the same way in both, so
    a deployment's would count the same comparisons and stop with the same line."""
    marks = {"aks-gpu-stack": "aks-gpu/dev", "aks-gpu-adopted": "aks-gpu/dev"}
    items = [namespace(Counted(f"ns-{i}"), **marks) for i in range(45_000)]
    pod = {"template": {"spec": {}}}
    items += [
        {"kind": "DaemonSet", "metadata": {"name": "d", "namespace": Counted(f"ds-{i}"), "annotations": marks}, "spec": pod}
        for i in range(45_000)
    ]
    reader = OfflineReader(cluster=existing_cluster(), kubernetes={"kind": "List", "items": items})
    Counted.compared, Counted.budget = 0, 20 * len(items)
    with pytest.raises(PreflightError) as error:
        lines_by(reader, "dev", True, **on_existing())
    assert str(error.value).startswith("preflight: aks-gpu:devicePlugin.adopt is not true, but the namespace ns-0 and its DaemonSet")


# --------------------------------------------------------------------------- azure-native's versioned type tokens

VERSIONED_POOL = "azure-native:containerservice/v20230401:AgentPool"


@pytest.mark.parametrize("token", [VERSIONED_POOL, "azure-native:containerservice/v20230402preview:AgentPool"])
def test_a_pool_imported_by_hand_under_a_versioned_type_token_is_named_with_what_up_would_do_to_it(earlier, token):
    """`pulumi import azure-native:containerservice/v20230401:AgentPool gpunp <id>` leaves the
    pool at the top level under a versioned token: the same Azure pool, which `up` would import
    again under the program's URN and then delete with the old entry. Refused by the plan of a
    preview and of a deployment, before anything is declared."""
    urn = f"urn:pulumi:dev::aks-gpu::{token}::gpunp"
    state = imported_by_hand(earlier, urn)
    reader = functools.partial(OfflineReader, cluster=with_gpu_pool(UNTAGGED, vmSize=T4), stack=state)
    for message in refusals(
        PreflightError, "^preflight: the stack's state holds the GPU pool", reader, **on_existing(gpuPool={"existing": "adopt"})
    ):
        assert message.startswith(f"preflight: the stack's state holds the GPU pool '{urn}', under azure-native's versioned type {token}")
        assert "this `up` would delete it at the end of the update, and with it what the program declares (the same Azure pool)" in message
        assert "or stop at it if protected" in message
        assert f"`pulumi state delete --force '{urn}'`, then run again" in message and "\n" not in message
    # The live read hands StackState.read readStackResourceOutputs' answer as it is.
    answer, _ = read_live(OfflineReader(stack={urn: {"type": token, "outputs": {"agentPoolName": "gpunp"}}}))
    assert read_state(answer).strays == (urn,)


def test_a_pool_held_at_the_programs_urn_under_a_versioned_type_token_is_the_programs_by_the_sdks_alias(earlier):
    """The SDK's AgentPool aliases every versioned token: at the program's own URN but for its
    type, the engine takes the entry as the pool the program declares, so it is held, not a stray."""
    [pool] = [u for u, e in earlier.items() if e["type"] == POOL]
    versioned = pool.replace(f"${POOL}::", f"${VERSIONED_POOL}::")
    assert versioned != pool
    state = read_state(imported_by_hand(earlier, versioned))
    assert (state.pools(), state.strays, state.pool_urn("gpu")) == (frozenset({"gpu"}), (), versioned)


@BOTH
def test_a_saved_export_holding_a_pool_under_a_versioned_type_token_is_refused_in_the_offline_render(earlier, tmp_path, preview):
    """The saved path (preflight.stateFile, what `pulumi stack export` wrote) reads the state as the live one does."""
    run = shared_run(preview=False)
    export = exported(run)
    [entry] = [r for r in export["deployment"]["resources"] if r["type"] == POOL]
    entry["urn"], entry["type"] = f"urn:pulumi:dev::aks-gpu::{VERSIONED_POOL}::gpunp", VERSIONED_POOL
    entry["parent"] = export["deployment"]["resources"][0]["urn"]
    state_file = saved(tmp_path / "state.json", export)
    reader = OfflineReader(cluster=with_gpu_pool(UNTAGGED, vmSize=T4))
    with pytest.raises(PreflightError) as error:
        planned_by(reader, "dev", preview, **on_existing(gpuPool={"existing": "adopt"}, preflight={"stateFile": state_file}))
    assert str(error.value).startswith(
        f"preflight: the stack's state holds the GPU pool 'urn:pulumi:dev::aks-gpu::{VERSIONED_POOL}::gpunp'"
    )
