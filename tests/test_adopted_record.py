"""What the stack adopted is recorded in its own output `adopted` (components/ownership/adopted_record.py),
which a `pulumi refresh` leaves as it is: once the owner strips the stack's marks
(`kubectl annotate ... aks-gpu-stack- aks-gpu-adopted-`, `az aks nodepool update --tags`) and a
refresh reads the stripped objects back into the state, every guard still knows what was
adopted. Each refusal in a preview and in a deployment, before anything is registered; the state
a run reads is the one the earlier run left (its registrations and its root outputs)."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
from destroy_model import nodes, sends_delete
from support.adoption import guide_as_listed, saved_cluster, saved_list
from support.existing_cluster import T4, on_existing
from support.guide_example import STACK_FILE
from support.plan import lines_by, refusals
from support.stack_export import exported, root_urn, saved

from components.errors import ConfigError, PreflightError
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import ProgramRun, RecordingMonitor, run_program

POOL = "azure-native:containerservice:AgentPool"
NAMESPACE, DAEMON_SET = "kubernetes:core/v1:Namespace", "kubernetes:apps/v1:DaemonSet"
ROOT = "pulumi:pulumi:Stack"
MARKS = ("aks-gpu-stack", "aks-gpu-adopted")
BOTH = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
ADOPTING = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
RECORDED = "the stack's output adopted records it, though its marks are gone"
GUIDE_RECORD = {
    "stack": "aks-gpu/ml-prod",
    "pools": {"gpunp": "release"},
    "namespaces": {"gpu-resources": "release"},
    "daemonSets": {"gpu-resources/nvidia-device-plugin-daemonset": "release"},
}


def unmarked(values: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (values or {}).items() if k.lower() not in MARKS}


def state_left_by(run: ProgramRun, refreshed: bool = False) -> dict[str, dict[str, Any]]:
    """The state a deployment leaves, as readStackResourceOutputs answers it: each custom
    resource's outputs (the mocks echo its inputs), and the root Stack's outputs. `refreshed`:
    after the owner took the stack's marks off and a `pulumi refresh` read each object back, the
    root Stack's outputs as they were (a refresh reads custom resources only)."""
    state = {r.urn: {"type": r.type, "outputs": copy.deepcopy(r.inputs)} for r in run.resources if r.custom}
    for entry in state.values() if refreshed else ():
        outputs = entry["outputs"]
        if isinstance(outputs.get("metadata"), dict) and "annotations" in outputs["metadata"]:
            outputs["metadata"]["annotations"] = unmarked(outputs["metadata"]["annotations"])
        if entry["type"] == POOL:
            outputs["tags"] = unmarked(outputs.get("tags"))
    state[root_urn(run)] = {"type": ROOT, "outputs": {name: out.value for name, out in run.outputs.items()}}
    return state


def adopted_guide() -> ProgramRun:
    """The `up` that adopted the guide's pool gpunp, namespace gpu-resources and DaemonSet (shared: read-only)."""
    return guide_as_listed(preview=False)


def after_refresh(**overrides: Any) -> functools.partial[OfflineReader]:
    """Readers of the guide's cluster as it is after the owner stripped the marks (the saved
    files never had them) and refreshed the state the adopting `up` left."""
    answers = {"cluster": saved_cluster(), "kubernetes": saved_list(), "stack": state_left_by(adopted_guide(), True), **overrides}
    return functools.partial(OfflineReader, **answers)


def ml_prod(reader: OfflineReader, preview: bool, **overrides: Any) -> ProgramRun:
    monitor = RecordingMonitor(AzureMocks(reader=reader))
    return run_program("ml-prod", overrides=overrides, monitor=monitor, preview=preview, stack_file=STACK_FILE)


# --------------------------------------------------------------------------- the record written


def test_the_adopting_up_records_the_pool_namespace_and_daemonset_it_adopted_and_a_stack_that_adopts_nothing_exports_none():
    assert adopted_guide().outputs["adopted"].value == GUIDE_RECORD
    used = ml_prod(OfflineReader(cluster=saved_cluster(), kubernetes=saved_list()), False, gpuPools={"gpunp": {"existing": "use"}})
    assert "adopted" not in used.outputs


