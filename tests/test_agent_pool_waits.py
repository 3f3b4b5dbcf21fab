"""How long, and how often, the managed pool's REST calls wait on Azure
(components/resources/agent_pool_calls.py): the client's own retries, which leave a 409 to
the provider, and the poll of an operation, which gets what is left of its time limit and no
more. The REST calls' clock is replaced (test_managed_pool_edges.fake_time), so no outcome
hangs on how fast the machine is. (A busy cluster's 409s: test_managed_pool_edges.py.)"""

from __future__ import annotations

import math
from typing import Any

import fake_aks
import pytest
from azure.core.exceptions import HttpResponseError
from test_managed_gpu_pool import PROVIDER, inputs
from test_managed_pool_edges import STOPPED, fake_time

from components.resources import agent_pool_calls

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
    with pytest.raises(HttpResponseError) as raised:
        PROVIDER.create(inputs())
    assert raised.value.status_code == status and len(aks.calls("PUT")) == 3, "the PUT and two retries"
    aks.requests.clear()
    aks.refuse["PUT"] = STOPPED
    with pytest.raises(HttpResponseError, match=r"Power State\(Stopped\)"):
        PROVIDER.create(inputs())
    assert len(aks.calls("PUT")) == 1, "a 409 is the provider's to judge: the client does not retry it"


# --------------------------------------------------------------------------- what is left of the limit


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
