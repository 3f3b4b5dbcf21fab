"""The AKS-managed GPU pool's dynamic provider, against a local fake of the agentPools REST
calls (tests/fake_aks.py): what a real create, refresh, second `up`, switch and destroy send
to Azure. The engine's part (which method it calls when) is Pulumi's documented dynamic
provider contract (pulumi/dynamic/__main__.py: Diff passes `deleteBeforeReplace`; Read with
an empty ID drops the resource on refresh); these tests play it step by step. Azure's
refusals other than 404 and 409 fail the step. (What is a change: test_managed_pool_diff.py;
a busy cluster's 409s and the time limits: test_managed_pool_waits.py; through the engine's
host: test_managed_pool_provider_host.py.)
"""

from __future__ import annotations

import pytest
from support.managed_pool import CLUSTER, GROUP, PROVIDER, T4, inputs, up

from components.cluster.cluster_facts import OWNER_TAG
from components.errors import ManagedPoolError
from components.pools import managed_gpu_pool as mgp
from components.pools.settings import GpuPoolConfig

A100 = "Standard_NC24ads_A100_v4"


KEY = (GROUP, CLUSTER, "gpu")


def test_create_puts_the_managed_gpu_body_at_the_stable_api_version(aks):
    """agentPools PUT with gpuProfile.nvidia.managementMode Managed (NvidiaGPUProfile)."""
    outs = PROVIDER.create(inputs()).outs
    (put,) = aks.calls("PUT")
    assert put.path.endswith(f"/managedClusters/{CLUSTER}/agentPools/gpu") and put.api_version == "2026-08-01"
    body = put.body["properties"]
    assert body["gpuProfile"] == {"driver": "Install", "nvidia": {"managementMode": "Managed"}}
    assert (body["vmSize"], body["count"], body["mode"], body["osType"]) == (T4, 1, "User", "Linux")
    assert body["nodeTaints"] == ["sku=gpu:NoSchedule"]
    assert outs["provisioningState"] == "Succeeded"


def test_create_adopts_a_pool_left_by_a_failed_create_instead_of_failing(aks):
    """A failed create leaves no state, so the next `up` creates again: ARM's PUT is
    idempotent, where `az aks nodepool add` answered "already exists"."""
    PROVIDER.create(inputs())
    outs = PROVIDER.create(inputs()).outs
    assert outs["provisioningState"] == "Succeeded" and len(aks.pools) == 1


def test_a_refresh_after_an_outside_deletion_drops_the_pool_and_the_next_up_creates_it(aks):
    outs = PROVIDER.create(inputs()).outs
    aks.pools.clear()  # `az aks nodepool delete` by someone else
    assert PROVIDER.read(mgp.pool_id(outs), outs).id is None, "an empty ID: refresh removes it from the state"
    up(None, inputs())
    assert len(aks.pools) == 1


def test_a_refresh_sees_a_count_changed_outside_and_the_next_up_puts_it_back(aks):
    outs = PROVIDER.create(inputs()).outs
    aks.pools[(GROUP, CLUSTER, "gpu")]["properties"]["count"] = 3  # `az aks nodepool scale` by someone else
    refreshed = PROVIDER.read(mgp.pool_id(outs), outs).outs
    assert refreshed["properties"]["count"] == 3
    diff = PROVIDER.diff(mgp.pool_id(outs), refreshed, inputs())
    assert diff.changes and not diff.replaces
    up(refreshed, inputs())
    assert aks.calls("PUT")[-1].body["properties"]["count"] == 1


def test_a_second_up_with_nothing_changed_sends_nothing(aks):
    outs = PROVIDER.create(inputs()).outs
    refreshed = PROVIDER.read(mgp.pool_id(outs), outs).outs
    for olds in (outs, refreshed):
        assert not PROVIDER.diff(mgp.pool_id(olds), olds, inputs()).changes