# --------------------------------------------------------------------------- through a refresh


@pytest.mark.parametrize("read", [True, False], ids=["cluster read", "cluster not read"])
def test_once_the_marks_are_stripped_and_the_state_refreshed_dropping_device_plugin_adopt_is_refused(read):
    reader = after_refresh() if read else after_refresh(refuse={"kubernetes_objects": "Unauthorized"})
    overrides = {**ADOPTING, "devicePlugin": {"adopt": False}}
    for message in refusals(
        PreflightError, r"^preflight: aks-gpu:devicePlugin\.adopt is not true", reader, "ml-prod", STACK_FILE, **overrides
    ):
        assert message.startswith(
            "preflight: aks-gpu:devicePlugin.adopt is not true, but the namespace gpu-resources and its DaemonSet "
            f"nvidia-device-plugin-daemonset, which this stack adopted ({RECORDED}), are the owner's"
        )
        assert "set aks-gpu:devicePlugin.adopt: true again, or hand them back first" in message


def test_once_the_marks_are_stripped_and_the_state_refreshed_a_deployment_declares_nothing_of_the_owners():
    """The deployment itself, not only its plan: it stops before the owner's namespace is declared as the stack's own."""
    monitor = RecordingMonitor(AzureMocks(reader=after_refresh()()))
    with pytest.raises(PreflightError, match="devicePlugin.adopt is not true"):
        run_program(
            "ml-prod", overrides={**ADOPTING, "devicePlugin": {"adopt": False}}, monitor=monitor, preview=False, stack_file=STACK_FILE
        )
    assert monitor.registrations == []


def test_once_the_pools_tag_is_stripped_and_the_state_refreshed_an_entry_without_existing_adopt_is_refused():
    overrides = {**ADOPTING, "gpuPools": {"gpunp": {"vmSize": T4}}}
    for message in refusals(
        PreflightError, r"^aks-gpu:gpuPools\.gpunp: the pool gpunp is the owner's", after_refresh(), "ml-prod", STACK_FILE, **overrides
    ):
        assert f"adopted by this stack ({RECORDED}), and the entry no longer says existing: adopt" in message
        assert "put `existing: adopt` back in aks-gpu:gpuPools.gpunp" in message


@BOTH
def test_the_record_of_a_saved_export_guards_the_offline_render_too(tmp_path, preview):
    """`pulumi stack export` after the refresh: the render reads the same record (preflight.stateFile)."""
    export = exported(adopted_guide())
    for entry in export["deployment"]["resources"]:
        metadata = entry["outputs"].get("metadata")
        if isinstance(metadata, dict) and "annotations" in metadata:
            metadata["annotations"] = unmarked(metadata["annotations"])
    path = saved(tmp_path / "state.json", export)
    reader = OfflineReader(cluster=saved_cluster(), kubernetes=saved_list())
    with pytest.raises(PreflightError, match=f"which this stack adopted \\({RECORDED}\\)"):
        lines_by(reader, "ml-prod", preview, STACK_FILE, **{**ADOPTING, "devicePlugin": {"adopt": False}}, preflight={"stateFile": path})


# --------------------------------------------------------------------------- carried forward


@BOTH
def test_the_record_is_carried_forward_by_each_up_after_a_refresh(preview):
    again = ml_prod(after_refresh()(), preview, **ADOPTING)
    assert again.outputs["adopted"].value == GUIDE_RECORD


def test_a_released_pool_stays_in_the_record_until_the_state_no_longer_holds_it():
    """The config drops gpunp for a new pool: that `up` releases it, as its record says, and still
    records it; the next, whose state no longer holds it, leaves it out."""
    config = {**ADOPTING, "gpuPools": {"t4": {"vmSize": T4}}}
    releasing = ml_prod(after_refresh()(), False, **config)
    [said] = [w for w in releasing.warnings if w.startswith("gpuPools: the pool gpunp that this stack adopted")]
    assert f"({RECORDED})" in said and "this `up` releases it (the preview shows `delete[retain]`" in said
    assert "or deletes it" not in said, "the record says how it was adopted: released"
    assert releasing.outputs["adopted"].value["pools"] == {"gpunp": "release"}
    later = ml_prod(OfflineReader(cluster=saved_cluster(), kubernetes=saved_list(), stack=state_left_by(releasing, True)), False, **config)
    assert later.outputs["adopted"].value == {**GUIDE_RECORD, "pools": {}}


