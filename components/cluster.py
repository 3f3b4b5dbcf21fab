"""Guide steps 1-3: the resource group, the AKS cluster with its GPU node pool, and the
credentials to reach it.

The GPU pool is a separate `AgentPool` rather than a second inline `agentPoolProfiles`
entry: Azure does not allow inline profiles to be updated through the managed cluster
(azure-native `ManagedCluster` docs: "additional agent pools can be defined via the
`AgentPool` resource"), and any change to an inline profile puts every pool of the cluster
into `Scaling` (pulumi/pulumi-azure-native#4264).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s
import yaml
from pulumi_azure_native import authorization, containerservice, features, resources

from components import gpu_sizes
from components.config import (
    MINOR_UPGRADE_CHANNELS,
    SYSTEM_POOL_NAME,
    AccessConfig,
    GpuPoolConfig,
    NetworkConfig,
    SystemPoolConfig,
    UpgradeConfig,
    camel_case,
)

# Today's guide (azure-aks-docs articles/aks/use-nvidia-gpu.md) taints the GPU pool so
# that only pods that ask for it land there: `az aks nodepool add ... --node-taints sku=gpu:NoSchedule`.
GPU_TAINT_KEY = "sku"
GPU_TAINT_VALUE = "gpu"
GPU_TAINT_EFFECT = "NoSchedule"
GPU_TAINT = f"{GPU_TAINT_KEY}={GPU_TAINT_VALUE}:{GPU_TAINT_EFFECT}"

# AKS puts this taint (and label) on every node of a Spot pool (azure-aks-docs
# articles/aks/spot-node-pool.md: "A Spot node pool has the
# kubernetes.azure.com/scalesetpriority=spot:NoSchedule taint"). It is declared explicitly
# as well, so the declared taints equal what Azure reports and no diff appears.
SPOT_TAINT_KEY = "kubernetes.azure.com/scalesetpriority"
SPOT_TAINT = f"{SPOT_TAINT_KEY}=spot:NoSchedule"


# "The default for Azure CNI Overlay is 250. The maximum value you can specify in Azure CNI
# Overlay is 250" pods per node (azure-aks-docs articles/aks/azure-cni-overlay.md). Stated,
# so the desired state says it (and passes Checkov CKV_AZURE_168, at least 50).
MAX_PODS = 250

def gpu_pool_taints(pool: GpuPoolConfig) -> list[str]:
    return [GPU_TAINT, SPOT_TAINT] if pool.spot else [GPU_TAINT]


def gpu_tolerations(pool: GpuPoolConfig) -> tuple[k8s.core.v1.TolerationArgs, ...]:
    """What a pod must tolerate to run on the GPU pool: `sku=gpu`, and the Spot taint."""
    gpu = k8s.core.v1.TolerationArgs(key=GPU_TAINT_KEY, operator="Equal", value=GPU_TAINT_VALUE, effect=GPU_TAINT_EFFECT)
    if not pool.spot:
        return (gpu,)
    spot = k8s.core.v1.TolerationArgs(key=SPOT_TAINT_KEY, operator="Equal", value="spot", effect="NoSchedule")
    return (gpu, spot)


def gpu_pool_settings(pool: GpuPoolConfig) -> dict[str, Any]:
    """The GPU pool's agent-pool properties, as azure-native keyword arguments.

    Autoscaling: `enableAutoScaling` with `minCount`/`maxCount` is `az aks nodepool add
    --enable-cluster-autoscaler --min-count --max-count` (today's guide). User pools may
    scale to zero ("User node pools can contain zero or more nodes", create-node-pools.md).
    Spot: `--priority Spot --eviction-policy Delete --spot-max-price -1`, where -1 means
    "the instance won't be evicted based on price" (spot-node-pool.md).
    """
    settings: dict[str, Any] = {
        "mode": containerservice.AgentPoolMode.USER,
        "os_type": containerservice.OSType.LINUX,
        "type": containerservice.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
        "vm_size": pool.vm_size,
        "count": pool.node_count,
        "max_pods": MAX_PODS,
        "node_taints": gpu_pool_taints(pool),
    }
    if pool.autoscaling:
        settings.update(enable_auto_scaling=True, min_count=pool.min_count, max_count=pool.max_count)
    if pool.spot:
        settings.update(
            scale_set_priority=containerservice.ScaleSetPriority.SPOT,
            scale_set_eviction_policy=containerservice.ScaleSetEvictionPolicy.DELETE,
            spot_max_price=-1,
        )
    return settings


# `dedicatedVhd: true`: the guide's "AKS specialized GPU image" (the UseGPUDedicatedVHD
# header) was retired on 2025-01-10 (azure-aks-docs includes/aks-gpu-image-retirement.md),
# and ARM cannot send custom headers anyway. Its successor is AKS-managed GPU nodes: AKS
# installs the driver, the device plugin and the DCGM exporter when the agent pool has
# gpuProfile.nvidia.managementMode = "Managed" (azure-aks-docs articles/aks/aks-managed-gpu-nodes.md).
# The field exists only in preview API versions: Azure/azure-rest-api-specs
# specification/containerservice/resource-manager/Microsoft.ContainerService/aks/preview/
# 2026-01-02-preview/managedClusters.json, definitions GPUProfile.nvidia -> NvidiaGPUProfile
# .managementMode (enum ManagementMode: Managed | Unmanaged). azure-native 3.x types agent
# pools at 2025-09-01, so the pool goes through the generic `resources.Resource`.
MANAGED_GPU_API_VERSION = "2026-01-02-preview"
MANAGED_GPU_FEATURE_NAMESPACE = "Microsoft.ContainerService"
MANAGED_GPU_FEATURE = "ManagedGPUExperiencePreview"  # az feature register --name ManagedGPUExperiencePreview
MANAGED_GPU_PROFILE = {"driver": "Install", "nvidia": {"managementMode": "Managed"}}

# Built-in role "Azure Kubernetes Service RBAC Cluster Admin": "Lets you manage all
# resources in the cluster" (azure-docs articles/role-based-access-control/built-in-roles.md).
AKS_RBAC_CLUSTER_ADMIN_ROLE = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"


def network_profile(network: NetworkConfig) -> containerservice.ContainerServiceNetworkProfileArgs:
    """Azure CNI Overlay with a network policy engine (azure-aks-docs
    articles/aks/azure-cni-overlay.md, azure-cni-powered-by-cilium.md,
    use-network-policies.md). Cilium is both dataplane and policy engine; Calico enforces
    policy on the Azure dataplane. The plugin can only be chosen when the cluster is created.
    """
    cilium = network.policy == "cilium"
    return containerservice.ContainerServiceNetworkProfileArgs(
        network_plugin=containerservice.NetworkPlugin.AZURE,
        network_plugin_mode=containerservice.NetworkPluginMode.OVERLAY,
        network_dataplane=containerservice.NetworkDataplane.CILIUM if cilium else containerservice.NetworkDataplane.AZURE,
        network_policy=network.policy,
    )


def access_settings(access: AccessConfig) -> dict[str, Any]:
    """The managed cluster's sign-in and API server settings, as azure-native arguments.

    "local": Kubernetes RBAC with the cluster's local accounts, as the guide's cluster.
    "entra": managed Entra ID integration, Azure RBAC for Kubernetes authorization, and
    local accounts disabled, so every call is made by an Entra identity
    (azure-aks-docs articles/aks/manage-local-accounts-managed-azure-ad.md).
    """
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


def entra_kubeconfig(kubeconfig: str) -> str:
    """Makes an Entra ID cluster's kubeconfig sign in without a prompt.

    listClusterUserCredential with format "exec" returns a kubelogin exec plugin that signs
    in with `--login devicecode`, which waits for a human. `--login azurecli` reuses the
    `az login` session instead (a developer's, or CI's OIDC login), as
    `kubelogin convert-kubeconfig -l azurecli` does (Azure/kubelogin docs). The server ID
    (the AKS Entra application) is kept from what AKS returned.
    """
    config = yaml.safe_load(kubeconfig)
    for user in config.get("users") or []:
        exec_ = (user.get("user") or {}).get("exec")
        if not exec_:
            continue
        args = exec_.get("args") or []
        server_id = args[args.index("--server-id") + 1] if "--server-id" in args else None
        exec_["args"] = ["get-token", "--login", "azurecli"] + (["--server-id", server_id] if server_id else [])
    return yaml.safe_dump(config, sort_keys=False)


# Creating or deleting an AKS cluster routinely takes 5-15 minutes, and a GPU pool can wait
# longer for scarce capacity. Explicit limits state the worst case this program accepts
# instead of relying on the provider's default.
CLUSTER_TIMEOUTS = pulumi.CustomTimeouts(create="60m", update="60m", delete="60m")
POOL_TIMEOUTS = pulumi.CustomTimeouts(create="60m", update="60m", delete="45m")


@dataclass(frozen=True)
class GpuClusterArgs:
    location: str
    resource_group_name: str
    cluster_name: str
    system_pool: SystemPoolConfig
    gpu_pool: GpuPoolConfig
    kubernetes_version: Optional[str] = None
    access: AccessConfig = AccessConfig()
    network: NetworkConfig = NetworkConfig()
    upgrade: UpgradeConfig = UpgradeConfig()
    #: sku.tier: Free, Standard (uptime SLA) or Premium.
    tier: str = "Free"
    # Protects the resource group and the cluster from `pulumi destroy` and replacement.
    protect: bool = False


class GpuCluster(pulumi.ComponentResource):
    """A resource group holding an AKS cluster with a tainted GPU User pool."""

    resource_group: resources.ResourceGroup
    managed_cluster: containerservice.ManagedCluster
    #: The GPU pool: a typed `AgentPool`, or a generic `resources.Resource` at the preview
    #: API version when AKS manages the GPU stack (`dedicatedVhd: true`).
    gpu_node_pool: pulumi.CustomResource
    #: The subscription's registration of the managed-GPU preview (only with `dedicatedVhd: true`).
    feature_registration: Optional[features.SubscriptionFeatureRegistration]
    #: With Entra ID access: the deploying identity's cluster-admin role, which this
    #: program's own Kubernetes provider needs.
    deployer_role_assignment: Optional[authorization.RoleAssignment]
    #: The user kubeconfig (secret), from listClusterUserCredential, as `az aks get-credentials` fetches it.
    kubeconfig: pulumi.Output[str]
    #: A Kubernetes provider bound to this cluster; every Kubernetes object of this program uses it.
    provider: k8s.Provider
    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    gpu_pool_name: pulumi.Output[str]
    gpu_pool_vm_size: pulumi.Output[str]
    #: The Hyper-V generation the GPU nodes boot: "1", "2" or "unknown" (a size not in the catalog).
    gpu_pool_generation: pulumi.Output[str]
    #: The command that merges this cluster's credentials into ~/.kube/config (guide step 3).
    get_credentials_command: pulumi.Output[str]
    #: Who installs the NVIDIA device plugin: this program's DaemonSet, or AKS (dedicatedVhd).
    gpu_management: str
    #: Tolerations a pod needs to land on the GPU pool.
    gpu_tolerations: tuple[k8s.core.v1.TolerationArgs, ...]

    def __init__(self, name: str, args: GpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("aks-gpu:azure:GpuCluster", name, None, opts)
        protected = pulumi.ResourceOptions(parent=self, protect=args.protect)

        # Step 1: az group create --name myResourceGroup --location eastus
        self.resource_group = resources.ResourceGroup(
            f"{name}-rg",
            resource_group_name=args.resource_group_name,
            location=args.location,
            opts=protected,
        )

        # Step 2: az aks create. The cluster keeps a small System pool for kube-system;
        # the GPU nodes come in a separate User pool below.
        self.managed_cluster = containerservice.ManagedCluster(
            f"{name}-aks",
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
            opts=pulumi.ResourceOptions.merge(
                protected,
                pulumi.ResourceOptions(
                    custom_timeouts=CLUSTER_TIMEOUTS,
                    # The stable and rapid channels move the minor version on their own;
                    # `pulumi up` must not try to set it back (AKS cannot downgrade).
                    ignore_changes=["kubernetesVersion"] if args.upgrade.channel in MINOR_UPGRADE_CHANNELS else None,
                ),
            ),
        )

        gpu = args.gpu_pool
        # Step 2, the GPU part: az aks nodepool add --name gpu --node-vm-size Standard_NC6 --node-count 1
        #   --node-taints sku=gpu:NoSchedule (today's guide). GPU pools are Linux only (the guide).
        pool_opts = pulumi.ResourceOptions(
            parent=self,
            custom_timeouts=POOL_TIMEOUTS,
            # The autoscaler owns the node count: `pulumi up` must not scale it back.
            ignore_changes=(["properties.count"] if gpu.dedicated_vhd else ["count"]) if gpu.autoscaling else None,
        )
        self.feature_registration = None
        if not gpu.dedicated_vhd:
            self.gpu_node_pool = containerservice.AgentPool(
                f"{name}-gpu-pool",
                resource_group_name=self.resource_group.name,
                resource_name_=self.managed_cluster.name,
                agent_pool_name=gpu.name,
                **gpu_pool_settings(gpu),
                opts=pool_opts,
            )
        else:
            # Guide step 6, today: az feature register --namespace Microsoft.ContainerService
            #   --name ManagedGPUExperiencePreview. A subscription-wide switch other stacks may
            #   rely on, so `pulumi destroy` leaves it registered.
            self.feature_registration = features.SubscriptionFeatureRegistration(
                f"{name}-managed-gpu-preview",
                provider_namespace=MANAGED_GPU_FEATURE_NAMESPACE,
                feature_name=MANAGED_GPU_FEATURE,
                opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
            )
            # A different type from the typed pool, so switching variants on a deployed
            # stack creates this pool and deletes the other: give it another gpuPool.name
            # (two pools cannot share a name, and managementMode cannot change in place).
            self.gpu_node_pool = resources.Resource(
                f"{name}-managed-gpu-pool",
                resource_group_name=self.resource_group.name,
                resource_provider_namespace="Microsoft.ContainerService",
                parent_resource_path=pulumi.Output.concat("managedClusters/", self.managed_cluster.name),
                resource_type="agentPools",
                resource_name_=gpu.name,
                api_version=MANAGED_GPU_API_VERSION,
                properties={
                    **{camel_case(k): v for k, v in gpu_pool_settings(gpu).items()},
                    "gpuProfile": MANAGED_GPU_PROFILE,
                },
                opts=pulumi.ResourceOptions.merge(
                    pool_opts, pulumi.ResourceOptions(depends_on=[self.feature_registration])
                ),
            )

        # Step 3: az aks get-credentials. The user credential (not the admin one), as the
        # CLI fetches by default; ARM returns it base64-encoded. An Entra ID cluster returns
        # a kubelogin exec plugin ("format ... 'exec' ... requires kubelogin binary in the
        # path": the SDK's listManagedClusterUserCredentials docs).
        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=self.resource_group.name,
            resource_name=self.managed_cluster.name,
            format="exec" if args.access.entra else None,
        )
        decode = _decode_entra_kubeconfig if args.access.entra else _decode_kubeconfig
        self.kubeconfig = pulumi.Output.secret(credentials.kubeconfigs[0].value.apply(decode))

        self.deployer_role_assignment = None
        provider_needs: list[pulumi.Resource] = [self.managed_cluster]
        if args.access.entra and args.access.deployer_type != "none":
            # With Azure RBAC, an Entra identity may do nothing in the cluster until a role
            # says so, and that includes whoever runs `pulumi up`: the Kubernetes objects
            # below are created with its token. Granting this needs
            # Microsoft.Authorization/roleAssignments/write (Owner, User Access
            # Administrator or Role Based Access Control Administrator).
            client = authorization.get_client_config_output()
            self.deployer_role_assignment = authorization.RoleAssignment(
                f"{name}-deployer-cluster-admin",
                scope=self.managed_cluster.id,
                principal_id=client.object_id,
                # Azure refuses an assignment whose principalType does not match the
                # principal, and the SDK would otherwise send its default, "User".
                principal_type=args.access.deployer_type,
                role_definition_id=pulumi.Output.concat(
                    "/subscriptions/",
                    client.subscription_id,
                    "/providers/Microsoft.Authorization/roleDefinitions/",
                    AKS_RBAC_CLUSTER_ADMIN_ROLE,
                ),
                description="aks-gpu: the identity that runs pulumi up creates the device plugin and the MNIST Job",
                opts=pulumi.ResourceOptions(parent=self),
            )
            provider_needs.append(self.deployer_role_assignment)

        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # Let `pulumi destroy` drop Kubernetes objects from the state when the cluster
            # is already gone, instead of failing to reach it (pulumi-kubernetes provider docs).
            delete_unreachable=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=provider_needs),
        )

        self.resource_group_name = self.resource_group.name
        self.cluster_name = self.managed_cluster.name
        self.gpu_management = "aks-managed (preview)" if gpu.dedicated_vhd else "device-plugin-daemonset"
        self.gpu_pool_name = pulumi.Output.from_input(gpu.name)
        self.gpu_pool_vm_size = pulumi.Output.from_input(gpu.vm_size)
        self.gpu_pool_generation = pulumi.Output.from_input(gpu_sizes.generation(gpu.vm_size))
        self.get_credentials_command = pulumi.Output.concat(
            "az aks get-credentials --resource-group ",
            self.resource_group.name,
            " --name ",
            self.managed_cluster.name,
        )
        self.gpu_tolerations = gpu_tolerations(gpu)
        self.register_outputs(
            {
                "resourceGroupName": self.resource_group_name,
                "clusterName": self.cluster_name,
                "gpuPoolName": self.gpu_pool_name,
                "gpuPoolVmSize": self.gpu_pool_vm_size,
                "kubeconfig": self.kubeconfig,
            }
        )


def _dns_prefix(cluster_name: str) -> str:
    prefix = "".join(c if c.isalnum() else "-" for c in cluster_name)[:54].strip("-")
    return prefix or "aks"


def _decode_kubeconfig(value: str) -> str:
    return base64.b64decode(value).decode("utf-8")


def _decode_entra_kubeconfig(value: str) -> str:
    return entra_kubeconfig(_decode_kubeconfig(value))
