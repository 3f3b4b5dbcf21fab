"""What the program knows of an existing AKS cluster (`aks-gpu:existingCluster`), read once
before anything is registered, and what a failed read of Azure means: one line, what was read,
what Azure answered, what to do. One parser reads the invoke's answer, a saved `az aks show` and
ARM's REST body (docs/existing-cluster.md); the roles: docs/deploying.md."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from azure.mgmt.containerservice import models  # the SDK's data models: no client, no call

from components.cluster import rest_shapes
from components.cluster.cluster_egress import Egress, parse_egress
from components.config.values import NAMESPACE
from components.errors import AzureReadError, cut, one_line
from components.seam import saved_files
from components.seam.reader import AzureReader, read_errors

SYSTEM_MODE = "System"
# The Azure tag a stack puts on the pools it adds to a cluster it does not own: "<project>/<stack>".
# A pool of the same name without it is somebody else's (existing_cluster_checks.py).
OWNER_TAG = "aks-gpu-stack"


class PoolFacts(models.ManagedClusterAgentPoolProfile):
    """One of the cluster's agent pools: the SDK's own model. An open enum's value reads as the
    text Azure wrote, not the SDK's enum member, whose str() is `OSType.WINDOWS` (azure-core
    CaseInsensitiveEnumMeta)."""

    def __getattribute__(self, name: str) -> Any:
        return _text(super().__getattribute__(name))

    def member(self, *path: str) -> Any:
        at: Any = self
        for key in path:
            at = at.get(key) if isinstance(at, Mapping) else None
        return at

    @property
    def taints(self) -> tuple[str, ...]:
        return tuple(self.node_taints or ())


@dataclass(frozen=True)
class ClusterFacts:
    """An existing cluster: where it is, what state it is in, its network and its pools."""

    resource_group: str
    name: str
    location: str
    resource_uid: str | None
    kubernetes_version: str | None
    provisioning_state: str | None
    power_state: str | None
    node_resource_group: str | None
    #: networkProfile's.
    network_plugin: str | None
    network_plugin_mode: str | None
    network_policy: str | None
    network_dataplane: str | None
    #: aadProfile set.
    entra: bool
    pools: tuple[PoolFacts, ...]
    #: Where the description came from ("Azure", "file cluster.json", "assumed").
    source: str = "Azure"
    #: apiServerAccessProfile's.
    private: bool = False
    vnet_integration: bool = False
    authorized_ip_ranges: tuple[str, ...] = ()
    resource_id: str | None = None
    egress: Egress = field(default_factory=Egress)
    #: nodeProvisioningProfile.mode: Manual (unset: "the default is Manual", ARM 2025-09-01), or
    #: Auto: node auto-provisioning, where AKS refuses new autoscaled pools.
    node_provisioning_mode: str | None = None
    #: aadProfile.enableAzureRbac: Kubernetes calls authorized by Azure role assignments.
    azure_rbac: bool = False

    @property
    def system_pool(self) -> PoolFacts | None:
        """The first System pool, whose network every pool shares."""
        return next((p for p in self.pools if (p.mode or "").lower() == SYSTEM_MODE.lower()), None)


def _get(doc: Any, *path: str) -> Any:
    """doc[path...] with keys matched without case, through a `properties` envelope."""
    for key in path:
        if not isinstance(doc, Mapping):
            return None
        if "properties" in doc and isinstance(doc["properties"], Mapping) and key.lower() not in {k.lower() for k in doc}:
            doc = doc["properties"]
        doc = next((v for k, v in doc.items() if k.lower() == key.lower()), None)
    return doc


def _text(value: Any) -> Any:
    """An open enum as the text Azure wrote (PoolFacts says why)."""
    return value.value if isinstance(value, enum.Enum) else value


def parse(doc: Mapping[str, Any], resource_group: str, source: str = "Azure") -> ClusterFacts:
    """A description of a cluster, read into the SDK's model (rest_shapes.cluster)."""
    found = rest_shapes.cluster(doc)
    props = found.properties or models.ManagedClusterProperties()
    network = props.network_profile or models.ContainerServiceNetworkProfile()
    access = props.api_server_access_profile or models.ManagedClusterAPIServerAccessProfile()
    return ClusterFacts(
        resource_group=resource_group,
        name=found.name or "",
        location=found.location or "",
        resource_uid=props.resource_uid,
        kubernetes_version=props.current_kubernetes_version or props.kubernetes_version,
        provisioning_state=props.provisioning_state,
        power_state=_text(props.power_state.code) if props.power_state else None,
        node_resource_group=props.node_resource_group,
        network_plugin=_text(network.network_plugin),
        network_plugin_mode=_text(network.network_plugin_mode),
        network_policy=_text(network.network_policy),
        network_dataplane=_text(network.network_dataplane),
        entra=bool(props.aad_profile),
        azure_rbac=bool(props.aad_profile and props.aad_profile.enable_azure_rbac),
        pools=tuple(PoolFacts(p) for p in props.agent_pool_profiles or []),
        source=source,
        private=access.enable_private_cluster is True,
        vnet_integration=access.enable_vnet_integration is True,
        authorized_ip_ranges=tuple(access.authorized_ip_ranges or ()),
        resource_id=found.id,
        egress=parse_egress(_text(network.outbound_type), props.http_proxy_config),
        node_provisioning_mode=_text(props.node_provisioning_profile.mode) if props.node_provisioning_profile else None,
    )


