"""The AKS-managed pool's provider where a real stack meets it and the happy path does not:
the pool changed outside Pulumi, a plan over values a preview does not know, Azure's answers
other than 404 and 409, Retry-After at its edges, and the time limit each operation gets
(the happy path: test_managed_gpu_pool.py; through the engine's host: test_provider_host.py)."""

from __future__ import annotations

import math
import time
import types
from typing import Any

import fake_aks
import pytest
from azure.core.exceptions import HttpResponseError
from pulumi.output import Unknown
from pulumi.runtime import rpc
from test_managed_gpu_pool import CLUSTER, GROUP, PROVIDER, inputs

from components.azure.cluster_facts import OWNER_TAG
from components.resources import agent_pool_calls
from components.resources import managed_gpu_pool as mgp

KEY = (GROUP, CLUSTER, "gpu")


def fake_time(monkeypatch, monotonic: Any = time.monotonic, sleep: Any = time.sleep) -> None:
    """The REST calls' clock and sleep, replaced there alone (the fake AKS keeps real time)."""
    monkeypatch.setattr(agent_pool_calls, "time", types.SimpleNamespace(monotonic=monotonic, sleep=sleep))


def refreshed(olds: dict[str, Any]) -> dict[str, Any]:
    """The state after `pulumi refresh`."""
    read = PROVIDER.read(mgp.pool_id(olds), olds)
    assert read.id, "the pool is still there"
    return read.outs


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


def test_a_moved_version_pin_updates_the_pool_in_place(aks):
    olds = PROVIDER.create(inputs(version="1.33")).outs
    news = inputs(version="1.34")
    diff = PROVIDER.diff(mgp.pool_id(olds), olds, news)
    assert diff.changes and diff.replaces == []
    PROVIDER.update(mgp.pool_id(olds), olds, news)
    assert aks.calls("PUT")[-1].body["properties"]["orchestratorVersion"] == "1.34"


def test_a_minor_pin_that_aks_moved_past_is_a_change(aks):
    """Pinned to 1.33, upgraded to 1.34.1 outside Pulumi: the plan says so (a patch of 1.33
    would satisfy the pin: test_managed_gpu_pool.py)."""
    olds = PROVIDER.create(inputs(version="1.33")).outs
    aks.pools[KEY]["properties"]["orchestratorVersion"] = "1.34.1"
    state = refreshed(olds)
    assert PROVIDER.diff(mgp.pool_id(state), state, inputs(version="1.33")).changes


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


# --------------------------------------------------------------------------- Azure's other answers


def test_a_refresh_answered_403_fails_and_never_drops_the_pool_from_state(aks):
    """Only 404 means gone: a refresh by an identity that may not read the pool must not tell
    Pulumi the pool was deleted."""
    olds = PROVIDER.create(inputs()).outs
    aks.refuse["GET"] = (403, "AuthorizationFailed")
    with pytest.raises(HttpResponseError, match="AuthorizationFailed"):
        PROVIDER.read(mgp.pool_id(olds), olds)


def test_a_delete_answered_500_fails_instead_of_reporting_the_pool_gone(aks):
    olds = PROVIDER.create(inputs()).outs
    aks.refuse["DELETE"] = (500, "InternalServerError")
    with pytest.raises(HttpResponseError, match="InternalServerError"):
        PROVIDER.delete(mgp.pool_id(olds), olds)
    assert KEY in aks.pools


@pytest.mark.parametrize("status", [400, 500])
def test_a_refusal_with_a_busy_code_but_not_a_409_fails_at_once(aks, status, monkeypatch):
    """A 400 OperationNotAllowed (an operation AKS will not do at all: a stopped cluster) is
    no cluster busy with another operation: waiting would only spend the time limit."""
    slept: list[float] = []
    fake_time(monkeypatch, sleep=slept.append)
    aks.refuse["PUT"] = (status, "OperationNotAllowed")
    with pytest.raises(HttpResponseError, match="OperationNotAllowed"):
        PROVIDER.create(inputs())
    assert len(aks.calls("PUT")) == 1 and slept == []


# What AKS answers a stopped cluster (the wording of MicrosoftDocs/azure-docs#85161): the
# busy answer's code, with a message that names no operation in progress.
STOPPED = (
    409,
    "OperationNotAllowed",
    "Managed cluster is in Provisioning State(Succeeded) and Power State(Stopped), the operation cannot be performed.",
)


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_a_409_that_is_not_an_operation_in_progress_fails_at_once_with_aks_message(aks, method, monkeypatch):
    """OperationNotAllowed is AKS's busy code and also its answer to what it will never do: a
    stopped cluster is not waited on for the whole time limit and then called busy."""
    slept: list[float] = []
    fake_time(monkeypatch, sleep=slept.append)
    olds = PROVIDER.create(inputs()).outs if method == "DELETE" else None
    aks.refuse[method] = STOPPED
    with pytest.raises(HttpResponseError, match=r"Power State\(Stopped\), the operation cannot be performed"):
        PROVIDER.delete("", olds) if olds else PROVIDER.create(inputs())
    assert len(aks.calls(method)) == 1 and slept == []