# --------------------------------------------------------------------------- an adopted pool switched to use


def switched_to_use(first: ProgramRun) -> list[str]:
    """The guide's pool gpunp switched to `use` after `first` adopted it, its tag stripped and the state refreshed."""
    reader = functools.partial(OfflineReader, cluster=saved_cluster(), kubernetes=saved_list(), stack=state_left_by(first, True))
    return refusals(
        PreflightError, r"existing = use", reader, "ml-prod", STACK_FILE, **{**ADOPTING, "gpuPools": {"gpunp": {"existing": "use"}}}
    )


def created_switched_to_use() -> list[str]:
    """The dev stack's pool gpu, which its first `up` created on the team's cluster, switched to `use`."""
    monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(cluster=existing_cluster())))
    created = run_program("dev", overrides=on_existing(), monitor=monitor, preview=False)
    gpu = {"name": "gpu", "vmSize": T4, "count": 1, "mode": "User", "osType": "Linux", "tags": {"cost-center": "ml"}}
    cluster = existing_cluster(agentPoolProfiles=[*existing_cluster()["agentPoolProfiles"], gpu])
    reader = functools.partial(OfflineReader, cluster=cluster, stack=state_left_by(created))
    return refusals(PreflightError, r"existing = use", reader, "dev", **on_existing(gpuPool={"existing": "use"}))


def test_an_adopted_pool_switched_to_use_is_said_to_be_released_where_a_created_one_is_said_to_be_deleted():
    for message in switched_to_use(adopted_guide()):
        released = "releases it (the preview shows `delete[retain]`: Pulumi forgets it, Azure keeps it)"
        assert f"this stack adopted it ({RECORDED}), and `use` would unregister it: this `up` {released}" in message
        assert "a pool the stack created" not in message
    for message in created_switched_to_use():
        assert "the stack created or adopted it, and `use` would unregister it, which deletes a pool the stack created" in message


def test_a_pool_adopted_with_on_destroy_delete_switched_to_use_is_said_to_be_deleted_as_its_adoption_said():
    adopting = {**ADOPTING, "gpuPools": {"gpunp": {"existing": "adopt", "onDestroy": "delete"}}}
    first = ml_prod(OfflineReader(cluster=saved_cluster(), kubernetes=saved_list()), False, **adopting)
    for message in switched_to_use(first):
        assert f"this stack adopted it ({RECORDED}), and `use` would unregister it: this `up` deletes it, as its adoption said" in message


@pytest.mark.parametrize("record", ["gpunp", {"pools": ["gpunp"]}, {"pools": {"gpunp": "keep"}}])
def test_an_adopted_output_this_program_never_writes_is_refused_in_one_line(record):
    """A record read wrong would unguard what was adopted: refused, in a preview and a deployment, before anything is declared."""
    state = state_left_by(adopted_guide(), True)
    root = next(u for u, e in state.items() if e["type"] == ROOT)
    state[root]["outputs"]["adopted"] = record
    reader = functools.partial(OfflineReader, cluster=saved_cluster(), kubernetes=saved_list(), stack=state)
    for message in refusals(PreflightError, r"^preflight: the stack's output adopted ", reader, "ml-prod", STACK_FILE, **ADOPTING):
        assert "which this program never writes" in message and "pulumi stack import" in message


def test_a_saved_export_whose_adopted_output_this_program_never_writes_is_refused_naming_the_file(tmp_path):
    export = exported(adopted_guide())
    export["deployment"]["resources"][0]["outputs"]["adopted"] = {"daemonSets": "gpu-resources/nvidia-device-plugin-daemonset"}
    path = saved(tmp_path / "state.json", export)
    reader = functools.partial(OfflineReader, cluster=saved_cluster(), kubernetes=saved_list())
    for message in refusals(ConfigError, "preflight.stateFile", reader, "ml-prod", STACK_FILE, **ADOPTING, preflight={"stateFile": path}):
        assert message.startswith(f"invalid config aks-gpu:preflight.stateFile = {path}: deployment.resources[0].outputs.adopted has")
        assert "which this program never writes" in message


