"""The AKS-managed GPU pool (`gpuPool.management: aks-managed`) as a Pulumi dynamic resource
over the AKS agentPools REST API: create and update are ARM's idempotent PUT, read its GET,
delete treats 404 as done, and the diff is pure. Why it is not a typed resource, which
typed resource replaces it and how a stack moves over, why the provider's module path is
part of every state (**moving or renaming this module or the class needs a re-export at
the old path**), and what Pulumi's provider host does differently from the program:
docs/design/managed-pool-provider.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import ConfigureRequest, CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult
from pulumi.output import Unknown

from components.catalog import api_versions
from components.pools import pool_fields
from components.pools.agent_pool_calls import (
    ARM_ENDPOINT,
    ENDPOINT,
    TIMEOUTS,
    delete_pool,
    get_pool,
    pool_id,
    put_pool,
    refuse_others_pool,
)
from components.seam import provider_host_patch

# agentPools API versions (components/catalog/api_versions.py says which needs which).
STABLE_API_VERSION = api_versions.STABLE
MIG_API_VERSION = api_versions.MIG_PREVIEW

# Properties AKS changes on an existing pool; any other difference replaces it, as the typed pool
# does (components/pools/pool_fields.py has each with its source; docs/lifecycle.md,
# "What changes a GPU pool in place, and what replaces it").
IN_PLACE = pool_fields.in_place()
# Where the pool is: a change moves it, which is a new pool.
LOCATION_KEYS = ("subscriptionId", "resourceGroupName", "clusterName", "agentPoolName")
# The cluster's resourceUID, which "uniquely identifies ManagedClusters that reuse ARM
# ResourceIds (i.e: create, delete, create sequence)" (agentPools/managedClusters spec). A
# new value means the cluster was created anew: the PUT adds the pool to it again.
CLUSTER_UID = "clusterResourceUid"

# The dynamic provider's placeholder for a value a preview does not know yet
# (pulumi.runtime.rpc.UNKNOWN).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def is_unknown(value: Any) -> bool:
    """A value a preview does not know yet: the UNKNOWN string in the program's process, a
    `pulumi.output.Unknown` in the host's Diff and Check (rpc.deserialize_property)."""
    return isinstance(value, Unknown) or value == UNKNOWN


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
    return DiffResult(changes=bool(replaces or updates), replaces=replaces, stables=[], delete_before_replace=True)


def update_body(olds: Mapping[str, Any], news: Mapping[str, Any], live: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What an update PUTs: the declared body, except that an autoscaled pool keeps the
    count it runs, so a change of taints does not scale it. The count is the live pool's
    (`live`, read right before the PUT), else the state's: the state holds the count of the
    last create, update or refresh, and the autoscaler may have moved the pool since. AKS
    takes a PUT's count as a manual scale, which it refuses on an autoscaled pool ("Cannot
    manually scale AgentPool ... with cluster autoscaler enabled": hashicorp/terraform-provider-azurerm#4543;
    "Manual scaling is disabled when you use the cluster autoscaler", azure-aks-docs
    cluster-autoscaler-overview.md); azurerm's own node-pool update GETs the pool and PUTs
    it back with the count it has (kubernetes_cluster_node_pool_resource.go,
    resourceKubernetesClusterNodePoolUpdate)."""
    properties = dict(news.get("properties") or {})
    if properties.get("enableAutoScaling"):
        running = (live or {}).get("properties") or {}
        current = running.get("count", (olds.get("properties") or {}).get("count"))
        if current is not None:
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

    def configure(self, req: ConfigureRequest) -> None:
        # The host calls this once it has unpickled the provider, before any step: from then
        # on it sends a failed step's one line (a pulumi.RunError) without a traceback. A host
        # of another shape is said on its stderr, and its errors still come, with a traceback.
        provider_host_patch.tell_if_unpatched()

    def create(self, props: dict[str, Any]) -> CreateResult:
        # A create also takes over a pool that runs already: a lost state, a failed create's
        # leftover (docs/design/lifecycle.md, "An autoscaled pool's count in an update"). So it reads
        # the pool first (404: a new one) and, where it
        # runs, keeps the autoscaler's count, as an update does (update_body).
        what = f"creating node pool {props['agentPoolName']}: reading the pool of that name"
        running = get_pool(props, what)
        refuse_others_pool(props, running)
        found = put_pool(update_body({}, props, running), "create")
        return CreateResult(id_=pool_id(props), outs=observed(props, found))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        found = get_pool(props)
        if found is None:  # an empty ID tells `pulumi refresh` the pool is gone
            return ReadResult(id_=None, outs={})
        return ReadResult(id_=id_, outs=observed(props, found))

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        # An autoscaled pool's count is read from Azure right before the PUT (update_body).
        autoscaled = (news.get("properties") or {}).get("enableAutoScaling")
        what = f"reading node pool {news.get('agentPoolName')}'s count before its update (agentPools GET)"
        live = get_pool(news, what) if autoscaled else None
        return UpdateResult(outs=observed(news, put_pool(update_body(olds, news, live), "update")))

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
        cluster_resource_uid: pulumi.Input[str] | None = None,
        timeout_minutes: Mapping[str, int],
        arm_endpoint: str = ARM_ENDPOINT,
        opts: pulumi.ResourceOptions | None = None,
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
        # The CLI's provider host runs the program's SDK: one the one-line patch does not hold
        # for is said at preview, not found in a failed `up` (provider_host_patch.SDK_RANGE).
        if unpatched := provider_host_patch.unpatched_host_warning():
            pulumi.log.warn(unpatched, resource=self)