@pytest.mark.parametrize(
    "code, message",
    [
        # The forms AKS sends (agent_pool_calls.py cites each), and the network's code.
        (
            "OperationNotAllowed",
            "Operation is not allowed: Another agentpool operation (nodepool1 - Creating) is in progress, please wait for it to finish before starting a new operation.",
        ),
        (
            "OperationNotAllowed",
            "Operation is not allowed because there's an in progress create managed cluster operation (operation ID: 0) on the managed cluster started on UTC 2025-02-27T11:27:05Z.",
        ),
        (
            "OperationNotAllowed",
            "Managed Cluster operation is not allowed: Another operation (Scaling) is in progress on agent pool (gpu).",
        ),
        ("AnotherOperationInProgress", "Another operation on this or dependent resource is in progress."),
    ],
)
def test_only_an_answer_that_an_operation_is_in_progress_is_waited_out(aks, monkeypatch, code, message):
    slept: list[float] = []
    fake_time(monkeypatch, sleep=slept.append)
    monkeypatch.setattr(fake_aks, "BUSY", {"code": code, "message": message})
    aks.busy = 2
    assert PROVIDER.create(inputs()).outs["provisioningState"] == "Succeeded"
    assert slept == [agent_pool_calls.BUSY_RETRY_SECONDS] * 2


def test_a_request_that_times_out_locally_is_not_reported_as_a_busy_cluster(aks, monkeypatch):
    from azure.core.exceptions import ServiceRequestTimeoutError

    def start() -> None:
        raise ServiceRequestTimeoutError("Connection timed out")

    with pytest.raises(TimeoutError) as raised:
        agent_pool_calls._begin(start, time.monotonic() + 60, "creating node pool gpu")
    said = str(raised.value)
    assert said.startswith("creating node pool gpu got no answer from Azure it could use within its time limit")
    assert "busy" not in said and "pulumi refresh" in said


@pytest.mark.parametrize("retry_after, waits", [("0", [0.0, 0.0]), ("-3", [0.0, 0.0])])
def test_a_retry_after_of_zero_or_less_is_tried_again_at_once(aks, monkeypatch, retry_after, waits):
    slept: list[float] = []
    fake_time(monkeypatch, sleep=slept.append)
    aks.busy, aks.busy_retry_after = 2, retry_after
    assert PROVIDER.create(inputs()).outs["provisioningState"] == "Succeeded"
    assert slept == waits


def test_a_busy_cluster_whose_waits_overshoot_the_limit_stops_before_it(aks, monkeypatch):
    """Retry-After 1000 s against the 60-minute limit: tries at 0, 1000, 2000 and 3000 s, and
    stops rather than wait past 3600 s, though AKS would be free at the fifth try."""
    clock = [0.0]
    fake_time(monkeypatch, lambda: clock[0], lambda s: clock.__setitem__(0, clock[0] + s))
    aks.busy, aks.busy_retry_after = 4, "1000"
    with pytest.raises(TimeoutError, match=r"^creating node pool gpu could not start within its time limit"):
        PROVIDER.create(inputs())
    assert len(aks.calls("PUT")) == 4 and clock[0] == 3000


def clock_that_moves_when_it_sleeps(monkeypatch) -> list[float]:
    """The REST calls' clock, moved only by their sleeps, which it records: an answer taken
    for a busy cluster is waited out to the time limit and ends there, without hanging a test."""
    clock, slept = [0.0], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    fake_time(monkeypatch, lambda: clock[0], sleep)
    return slept


@pytest.mark.parametrize("status", [400, 500])
def test_an_in_progress_answer_under_another_status_than_409_fails_at_once(aks, monkeypatch, status):
    """AKS says it is busy with a 409: the same code and message under a 400 or a 500 is
    not waited out, but fails at once with Azure's answer."""
    slept = clock_that_moves_when_it_sleeps(monkeypatch)
    aks.refuse["PUT"] = (status, fake_aks.BUSY["code"], fake_aks.BUSY["message"])
    with pytest.raises(HttpResponseError, match="in progress update node pool operation") as raised:
        PROVIDER.create(inputs())
    assert raised.value.status_code == status and len(aks.calls("PUT")) == 1 and slept == []


@pytest.mark.parametrize(
    "code, message",
    [
        (None, "The request conflicts with the resource's current state."),
        ("Conflict", "The request conflicts with an upgrade in progress."),
    ],
    ids=["no code", "another code"],
)
def test_a_409_with_neither_busy_code_fails_at_once_with_azures_answer(aks, monkeypatch, code, message):
    """A 409 whose error names no code (a proxy's, say), or a code that is neither
    AnotherOperationInProgress nor OperationNotAllowed, is no busy cluster, whatever its message
    says: it fails at once, with Azure's own answer."""
    slept = clock_that_moves_when_it_sleeps(monkeypatch)
    aks.refuse["PUT"] = (409, code, message)
    with pytest.raises(HttpResponseError, match=message) as raised:
        PROVIDER.create(inputs())
    assert raised.value.status_code == 409 and len(aks.calls("PUT")) == 1 and slept == []


