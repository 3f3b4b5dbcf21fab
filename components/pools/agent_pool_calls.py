"""The agentPools REST calls of the managed GPU pool's provider (managed_gpu_pool.py): PUT, GET
and DELETE (404 is done), each within its time limit, waiting out AKS's 409 while another pool
operation runs; a failure is one line with the step and Azure's words (`failed`). Clients are
made inside each call with DefaultAzureCredential; no credential is an input or an output."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from components.cluster.cluster_facts import OWNER_TAG
from components.config.values import whole_numbers
from components.errors import ManagedPoolError, ManagedPoolTimeout, one_line
from components.ownership.ownership import owner_of
from components.seam.aks_client import ARM_ENDPOINT, aks_client
from components.seam.deadline import gather

# Where ARM is: an input, so the state says where the pool's calls go (the tests point it at a fake).
ENDPOINT = "armEndpoint"
# Each operation's time limit in minutes is an input, because the dynamic provider host never
# reads customTimeouts (pulumi/pulumi sdk/python/lib/pulumi/dynamic/__main__.py).
TIMEOUTS = "timeoutMinutes"
# A read's one deadline for the sign-in, the GET and its retries (get_pool). Not an input (a new
# one would be a diff on every stack); a state may carry `timeoutMinutes.read`.
READ_MINUTES = 1.0
# Each request's socket limits, not azure-core's 300 s (azure/core/configuration.py): a PUT or
# DELETE is answered at once and then polled, so a longer request is a stalled connection.
CONNECT_SECONDS = 10.0
REQUEST_SECONDS = 60.0
# azure-core's count of retries of a 408, 429 or 5xx, set rather than inherited.
RETRIES = 10
# AKS answers a second pool operation on a cluster with 409 AnotherOperationInProgress, or
# OperationNotAllowed saying one "is in progress": that alone is waited out (a stopped cluster's
# OperationNotAllowed fails at once). Sources: docs/design/lifecycle.md, "One pool operation at a time".
BUSY_CODE = "AnotherOperationInProgress"
REFUSED_UNLESS_IN_PROGRESS = "OperationNotAllowed"
# The wait when Azure's answer has no Retry-After.
BUSY_RETRY_SECONDS = 30.0
# How much of Azure's message a line keeps.
MESSAGE_CHARS = 400
SIGN_IN = "run `az login` (or azure/login in GitHub Actions) and try again"


def _retry_policy(**settings: Any) -> Any:
    """azure-core's retries but of a 409: it retries any answer with a Retry-After
    (azure/core/pipeline/policies/_retry.py `is_retry`), which would wait out a 409 AKS never
    lifts and end in a "Response timeout". Whether a 409 is worth waiting for is `_is_busy`'s."""
    from azure.core.pipeline.policies import RetryPolicy

    class AgentPoolRetryPolicy(RetryPolicy):
        def is_retry(self, settings: dict[str, Any], response: Any) -> bool:
            return response.http_response.status_code != 409 and bool(super().is_retry(settings, response))

    return AgentPoolRetryPolicy(**settings)


def client_factory(subscription_id: str, api_version: str, endpoint: str = ARM_ENDPOINT, seconds: float | None = None) -> Any:
    """The AKS client at `api_version` for ARM at `endpoint`: RETRIES retries (`_retry_policy`)
    within `seconds` (the step's limit; a read's when None), each request within
    CONNECT_SECONDS and REQUEST_SECONDS or what is left of it."""
    from azure.identity import DefaultAzureCredential

    within = float(seconds) if seconds is not None else READ_MINUTES * 60
    return aks_client(
        DefaultAzureCredential(),
        subscription_id,
        api_version,
        retry_policy=_retry_policy(retry_total=RETRIES, timeout=within),
        connect_seconds=min(CONNECT_SECONDS, within),
        read_seconds=min(REQUEST_SECONDS, within),
        endpoint=endpoint,
    )


def _client(props: Mapping[str, Any], seconds: float | None = None) -> Any:
    return client_factory(props["subscriptionId"], props["apiVersion"], props[ENDPOINT], seconds)


def _where(props: Mapping[str, Any]) -> tuple[str, str, str]:
    return props["resourceGroupName"], props["clusterName"], props["agentPoolName"]


