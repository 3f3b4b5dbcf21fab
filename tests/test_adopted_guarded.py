"""What the stack adopted is guarded (components/ownership/ownership.py): a config that would
replace an adopted pool, namespace or DaemonSet is refused in one line before anything is
registered; a destroy, or an entry removed, releases them (`retainOnDelete`) unless the config
says the stack may delete them; another stack's are refused; and tag names are matched as
Azure matches them. Each in a preview and in a deployment."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
from conftest import run_cached
from support import both_modes, kubernetes_objects
from support.config import refused
from support.kubernetes_objects import listed, namespace
from support.plan import lines, lines_by

from components.errors import ManagedPoolError, PreflightError
from components.ownership import ownership
from components.pools.agent_pool_calls import refuse_others_pool
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

POOL = "azure-native:containerservice:AgentPool"
NAMESPACE, DAEMONSET = "kubernetes:core/v1:Namespace", "kubernetes:apps/v1:DaemonSet"
T4 = "Standard_NC4as_T4_v3"
ME = "aks-gpu/team"
OURS = {"aks-gpu-stack": ME}
ADOPTED = {**OURS, "aks-gpu-adopted": ME}
SYSTEM = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250, "osType": "Linux"}
GPUNP = {
    "name": "gpunp",
    "mode": "User",
    "vmSize": T4,
    "count": 1,
    "maxPods": 250,
    "nodeTaints": ["sku=gpu:NoSchedule"],
    "osType": "Linux",
    "osDiskSizeGB": 128,
    "tags": {"costcenter": "ml-42"},
}
BOTH = [True, False]  # a preview, a deployment
EXISTING = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}}


def cluster(**tags: str) -> dict[str, Any]:
    return existing_cluster(agentPoolProfiles=[SYSTEM, {**GPUNP, "tags": {"costcenter": "ml-42", **tags}}])


def in_both_modes(found: dict[str, Any], kubernetes: Any = None, **overrides: Any) -> None:
    """The team stack's plan on `found` hands the components the same Args in a preview and a
    deployment: the program branches on the mode only in its plan (tests/support/both_modes.py),
    so a test of that graph runs one mode."""
    both_modes.same_in_both_modes(lambda: OfflineReader(cluster=found, kubernetes=copy.deepcopy(kubernetes)), "team", **overrides)


def stopped(pools: dict[str, Any], preview: bool, kubernetes: Any = None, **overrides: Any) -> str:
    """The team stack refused in one line, with nothing registered; the cluster's pool gpunp
    adopted by it unless `found` says otherwise."""
    reader = OfflineReader(cluster=overrides.pop("found", None) or cluster(**ADOPTED), kubernetes=kubernetes)
    monitor = RecordingMonitor(AzureMocks(reader=reader))
    with pytest.raises(PreflightError) as refusal:
        run_program("team", overrides={"gpuPools": pools, **overrides}, monitor=monitor, preview=preview)
    assert "\n" not in str(refusal.value)
    assert monitor.registrations == []
    return str(refusal.value)


# --------------------------------------------------------------------------- a slip after adopting


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize("entry", [{}, {"vmSize": T4}, {"vmSize": T4, "nodeCount": 1}])
def test_an_adopted_pool_whose_entry_loses_existing_adopt_is_refused_before_it_is_replaced(preview, entry):
    message = stopped({"gpunp": entry}, preview)
    assert message.startswith(
        "aks-gpu:gpuPools.gpunp: the pool gpunp is the owner's, adopted by this stack (aks-gpu-adopted = aks-gpu/team)"
    )
    assert "put `existing: adopt` back in aks-gpu:gpuPools.gpunp" in message and "handing back what was adopted" in message


@pytest.mark.parametrize("preview", BOTH)
def test_using_an_adopted_pool_is_refused_until_it_is_handed_back(preview):
    message = stopped({"gpunp": {"existing": "use"}}, preview)
    assert "carries this stack's tag (aks-gpu-stack = aks-gpu/team)" in message
    # Not "remove its entry and `up`", which deletes a pool the stack created (#45).
    assert "take it out of the state without deleting it (`pulumi state delete" in message


@pytest.mark.parametrize("preview", BOTH)
def test_an_adopted_pool_removed_from_the_config_is_said_to_be_released_and_is_not_declared(preview):
    if preview:  # the graph: `side_by_side`'s pool "gone", adopted and no longer in the config, is not declared
        assert sorted(p.inputs["agentPoolName"] for p in side_by_side().of_type(POOL)) == sorted(SIDE_BY_SIDE)
    warnings = lines("team", preview, cluster=cluster(**ADOPTED), gpuPools={"t4": {"vmSize": T4}}).warnings  # from the plan
    said = [w for w in warnings if w.startswith("gpuPools: the pool gpunp that this stack adopted")]
    assert said and "releases it (the preview shows `delete[retain]`" in said[0]


# --------------------------------------------------------------------------- released, not deleted


# The owner's pools of the tests below side by side in one cluster, each adopted with its entry,
# and each with its own tags, beside one it adopted that the config no longer names ("gone"):
# each is declared from its own, so one run serves each test's pool.
SIDE_BY_SIDE = {
    "released": ({}, {}),
    "deleted": ({}, {"onDestroy": "delete"}),
    "premark": (OURS, {}),  # adopted before the adopted mark
    "letters": ({"AKS-GPU-STACK": ME}, {}),  # this stack's tag, in other letters
}


@functools.cache
def side_by_side():
    """The team stack adopting each of SIDE_BY_SIDE's pools, in a preview (its plan shown to hand a deployment the same Args)."""
    found = existing_cluster(
        agentPoolProfiles=[
            SYSTEM,
            *({**GPUNP, "name": name, "tags": {"costcenter": "ml-42", **tags}} for name, (tags, _) in SIDE_BY_SIDE.items()),
            {**GPUNP, "name": "gone", "tags": {"costcenter": "ml-42", **ADOPTED}},  # adopted, then removed from the config
        ]
    )
    pools = {name: {"existing": "adopt", **entry} for name, (_, entry) in SIDE_BY_SIDE.items()}
    in_both_modes(found, gpuPools=pools)
    return run_cached("team", cluster=found, gpuPools=pools)[0]


