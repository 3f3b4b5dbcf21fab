"""Guide steps 1-3, when this program creates the cluster: the resource group, the AKS
cluster with its System pool, and the credentials to reach it. The GPU pools are separate
`AgentPool`s (components/pools/gpu_pool.py), not inline `agentPoolProfiles`: Azure does not
update inline profiles through the managed cluster (azure-native `ManagedCluster` docs), and a
change to one puts every pool into `Scaling` (pulumi/pulumi-azure-native#4264)."""

from __future__ import annotations

import base64
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization, containerservice, resources

from components.cluster import access_wait
from components.cluster.access_wait import AccessWait
from components.cluster.cluster_facts import created_credential_failed
from components.cluster.kubeconfig import provider_kubeconfig
from components.cluster.settings import (
    SYSTEM_POOL_NAME,
    VERSION_UPGRADE_CHANNELS,
    AccessConfig,
    NetworkConfig,
    SystemPoolConfig,
    UpgradeConfig,
)
from components.pools.gpu_pool import MAX_PODS
from components.pools.priority_expander import EXPANDER
from components.proof.proof_watch import child_urn
from components.proof.watch_live import ClusterRef

# Built-in role "Azure Kubernetes Service RBAC Cluster Admin": "Lets you manage all
# resources in the cluster" (azure-docs articles/role-based-access-control/built-in-roles.md).
AKS_RBAC_CLUSTER_ADMIN_ROLE = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"


def network_profile(network: NetworkConfig) -> containerservice.ContainerServiceNetworkProfileArgs:
    """Azure CNI Overlay with a network policy engine, chosen only at creation (azure-aks-docs
    azure-cni-overlay.md, azure-cni-powered-by-cilium.md, use-network-policies.md)."""
    cilium = network.policy == "cilium"
    return containerservice.ContainerServiceNetworkProfileArgs(
        network_plugin=containerservice.NetworkPlugin.AZURE,
        network_plugin_mode=containerservice.NetworkPluginMode.OVERLAY,
        network_dataplane=containerservice.NetworkDataplane.CILIUM if cilium else containerservice.NetworkDataplane.AZURE,
        network_policy=network.policy,
    )


def access_settings(access: AccessConfig) -> dict[str, Any]:
    """Sign-in and API server settings: "entra" disables local accounts, so every call is made
    by an Entra identity (azure-aks-docs manage-local-accounts-managed-azure-ad.md)."""
    settings: dict[str, Any] = {"enable_rbac": True, "disable_local_accounts": access.entra}
    if access.entra:
        settings["aad_profile"] = containerservice.ManagedClusterAADProfileArgs(
            managed=True,
            enable_azure_rbac=True,
            admin_group_object_ids=list(access.admin_group_object_ids) or None,
        )
    if access.authorized_ip_ranges:
        settings["api_server_access_profile"] = containerservice.ManagedClusterAPIServerAccessProfileArgs(
            authorized_ip_ranges=list(access.authorized_ip_ranges),
        )
    return settings


def cluster_ignore_changes(upgrade: UpgradeConfig) -> list[str]:
    """What `pulumi up` leaves to Azure. agentPoolProfiles: a refresh reads every pool into it,
    and the next `up` would PUT the cluster to remove them, putting every pool into Scaling
    (pulumi-azure-native #1532, #579, #4264); Azure cannot update it through the cluster anyway
    (the SDK's ManagedCluster docs). kubernetesVersion: an upgrade channel moves it, and AKS
    cannot downgrade."""
    ignored = ["agentPoolProfiles"]
    if upgrade.channel in VERSION_UPGRADE_CHANNELS:
        ignored.append("kubernetesVersion")
    return ignored


# Creating or deleting an AKS cluster routinely takes 5-15 minutes: the worst case accepted.
CLUSTER_TIMEOUTS = pulumi.CustomTimeouts(create="60m", update="60m", delete="60m")


@dataclass(frozen=True)
class GpuClusterArgs:
    """A cluster the program creates, with its resource group (guide steps 1-3)."""

    location: str
    resource_group_name: str
    cluster_name: str
    #: Fixed at creation (cluster_ignore_changes says why).
    system_pool: SystemPoolConfig
    #: The Kubernetes version; None: AKS's default.
    kubernetes_version: str | None = None
    access: AccessConfig = AccessConfig()
    network: NetworkConfig = NetworkConfig()
    upgrade: UpgradeConfig = UpgradeConfig()
    tier: str = "Free"
    #: Protects the resource group and the cluster from `pulumi destroy` and replacement: the engine
    #: refuses their delete step (pulumi/pulumi@1b594989 pkg/resource/deploy/step.go DeleteStep.Apply,
    #: deleteProtectedError); while set, the Kubernetes objects are not deleted with the cluster (GpuCluster.objects).
    protect: bool = False
    #: The run's subscription, where the deployer's grant names its role; None: getClientConfig's.
    subscription_id: str | None = None
    #: A capacity group exists: the autoscaler's profile sets `expander: priority`.
    priority_expander: bool = False


