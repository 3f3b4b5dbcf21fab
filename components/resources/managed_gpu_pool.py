"""The AKS-managed GPU pool (`gpuPool.management: aks-managed`) as a Pulumi dynamic resource
over the AKS agentPools REST API: create and update are ARM's idempotent PUT, read is its GET
(so `pulumi refresh` sees a pool changed or deleted outside Pulumi), delete treats 404 as
done, and the diff is pure.

Why not a typed resource: azure-native 3.x types agent pools at 2025-09-01, whose GPUProfile
has no `nvidia` member (tests/azure-specs/2025-09-01), and its generic `resources.Resource`
checks for an existing pool at its own metadata version whatever `apiVersion` says
(pulumi-azure-native provider/pkg/provider/crud/crud.go `CanCreate`; #4109). Once
azure-native's `containerservice.AgentPool` carries `gpuProfile.nvidia`, it replaces this
resource: `pulumi import azure-native:containerservice:AgentPool <name> <pool ID>` takes the
pool over, then `pulumi state delete` drops this one (docs/lifecycle.md).

The provider is pickled into the state (pulumi/dynamic/dynamic.py `serialize_provider`, dill):
it is a small module-level class with no fields, so it pickles by reference, as the path
`components.managed_gpu_pool.ManagedGpuPoolProvider`. Every stack's state names that path,
and `pulumi refresh` and `pulumi destroy` unpickle the state's copy: **moving or renaming
this module or the class needs a re-export at this path**, or those commands fail on every
stack with a managed pool (tests/test_provider_host.py pins the path with a stored pickle).

What the real engine does differently from a call in the program's process
(pulumi/pulumi sdk/python/lib/pulumi/dynamic/__main__.py, the host the CLI starts as
`python -u -m pulumi.dynamic` in the project directory; tests/test_provider_host.py drives
that host over gRPC, as the engine does):
  - inputs arrive through a protobuf `Struct`, whose only number is a double: `count` is
    `1.0`. The body this module sends converts whole numbers back (`json_numbers`), since
    the spec types them integer;
  - in a preview's Diff an unknown input is a `pulumi.output.Unknown` object
    (`deserialize_properties(..., keep_unknowns=True)`), elsewhere the UNKNOWN string;
    `is_unknown` takes both;
  - the request's `timeout` (customTimeouts) is never read: the time limits are inputs
    (`timeoutMinutes`), recorded in the state;
  - `-m` puts the project directory first on sys.path, which is how `components` imports
    there; with PYTHONSAFEPATH set it does not, and every operation fails
    (`host_problem`, which the program checks before registering anything).
Clients are made inside each method, with azure-identity's DefaultAzureCredential (az login
locally, the OIDC login in GitHub Actions); no credential is ever an input or an output.
"""

from __future__ import annotations

import re
import time
from typing import Any, Callable, Mapping, Optional

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult
from pulumi.output import Unknown

# agentPools API versions. The managed GPU experience is `gpuProfile.nvidia.managementMode:
# Managed`. STABLE carries it (azure-rest-api-specs aks/stable/2026-08-01: NvidiaGPUProfile,
# and the example AgentPoolsCreate_ManagedGPU.json at commit 1001d5a2;
# azure-mgmt-containerservice 41.8.0 defaults to it, and its NvidiaGPUProfile has
# management_mode but no mig strategy). `migStrategy`, which a managed pool
# needs to offer MIG slices, exists in preview versions only (aks/preview/2026-01-02-preview,
# NvidiaGPUProfile.migStrategy: None | Single | Mixed): a managed MIG pool uses MIG_API_VERSION
# and a preview says so.
STABLE_API_VERSION = "2026-08-01"
MIG_API_VERSION = "2026-01-02-preview"