def adopted(name: str):
    """The agent pool `side_by_side` declares for the owner's pool `name`, and the run's lines about it."""
    done = side_by_side()
    [pool] = [p for p in done.of_type(POOL) if p.inputs["agentPoolName"] == name]
    return pool, [i for i in done.infos if f"gpuPools.{name} (adopt)" in i]


def test_an_adopted_pool_is_released_on_destroy_and_marked_as_adopted():
    pool, infos = adopted("released")
    assert pool.options["retainOnDelete"] is True
    # On an existing cluster nothing is deleted with the cluster: retainOnDelete alone decides.
    assert "deletedWith" not in pool.options
    assert pool.inputs["tags"] == {"costcenter": "ml-42", **ADOPTED}
    assert any("a destroy, or removing it from the config, releases it" in i for i in infos)


def test_an_adopted_pool_the_config_lets_the_stack_delete_is_deleted_on_destroy():
    pool, infos = adopted("deleted")
    assert pool.options["retainOnDelete"] is False
    assert any("onDestroy: delete: a destroy, or removing it from the config, deletes it" in i for i in infos)


def provider_deletes(run, condemned: set[str]) -> set[str]:
    """Which of `condemned` the engine sends to their provider's Delete, from the state's
    options (the old state's, for a resource no longer in the program: step_generator.go
    GenerateDeletes passes the state's resource to NewDeleteStep): DeleteStep.Apply skips it
    when `s.old.RetainOnDelete`, before it looks at deletedWith (pulumi/pulumi
    pkg/resource/deploy/step.go at 1b594989); a replacement's delete-first too."""
    return {
        urn
        for urn in condemned
        if not run.by_urn(urn).options["retainOnDelete"] and run.by_urn(urn).options.get("deletedWith") not in condemned
    }