def id_segment(resource_id: Any, segment: str) -> str | None:
    """The name after `segment` in an ARM resource ID, matched without case, as ARM writes it
    either way (the az CLI's `resourcegroups`)."""
    parts = resource_id.rstrip("/").split("/") if isinstance(resource_id, str) else []
    lowered = [p.lower() for p in parts]
    index = lowered.index(segment.lower()) + 1 if segment.lower() in lowered else len(parts)
    return parts[index] or None if index < len(parts) else None


CLUSTER_ID = re.compile(
    r"/subscriptions/(?P<subscription>[^/]+)/resourceGroups/(?P<group>[^/]+)/providers/Microsoft\.ContainerService/"
    r"managedClusters/(?P<cluster>[^/]+)",
    re.IGNORECASE,
)


def cluster_id(subscription: str, resource_group: str, name: str) -> str:
    return f"/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/Microsoft.ContainerService/managedClusters/{name}"


def id_parts(resource_id: Any) -> tuple[str | None, str | None]:
    return id_segment(resource_id, "subscriptions"), id_segment(resource_id, "resourceGroups")


def description_problem(doc: Any) -> str | None:
    """What is wrong with a description of a cluster, as far as `parse` reads it, or None."""
    if not isinstance(doc, Mapping):
        return f"expected an object, found {type(doc).__name__}"
    absent = [m for m in ("name", "location", "agentPoolProfiles") if _get(doc, m) is None]
    if absent:
        return f"no {', '.join(absent)}"
    if not isinstance(_get(doc, "agentPoolProfiles"), list):
        return f"agentPoolProfiles is {type(_get(doc, 'agentPoolProfiles')).__name__}, not a list of pools"
    return rest_shapes.problem(doc) or pool_named_twice(doc)


def pool_named_twice(doc: Any) -> str | None:
    """Two pools of one name in a description, which no cluster has: a pool is the cluster's child
    resource named in its path, `.../managedClusters/{resourceName}/agentPools/{agentPoolName}`
    (azure-mgmt-containerservice 41.8.0 operations/_operations.py, build_agent_pools_create_or_update_request),
    so a second PUT of a name updates the first; "Resource and resource group names are
    case-insensitive" (learn.microsoft.com azure-resource-manager/management/resource-name-rules).
    Taken, the checks would read the first alone."""
    seen: dict[str, int] = {}
    for index, pool in enumerate(_get(doc, "agentPoolProfiles") or ()):
        name = _get(pool, "name")
        if not isinstance(name, str):
            continue
        if (first := seen.setdefault(name.lower(), index)) != index:
            return (
                f"agentPoolProfiles holds two pools named {_quoted(name)} (items {first} and {index}), and a cluster names each of "
                "its pools once (AKS's agentPools/<name>): this program would not know which of them it reads"
            )
    return None


