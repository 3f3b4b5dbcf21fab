// The platform team's program in TypeScript: its AKS cluster, and a GPU pool with the GPU stack
// and a training Job that proves it, added by aks-gpu's GpuEnvironment (README.md here).
import * as pulumi from "@pulumi/pulumi";
import * as azure_native from "@pulumi/azure-native";
import * as aksGpu from "@aks-gpu/aks-gpu"; // what `pulumi package add` generated (sdks/aks-gpu)

const config = new pulumi.Config();
const location = new pulumi.Config("azure-native").require("location");

// Fixed names: GpuEnvironment takes plain values (each decides what it declares), not outputs.
const resourceGroupName = "platform-rg";
const clusterName = "platform-aks";

const group = new azure_native.resources.ResourceGroup("platform", { resourceGroupName, location });
const aks = new azure_native.containerservice.ManagedCluster("platform", {
    resourceGroupName: group.name,
    resourceName: clusterName,
    location,
    dnsPrefix: clusterName,
    identity: { type: "SystemAssigned" },
    networkProfile: { networkPlugin: "azure", networkPluginMode: "overlay", networkDataplane: "cilium", networkPolicy: "cilium" },
    agentPoolProfiles: [
        { name: "system", mode: "System", vmSize: "Standard_D4s_v5", count: 3, osType: "Linux", type: "VirtualMachineScaleSets" },
    ],
}, { ignoreChanges: ["agentPoolProfiles"] }); // the GPU pools are separate AgentPools

const gpu = new aksGpu.GpuEnvironment("gpu", {
    existingCluster: { resourceGroupName, name: clusterName },
    gpuPools: { t4: { vmSize: config.require("gpuVmSize"), minCount: 0, maxCount: 2 } },
}, { dependsOn: [aks] }); // GpuEnvironment reads the cluster while it is constructed: once it exists

export const cluster = aks.name;
export const gpuPools = gpu.gpuPools;
export const getCredentials = gpu.getCredentialsCommand;