def test_a_destroy_sends_no_delete_for_what_was_adopted_and_deletes_what_the_stack_made(adopted_beside_own):
    done = adopted_beside_own
    everything = {r.urn for r in done.resources if r.custom}
    sent = {(done.by_urn(urn).type, done.by_urn(urn).name) for urn in provider_deletes(done, everything)}
    adopted = {(POOL, "gpu-pool-gpunp-agent-pool"), (NAMESPACE, "nvidia-device-plugin-ns"), (DAEMONSET, "nvidia-device-plugin-ds")}
    assert not sent & adopted
    assert {(POOL, "gpu-pool-t4-agent-pool"), ("kubernetes:networking.k8s.io/v1:NetworkPolicy", "nvidia-device-plugin-netpol")} <= sent


def test_the_stacks_own_pools_beside_an_adopted_one_carry_only_the_owner_tag_and_are_deleted_as_before(adopted_beside_own):
    pools = {p.inputs["agentPoolName"]: p for p in adopted_beside_own.of_type(POOL)}
    assert {name: p.options["retainOnDelete"] for name, p in pools.items()} == {"gpunp": True, "t4": False}
    assert pools["t4"].inputs["tags"] == OURS


def test_a_pool_adopted_before_the_adopted_mark_is_marked_and_released_from_this_up_on():
    pool, infos = adopted("premark")
    assert "import" not in pool.options and pool.options["retainOnDelete"] is True
    assert pool.inputs["tags"]["aks-gpu-adopted"] == ME
    assert any("marked by this `up` as adopted (aks-gpu-adopted)" in i for i in infos)


@pytest.mark.parametrize(
    "overrides, key",
    [
        (
            {"gpuPools": {"t4": {"vmSize": T4, "onDestroy": "release"}}},
            r"aks-gpu:gpuPools\.t4\.onDestroy = 'release': only with existing: adopt",
        ),
        (
            {"gpuPools": {"gpunp": {"existing": "use", "onDestroy": "delete"}}},
            r"aks-gpu:gpuPools\.gpunp\.onDestroy = 'delete': only with existing: adopt",
        ),
        ({"devicePlugin": {"onDestroy": "release"}}, r"aks-gpu:devicePlugin\.onDestroy = 'release': only with devicePlugin\.adopt: true"),
    ],
)
def test_on_destroy_is_refused_where_nothing_was_adopted(overrides, key):
    refused(rf"^invalid config {key}", **EXISTING, **overrides)


def test_on_destroy_takes_release_or_delete_only():
    refused(
        r"^invalid config aks-gpu:gpuPools\.gpunp\.onDestroy = 'keep'",
        **EXISTING,
        gpuPools={"gpunp": {"existing": "adopt", "onDestroy": "keep"}},
    )


# --------------------------------------------------------------------------- tag names as Azure matches them


@pytest.mark.parametrize("preview", BOTH)
def test_a_pool_tagged_by_another_stack_in_other_letters_is_not_adopted(preview):
    message = stopped({"gpunp": {"existing": "adopt"}}, preview, found=cluster(**{"AKS-GPU-STACK": "aks-gpu/other"}))
    assert "the pool belongs to another stack (aks-gpu-stack = aks-gpu/other)" in message


@pytest.mark.parametrize("preview", BOTH)
def test_a_pool_adopted_by_another_stack_is_not_adopted_again(preview):
    message = stopped({"gpunp": {"existing": "adopt"}}, preview, found=cluster(**{"Aks-Gpu-Adopted": "aks-gpu/other"}))
    assert "belongs to another stack (aks-gpu-adopted = aks-gpu/other)" in message


@pytest.mark.parametrize("preview", BOTH)
def test_a_tag_value_in_other_letters_is_another_stacks_because_azure_compares_values_as_written(preview):
    message = stopped({"gpunp": {"existing": "adopt"}}, preview, found=cluster(**{"aks-gpu-stack": "AKS-GPU/TEAM"}))
    assert "belongs to another stack (aks-gpu-stack = AKS-GPU/TEAM)" in message


def test_this_stacks_tag_in_other_letters_is_this_stacks_and_declared_once_in_its_own_spelling():
    pool, _ = adopted("letters")
    assert "import" not in pool.options
    assert pool.inputs["tags"] == {"costcenter": "ml-42", **ADOPTED}