@dataclass(frozen=True)
class InCluster:
    """What every Kubernetes object takes from its cluster, created or existing, beside its Args
    (docs/design/component-args.md)."""

    #: The cluster's provider: the stack's own, or a component package's consumer's (ExistingClusterArgs.provider).
    provider: pulumi.ProviderResource
    #: A created, unprotected cluster, whose delete takes every object with it (`deletedWith`,
    #: docs/lifecycle.md "pulumi destroy"); None on an existing or protected one.
    deleted_with: pulumi.Resource | None
    #: The deployer's grant and the wait until it took (GpuCluster.access).
    depends_on: Sequence[pulumi.Resource]
    #: For each proof Job's watch; None where the subscription is not known: no watch.
    ref: ClusterRef | None = None

    def options(self, parent: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(
            parent=parent, provider=self.provider, deleted_with=self.deleted_with, depends_on=list(self.depends_on)
        )


class GpuCluster(pulumi.ComponentResource):
    """A resource group holding an AKS cluster with its System pool; the GPU pools are
    `GpuPool`s added to it."""

    resource_group: resources.ResourceGroup
    managed_cluster: containerservice.ManagedCluster
    #: With Entra ID access: the deployer's cluster-admin role, which the provider needs.
    deployer_role_assignment: authorization.RoleAssignment | None
    #: The user kubeconfig (secret), as `az aks get-credentials` fetches it.
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    #: With Entra ID, the deployer's grant and the wait until it took (_access_proven).
    access: Sequence[pulumi.Resource]
    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    resource_uid: pulumi.Output[str]
    #: Where AKS bills the nodes: the resource group and the node resource group.
    billing_groups: Sequence[pulumi.Output[str]]
    objects: InCluster
    #: What a GPU pool waits for: the cluster and the grant (GpuPool's pool_dependencies).
    dependencies: Sequence[pulumi.Resource]
    get_credentials_command: pulumi.Output[str]
    #: Where the cluster is, for the proof's watch; None where the subscription is not known.
    ref: ClusterRef | None

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-gpu:azure:GpuCluster", name, None, opts)
        self._name = name
        self.resource_group = self._create_resource_group(args)
        self.managed_cluster = self._create_cluster(args)
        self.kubeconfig = self._fetch_credentials(args)
        self.deployer_role_assignment = self._grant_deployer(args)
        self.provider = self._create_provider()
        grant = self.deployer_role_assignment
        self.ref = (
            ClusterRef(args.subscription_id, args.resource_group_name, args.cluster_name, entra=args.access.entra)
            if args.subscription_id
            else None
        )
        # The plan reads the subscription wherever the deployer is granted (plan.py, `_Run.declared_subscription`).
        self.access = [grant, self._access_proven(grant, self.ref)] if grant is not None and self.ref is not None else []

        self.resource_group_name = self.resource_group.name
        self.cluster_name = self.managed_cluster.name
        self.resource_uid = self.managed_cluster.resource_uid
        self.billing_groups = [self.resource_group.name, cast("pulumi.Output[str]", self.managed_cluster.node_resource_group)]
        # Deleted with the cluster unless it is protected (docs/lifecycle.md, "pulumi destroy").
        self.objects = InCluster(self.provider, None if args.protect else self.managed_cluster, self.access, self.ref)
        self.dependencies = (self.managed_cluster, *([grant] if grant is not None else []))
        names = pulumi.Output.all(self.resource_group.name, self.managed_cluster.name)
        self.get_credentials_command = names.apply(lambda names: get_credentials_command(*names))
        self.register_outputs(
            {
                "resourceGroupName": self.resource_group_name,
                "clusterName": self.cluster_name,
                "kubeconfig": self.kubeconfig,
            }
        )

    # Step 1: az group create --name myResourceGroup --location eastus
    def _create_resource_group(self, args: GpuClusterArgs) -> resources.ResourceGroup:
        return resources.ResourceGroup(
            f"{self._name}-rg",
            resource_group_name=args.resource_group_name,
            location=args.location,
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )

    # Step 2: az aks create, with a small System pool for kube-system.
    def _create_cluster(self, args: GpuClusterArgs) -> containerservice.ManagedCluster:
        return containerservice.ManagedCluster(
            f"{self._name}-aks",
            resource_group_name=self.resource_group.name,
            resource_name_=args.cluster_name,
            location=args.location,
            # dnsPrefix: 1-54 alphanumerics and hyphens (aka.ms/aks-naming-rules); cannot change later.
            dns_prefix=_dns_prefix(args.cluster_name),
            kubernetes_version=args.kubernetes_version,
            identity=containerservice.ManagedClusterIdentityArgs(
                type=containerservice.ResourceIdentityType.SYSTEM_ASSIGNED,
            ),
            sku=containerservice.ManagedClusterSKUArgs(
                name=containerservice.ManagedClusterSKUName.BASE,
                tier=args.tier,
            ),
            **access_settings(args.access),
            network_profile=network_profile(args.network),
            auto_upgrade_profile=containerservice.ManagedClusterAutoUpgradeProfileArgs(
                upgrade_channel=args.upgrade.channel,
                node_os_upgrade_channel=args.upgrade.node_os_channel,
            ),
            # `expander: priority` while a capacity group exists, nothing else, so AKS keeps its
            # defaults; once no group is left Azure keeps the value (docs/design/capacity-groups.md).
            auto_scaler_profile=(
                containerservice.ManagedClusterPropertiesAutoScalerProfileArgs(expander=EXPANDER) if args.priority_expander else None
            ),
            agent_pool_profiles=[
                containerservice.ManagedClusterAgentPoolProfileArgs(
                    name=SYSTEM_POOL_NAME,
                    mode=containerservice.AgentPoolMode.SYSTEM,
                    os_type=containerservice.OSType.LINUX,
                    type=containerservice.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
                    vm_size=args.system_pool.vm_size,
                    count=args.system_pool.node_count,
                    max_pods=MAX_PODS,
                ),
            ],
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                custom_timeouts=CLUSTER_TIMEOUTS,
                ignore_changes=cluster_ignore_changes(args.upgrade),
            ),
        )

    # Step 3: az aks get-credentials: the user credential, base64. An Entra ID cluster returns a
    # kubelogin exec plugin (the SDK's listManagedClusterUserCredentials docs, format "exec").
    def _fetch_credentials(self, args: GpuClusterArgs) -> pulumi.Output[str]:
        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=self.resource_group.name,
            resource_name=self.managed_cluster.name,
            format="exec" if args.access.entra else None,
        ).recover(created_credential_failed(args.resource_group_name, args.cluster_name))
        decode = provider_kubeconfig if args.access.entra else lambda value: base64.b64decode(value).decode("utf-8")
        return pulumi.Output.secret(credentials.kubeconfigs[0].value.apply(decode))

    def _grant_deployer(self, args: GpuClusterArgs) -> authorization.RoleAssignment | None:
        """With Azure RBAC, an Entra identity may do nothing in the cluster until a role says so,
        whoever runs `pulumi up` included. Granting needs Microsoft.Authorization/roleAssignments/write."""
        if not args.access.grants_deployer:
            return None
        client = authorization.get_client_config_output()
        return authorization.RoleAssignment(
            f"{self._name}-deployer-cluster-admin",
            scope=self.managed_cluster.id,
            principal_id=args.access.deployer_object_id or client.object_id,
            # Azure refuses an assignment whose principalType does not match the principal,
            # and the SDK would otherwise send its default, "User".
            principal_type=args.access.deployer_type,
            role_definition_id=pulumi.Output.concat(
                "/subscriptions/",
                args.subscription_id or client.subscription_id,
                "/providers/Microsoft.Authorization/roleDefinitions/",
                AKS_RBAC_CLUSTER_ADMIN_ROLE,
            ),
            description="aks-gpu: the identity that runs pulumi up creates the device plugin and the MNIST Job",
            opts=pulumi.ResourceOptions(
                parent=self,
                # Create-then-delete would ask ARM for a second assignment of the same role, principal
                # and scope: RoleAssignmentExists. Delete first (tests/test_lifecycle.py cites the sources).
                delete_before_replace=True,
            ),
        )

    def _create_provider(self) -> k8s.Provider:
        # No deleteUnreachable: a refresh that cannot build a client (a logged-out kubelogin)
        # would drop every object from the state. Inputs from the cluster alone: the grant's
        # delete-first replacement would replace the provider and all it manages.
        # docs/lifecycle.md, "When the refresh cannot reach the cluster", "The deployer's role assignment".
        return k8s.Provider(
            f"{self._name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.managed_cluster]),
        )

    def _access_proven(self, grant: authorization.RoleAssignment, ref: ClusterRef) -> AccessWait:
        """Done once the cluster says the deployer may create namespaces (access_wait.py: a new grant
        takes minutes, and pulumi-kubernetes retries no 403); every Kubernetes object depends on it."""
        name = f"{self._name}-access"
        status_urn = child_urn("aks-gpu:azure:GpuCluster", access_wait.TYPE, name)
        opts = pulumi.ResourceOptions(parent=self, depends_on=[grant])
        return AccessWait(name, cluster=ref, grant_id=grant.id, granted=grant.principal_id, status_urn=status_urn, opts=opts)


def get_credentials_command(resource_group: str, cluster: str) -> str:
    """Guide step 3's command, shell-quoted: a resource group name may hold '(' or ')'."""
    return shlex.join(["az", "aks", "get-credentials", "--resource-group", resource_group, "--name", cluster])


def _dns_prefix(cluster_name: str) -> str:
    prefix = "".join(c if c.isalnum() else "-" for c in cluster_name)[:54].strip("-")
    return prefix or "aks"