def pool_id(props: Mapping[str, Any]) -> str:
    group, cluster, pool = _where(props)
    return (
        f"/subscriptions/{props['subscriptionId']}/resourceGroups/{group}/providers/"
        f"Microsoft.ContainerService/managedClusters/{cluster}/agentPools/{pool}"
    )


def time_limit(props: Mapping[str, Any], operation: str) -> float:
    """The seconds `operation` (create, update, delete, read) may take; a read's READ_MINUTES unless the inputs say."""
    limits = props[TIMEOUTS]
    return float(limits.get("read", READ_MINUTES) if operation == "read" else limits[operation]) * 60


@contextlib.contextmanager
def _in_azure_words(what: str) -> Iterator[None]:
    """Any failure of Azure's (a refusal, no sign-in, no answer) as one line naming the step."""
    from azure.core.exceptions import AzureError

    try:
        yield
    except AzureError as error:
        raise failed(what, error) from error


def _words(text: Any) -> str:
    said = one_line(text or "", None)
    return said if len(said) <= MESSAGE_CHARS else said[: MESSAGE_CHARS - 1] + "…"


def azure_words(error: BaseException) -> str:
    """Azure's answer in one line: the status, ARM's error code and message (a detail's where
    the message is empty)."""
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ServiceRequestError, ServiceResponseError

    status = getattr(error, "status_code", None)
    odata = getattr(error, "error", None)
    code = getattr(odata, "code", None)
    message = getattr(odata, "message", None)
    if not message:
        details = [d for d in getattr(odata, "details", None) or [] if getattr(d, "message", None)]
        message = "; ".join(f"{d.code}: {d.message}" for d in details) or getattr(error, "message", None) or str(error)
    if isinstance(error, ClientAuthenticationError) and status in (None, 401):
        return f"no Azure sign-in ({_words(message)}); {SIGN_IN}"
    named = f" {code}" if code else ""
    if isinstance(error, HttpResponseError) and status is not None and status >= 400:
        fix = "; the identity running Pulumi may not do it (docs/deploying.md)" if status == 403 else ""
        return f"Azure answered {status}{named}: {_words(message)}{fix}"
    if isinstance(error, HttpResponseError) and status is not None:  # a long-running operation's status said Failed
        return f"the operation failed in Azure{named}: {_words(message)}"
    if isinstance(error, (ServiceRequestError, ServiceResponseError)):
        return f"no answer from Azure ({type(error).__name__}: {_words(message)})"
    return f"{type(error).__name__}: {_words(message)}"


def failed(what: str, error: BaseException) -> ManagedPoolError:
    """One line: the step (`creating node pool gpu`) and Azure's answer."""
    return ManagedPoolError(f"{what}: {azure_words(error)}")


def _is_not_found(error: BaseException) -> bool:
    """ARM's 404: the pool, its cluster (ParentResourceNotFound) or its group is gone."""
    return getattr(error, "status_code", None) == 404


def _is_busy(error: Exception) -> bool:
    """AKS's 409 while another pool operation runs (BUSY_CODE and REFUSED_UNLESS_IN_PROGRESS)."""
    if getattr(error, "status_code", None) != 409:
        return False
    odata = getattr(error, "error", None)
    code = getattr(odata, "code", None)
    message = str(getattr(odata, "message", None) or getattr(error, "message", "") or "")
    return code == BUSY_CODE or (code == REFUSED_UNLESS_IN_PROGRESS and "in progress" in message.lower())


def _retry_after(error: Exception) -> float:
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    try:
        return max(0.0, float(headers.get("Retry-After")))  # type: ignore[arg-type]  # None: the TypeError below
    except (TypeError, ValueError):
        return BUSY_RETRY_SECONDS


def _begin(start: Callable[[], Any], deadline: float, what: str) -> Any:
    """Start a long-running operation; while AKS is busy (`_is_busy`), wait as its Retry-After
    says (or BUSY_RETRY_SECONDS) and try again until the deadline. Any other refusal fails at
    once; a request that timed out says so, not that the cluster is busy."""
    from azure.core.exceptions import HttpResponseError, ServiceRequestTimeoutError, ServiceResponseTimeoutError

    busy = (
        f"{what} could not start within its time limit: Azure kept answering that it is busy (AKS runs one "
        "agent-pool operation per cluster at a time); `pulumi up` again once the cluster's operation has finished"
    )
    while True:
        try:
            return start()
        except (ServiceRequestTimeoutError, ServiceResponseTimeoutError) as error:
            raise ManagedPoolTimeout(
                f"{what} got no answer from Azure it could use within its time limit (the request timed out: {error}); "
                "Azure may have started it: `pulumi refresh`, then `pulumi up`"
            ) from error
        except HttpResponseError as error:
            if not _is_busy(error):
                raise failed(what, error) from error
            delay = _retry_after(error)
            if time.monotonic() + delay >= deadline:
                raise ManagedPoolTimeout(busy) from error
            time.sleep(delay)