@pytest.mark.parametrize("preview", BOTH)
def test_a_new_pool_named_like_another_stacks_pool_in_other_letters_is_refused(preview):
    # What the run says from its plan (tests/support/plan.py), with no run.
    reader = OfflineReader(cluster=cluster(**{"AKS-GPU-STACK": "aks-gpu/other"}))
    said = "the cluster already has a pool named 'gpunp' (it carries aks-gpu-stack = aks-gpu/other)"
    if preview:
        assert any(said in w for w in lines_by(reader, "team", True, gpuPools={"gpunp": {"vmSize": T4}}).warnings)
        return
    with pytest.raises(PreflightError) as error:
        lines_by(reader, "team", False, gpuPools={"gpunp": {"vmSize": T4}})
    assert said in str(error.value)


def test_the_managed_pools_create_refuses_another_stacks_pool_whatever_the_tags_letters():
    there = {"properties": {"tags": {"AKS-GPU-STACK": "aks-gpu/other"}}}
    body = {"agentPoolName": "gpunp", "clusterName": "team-aks", "properties": {"tags": {"aks-gpu-stack": ME}}}
    with pytest.raises(ManagedPoolError, match=r"is not this stack's \(aks-gpu-stack = aks-gpu/other"):
        refuse_others_pool(body, there)
    there["properties"]["tags"] = {"AKS-GPU-STACK": ME}
    refuse_others_pool(body, there)


def test_tag_names_match_without_case_and_values_as_written():
    assert ownership.tag({"AKS-GPU-STACK": "a/b"}, "aks-gpu-stack") == "a/b"
    assert ownership.owner_of({"aks-gpu-stack": "A/B"}) == "A/B" != "a/b"
    assert ownership.without({"AKS-GPU-STACK": "x", "team": "ml"}, {"aks-gpu-stack": "y"}) == {"team": "ml"}


# --------------------------------------------------------------------------- the guide's namespace and DaemonSet


def guide_daemon_set(**annotations: str) -> dict[str, Any]:
    found = kubernetes_objects.guide_daemon_set("gpu-resources")
    found["metadata"].setdefault("annotations", {}).update(annotations)
    return found


def with_plugin(pool_tags: dict[str, str], ns: dict[str, str], ds: dict[str, str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cluster and what it runs: gpunp with `pool_tags`, the guide's namespace and DaemonSet annotated."""
    return cluster(**pool_tags), listed(namespace("gpu-resources", **ns), guide_daemon_set(**(ns if ds is None else ds)))


def plugin_run(found: dict[str, Any], kubernetes: dict[str, Any], preview: bool, **overrides: Any):
    monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(cluster=found, kubernetes=copy.deepcopy(kubernetes))))
    return run_program("team", overrides={"gpuPools": {"gpunp": {"existing": "adopt"}}, **overrides}, monitor=monitor, preview=preview)


@pytest.fixture(scope="module")
def adopted_beside_own():
    """A deployment adopting gpunp, the guide's namespace and DaemonSet, beside a pool t4 of its own."""
    pools = {"gpunp": {"existing": "adopt"}, "t4": {"vmSize": T4}}
    in_both_modes(*with_plugin({}, {}), gpuPools=pools, devicePlugin={"adopt": True})
    return plugin_run(*with_plugin({}, {}), False, gpuPools=pools, devicePlugin={"adopt": True})


def test_the_adopted_namespace_and_daemonset_are_released_on_destroy_and_marked_as_adopted(adopted_beside_own):
    done = adopted_beside_own
    for found in (done.one(NAMESPACE, "gpu-resources"), done.one(DAEMONSET, "nvidia-device-plugin-daemonset")):
        assert found.options["retainOnDelete"] is True and found.options["import"]
        assert found.inputs["metadata"]["annotations"]["aks-gpu-adopted"] == ME
    assert any("`pulumi destroy` releases both" in i for i in done.infos)


def test_the_adopted_namespace_and_daemonset_may_be_deleted_when_the_config_says_so():
    in_both_modes(*with_plugin({}, {}), gpuPools={"gpunp": {"existing": "adopt"}}, devicePlugin={"adopt": True, "onDestroy": "delete"})
    done = plugin_run(*with_plugin({}, {}), True, devicePlugin={"adopt": True, "onDestroy": "delete"})
    assert done.one(NAMESPACE, "gpu-resources").options["retainOnDelete"] is False
    assert done.one(DAEMONSET, "nvidia-device-plugin-daemonset").options["retainOnDelete"] is False