# Properties AKS changes on an existing pool (`az aks nodepool update` / `scale` / `upgrade`:
# the count, the autoscaler and its range, the taints, the Kubernetes version, the tags:
# `az aks nodepool update --tags`, which an existing cluster's pools carry). Any other
# difference in the body replaces the pool: AKS fixes the size, OS, max pods, Spot settings,
# gpuInstanceProfile and gpuProfile when the pool is created ("You can't change the applied
# GPU instance profile after node pool creation", gpu-multi-instance.md).
IN_PLACE = ("count", "enableAutoScaling", "minCount", "maxCount", "nodeTaints", "orchestratorVersion", "tags")
# Where the pool is: a change moves it, which is a new pool.
LOCATION_KEYS = ("subscriptionId", "resourceGroupName", "clusterName", "agentPoolName")
# The cluster's resourceUID, which "uniquely identifies ManagedClusters that reuse ARM
# ResourceIds (i.e: create, delete, create sequence)" (agentPools/managedClusters spec). A
# new value means the cluster was created anew: the PUT adds the pool to it again.
CLUSTER_UID = "clusterResourceUid"

# Where ARM is: Azure's public cloud, as for every other resource of the program. An input,
# so the state says where the pool's calls go (tests/test_provider_host.py points it at a
# local fake of ARM); a state written before it existed means this one.
ARM_ENDPOINT = "https://management.azure.com"
ENDPOINT = "armEndpoint"

# Each operation's time limit, in minutes, is an input (`timeoutMinutes`), because the
# dynamic provider host never reads the engine's `timeout` (customTimeouts): its Create,
# Update and Delete call the provider with the properties alone
# (pulumi/pulumi sdk/python/lib/pulumi/dynamic/__main__.py). components/resources/gpu_pool.py gives
# both kinds of pool the same limits; a state written before the input existed gets these.
TIMEOUTS = "timeoutMinutes"
DEFAULT_TIMEOUT_MINUTES = {"create": 60, "update": 60, "delete": 45}

# AKS runs one operation on a cluster's agent pools at a time and answers another with 409
# OperationNotAllowed ("Operation is not allowed because there's an in progress ... operation").
# Within its time limit an operation waits and tries again: the program orders its own pools
# one after another (components/resources/gpu_pool.py), so a 409 means an operation still running
# from an earlier, interrupted `up`, or somebody else's on the cluster.
BUSY_CODES = frozenset({"OperationNotAllowed", "AnotherOperationInProgress"})
# How long to wait before trying again when Azure's answer has no Retry-After.
BUSY_RETRY_SECONDS = 30.0

# The dynamic provider's placeholder for a value a preview does not know yet
# (pulumi.runtime.rpc.UNKNOWN).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def is_unknown(value: Any) -> bool:
    """A value a preview does not know yet: the UNKNOWN string in the program's process, a
    `pulumi.output.Unknown` in the host's Diff and Check (rpc.deserialize_property)."""
    return isinstance(value, Unknown) or value == UNKNOWN


def host_problem(environ: Mapping[str, str]) -> Optional[str]:
    """Why the dynamic provider host could not load this module in this environment, if it
    could not. With PYTHONSAFEPATH set to a non-empty string Python does not put the current
    directory on sys.path (Python docs, "PYTHONSAFEPATH"; `python -m` included), so the host,
    started as `python -u -m pulumi.dynamic` in the project directory, cannot import
    `components` to unpickle the provider, and every create, update, refresh and delete of
    the pool fails."""
    if environ.get("PYTHONSAFEPATH"):
        return (
            f"PYTHONSAFEPATH={environ['PYTHONSAFEPATH']} is set: Pulumi's provider host for the AKS-managed GPU pool "
            "could not import components/ from the project directory, and every operation on the pool would fail; "
            "unset it (env -u PYTHONSAFEPATH pulumi up)"
        )
    return None


