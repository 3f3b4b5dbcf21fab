"""The platform team's program: its own resource group and AKS cluster, and on it, from the aks-gpu
package, a T4 GPU pool (GpuPools), the GPU stack on that pool (GpuStack) and a training Job that
proves it (GpuProof), signed in with the team's own Kubernetes provider (README.md here)."""

import base64

import aks_gpu_aks_gpu as aks_gpu  # what `pulumi package add` generated (sdks/aks-gpu)
import pulumi
import pulumi_azure_native as azure_native
import pulumi_kubernetes as k8s

config = pulumi.Config()
location = pulumi.Config("azure-native").require("location")

# Fixed names: the components take plain values (each decides what they declare), not outputs,
# so the cluster's resource ID is written from them, not read from `cluster.id`.
RESOURCE_GROUP, CLUSTER, POOL = "platform-rg", "platform-aks", "t4"
CLUSTER_ID = (
    f"/subscriptions/{config.require('subscriptionId')}/resourceGroups/{RESOURCE_GROUP}"
    f"/providers/Microsoft.ContainerService/managedClusters/{CLUSTER}"
)

group = azure_native.resources.ResourceGroup("platform", resource_group_name=RESOURCE_GROUP, location=location)
cluster = azure_native.containerservice.ManagedCluster(
    "platform",
    resource_group_name=group.name,
    resource_name_=CLUSTER,
    location=location,
    dns_prefix=CLUSTER,
    identity={"type": "SystemAssigned"},
    network_profile={
        "network_plugin": "azure",
        "network_plugin_mode": "overlay",
        "network_dataplane": "cilium",
        "network_policy": "cilium",
    },
    agent_pool_profiles=[
        {
            "name": "system",
            "mode": "System",
            "vm_size": "Standard_D4s_v5",
            "count": 3,
            "os_type": "Linux",
            "type": "VirtualMachineScaleSets",
        }
    ],
    # The GPU pools are separate AgentPools: a refresh reads them into agentPoolProfiles, and the
    # next `up` would PUT the cluster to remove them (pulumi-azure-native #1532, #4264).
    opts=pulumi.ResourceOptions(ignore_changes=["agentPoolProfiles"]),
)

# The team's own Kubernetes provider, signed in with the cluster's user credential.
credentials = azure_native.containerservice.list_managed_cluster_user_credentials_output(
    resource_group_name=group.name, resource_name=cluster.name
)
kubeconfig = pulumi.Output.secret(credentials.kubeconfigs[0].value.apply(lambda value: base64.b64decode(value).decode()))
kubernetes = k8s.Provider("platform", kubeconfig=kubeconfig)

# Each component reads the cluster while it is constructed, so each waits for the one before it
# (`depends_on`), and the first `up` skips the preview (README.md here).
pools = aks_gpu.GpuPools(
    "gpu-pools",
    cluster_id=CLUSTER_ID,
    gpu_pools={POOL: aks_gpu.GpuPoolSettingsArgs(vm_size=config.require("gpuVmSize"), min_count=0, max_count=2)},
    opts=pulumi.ResourceOptions(depends_on=[cluster]),
)
gpu_stack = aks_gpu.GpuStack("gpu-stack", cluster_id=CLUSTER_ID, gpu_pool_names=[POOL], opts=pulumi.ResourceOptions(depends_on=[pools]))
proof = aks_gpu.GpuProof(
    "gpu-proof",
    cluster_id=CLUSTER_ID,
    gpu_pool_names=[POOL],
    opts=pulumi.ResourceOptions(depends_on=[gpu_stack], providers={"kubernetes": kubernetes}),
)

# The components read what they declared from the stack's outputs on the next `up`: export some.
pulumi.export("cluster", cluster.name)
pulumi.export("gpuPools", pools.gpu_pools)
pulumi.export("gpuMetrics", gpu_stack.gpu_metrics)
pulumi.export("proofLogs", proof.job_logs_command)