def test_a_later_run_keeps_the_adopted_objects_released_and_imports_nothing():
    in_both_modes(*with_plugin(ADOPTED, ADOPTED), gpuPools={"gpunp": {"existing": "adopt"}}, devicePlugin={"adopt": True})
    done = plugin_run(*with_plugin(ADOPTED, ADOPTED), True, devicePlugin={"adopt": True})
    plugin = done.one(DAEMONSET, "nvidia-device-plugin-daemonset")
    assert "import" not in plugin.options and plugin.options["retainOnDelete"] is True


@pytest.mark.parametrize("preview", BOTH)
def test_dropping_device_plugin_adopt_after_adopting_is_refused(preview):
    found, kubernetes = with_plugin(ADOPTED, ADOPTED)
    message = stopped({"gpunp": {"existing": "adopt"}}, preview, kubernetes, found=found)
    assert message.startswith("preflight: aks-gpu:devicePlugin.adopt is not true, but the namespace gpu-resources")
    assert "set aks-gpu:devicePlugin.adopt: true again" in message


@pytest.mark.parametrize("preview", BOTH)
def test_moving_the_device_plugin_out_of_the_adopted_namespace_is_refused(preview):
    found, kubernetes = with_plugin(ADOPTED, ADOPTED)
    message = stopped(
        {"gpunp": {"existing": "adopt"}}, preview, kubernetes, found=found, devicePlugin={"adopt": True, "namespace": "nvidia"}
    )
    assert "devicePlugin.namespace = nvidia, but the namespace gpu-resources" in message
    assert "set devicePlugin.namespace back to gpu-resources" in message


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize(
    "ns, ds, what",
    [
        ({"aks-gpu-stack": "aks-gpu/other"}, {}, "namespace gpu-resources belongs to another stack (aks-gpu-stack = aks-gpu/other)"),
        ({}, {"aks-gpu-adopted": "aks-gpu/other"}, "belongs to another stack (aks-gpu-adopted = aks-gpu/other)"),
    ],
)
def test_another_stacks_namespace_or_daemonset_is_not_adopted(preview, ns, ds, what):
    found, kubernetes = with_plugin({}, ns, ds)
    message = stopped({"gpunp": {"existing": "adopt"}}, preview, kubernetes, found=found, devicePlugin={"adopt": True})
    assert message.startswith("preflight: aks-gpu:devicePlugin.adopt = true, but ") and what in message


@pytest.mark.parametrize("preview", BOTH)
def test_adopted_objects_the_stack_no_longer_declares_are_said_to_be_released(preview):
    found, kubernetes = with_plugin(ADOPTED, ADOPTED)
    pools = {"t4": {"vmSize": T4, "management": "aks-managed"}}
    if preview:
        in_both_modes(found, kubernetes, gpuPools=pools)
        monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(cluster=found, kubernetes=copy.deepcopy(kubernetes))))
        done = run_program("team", overrides={"gpuPools": pools}, monitor=monitor, preview=True)
        assert not done.of_type(DAEMONSET) or all("device-plugin" not in d.name for d in done.of_type(DAEMONSET))
    said = " ".join(lines_by(OfflineReader(cluster=found, kubernetes=kubernetes), "team", preview, gpuPools=pools).warnings)
    assert "this `up` releases the namespace gpu-resources and its DaemonSet nvidia-device-plugin-daemonset it adopted" in said
    assert "gpuPools: the pool gpunp that this stack adopted" in said


@pytest.mark.parametrize("preview", BOTH)
def test_the_guard_holds_with_preflight_off(preview):
    found, kubernetes = with_plugin(ADOPTED, ADOPTED)
    message = stopped({"gpunp": {"existing": "adopt"}}, preview, kubernetes, found=found, preflight={"mode": "off"})
    assert message.startswith("preflight: aks-gpu:devicePlugin.adopt is not true")
    assert "put `existing: adopt` back" in stopped({"gpunp": {"vmSize": T4}}, preview, kubernetes, found=found, preflight={"mode": "off"})