def client_factory(subscription_id: str, api_version: str, endpoint: str = ARM_ENDPOINT, seconds: Optional[float] = None) -> Any:
    """The AKS management client at `api_version`, for ARM at `endpoint`. azure-core retries
    a request answered 408, 429 or 5xx, or any error that carries a Retry-After
    (azure/core/pipeline/policies/_retry.py `is_retry`), ten times; `seconds` bounds those
    retries in time (its absolute `timeout`), so they end with the operation's limit."""
    from azure.identity import DefaultAzureCredential
    from azure.mgmt.containerservice import ContainerServiceClient

    limit = {} if seconds is None else {"timeout": seconds}
    return ContainerServiceClient(
        DefaultAzureCredential(), subscription_id, base_url=endpoint, api_version=api_version,
        credential_scopes=[f"{endpoint}/.default"], **limit,
    )  # fmt: skip


def _client(props: Mapping[str, Any], seconds: Optional[float] = None) -> Any:
    return client_factory(props["subscriptionId"], props["apiVersion"], props.get(ENDPOINT) or ARM_ENDPOINT, seconds)


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
    says `integer` (count, minCount, maxCount, maxPods, ...). The one non-integer number an
    agent pool takes, spotMaxPrice, is a `number`, for which -1 and -1.0 are the same."""
    if isinstance(value, Mapping):
        return {k: json_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def time_limit(props: Mapping[str, Any], operation: str) -> float:
    """The seconds `operation` (create, update, delete) may take, from the pool's inputs."""
    minutes = (props.get(TIMEOUTS) or {}).get(operation) or DEFAULT_TIMEOUT_MINUTES[operation]
    return float(minutes) * 60


def _is_not_found(error: Exception) -> bool:
    """ARM's 404: the pool, its cluster (ParentResourceNotFound) or its group is gone."""
    return getattr(error, "status_code", None) == 404


def _is_busy(error: Exception) -> bool:
    """AKS's 409 while another operation runs on the cluster's pools."""
    code = getattr(getattr(error, "error", None), "code", None)
    return getattr(error, "status_code", None) == 409 and code in BUSY_CODES


def _retry_after(error: Exception) -> float:
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    try:
        return max(0.0, float(headers.get("Retry-After")))
    except (TypeError, ValueError):
        return BUSY_RETRY_SECONDS


def _begin(start: Callable[[], Any], deadline: float, what: str) -> Any:
    """Start a long-running operation; while AKS is busy with another one on the cluster
    (409), wait and try again, until the operation's deadline. (A 409 that carries a
    Retry-After azure-core retries first, within the same limit: `client_factory`.)"""
    from azure.core.exceptions import HttpResponseError, ServiceRequestTimeoutError, ServiceResponseTimeoutError

    busy = (
        f"{what} could not start within its time limit: Azure kept answering that it is busy (AKS runs one "
        "agent-pool operation per cluster at a time); `pulumi up` again once the cluster's operation has finished"
    )
    while True:
        try:
            return start()
        except (ServiceRequestTimeoutError, ServiceResponseTimeoutError) as error:
            raise TimeoutError(busy) from error
        except HttpResponseError as error:
            if not _is_busy(error):
                raise
            delay = _retry_after(error)
            if time.monotonic() + delay >= deadline:
                raise TimeoutError(busy) from error
            time.sleep(delay)


def _wait(poller: Any, deadline: float, what: str) -> Any:
    poller.wait(max(0.0, deadline - time.monotonic()))
    if not poller.done():
        raise TimeoutError(f"{what} did not finish within its time limit; Azure may still be working on it")
    return poller.result()


def put_pool(props: Mapping[str, Any], operation: str) -> dict[str, Any]:
    """PUT the pool (create or update; ARM's PUT is idempotent) and wait for it, within the
    time limit of `operation`."""
    from azure.mgmt.containerservice.models import AgentPool

    seconds = time_limit(props, operation)
    deadline = time.monotonic() + seconds
    what = f"{'creating' if operation == 'create' else 'updating'} node pool {props['agentPoolName']}"
    body = AgentPool({"properties": json_numbers(dict(props["properties"]))})
    client = _client(props, seconds)
    poller = _begin(lambda: client.agent_pools.begin_create_or_update(*_where(props), body), deadline, what)
    return _wait(poller, deadline, what).as_dict()


