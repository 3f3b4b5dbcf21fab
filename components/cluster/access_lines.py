"""What a preview says of the cluster's doors: which of the guide's defaults a created cluster
keeps, each with the key that changes it, and the role the identity that runs `pulumi up` needs
where Entra ID and Azure RBAC decide who may do what in Kubernetes. Pure; the sources are in
docs/design/deploying.md, "The deployer's role in Kubernetes"."""

from __future__ import annotations

from components.cluster.cluster_facts import ClusterFacts
from components.cluster.settings import AccessConfig, SystemPoolConfig
from components.config.values import NAMESPACE

# The built-in role the stack grants on a cluster it creates (cluster.py AKS_RBAC_CLUSTER_ADMIN_ROLE,
# b1ff04bb-...). Of AKS's four, the only one that may create and delete namespaces: "RBAC Admin ...
# doesn't allow write access to resource quota or to the namespace itself", and RBAC Writer has
# less (azure-aks-docs articles/aks/entra-id-authorization.md, "AKS built-in roles", ms.date 08/18/2026).
CLUSTER_ADMIN = "Azure Kubernetes Service RBAC Cluster Admin"
# Who may grant it: Microsoft.Authorization/roleAssignments/write (preflight/permissions.py GRANT_ROLES).
GRANTERS = "Owner, User Access Administrator or Role Based Access Control Administrator"


def guide_defaults(access: AccessConfig, system_pool: SystemPoolConfig) -> list[str]:
    """A created cluster's settings that are still the guide's (or the program's smallest), one
    line each with the key that changes it: a new stack inherits them without a word otherwise."""
    lines = []
    if not access.entra:
        lines.append(
            f"cluster: local accounts on, as the guide's cluster has them (its user credential signs in without Entra ID); "
            f"{NAMESPACE}:access.mode: entra signs in with Entra ID and turns them off"
        )
    if not access.authorized_ip_ranges:
        lines.append(
            f"cluster: the API server answers any address, as the guide's does; {NAMESPACE}:access.authorizedIpRanges "
            "names the addresses allowed"
        )
    if system_pool.node_count == SystemPoolConfig.node_count:
        lines.append(
            f"cluster: one System node ({system_pool.vm_size}) for kube-system, the program's default; "
            f"{NAMESPACE}:systemPool.nodeCount sets more (and vmSize another size)"
        )
    return lines


def created_cluster_role(access: AccessConfig) -> list[str]:
    """On an Entra ID cluster the stack creates (Azure RBAC on, cluster.py): who gets the role
    the Kubernetes objects need, and what granting it needs."""
    if not access.entra:
        return []
    if not access.grants_deployer:
        return [
            f"cluster: Entra ID with Azure RBAC, nothing granted ({NAMESPACE}:access.deployerType none): the identity that "
            f"runs `pulumi up` creates the Kubernetes objects as a member of {NAMESPACE}:access.adminGroupObjectIds "
            f"(cluster-admin), or with {CLUSTER_ADMIN} on the cluster"
        ]
    who = f"object ID {access.deployer_object_id}" if access.deployer_object_id else "the identity that runs it"
    return [
        f"cluster: Entra ID with Azure RBAC: `pulumi up` grants {who} {CLUSTER_ADMIN} on the cluster, which the Kubernetes "
        f"objects need; granting needs Microsoft.Authorization/roleAssignments/write there ({GRANTERS})"
    ]


def existing_cluster_role(found: ClusterFacts) -> list[str]:
    """On an existing Entra ID cluster: the role the identity that runs `pulumi up` needs in
    Kubernetes, which the stack never grants on a cluster it does not own, and how to ask for it."""
    where = f"{found.resource_group}/{found.name}"
    if found.azure_rbac:
        scope = found.resource_id or f"$(az aks show --resource-group {found.resource_group} --name {found.name} --query id --output tsv)"
        return [
            f"kubernetes: {where} authorizes Kubernetes calls with Azure RBAC (Entra ID): the identity that runs `pulumi up` "
            f"needs {CLUSTER_ADMIN} on it, since the stack creates and deletes namespaces, which RBAC Admin and RBAC Writer "
            f'do not allow; its owner grants it with `az role assignment create --role "{CLUSTER_ADMIN}" --assignee '
            f"<the identity's object ID> --scope {scope}` (it takes up to five minutes to apply)"
        ]
    if found.entra:
        return [
            f"kubernetes: {where} signs in with Entra ID and authorizes with Kubernetes RBAC: the identity that runs "
            "`pulumi up` needs cluster-admin there, from a ClusterRoleBinding of the owner's or an admin group of the "
            "cluster's (aadProfile.adminGroupObjectIDs)"
        ]
    return []