def test_a_managed_mig_pool_goes_over_the_preview_api_with_mig_strategy_single(aks):
    """migStrategy exists in preview agentPools versions only (NvidiaGPUProfile)."""
    PROVIDER.create(inputs(GpuPoolConfig(vm_size=A100, management="aks-managed", mig_profile="MIG1g")))
    (put,) = aks.calls("PUT")
    assert put.api_version == mgp.MIG_API_VERSION
    assert put.body["properties"]["gpuProfile"] == {"driver": "Install", "nvidia": {"managementMode": "Managed", "migStrategy": "Single"}}
    assert put.body["properties"]["gpuInstanceProfile"] == "MIG1g"


def test_an_autoscaled_pool_keeps_the_autoscalers_count_through_a_refresh_and_an_update(aks):
    pool = GpuPoolConfig(vm_size=T4, management="aks-managed", min_count=0, max_count=3, node_count=0)
    outs = PROVIDER.create(inputs(pool)).outs
    aks.pools[(GROUP, CLUSTER, "gpu")]["properties"]["count"] = 2  # the autoscaler
    refreshed = PROVIDER.read(mgp.pool_id(outs), outs).outs
    assert not PROVIDER.diff("", refreshed, inputs(pool)).changes
    wider = GpuPoolConfig(vm_size=T4, management="aks-managed", min_count=0, max_count=5, node_count=0)
    up(refreshed, inputs(wider))
    assert aks.calls("PUT")[-1].body["properties"]["count"] == 2, "an update does not scale the pool back"


AUTOSCALED = GpuPoolConfig(vm_size=T4, management="aks-managed", min_count=0, max_count=3, node_count=0)


def test_a_create_that_takes_over_an_autoscaled_running_pool_keeps_the_count_it_runs(aks):
    """The documented move from an earlier release's resource, or a lost state: the create meets
    a pool the autoscaler has moved. It reads the pool first and sends that count, where the
    config's would be a manual scale AKS refuses ("Cannot manually scale", the fake as AKS)."""
    PROVIDER.create(inputs(AUTOSCALED))
    aks.pools[KEY]["properties"]["count"] = 2  # the autoscaler
    aks.requests.clear()
    outs = PROVIDER.create(inputs(AUTOSCALED)).outs  # the state was lost: the engine creates again
    get, put = aks.pool_calls()
    assert (get.method, put.method) == ("GET", "PUT"), "read before the PUT"
    assert put.body["properties"]["count"] == 2 and outs["properties"]["count"] == 2
    assert aks.pools[KEY]["properties"]["count"] == 2, "nothing scaled"


def test_without_the_read_the_takeover_would_meet_the_autoscalers_refusal(aks):
    """What the read prevents, as the fake AKS answers a PUT of the config's count."""
    PROVIDER.create(inputs(AUTOSCALED))
    aks.pools[KEY]["properties"]["count"] = 2
    with pytest.raises(ManagedPoolError, match="Cannot manually scale AgentPool gpu with cluster autoscaler enabled"):
        mgp.put_pool(inputs(AUTOSCALED), "create")


def test_a_create_of_a_new_pool_reads_a_404_and_puts_the_configs_count(aks):
    PROVIDER.create(inputs(AUTOSCALED))
    get, put = aks.pool_calls()
    assert (get.method, put.method) == ("GET", "PUT")
    assert put.body["properties"]["count"] == 0, "a new pool starts at the config's count"


def test_a_create_over_a_fixed_pool_sends_the_configs_count(aks):
    """No autoscaler: the config's count is the pool's, and the create scales to it."""
    PROVIDER.create(inputs())
    aks.pools[KEY]["properties"]["count"] = 3
    PROVIDER.create(inputs())
    assert aks.calls("PUT")[-1].body["properties"]["count"] == 1


