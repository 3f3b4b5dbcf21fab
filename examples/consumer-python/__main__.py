"""The platform team's program: its AKS cluster, and a GPU pool with the GPU stack and a
training Job that proves it, added by aks-gpu's GpuEnvironment (README.md here)."""

import aks_gpu_aks_gpu as aks_gpu  # what `pulumi package add` generated (sdks/aks-gpu)
import pulumi
import pulumi_azure_native as azure_native

config = pulumi.Config()
location = pulumi.Config("azure-native").require("location")

# Fixed names: GpuEnvironment takes plain values (each decides what it declares), not outputs.
RESOURCE_GROUP, CLUSTER = "platform-rg", "platform-aks"

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

gpu = aks_gpu.GpuEnvironment(
    "gpu",
    existing_cluster=aks_gpu.ExistingClusterConfigArgs(resource_group_name=RESOURCE_GROUP, name=CLUSTER),
    gpu_pools={"t4": aks_gpu.GpuPoolSettingsArgs(vm_size=config.require("gpuVmSize"), min_count=0, max_count=2)},
    # GpuEnvironment reads the cluster while it is constructed: only once it exists (README.md here).
    opts=pulumi.ResourceOptions(depends_on=[cluster]),
)

pulumi.export("cluster", cluster.name)
pulumi.export("gpuPools", gpu.gpu_pools)
pulumi.export("getCredentials", gpu.get_credentials_command)