def get_pool(props: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The pool as ARM returns it, or None when it (or its cluster, or its group) is gone."""
    from azure.core.exceptions import HttpResponseError

    try:
        return _client(props).agent_pools.get(*_where(props)).as_dict()
    except HttpResponseError as error:
        if _is_not_found(error):
            return None
        raise


def delete_pool(props: Mapping[str, Any]) -> None:
    """DELETE the pool and wait; a pool, cluster or group already gone is done."""
    from azure.core.exceptions import HttpResponseError

    seconds = time_limit(props, "delete")
    deadline = time.monotonic() + seconds
    what = f"deleting node pool {props['agentPoolName']}"
    client = _client(props, seconds)
    try:
        poller = _begin(lambda: client.agent_pools.begin_delete(*_where(props)), deadline, what)
        _wait(poller, deadline, what)
    except HttpResponseError as error:
        if not _is_not_found(error):
            raise


# The Azure tag a stack puts on the pools it adds to a cluster it does not own: which stack
# owns the pool ("<project>/<stack>"). components/azure/preflight.py checks it before a deployment.
OWNER_TAG = "aks-gpu-stack"


def refuse_others_pool(props: Mapping[str, Any]) -> None:
    """A create adopts a pool its own failed create left (the PUT is idempotent), but on an
    existing cluster it must not overwrite somebody else's pool of the same name: when the
    body carries an owner tag, a pool already there must carry the same one. (Preflight
    stops such a deployment first; this holds with `preflight.mode` warn or off too.)"""
    owner = (props["properties"].get("tags") or {}).get(OWNER_TAG)
    if owner is None:
        return
    found = get_pool(props)
    if found is None:
        return
    theirs = ((found.get("properties") or {}).get("tags") or {}).get(OWNER_TAG)
    if theirs != owner:
        raise RuntimeError(
            f"node pool {props['agentPoolName']} already exists in cluster {props['clusterName']} and is not this "
            f"stack's ({OWNER_TAG} = {theirs or 'unset'}, this stack is {owner}); nothing was changed: pick another pool name"
        )


# --------------------------------------------------------------------------- pure diff


def _same(desired: Any, actual: Any) -> bool:
    """Does Azure's value satisfy the declared one? Only declared members of an object count
    (Azure fills in its defaults beside them); taints are a set; enums compare without case
    (ARM treats them so); a `1.NN` version is satisfied by any `1.NN.P` patch; a value a
    preview does not know may be anything."""
    if is_unknown(desired):
        return False
    if isinstance(desired, Mapping):
        return isinstance(actual, Mapping) and all(_same(v, actual.get(k)) for k, v in desired.items())
    if isinstance(desired, (list, tuple)):
        return isinstance(actual, (list, tuple)) and sorted(map(str, desired)) == sorted(map(str, actual))
    if isinstance(desired, str) and isinstance(actual, str):
        minor_only = re.fullmatch(r"\d+\.\d+", desired) is not None
        return desired.lower() == actual.lower() or (minor_only and actual.startswith(desired + "."))
    return desired == actual


def changed_properties(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The body's properties whose declared value the old state does not satisfy. The count
    of an autoscaled pool belongs to the cluster autoscaler, and a version left unset (or to
    an upgrade channel) belongs to AKS: neither is compared."""
    ignored = {"count"} if new.get("enableAutoScaling") else set()
    keys = (set(old) | set(new)) - ignored
    if "orchestratorVersion" not in new:
        keys.discard("orchestratorVersion")
    return sorted(k for k in keys if k not in new or not _same(new[k], old.get(k)))


def diff_pool(olds: Mapping[str, Any], news: Mapping[str, Any]) -> DiffResult:
    """Pure: what changes, and whether the pool must be replaced. The pool's name is fixed,
    so a replacement always deletes the old pool first (AKS refuses a second pool of one
    name). An unknown cluster UID (a preview of a cluster update, where the host hands the
    diff a `pulumi.output.Unknown`) is no change: the update that follows knows it and
    diffs again. Any other unknown counts as a change: nothing says it will not be one."""
    moved = [k for k in LOCATION_KEYS if is_unknown(news.get(k)) or news.get(k) != olds.get(k)]
    changed = changed_properties(olds.get("properties") or {}, news.get("properties") or {})
    replaces = moved + [f"properties.{k}" for k in changed if k not in IN_PLACE]
    uid = news.get(CLUSTER_UID)
    new_cluster = uid is not None and not is_unknown(uid) and uid != olds.get(CLUSTER_UID)
    updates = [k for k in changed if k in IN_PLACE] + ([CLUSTER_UID] if new_cluster else [])
    return DiffResult(
        changes=bool(replaces or updates), replaces=replaces, stables=[], delete_before_replace=True
    )


def update_body(olds: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, Any]:
    """What an update PUTs: the declared body, except that an autoscaled pool keeps the
    count it has, so a change of taints does not scale it back to the declared start."""
    properties = dict(news.get("properties") or {})
    current = (olds.get("properties") or {}).get("count")
    if properties.get("enableAutoScaling") and current is not None:
        properties["count"] = current
    return {**news, "properties": properties}


def observed(props: Mapping[str, Any], found: Mapping[str, Any]) -> dict[str, Any]:
    """The state after a read: the declared properties as Azure has them, plus what AKS
    reports about the pool."""
    actual = found.get("properties") or {}
    return {
        **props,
        "properties": {k: actual.get(k) for k in (props.get("properties") or {})},
        "provisioningState": actual.get("provisioningState"),
        "currentOrchestratorVersion": actual.get("currentOrchestratorVersion"),
    }


class ManagedGpuPoolProvider(ResourceProvider):
    """CRUD for one agent pool. No fields: see the module docstring on pickling."""

    serialize_as_secret_always = False  # it captures nothing secret; keep the state readable

    def create(self, props: dict[str, Any]) -> CreateResult:
        refuse_others_pool(props)
        found = put_pool(props, "create")
        return CreateResult(id_=pool_id(props), outs=observed(props, found))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        found = get_pool(props)
        if found is None:  # an empty ID tells `pulumi refresh` the pool is gone
            return ReadResult(id_=None, outs={})
        return ReadResult(id_=id_, outs=observed(props, found))

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=observed(news, put_pool(update_body(olds, news), "update")))

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        delete_pool(props)

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_pool(olds, news)