def test_a_cluster_created_anew_gets_the_pool_again_and_a_preview_of_a_cluster_update_shows_nothing(aks):
    outs = PROVIDER.create(inputs(uid="uid-1")).outs
    assert not PROVIDER.diff("", outs, inputs(uid=mgp.UNKNOWN)).changes, "unknown in a preview: no change"
    diff = PROVIDER.diff("", outs, inputs(uid="uid-2"))
    assert diff.changes and diff.replaces == []
    aks.pools.clear()  # the old cluster took its pools with it
    up(outs, inputs(uid="uid-2"))
    assert (GROUP, CLUSTER, "gpu") in aks.pools


def test_delete_twice_and_delete_with_the_cluster_gone_both_succeed(aks):
    outs = PROVIDER.create(inputs()).outs
    PROVIDER.delete(mgp.pool_id(outs), outs)
    PROVIDER.delete(mgp.pool_id(outs), outs)
    aks.clusters.clear()
    PROVIDER.delete(mgp.pool_id(outs), outs)
    assert [r.method for r in aks.requests] == ["GET", "PUT", "DELETE", "DELETE", "DELETE"] and not aks.pools


def test_a_refusal_other_than_not_found_fails_the_step(aks):
    """A 400 (here: a fixed property changed behind the diff's back) is an error, not success."""
    PROVIDER.create(inputs())
    with pytest.raises(ManagedPoolError, match="PropertyChangeNotAllowed"):
        PROVIDER.update("", {}, inputs(GpuPoolConfig(vm_size=A100, management="aks-managed")))


OURS = {OWNER_TAG: "aks-gpu/team"}


def test_on_an_existing_cluster_a_create_never_overwrites_somebody_elses_pool(aks):
    """The pool name is taken by a pool this stack did not add (no owner tag, or another
    stack's): the create fails before its PUT, and that pool is as it was."""
    for theirs in (None, {OWNER_TAG: "aks-gpu/prod"}):
        aks.pools.clear()
        PROVIDER.create(inputs(tags=theirs))  # somebody else's pool of the name
        puts = len(aks.calls("PUT"))
        with pytest.raises(ManagedPoolError, match=r"node pool gpu already exists in cluster .* and is not this stack's"):
            PROVIDER.create(inputs(tags=OURS))
        assert len(aks.calls("PUT")) == puts, "nothing was sent"


def test_on_an_existing_cluster_a_create_adopts_what_its_own_failed_create_left(aks):
    PROVIDER.create(inputs(tags=OURS))
    assert PROVIDER.create(inputs(tags=OURS)).outs["properties"]["tags"] == OURS


def test_a_refresh_answered_403_fails_and_never_drops_the_pool_from_state(aks):
    """Only 404 means gone: a refresh by an identity that may not read the pool must not tell
    Pulumi the pool was deleted."""
    olds = PROVIDER.create(inputs()).outs
    aks.refuse["GET"] = (403, "AuthorizationFailed")
    with pytest.raises(ManagedPoolError, match="AuthorizationFailed"):
        PROVIDER.read(mgp.pool_id(olds), olds)


def test_a_delete_answered_500_fails_instead_of_reporting_the_pool_gone(aks):
    olds = PROVIDER.create(inputs()).outs
    aks.refuse["DELETE"] = (500, "InternalServerError")
    with pytest.raises(ManagedPoolError, match="InternalServerError"):
        PROVIDER.delete(mgp.pool_id(olds), olds)
    assert KEY in aks.pools


def test_on_an_existing_cluster_the_refusal_names_the_pools_owner_or_says_it_has_none(aks):
    ours = {OWNER_TAG: "aks-gpu/team"}
    for theirs, says in (
        (None, f"({OWNER_TAG} = unset, this stack is aks-gpu/team)"),
        ({OWNER_TAG: "aks-gpu/prod"}, f"({OWNER_TAG} = aks-gpu/prod, this stack is aks-gpu/team)"),
    ):
        aks.pools.clear()
        PROVIDER.create(inputs(tags=theirs))
        with pytest.raises(ManagedPoolError) as refused:
            PROVIDER.create(inputs(tags=ours))
        assert says in str(refused.value)
