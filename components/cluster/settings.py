"""The cluster this program creates: its System pool, `access`, `network`, `upgrade`, and the
rules that tie their members together."""

from __future__ import annotations

from pydantic.dataclasses import dataclass

from components.config.messages import fail
from components.config.values import (
    MAX_POOL_NODES,
    MODEL,
    NAMESPACE,
    Guid,
    Ipv4Range,
    VmSize,
    list_of,
    one_of,
    whole_number,
)
from components.errors import ConfigError

SYSTEM_POOL_NAME = "system"
# azure-aks-docs free-standard-pricing-tiers.md.
CLUSTER_TIERS = ("Free", "Standard", "Premium")
# Channels that change the cluster's Kubernetes version by themselves (auto-upgrade-cluster.md).
VERSION_UPGRADE_CHANNELS = ("patch", "stable", "rapid")


@dataclass(frozen=True, config=MODEL)
class SystemPoolConfig:
    """The small Linux System pool that runs kube-system pods, applied at creation only
    (docs/lifecycle.md#after-pulumi-refresh)."""

    vm_size: VmSize = "Standard_D2s_v5"
    """The System pool's VM size."""
    node_count: whole_number(1, MAX_POOL_NODES) = 1
    """System nodes; a System pool needs at least one for CoreDNS and metrics-server."""


@dataclass(frozen=True, config=MODEL)
class AccessConfig:
    """Who may reach the cluster's API server, and how they sign in."""

    # azure-aks-docs manage-azure-rbac.md, manage-local-accounts-managed-azure-ad.md.
    mode: one_of("local", "entra") = "local"
    """local: the guide's local accounts and Kubernetes RBAC; entra: Entra ID sign-in, Azure RBAC, local accounts off."""
    admin_group_object_ids: list_of(Guid, 100) = ()
    """entra only: Entra ID groups whose members are cluster admins; needed with deployerType none."""
    # "You can specify up to 200 authorized IP address ranges" (azure-aks-docs
    # api-server-authorized-ip-ranges.md).
    authorized_ip_ranges: list_of(Ipv4Range, 200) = ()
    """IPv4 addresses or ranges allowed to reach the API server; empty allows any address."""
    # roleAssignments principalType values (Azure RBAC checks it matches the principal), or none.
    deployer_type: one_of("ServicePrincipal", "User", "none") = "ServicePrincipal"
    """entra only: what kind of identity runs pulumi up, granted cluster-admin; none grants nothing."""
    deployer_object_id: Guid | None = None
    """entra only: the object ID granted cluster-admin; not with deployerType none. Unset: whoever runs the program (a preview warns)."""

    @property
    def entra(self) -> bool:
        return self.mode == "entra"

    @property
    def grants_deployer(self) -> bool:
        return self.entra and self.deployer_type != "none"


@dataclass(frozen=True, config=MODEL)
class NetworkConfig:
    """The network policy engine on Azure CNI Overlay (chosen when the cluster is created)."""

    # Azure Network Policy Manager ("azure") is not offered: Microsoft retires it (azure-aks-docs
    # use-network-policies.md).
    policy: one_of("cilium", "calico", "none") = "cilium"
    """cilium (Azure CNI Overlay powered by Cilium), calico (Calico on the Azure dataplane), or none (a preview warns: NetworkPolicies unenforced)."""


@dataclass(frozen=True, config=MODEL)
class UpgradeConfig:
    """Automatic upgrades, the AKS API's defaults stated so the stack says what the cluster does."""

    # azure-aks-docs auto-upgrade-cluster.md, auto-upgrade-node-os-image.md.
    channel: one_of("none", "patch", "stable", "rapid", "node-image") = "none"
    """autoUpgradeProfile.upgradeChannel; patch, stable and rapid move the Kubernetes version, so the program leaves it to AKS (docs/lifecycle.md#after-pulumi-refresh)."""
    node_os_channel: one_of("None", "Unmanaged", "SecurityPatch", "NodeImage") = "NodeImage"
    """autoUpgradeProfile.nodeOSUpgradeChannel."""


