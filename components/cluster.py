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
from pulumi_azure_native import containerservice, features, resources

from components import gpu_sizes
from components.config import SYSTEM_POOL_NAME, camel_case, GpuPoolConfig, SystemPoolConfig

# Today's guide (azure-aks-docs articles/aks/use-nvidia-gpu.md) taints the GPU pool so
# that only pods that ask for it land there: `az aks nodepool add ... --node-taints sku=gpu:NoSchedule`.
GPU_TAINT_KEY = "sku"
GPU_TAINT_VALUE = "gpu"
GPU_TAINT_EFFECT = "NoSchedule"
GPU_TAINT = f"{GPU_TAINT_KEY}={GPU_TAINT_VALUE}:{GPU_TAINT_EFFECT}"

# Creating or deleting an AKS cluster routinely takes 5-15 minutes, and a GPU pool can wait
# longer for scarce capacity. Explicit limits state the worst case this program accepts
# instead of relying on the provider's default.


# AKS puts this taint (and label) on every node of a Spot pool (azure-aks-docs
# articles/aks/spot-node-pool.md: "A Spot node pool has the
# kubernetes.azure.com/scalesetpriority=spot:NoSchedule taint"). It is declared explicitly
# as well, so the declared taints equal what Azure reports and no diff appears.
SPOT_TAINT_KEY = "kubernetes.azure.com/scalesetpriority"
SPOT_TAINT = f"{SPOT_TAINT_KEY}=spot:NoSchedule"


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
            enable_rbac=True,
            agent_pool_profiles=[
                containerservice.ManagedClusterAgentPoolProfileArgs(
                    name=SYSTEM_POOL_NAME,
                    mode=containerservice.AgentPoolMode.SYSTEM,
                    os_type=containerservice.OSType.LINUX,
                    type=containerservice.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
                    vm_size=args.system_pool.vm_size,
                    count=args.system_pool.node_count,
                ),
            ],
            opts=pulumi.ResourceOptions.merge(protected, pulumi.ResourceOptions(custom_timeouts=CLUSTER_TIMEOUTS)),
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
        # CLI fetches by default; ARM returns it base64-encoded.
        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=self.resource_group.name,
            resource_name=self.managed_cluster.name,
        )
        self.kubeconfig = pulumi.Output.secret(credentials.kubeconfigs[0].value.apply(_decode_kubeconfig))

        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # Let `pulumi destroy` drop Kubernetes objects from the state when the cluster
            # is already gone, instead of failing to reach it (pulumi-kubernetes provider docs).
            delete_unreachable=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.managed_cluster]),
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