# --------------------------------------------------------------------------- a destroy, and the plugin dropped, after a refresh


@functools.cache
def adopting_up_after_refresh(preview: bool) -> ProgramRun:
    """An `up` of the adopting config once the marks are stripped and the state refreshed (shared: read-only)."""
    return ml_prod(after_refresh()(), preview, **ADOPTING)


@BOTH
def test_once_the_marks_are_stripped_and_the_state_refreshed_an_up_still_declares_what_was_adopted_released_on_destroy(preview):
    """A destroy after that `up` releases the owner's pool, namespace and DaemonSet (`retainOnDelete`:
    the engine sends them no delete): the config's onDestroy decides it, the marks gone or not,
    and the record the `up` carries forward says the same."""
    done = adopting_up_after_refresh(preview)
    assert done.outputs["adopted"].value == GUIDE_RECORD
    [pool] = [p for p in done.of_type(POOL) if p.inputs["agentPoolName"] == "gpunp"]
    adopted = {pool.urn, done.one(NAMESPACE, "gpu-resources").urn, done.one(DAEMON_SET, "nvidia-device-plugin-daemonset").urn}
    assert {done.by_urn(urn).options["retainOnDelete"] for urn in adopted} == {True}
    graph = nodes(done)
    condemned = {n.urn for n in graph}
    assert not [n.urn for n in graph if n.urn in adopted and sends_delete(n, condemned)]


@BOTH
def test_once_the_marks_are_stripped_and_the_state_refreshed_dropping_a_plugin_adopted_with_on_destroy_delete_is_said_to_delete_it(preview):
    """The record's onDestroy, not a guess: the stack puts no device plugin on its pools any more,
    and the namespace and DaemonSet it adopted with devicePlugin.onDestroy: delete are said to be deleted."""
    deleting = {**ADOPTING, "devicePlugin": {"adopt": True, "onDestroy": "delete"}}
    first = ml_prod(OfflineReader(cluster=saved_cluster(), kubernetes=saved_list()), False, **deleting)
    assert first.outputs["adopted"].value["namespaces"] == {"gpu-resources": "delete"}
    reader = OfflineReader(cluster=saved_cluster(), kubernetes=saved_list(), stack=state_left_by(first, True))
    pools = {"t4": {"vmSize": T4, "management": "aks-managed"}}
    warnings = lines_by(reader, "ml-prod", preview, STACK_FILE, gpuPools=pools).warnings
    said = [w for w in warnings if w.startswith("aks-gpu:devicePlugin.adopt:")]
    assert said == [
        "aks-gpu:devicePlugin.adopt: the stack puts no device plugin on its pools now, so this `up` deletes the namespace "
        f"gpu-resources and its DaemonSet nvidia-device-plugin-daemonset it adopted ({RECORDED}), as its adoption said "
        "(devicePlugin.onDestroy: delete; the preview shows `delete`)"
    ]


# --------------------------------------------------------------------------- a fixed property of what was adopted, changed


def test_once_the_marks_are_stripped_and_the_state_refreshed_moving_the_device_plugin_to_another_namespace_is_refused():
    overrides = {**ADOPTING, "devicePlugin": {"adopt": True, "namespace": "nvidia"}}
    for message in refusals(
        PreflightError, r"^preflight: aks-gpu:devicePlugin\.namespace = nvidia", after_refresh(), "ml-prod", STACK_FILE, **overrides
    ):
        assert message.startswith(
            "preflight: aks-gpu:devicePlugin.namespace = nvidia, but the namespace gpu-resources and its DaemonSet "
            f"nvidia-device-plugin-daemonset, which this stack adopted ({RECORDED}), are the owner's"
        )
        assert "set devicePlugin.namespace back to gpu-resources, or hand them back first" in message
