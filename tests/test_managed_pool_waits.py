"""How long, and how often, the managed pool's REST calls wait on Azure
(components/pools/agent_pool_calls.py): a busy cluster's 409s waited out within the time
limit and every other refusal failed at once with Azure's words, the client's own retries,
which leave a 409 to the provider, and the poll of an operation, which gets what is left of
its time limit and no more. The REST calls' clock is replaced (fake_time), so no outcome
hangs on how fast the machine is. (Through the engine's provider host:
test_managed_pool_provider_host.py.)"""

from __future__ import annotations

import math
import time
import types
from typing import Any

import fake_aks
import pytest
from support.managed_pool import PROVIDER, inputs

from components.errors import ManagedPoolError
from components.pools import agent_pool_calls, gpu_pool
from components.pools import managed_gpu_pool as mgp


def fake_time(monkeypatch, monotonic: Any = time.monotonic, sleep: Any = time.sleep) -> None:
    """The REST calls' clock and sleep, replaced there alone (the fake AKS keeps real time)."""
    monkeypatch.setattr(agent_pool_calls, "time", types.SimpleNamespace(monotonic=monotonic, sleep=sleep))


# What AKS answers a stopped cluster (the wording of MicrosoftDocs/azure-docs#85161): the
# busy answer's code, with a message that names no operation in progress.
STOPPED = (
    409,
    "OperationNotAllowed",
    "Managed cluster is in Provisioning State(Succeeded) and Power State(Stopped), the operation cannot be performed.",
)


def clock_that_moves_when_it_sleeps(monkeypatch) -> list[float]:
    """The REST calls' clock, moved only by their sleeps, which it records: an answer taken
    for a busy cluster is waited out to the time limit and ends there, without hanging a test."""
    clock, slept = [0.0], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    fake_time(monkeypatch, lambda: clock[0], sleep)
    return slept


def polled_for(monkeypatch) -> list[Any]:
    """The timeouts the operation's poller is given to wait (azure-core's LROPoller.wait)."""
    from azure.core.polling import LROPoller

    waits: list[Any] = []
    real = LROPoller.wait

    def wait(self, timeout: Any = None) -> None:
        waits.append(timeout)
        return real(self, timeout)

    monkeypatch.setattr(LROPoller, "wait", wait)
    return waits


# --------------------------------------------------------------------------- a busy cluster's 409s


def test_a_409_without_retry_after_is_waited_out_at_the_providers_own_pace(aks, monkeypatch):
    """AKS's 409 OperationNotAllowed need not carry a Retry-After, and azure-core retries a
    409 only when it does: the provider waits BUSY_RETRY_SECONDS and tries again."""
    slept = []
    # The REST calls' sleep alone: patched on the time module, it would catch azure-core's
    # polls and the fake's threads too.
    monkeypatch.setattr(agent_pool_calls, "time", types.SimpleNamespace(monotonic=time.monotonic, sleep=slept.append))
    aks.busy = 3
    outs = PROVIDER.create(inputs()).outs
    assert outs["provisioningState"] == "Succeeded" and len(aks.calls("PUT")) == 4
    assert slept == [agent_pool_calls.BUSY_RETRY_SECONDS] * 3


def test_a_409_that_is_not_a_busy_cluster_fails_at_once(aks, monkeypatch):
    monkeypatch.setattr(fake_aks, "BUSY", {"code": "Conflict", "message": "something else"})
    aks.busy = 1
    with pytest.raises(ManagedPoolError, match="Conflict"):
        PROVIDER.create(inputs())
    assert len(aks.calls("PUT")) == 1


def test_a_cluster_busy_for_longer_than_the_limit_fails_with_the_limit(aks, monkeypatch):
    clock = [0.0]
    fake = types.SimpleNamespace(monotonic=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s))
    monkeypatch.setattr(agent_pool_calls, "time", fake)
    aks.busy = 10_000
    with pytest.raises(
        TimeoutError, match=r"^deleting node pool gpu could not start within its time limit: Azure kept answering that it is busy"
    ):
        PROVIDER.delete("", inputs())
    assert clock[0] <= gpu_pool.POOL_TIMEOUT_MINUTES["delete"] * 60
    assert len(aks.calls("DELETE")) == gpu_pool.POOL_TIMEOUT_MINUTES["delete"] * 60 // agent_pool_calls.BUSY_RETRY_SECONDS


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


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_a_409_that_is_not_an_operation_in_progress_fails_at_once_with_aks_message(aks, method, monkeypatch):
    """OperationNotAllowed is AKS's busy code and also its answer to what it will never do: a
    stopped cluster is not waited on for the whole time limit and then called busy."""
    slept: list[float] = []
    fake_time(monkeypatch, sleep=slept.append)
    olds = PROVIDER.create(inputs()).outs if method == "DELETE" else None
    aks.refuse[method] = STOPPED
    with pytest.raises(ManagedPoolError, match=r"Power State\(Stopped\), the operation cannot be performed"):
        PROVIDER.delete("", olds) if olds else PROVIDER.create(inputs())
    assert len(aks.calls(method)) == 1 and slept == []


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
    with pytest.raises(ManagedPoolError, match=message) as raised:
        PROVIDER.create(inputs())
    assert raised.value.__cause__.status_code == 409 and len(aks.calls("PUT")) == 1 and slept == []