class ManagedGpuPool(Resource, module="aksgpu", name="ManagedGpuPool"):
    """One AKS agent pool whose GPU stack AKS manages, declared by its REST body."""

    #: The pool's ARM name.
    agent_pool_name: pulumi.Output[str]
    #: AKS's provisioningState after the last create, update or refresh.
    provisioning_state: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        subscription_id: pulumi.Input[str],
        resource_group_name: pulumi.Input[str],
        cluster_name: pulumi.Input[str],
        agent_pool_name: str,
        properties: Mapping[str, Any],
        api_version: str = STABLE_API_VERSION,
        cluster_resource_uid: Optional[pulumi.Input[str]] = None,
        timeout_minutes: Mapping[str, int] = DEFAULT_TIMEOUT_MINUTES,
        arm_endpoint: str = ARM_ENDPOINT,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        props = {
            "subscriptionId": subscription_id,
            "resourceGroupName": resource_group_name,
            "clusterName": cluster_name,
            "agentPoolName": agent_pool_name,
            "apiVersion": api_version,
            "properties": dict(properties),
            CLUSTER_UID: cluster_resource_uid,
            TIMEOUTS: dict(timeout_minutes),
            ENDPOINT: arm_endpoint,
            "provisioningState": None,
            "currentOrchestratorVersion": None,
        }
        super().__init__(ManagedGpuPoolProvider(), name, props, opts)

