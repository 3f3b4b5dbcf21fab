"""The AKS-managed pool's provider's diff (components/pools/managed_gpu_pool.py), and the
update or replacement each answer leads to against the fake AKS: what changes in place, what
AKS fixes at creation and so replaces the pool deleting it first, a version pin against what
AKS runs, the pool changed outside Pulumi, and a plan over values a preview does not know.
(Create, read and delete: test_managed_pool_provider.py; the waits on a busy cluster:
test_managed_pool_waits.py; through the engine's host: test_managed_pool_provider_host.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from pulumi.output import Unknown
from pulumi.runtime import rpc
from support.managed_pool import CLUSTER, GROUP, PROVIDER, inputs, up

from components.cluster.cluster_facts import OWNER_TAG
from components.errors import ManagedPoolError
from components.pools import managed_gpu_pool as mgp
from components.pools.settings import GpuPoolConfig

T4 = "Standard_NC4as_T4_v3"
A100 = "Standard_NC24ads_A100_v4"
OURS = {OWNER_TAG: "aks-gpu/team"}
KEY = (GROUP, CLUSTER, "gpu")


def refreshed(olds: dict[str, Any]) -> dict[str, Any]:
    """The state after `pulumi refresh`."""
    read = PROVIDER.read(mgp.pool_id(olds), olds)
    assert read.id, "the pool is still there"
    return read.outs


# --------------------------------------------------------------------------- in place or replaced


def test_count_and_taints_change_in_place(aks):
    """`az aks nodepool scale` / `update --node-taints`: AKS changes these on a live pool."""
    outs = PROVIDER.create(inputs()).outs
    spot = GpuPoolConfig(vm_size=T4, management="aks-managed", node_count=2)
    diff = PROVIDER.diff(mgp.pool_id(outs), outs, inputs(spot))
    assert diff.changes and diff.replaces == []
    up(outs, inputs(spot))
    assert [r.method for r in aks.requests] == ["GET", "PUT", "PUT"], "a create reads the pool of its name first"
    assert aks.pools[(GROUP, CLUSTER, "gpu")]["properties"]["count"] == 2


def test_tags_change_in_place():
    olds = {**inputs(tags=OURS)}
    news = inputs(tags={**OURS, "team": "ml"})
    diff = PROVIDER.diff(mgp.pool_id(olds), olds, news)
    assert diff.changes and not diff.replaces


@pytest.mark.parametrize(
    "change, replaced",
    [
        ({"vm_size": A100}, "properties.vmSize"),
        ({"vm_size": A100, "mig_profile": "MIG1g"}, "properties.gpuInstanceProfile"),
        ({"spot": True}, "properties.scaleSetPriority"),
        ({"name": "gpu2"}, "agentPoolName"),
    ],
)
def test_what_aks_fixes_at_creation_replaces_the_pool_deleting_the_old_one_first(aks, change, replaced):
    old = PROVIDER.create(inputs()).outs
    new = inputs(GpuPoolConfig(**{"vm_size": T4, "management": "aks-managed", **change}))
    diff = PROVIDER.diff(mgp.pool_id(old), old, new)
    assert replaced in diff.replaces and diff.delete_before_replace is True
    up(old, new)
    assert [r.method for r in aks.requests] == ["GET", "PUT", "DELETE", "GET", "PUT"], "each create reads first: a 404 after the delete"
    assert aks.calls("DELETE")[0].path.endswith("/agentPools/gpu")


@pytest.mark.parametrize("member", ["vnetSubnetID", "podSubnetID"])
def test_a_subnet_read_anew_from_an_existing_cluster_replaces_the_pool_deleting_first(aks, member):
    """AKS: "Changing property 'agentPoolProfile.vnetSubnetID' is not allowed" (Azure/AKS#695):
    a pool whose subnet changes is replaced, not updated in place, and the fake AKS refuses the
    in-place PUT as AKS does."""
    subnet = "/subscriptions/s/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/"
    olds = inputs()
    olds["properties"] = {**olds["properties"], member: subnet + "a"}
    state = PROVIDER.create(olds).outs
    news = {**olds, "properties": {**olds["properties"], member: subnet + "b"}}
    diff = PROVIDER.diff(mgp.pool_id(state), state, news)
    assert diff.replaces == [f"properties.{member}"] and diff.delete_before_replace
    with pytest.raises(ManagedPoolError, match="PropertyChangeNotAllowed"):
        PROVIDER.update(mgp.pool_id(state), state, news)


@pytest.mark.parametrize(
    "key, value", [("clusterName", "a-cluster"), ("clusterName", "z-cluster"), ("resourceGroupName", "a-rg"), ("resourceGroupName", "z-rg")]
)
def test_a_pool_moved_to_another_cluster_or_group_is_replaced_whichever_name_sorts_first(key, value):
    olds = inputs()
    diff = PROVIDER.diff(mgp.pool_id(olds), olds, {**inputs(), key: value})
    assert key in diff.replaces and diff.delete_before_replace


@pytest.mark.parametrize("old_uid, new_uid", [("uid-9", "uid-1"), ("uid-1", "uid-9")])
def test_a_cluster_created_anew_gets_its_pool_back_whatever_its_new_uid(old_uid, new_uid):
    olds = inputs(uid=old_uid)
    diff = PROVIDER.diff(mgp.pool_id(olds), olds, inputs(uid=new_uid))
    assert diff.changes and diff.replaces == []


# --------------------------------------------------------------------------- a version pin


def test_a_pinned_minor_version_is_satisfied_by_its_patch_releases(aks):
    """AKS picks the newest patch of a `1.NN` pin: `1.34` is met by `1.34.2`, not `1.35.0`."""
    pool = GpuPoolConfig(vm_size=T4, management="aks-managed")
    outs = PROVIDER.create(inputs(pool, version="1.34")).outs
    aks.pools[(GROUP, CLUSTER, "gpu")]["properties"]["orchestratorVersion"] = "1.34.2"
    refreshed = PROVIDER.read(mgp.pool_id(outs), outs).outs
    assert not PROVIDER.diff("", refreshed, inputs(pool, version="1.34")).changes
    assert PROVIDER.diff("", refreshed, inputs(pool, version="1.35")).replaces == []


def test_an_unpinned_version_moved_by_an_upgrade_channel_is_left_alone(aks):
    outs = PROVIDER.create(inputs()).outs
    aks.pools[(GROUP, CLUSTER, "gpu")]["properties"]["orchestratorVersion"] = "1.35.1"
    refreshed = PROVIDER.read(mgp.pool_id(outs), outs).outs
    assert not PROVIDER.diff("", refreshed, inputs()).changes


def test_a_moved_version_pin_updates_the_pool_in_place(aks):
    olds = PROVIDER.create(inputs(version="1.33")).outs
    news = inputs(version="1.34")
    diff = PROVIDER.diff(mgp.pool_id(olds), olds, news)
    assert diff.changes and diff.replaces == []
    PROVIDER.update(mgp.pool_id(olds), olds, news)
    assert aks.calls("PUT")[-1].body["properties"]["orchestratorVersion"] == "1.34"


def test_a_minor_pin_that_aks_moved_past_is_a_change(aks):
    """Pinned to 1.33, upgraded to 1.34.1 outside Pulumi: the plan says so (a patch of 1.33
    would satisfy the pin: test_a_pinned_minor_version_is_satisfied_by_its_patch_releases)."""
    olds = PROVIDER.create(inputs(version="1.33")).outs
    aks.pools[KEY]["properties"]["orchestratorVersion"] = "1.34.1"
    state = refreshed(olds)
    assert PROVIDER.diff(mgp.pool_id(state), state, inputs(version="1.33")).changes


# --------------------------------------------------------------------------- changed outside Pulumi


@pytest.mark.parametrize("taints", [["sku=gpu:NoSchedule", "team=ml:NoSchedule"], []], ids=["one added", "all removed"])
def test_taints_changed_outside_pulumi_are_put_back_by_the_next_up(aks, taints):
    """The GPU taint keeps other pods off the GPU nodes: a refresh sees it changed, and the
    next `up` updates the pool in place to the declared taints, never replacing it."""
    olds = PROVIDER.create(inputs()).outs
    aks.pools[KEY]["properties"]["nodeTaints"] = taints
    state = refreshed(olds)
    diff = PROVIDER.diff(mgp.pool_id(state), state, inputs())
    assert diff.changes and diff.replaces == []
    PROVIDER.update(mgp.pool_id(state), state, inputs())
    assert aks.calls("PUT")[-1].body["properties"]["nodeTaints"] == ["sku=gpu:NoSchedule"]


# --------------------------------------------------------------------------- what a preview does not know


@pytest.mark.parametrize("unknown", [rpc.UNKNOWN, Unknown()], ids=["the SDK's placeholder string", "an Unknown"])
def test_a_cluster_uid_a_preview_does_not_know_is_no_change(unknown):
    """The SDK's own placeholder (rpc.UNKNOWN, a string object of its own) and the host's
    Unknown: the update that follows knows the UID and diffs again."""
    olds = inputs()
    assert not PROVIDER.diff(mgp.pool_id(olds), olds, {**inputs(), mgp.CLUSTER_UID: unknown}).changes


@pytest.mark.parametrize("unknown", [rpc.UNKNOWN, Unknown()], ids=["the SDK's placeholder string", "an Unknown"])
def test_a_property_a_preview_does_not_know_is_a_change(unknown):
    """Nothing says an unknown count will be the count the pool has."""
    olds = inputs()
    news = inputs()
    news["properties"] = {**news["properties"], "count": unknown}
    assert PROVIDER.diff(mgp.pool_id(olds), olds, news).changes