@pytest.mark.parametrize("status", [400, 500])
def test_a_refusal_with_a_busy_code_but_not_a_409_fails_at_once(aks, status, monkeypatch):
    """A 400 OperationNotAllowed (an operation AKS will not do at all: a stopped cluster) is
    no cluster busy with another operation: waiting would only spend the time limit."""
    slept: list[float] = []
    fake_time(monkeypatch, sleep=slept.append)
    aks.refuse["PUT"] = (status, "OperationNotAllowed")
    with pytest.raises(ManagedPoolError, match="OperationNotAllowed"):
        PROVIDER.create(inputs())
    assert len(aks.calls("PUT")) == 1 and slept == []


@pytest.mark.parametrize("status", [400, 500])
def test_an_in_progress_answer_under_another_status_than_409_fails_at_once(aks, monkeypatch, status):
    """AKS says it is busy with a 409: the same code and message under a 400 or a 500 is
    not waited out, but fails at once with Azure's answer."""
    slept = clock_that_moves_when_it_sleeps(monkeypatch)
    aks.refuse["PUT"] = (status, fake_aks.BUSY["code"], fake_aks.BUSY["message"])
    with pytest.raises(ManagedPoolError, match="in progress update node pool operation") as raised:
        PROVIDER.create(inputs())
    assert raised.value.__cause__.status_code == status and len(aks.calls("PUT")) == 1 and slept == []


def test_a_request_that_times_out_locally_is_not_reported_as_a_busy_cluster(aks, monkeypatch):
    from azure.core.exceptions import ServiceRequestTimeoutError

    def start() -> None:
        raise ServiceRequestTimeoutError("Connection timed out")

    with pytest.raises(TimeoutError) as raised:
        agent_pool_calls._begin(start, time.monotonic() + 60, "creating node pool gpu")
    said = str(raised.value)
    assert said.startswith("creating node pool gpu got no answer from Azure it could use within its time limit")
    assert "busy" not in said and "pulumi refresh" in said


# --------------------------------------------------------------------------- the client's own retries


@pytest.mark.parametrize("status", [408, 429, 500])
def test_the_clients_own_retries_still_try_again_what_azure_core_retries_but_a_409(aks, monkeypatch, status):
    """The client's retry policy leaves a 409 to the provider (`_is_busy`) and keeps
    azure-core's retries of the rest: a 408, 429 or 500 is tried again by the client itself,
    here twice, at once (no back-off)."""
    from azure.mgmt.containerservice import ContainerServiceClient

    def factory(subscription_id: str, api_version: str, endpoint: str = "", seconds: Any = None) -> Any:
        return ContainerServiceClient(
            fake_aks.FakeCredential(),
            subscription_id,
            base_url=aks.url,
            api_version=api_version,
            authentication_policy=fake_aks.FakeBearer(),
            polling_interval=0,
            retry_policy=agent_pool_calls._retry_policy(retry_total=2, retry_backoff_factor=0),
        )

    monkeypatch.setattr(agent_pool_calls, "client_factory", factory)
    aks.refuse["PUT"] = (status, "Refused")
    with pytest.raises(ManagedPoolError) as raised:
        PROVIDER.create(inputs())
    assert raised.value.__cause__.status_code == status and len(aks.calls("PUT")) == 3, "the PUT and two retries"
    aks.requests.clear()
    aks.refuse["PUT"] = STOPPED
    with pytest.raises(ManagedPoolError, match=r"Power State\(Stopped\)"):
        PROVIDER.create(inputs())
    assert len(aks.calls("PUT")) == 1, "a 409 is the provider's to judge: the client does not retry it"


# --------------------------------------------------------------------------- time limits


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


def test_an_operation_is_polled_for_what_is_left_of_its_limit_after_a_slow_put(aks, monkeypatch):
    """AKS took 3000 s of the 60-minute limit to answer the PUT (the REST calls' clock reads 0
    until the PUT is answered, 3000 after): the operation is polled for the 600 s left."""
    waits = polled_for(monkeypatch)
    fake_time(monkeypatch, monotonic=lambda: 3000.0 if aks.calls("PUT") else 0.0)
    aks.operation_seconds = 0.0
    assert PROVIDER.create(inputs()).outs["provisioningState"] == "Succeeded"
    assert waits[0] == 600.0


def test_an_operation_whose_limit_the_put_spent_is_not_waited_for_and_says_so(aks, monkeypatch):
    """The PUT was answered after 4000 s of the 60-minute limit: no time is left to poll, so
    none is given (Thread.join treats a timeout of 0 or less alike), and it fails at its limit."""
    waits = polled_for(monkeypatch)
    fake_time(monkeypatch, monotonic=lambda: 4000.0 if aks.calls("PUT") else 0.0)
    aks.operation_seconds = math.inf
    with pytest.raises(TimeoutError, match=r"^creating node pool gpu did not finish within its time limit"):
        PROVIDER.create(inputs())
    assert waits[0] <= 0