def _wait(poller: Any, deadline: float, what: str) -> Any:
    poller.wait(max(0.0, deadline - time.monotonic()))
    if not poller.done():
        raise ManagedPoolTimeout(f"{what} did not finish within its time limit; Azure may still be working on it")
    with _in_azure_words(what):  # the operation failed in Azure: its error, as the status URL gave it
        return poller.result()


def put_pool(props: Mapping[str, Any], operation: str) -> dict[str, Any]:
    """PUT the pool (create or update: ARM's PUT is idempotent) and wait, within `operation`'s limit."""
    from azure.mgmt.containerservice.models import AgentPool

    seconds = time_limit(props, operation)
    deadline = time.monotonic() + seconds
    what = f"{'creating' if operation == 'create' else 'updating'} node pool {props['agentPoolName']}"
    body = AgentPool({"properties": whole_numbers(dict(props["properties"]))})
    with _in_azure_words(what):
        client = _client(props, seconds)
        poller = _begin(lambda: client.agent_pools.begin_create_or_update(*_where(props), body), deadline, what)
        return _wait(poller, deadline, what).as_dict()


def get_pool(props: Mapping[str, Any], what: str | None = None) -> dict[str, Any] | None:
    """The pool as ARM returns it, or None when it (or its cluster or group) is gone, within one
    deadline for the sign-in, the GET and every retry: on a thread the provider stops waiting
    for (deadline.gather), since azure-core bounds neither a Retry-After nor a silent socket
    (azure/core/pipeline/policies/_retry.py `_configure_timeout`, `_sleep_for_retry`). `what`
    names the step (by default, a refresh's read)."""
    from azure.core.exceptions import HttpResponseError

    group, cluster, pool = _where(props)
    what = what or f"reading node pool {pool} in cluster {group}/{cluster} (agentPools GET)"
    seconds = time_limit(props, "read")

    def read() -> dict[str, Any] | None:
        with _in_azure_words(what):
            try:
                return _client(props, seconds).agent_pools.get(group, cluster, pool).as_dict()
            except HttpResponseError as error:
                if _is_not_found(error):
                    return None
                raise

    try:
        return gather([read], seconds)[0]
    except ManagedPoolError:
        raise
    except TimeoutError:
        raise ManagedPoolTimeout(
            f"{what}: no answer from Azure within {seconds:g} s (the sign-in, the GET and its retries); try again"
        ) from None


def delete_pool(props: Mapping[str, Any]) -> None:
    """DELETE the pool and wait; a pool, cluster or group already gone is done."""
    seconds = time_limit(props, "delete")
    deadline = time.monotonic() + seconds
    what = f"deleting node pool {props['agentPoolName']}"
    with _in_azure_words(what):
        client = _client(props, seconds)
        try:
            poller = _begin(lambda: client.agent_pools.begin_delete(*_where(props)), deadline, what)
            _wait(poller, deadline, what)
        except ManagedPoolError as error:
            if not _is_not_found(error.__cause__ or error):
                raise


def refuse_others_pool(props: Mapping[str, Any], found: Mapping[str, Any] | None) -> None:
    """A create takes over a pool its own failed create left, never somebody else's: when the
    body carries an owner tag, a pool already there (`found`) must carry the same one (as
    preflight checks, but whatever `preflight.mode` says)."""
    owner = owner_of(props["properties"].get("tags") or {})
    if owner is None or found is None:
        return
    # The tag's name matched as Azure matches it: `AKS-GPU-STACK` is the same tag (ownership.tag).
    theirs = owner_of((found.get("properties") or {}).get("tags") or {})
    if theirs != owner:
        raise ManagedPoolError(
            f"node pool {props['agentPoolName']} already exists in cluster {props['clusterName']} and is not this "
            f"stack's ({OWNER_TAG} = {theirs or 'unset'}, this stack is {owner}); nothing was changed: pick another pool name"
        )