def test_a_busy_answer_that_says_in_progress_only_in_its_details_is_waited_out(aks, monkeypatch):
    """OperationNotAllowed with an empty message and the operation in progress in its details:
    azure-core's message for the error carries the details, and that is what is read."""
    slept: list[float] = []
    fake_time(monkeypatch, sleep=slept.append)
    detail = {"code": "OperationNotAllowed", "message": "Another agentpool operation (gpu - Scaling) is in progress."}
    monkeypatch.setattr(fake_aks, "BUSY", {"code": "OperationNotAllowed", "message": "", "details": [detail]})
    aks.busy = 1
    assert PROVIDER.create(inputs()).outs["provisioningState"] == "Succeeded"
    assert slept == [agent_pool_calls.BUSY_RETRY_SECONDS] and len(aks.calls("PUT")) == 2


def test_on_an_existing_cluster_the_refusal_names_the_pools_owner_or_says_it_has_none(aks):
    ours = {OWNER_TAG: "aks-gpu/team"}
    for theirs, says in (
        (None, f"({OWNER_TAG} = unset, this stack is aks-gpu/team)"),
        ({OWNER_TAG: "aks-gpu/prod"}, f"({OWNER_TAG} = aks-gpu/prod, this stack is aks-gpu/team)"),
    ):
        aks.pools.clear()
        PROVIDER.create(inputs(tags=theirs))
        with pytest.raises(RuntimeError) as refused:
            PROVIDER.create(inputs(tags=ours))
        assert says in str(refused.value)


# --------------------------------------------------------------------------- time limits


def recording_factory(aks, limits: list) -> Any:
    real = fake_aks.client_factory_for(aks.url)

    def factory(subscription_id: str, api_version: str, endpoint: str = "", seconds: Any = None) -> Any:
        limits.append(seconds)
        return real(subscription_id, api_version, endpoint, seconds)

    return factory


def test_a_state_from_before_the_limits_were_inputs_gets_sixty_sixty_and_forty_five_minutes(aks, monkeypatch):
    """What docs/lifecycle.md promises an older stack: its create and update get 60 minutes,
    its delete 45, and the client's own retries end with them."""
    limits: list = []
    monkeypatch.setattr(agent_pool_calls, "client_factory", recording_factory(aks, limits))
    old = {k: v for k, v in inputs().items() if k != mgp.TIMEOUTS}
    PROVIDER.create(old)
    PROVIDER.update(mgp.pool_id(old), old, {**old, "properties": {**old["properties"], "count": 2}})
    PROVIDER.delete(mgp.pool_id(old), old)
    assert [limit for limit in limits if limit is not None] == [3600.0, 3600.0, 2700.0]


def test_an_update_that_outlasts_its_limit_says_it_was_updating(aks):
    """AKS's update runs for as long as the test does: no machine is too slow to outlast it."""
    olds = PROVIDER.create(inputs()).outs
    aks.operation_seconds = math.inf
    news = {**inputs(), mgp.TIMEOUTS: {"create": 60, "update": 0.002, "delete": 45}}
    news["properties"] = {**news["properties"], "count": 2}
    with pytest.raises(TimeoutError, match=r"^updating node pool gpu did not finish within its time limit"):
        PROVIDER.update(mgp.pool_id(olds), olds, news)


def test_an_operation_that_finishes_inside_a_limit_under_a_second_succeeds(aks, monkeypatch):
    """0.9 s is 0.9 s, not none. The REST calls' clock stands still, so however long the
    PUT takes, the poll gets the whole 0.9 s; AKS has finished by its first poll."""
    fake_time(monkeypatch, monotonic=lambda: 10.0)
    aks.operation_seconds = 0.0
    props = {**inputs(), mgp.TIMEOUTS: {"create": 0.015, "update": 60, "delete": 45}}  # 0.9 s
    assert PROVIDER.create(props).outs["provisioningState"] == "Succeeded"
    assert any(r.path.startswith("/fake-operations/") for r in aks.calls("GET")), "the operation was polled"


def test_on_a_machine_up_for_only_seconds_an_operation_still_gets_its_whole_limit(aks, monkeypatch):
    """A fresh CI runner: the monotonic clock reads 10 s, far less than the 60-minute limit."""
    fake_time(monkeypatch, monotonic=lambda: 10.0)
    aks.operation_seconds = 0.1
    assert PROVIDER.create(inputs()).outs["provisioningState"] == "Succeeded"


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
    with pytest.raises(HttpResponseError, match="PropertyChangeNotAllowed"):
        PROVIDER.update(mgp.pool_id(state), state, news)