SAVED_HOLDS = "the JSON object `az aks show --resource-group <group> --name <cluster> --output json` prints"


@dataclass(frozen=True)
class Named:
    """The cluster a stack names, as a saved description must match it (None: not said)."""

    name: str | None
    resource_group: str | None = None
    subscription: str | None = None

    def mismatch(self, described: Mapping[str, Any]) -> str | None:
        """How the description names another cluster, if it does. ARM matches resource group
        names and subscription IDs without case; a cluster's name as given."""
        subscription, group = id_parts(_get(described, "id"))
        name = _get(described, "name")
        if self.name is not None and name != self.name:
            return f"it describes cluster {name!r}, but {NAMESPACE}:existingCluster.name is {self.name!r}"
        if other := _id_mismatch(described, name):
            return other
        if self.resource_group is not None and group is not None and group.lower() != self.resource_group.lower():
            return f"it describes {group}/{name}, but {NAMESPACE}:existingCluster.resourceGroupName is {self.resource_group!r}"
        if self.subscription is not None and subscription is not None and subscription.lower() != self.subscription.lower():
            return f"its cluster is in subscription {subscription}, but azure-native:subscriptionId is {self.subscription}"
        return None


def _id_mismatch(described: Mapping[str, Any], name: Any) -> str | None:
    """How the description's `id`, or a pool's, names another cluster or no ARM path at all."""
    given = _get(described, "id")
    found = CLUSTER_ID.fullmatch(given) if isinstance(given, str) else None
    if given is not None and found is None:
        return f"its id {_quoted(given)} is not a managed cluster's ARM ID ({cluster_id('<subscription>', '<group>', '<name>')})"
    if found is not None and found["cluster"] != name:
        return f"its id names cluster {_quoted(found['cluster'])}, but it describes {_quoted(name)}"
    for pool in _get(described, "agentPoolProfiles") or ():
        pool_id, pool_name = _get(pool, "id"), _get(pool, "name")
        if pool_id is None:
            continue
        # The REST agentPools answer gives a pool its own id: the cluster's, then /agentPools/<name>.
        whole = (
            re.fullmatch(rf"({CLUSTER_ID.pattern})/agentPools/(?P<pool>[^/]+)", pool_id, re.IGNORECASE)
            if isinstance(pool_id, str)
            else None
        )
        if whole is None or whole["cluster"] != name or whole["pool"] != pool_name or (given and whole[1].lower() != given.lower()):
            return f"the id of its pool {_quoted(pool_name)}, {_quoted(pool_id)}, is not that pool's in the cluster it describes"
    return None


def _quoted(value: Any) -> str:
    return cut(json.dumps(value, default=str))


def read_saved(key: str, path: Path, named: Named) -> dict[str, Any]:
    """A saved description of the existing cluster, checked as `parse` reads it and against the
    cluster the stack names; anything else is one line naming the key and the file."""
    described = saved_files.read_json(key, path, SAVED_HOLDS)
    problem = description_problem(described)
    if problem:
        raise saved_files.refused(key, path, f"{problem}; expected {SAVED_HOLDS}")
    other = named.mismatch(described)
    if other:
        raise saved_files.refused(key, path, other)
    return described


def check_saved(cluster_file: str | None, named: Named) -> None:
    """A clusterFile that is not such a description is refused in a deployment too."""
    if cluster_file:
        read_saved(f"{NAMESPACE}:preflight.clusterFile", Path(cluster_file), named)


# --------------------------------------------------------------------------- failed reads

# ARM's error codes (azure-resource-manager "Troubleshoot common Azure deployment errors":
# ResourceNotFound, ResourceGroupNotFound, ParentResourceNotFound; AuthorizationFailed,
# LinkedAuthorizationFailed), as azure-native's errors quote them.
NOT_FOUND = re.compile(r"\b(ResourceNotFound|ResourceGroupNotFound|ParentResourceNotFound|SubscriptionNotFound)\b|\b404\b")
FORBIDDEN = re.compile(r"\b(AuthorizationFailed|LinkedAuthorizationFailed|Forbidden)\b|\b403\b")
SIGNED_OUT = re.compile(
    r"(az login|InvalidAuthenticationToken|ExpiredAuthenticationToken|AADSTS\d+|DefaultAzureCredential failed|"
    r"could not find any credentials|no credentials|ClientAuthenticationError)|\b401\b",
    re.IGNORECASE,
)