def check_access(access: AccessConfig) -> None:
    key = f"{NAMESPACE}:access"
    if not access.entra:
        given = {
            "adminGroupObjectIds": access.admin_group_object_ids or None,
            "deployerType": None if access.deployer_type == AccessConfig.deployer_type else access.deployer_type,
            "deployerObjectId": access.deployer_object_id,
        }
        for member, value in given.items():
            if value is not None:
                raise fail(
                    f"{key}.{member}",
                    list(value) if isinstance(value, tuple) else value,
                    f"only applies to Entra ID; set {key}.mode to entra, or remove it",
                )
    elif access.deployer_type == "none" and not access.admin_group_object_ids:
        raise ConfigError(
            f"invalid config {key}.deployerType = 'none' with no {key}.adminGroupObjectIds: the identity that runs "
            "pulumi up could not create the Kubernetes objects; name its admin group, or set deployerType to "
            "ServicePrincipal or User"
        )
    elif access.deployer_type == "none" and access.deployer_object_id is not None:
        raise fail(
            f"{key}.deployerObjectId",
            access.deployer_object_id,
            f"nothing is granted with {key}.deployerType = 'none'; remove it, or set deployerType to ServicePrincipal or User",
        )


def check_upgrade(upgrade: UpgradeConfig, kubernetes_version: str | None) -> None:
    """A patch version pinned under the "patch" channel would be moved by AKS and put back by `up`."""
    if upgrade.channel == "patch" and kubernetes_version is not None and kubernetes_version.count(".") == 2:
        raise ConfigError(
            f"invalid config {NAMESPACE}:kubernetesVersion = {kubernetes_version!r} with "
            f"{NAMESPACE}:upgrade.channel = 'patch': AKS upgrades the patch version itself; "
            f"expected '1.NN' (such as {'.'.join(kubernetes_version.split('.')[:2])!r}) or no version"
        )


UNPINNED_DEPLOYER_WARNING = (
    f"{NAMESPACE}:access.deployerObjectId is not set: cluster-admin goes to whichever identity runs this "
    "program, so a preview or up run by another identity (a PR preview, a colleague) replaces the grant; "
    f"pin it with `pulumi config set --path {NAMESPACE}:access.deployerObjectId <object ID>`"
)

NO_NETWORK_POLICY_WARNING = (
    f"{NAMESPACE}:network.policy = none: the cluster enforces no NetworkPolicy, so the policies this "
    "program declares for its namespaces have no effect"
)


LISTED_RANGES = 5


def ranges_listed(ranges: tuple[str, ...]) -> str:
    more = f" and {len(ranges) - LISTED_RANGES} more" if len(ranges) > LISTED_RANGES else ""
    return ", ".join(ranges[:LISTED_RANGES]) + more


def authorized_ranges_warning(ranges: tuple[str, ...]) -> str:
    """At creation AKS adds "the API server public IP and the outbound public IP of the Standard
    SKU load balancer" (azure-aks-docs api-server-authorized-ip-ranges.md, ms.date 08/03/2026);
    existing_cluster_checks.authorized_ranges_line says the rest, with GitHub's sources."""
    return (
        f"{NAMESPACE}:access.authorizedIpRanges: the API server answers only {ranges_listed(ranges)} (and the cluster's own "
        "addresses, which AKS adds): `pulumi up`, `preview` and `destroy` must run from an address in them, or the "
        "Kubernetes objects fail to connect; GitHub-hosted runners' addresses are not in them unless added "
        "(docs/deploying.md, authorized IP ranges)"
    )


def check(access: AccessConfig, network: NetworkConfig, upgrade: UpgradeConfig, kubernetes_version: str | None) -> list[str]:
    """The created cluster's rules; returns what a preview should say of its settings."""
    check_access(access)
    check_upgrade(upgrade, kubernetes_version)
    warnings = [NO_NETWORK_POLICY_WARNING] if network.policy == "none" else []
    if access.grants_deployer and access.deployer_object_id is None:
        warnings.append(UNPINNED_DEPLOYER_WARNING)
    if access.authorized_ip_ranges:
        warnings.append(authorized_ranges_warning(access.authorized_ip_ranges))
    return warnings
