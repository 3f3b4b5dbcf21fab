"""The AKS agentPools REST calls the managed GPU pool's provider makes
(components/pools/managed_gpu_pool.py): PUT (create and update, ARM's idempotent PUT),
GET and DELETE with 404 as done, each within its time limit, waiting out AKS's 409 while
another agent-pool operation runs on the cluster. Clients are made inside each call, with
azure-identity's DefaultAzureCredential (az login locally, the OIDC login in GitHub Actions);
no credential is ever an input or an output."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from components.cluster.cluster_facts import OWNER_TAG
from components.errors import ManagedPoolError, ManagedPoolTimeout
from components.ownership.ownership import owner_of
from components.pools.provider_errors import failed
from components.seam.aks_client import ARM_ENDPOINT, aks_client
from components.seam.deadline import gather

# Where ARM is: Azure's public cloud, as for every other resource of the program. An input,
# so the state says where the pool's calls go (tests/test_managed_pool_provider_host.py points it at a
# local fake of ARM).
ENDPOINT = "armEndpoint"

# Each operation's time limit, in minutes, is an input (`timeoutMinutes`), because the
# dynamic provider host never reads the engine's `timeout` (customTimeouts): its Create,
# Update and Delete call the provider with the properties alone
# (pulumi/pulumi sdk/python/lib/pulumi/dynamic/__main__.py). components/pools/gpu_pool.py gives
# both kinds of pool the same limits.
TIMEOUTS = "timeoutMinutes"
# A read (the GET of `pulumi refresh`, and the look before a create or an update) has one
# deadline for all of it: the sign-in, the GET and the client's retries, Retry-After waits
# included (get_pool). Not an input the program registers (a new input would be a diff on
# every stack); a state may carry `timeoutMinutes.read`, as the tests' do.
READ_MINUTES = 1.0
# Each request's own socket limits, set rather than azure-core's defaults (300 s to connect
# and 300 s to read: azure/core/configuration.py ConnectionConfiguration): a long-running
# PUT or DELETE is answered at once with a status URL and then polled, so one request that
# takes longer than this is a stalled connection, tried again within the step's limit.
CONNECT_SECONDS = 10.0
REQUEST_SECONDS = 60.0
# azure-core's count, set rather than inherited: ten retries of a 408, 429 or 5xx.
RETRIES = 10

# AKS runs one agent-pool operation per cluster at a time and answers another with 409
# OperationNotAllowed saying one "is in progress" (the network: AnotherOperationInProgress):
# that alone is waited out. OperationNotAllowed without it (a stopped cluster) never passes
# and fails at once. The messages and their sources: docs/design/lifecycle.md, "One pool operation at a time".
BUSY_CODE = "AnotherOperationInProgress"
REFUSED_UNLESS_IN_PROGRESS = "OperationNotAllowed"
# How long to wait before trying again when Azure's answer has no Retry-After.
BUSY_RETRY_SECONDS = 30.0


def _retry_policy(**settings: Any) -> Any:
    """azure-core's retries, except of a 409: azure-core retries any answer that carries a
    Retry-After (azure/core/pipeline/policies/_retry.py `is_retry`), which would wait out a
    409 AKS will never lift as if it were busy, and then end in a "Response timeout" that
    says nothing of AKS's answer. Whether a 409 is worth waiting for is `_is_busy`'s call."""
    from azure.core.pipeline.policies import RetryPolicy

    class AgentPoolRetryPolicy(RetryPolicy):
        def is_retry(self, settings: dict[str, Any], response: Any) -> bool:
            if response.http_response.status_code == 409:
                return False
            return super().is_retry(settings, response)

    return AgentPoolRetryPolicy(**settings)


def client_factory(subscription_id: str, api_version: str, endpoint: str = ARM_ENDPOINT, seconds: float | None = None) -> Any:
    """The AKS management client at `api_version`, for ARM at `endpoint`. azure-core retries
    a request answered 408, 429 or 5xx, or any other error but a 409 that carries a
    Retry-After (`_retry_policy`), RETRIES times; `seconds` (the step's limit; a read's when
    None) bounds those retries in time (the policy's absolute `timeout`), and each request
    connects and reads within CONNECT_SECONDS and REQUEST_SECONDS, or what is left of it.
    ContainerServiceClient hands `connection_timeout` and `read_timeout` to its transport
    (azure-core ConnectionConfiguration) and `retry_policy` to its pipeline
    (azure-mgmt-containerservice _configuration.py)."""
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


def json_numbers(value: Any) -> Any:
    """The body as ARM's JSON types it: a whole number is an integer. The engine's Struct
    carries every number as a double, and the SDK would send `"count": 1.0` where the spec
    says `integer` (count, minCount, maxCount, the pods per node, ...). The one non-integer number
    an agent pool takes, the Spot price cap, is a `number`, for which -1 and -1.0 are the same."""
    if isinstance(value, Mapping):
        return {k: json_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def time_limit(props: Mapping[str, Any], operation: str) -> float:
    """The seconds `operation` (create, update, delete, read) may take, from the pool's inputs;
    a read's is READ_MINUTES unless they say."""
    limits = props[TIMEOUTS]
    return float(limits.get("read", READ_MINUTES) if operation == "read" else limits[operation]) * 60


@contextlib.contextmanager
def _in_azure_words(what: str) -> Iterator[None]:
    """Any failure of Azure's (a refusal, no sign-in, no answer) as one line naming the step
    (components/pools/provider_errors.py)."""
    from azure.core.exceptions import AzureError

    try:
        yield
    except AzureError as error:
        raise failed(what, error) from error


def _is_not_found(error: BaseException) -> bool:
    """ARM's 404: the pool, its cluster (ParentResourceNotFound) or its group is gone."""
    return getattr(error, "status_code", None) == 404


def _is_busy(error: Exception) -> bool:
    """AKS's 409 while another operation runs on the cluster's pools: AnotherOperationInProgress,
    or OperationNotAllowed whose message says an operation is in progress."""
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
    """Start a long-running operation; while AKS is busy with another one on the cluster
    (409, `_is_busy`), wait as its Retry-After says (or BUSY_RETRY_SECONDS) and try again,
    until the operation's deadline. Any other refusal fails at once with Azure's answer; a
    request that timed out (azure-core's own retries of 5xx and 429 included) says so, and
    is not reported as a busy cluster."""
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
    """PUT the pool (create or update; ARM's PUT is idempotent) and wait for it, within the
    time limit of `operation`."""
    from azure.mgmt.containerservice.models import AgentPool

    seconds = time_limit(props, operation)
    deadline = time.monotonic() + seconds
    what = f"{'creating' if operation == 'create' else 'updating'} node pool {props['agentPoolName']}"
    body = AgentPool({"properties": json_numbers(dict(props["properties"]))})
    with _in_azure_words(what):
        client = _client(props, seconds)
        poller = _begin(lambda: client.agent_pools.begin_create_or_update(*_where(props), body), deadline, what)
        return _wait(poller, deadline, what).as_dict()


def get_pool(props: Mapping[str, Any], what: str | None = None) -> dict[str, Any] | None:
    """The pool as ARM returns it, or None when it (or its cluster, or its group) is gone,
    within one deadline (`time_limit(props, "read")`) for the sign-in, the GET and every retry:
    the read runs on a daemon thread the provider stops waiting for then (components/seam/deadline.py gather),
    since azure-core's own limits bound neither a Retry-After nor a socket that never answers
    (its absolute `timeout` caps only the connection's timeout, azure/core/pipeline/policies/
    _retry.py `_configure_timeout`, and a Retry-After is slept in full, `_sleep_for_retry`).
    `what` names the step for its one line (by default, a refresh's read)."""
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
    """A create adopts a pool its own failed create left (the PUT is idempotent), but on an
    existing cluster it must not overwrite somebody else's pool of the same name: when the
    body carries an owner tag, a pool already there (`found`, read by the create) must carry
    the same one. (Preflight stops such a deployment first; this holds with `preflight.mode`
    warn or off too.)"""
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