def read_error(what: str, error: BaseException, forbidden_fix: str, not_found_fix: str) -> AzureReadError:
    text = one_line(error, None)
    if isinstance(error, TimeoutError):  # no answer at all: nothing of Azure's to quote
        return AzureReadError(f"{what}: {text[:300]}; try again")
    code = next((m.group(1) for m in re.finditer(r"\b([A-Z][A-Za-z]+(?:NotFound|Failed|Forbidden|Token))\b", text)), None)
    answer = f" ({code})" if code else ""
    if NOT_FOUND.search(text):
        return AzureReadError(f"{what}: Azure says it does not exist{answer}; {not_found_fix}")
    if FORBIDDEN.search(text):
        return AzureReadError(f"{what}: the identity running Pulumi may not read it{answer}; {forbidden_fix}")
    if SIGNED_OUT.search(text):
        return AzureReadError(f"{what}: no Azure sign-in{answer}; run `az login` (or azure/login in GitHub Actions) and try again")
    return AzureReadError(f"{what}: Azure's answer was an error ({text[:300] or type(error).__name__})")


# --------------------------------------------------------------------------- the reads

PERMISSIONS = "docs/deploying.md"


def read(reader: AzureReader, resource_group: str, name: str) -> ClusterFacts:
    """The cluster, read before anything is registered: a failure stops the run."""
    what = f"aks-gpu:existingCluster {resource_group}/{name}: reading the cluster (getManagedCluster)"
    try:
        answer = reader.cluster(resource_group, name)
    except read_errors() as error:  # Azure's answer is the message
        raise read_error(
            what,
            error,
            forbidden_fix=f"it needs Microsoft.ContainerService/managedClusters/read on the cluster, such as Reader ({PERMISSIONS})",
            not_found_fix=f"check existingCluster.resourceGroupName and name, and the subscription (`az aks show --resource-group {resource_group} --name {name}`)",
        ) from None
    if problem := rest_shapes.problem(answer or {}) or pool_named_twice(answer or {}):
        raise AzureReadError(
            f"{what}: in Azure's answer, {problem}; this program reads Azure's own types, and `az aks show` shows the answer"
        )
    return parse(answer or {}, resource_group)


def credential_error(what: str, error: BaseException, not_found_fix: str) -> AzureReadError:
    """A failed listClusterUserCredential in one line. The Reader role may not call it."""
    return read_error(
        f"{what}: fetching its user credential (listClusterUserCredential)",
        error,
        forbidden_fix=(
            "it needs Microsoft.ContainerService/managedClusters/listClusterUserCredential/action, which Reader "
            f"does not have: Azure Kubernetes Service Cluster User Role on the cluster ({PERMISSIONS})"
        ),
        not_found_fix=not_found_fix,
    )


def created_credential_failed(resource_group: str, cluster: str) -> Callable[[Exception], Any]:
    """`Output.recover`'s answer to a failed listClusterUserCredential of the created cluster: one
    line, not the SDK's traceback (pulumi/runtime/invoke.py `_invoke`)."""

    def failed(error: Exception) -> Any:
        fix = "the state has a cluster Azure does not: `pulumi refresh` drops it, and the next `pulumi up` creates it again"
        raise credential_error(f"cluster {resource_group}/{cluster} (this stack's)", error, not_found_fix=fix) from None

    return failed


def read_user_kubeconfig(reader: AzureReader, resource_group: str, name: str) -> str:
    """The cluster's user kubeconfig, base64 (listClusterUserCredential, format exec)."""
    try:
        return reader.user_kubeconfig(resource_group, name)
    except read_errors() as error:  # Azure's answer is the message
        raise credential_error(
            f"aks-gpu:existingCluster {resource_group}/{name}", error, not_found_fix="check existingCluster.resourceGroupName and name"
        ) from None
