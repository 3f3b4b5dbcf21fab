// The platform team's program in TypeScript: its own resource group and AKS cluster, and on it,
// from the aks-gpu package, a T4 GPU pool (GpuPools), the GPU stack on that pool (GpuStack) and a
// training Job that proves it (GpuProof), signed in with the team's own Kubernetes provider
// (README.md here).
import * as pulumi from "@pulumi/pulumi";
import * as azure_native from "@pulumi/azure-native";
import * as k8s from "@pulumi/kubernetes";
import * as aksGpu from "@aks-gpu/aks-gpu"; // what `pulumi package add` generated (sdks/aks-gpu)

const config = new pulumi.Config();
const location = new pulumi.Config("azure-native").require("location");

// Fixed names: the components take plain values (each decides what they declare), not outputs,
// so the cluster's resource ID is written from them, not read from `aks.id`.
const resourceGroupName = "platform-rg";
const clusterName = "platform-aks";
const clusterId = `/subscriptions/${config.require("subscriptionId")}/resourceGroups/${resourceGroupName}` +
    `/providers/Microsoft.ContainerService/managedClusters/${clusterName}`;

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

// The team's own Kubernetes provider, signed in with the cluster's user credential.
const credentials = azure_native.containerservice.listManagedClusterUserCredentialsOutput({
    resourceGroupName: group.name,
    resourceName: aks.name,
});
const kubeconfig = pulumi.secret(credentials.kubeconfigs[0].value.apply(value => Buffer.from(value, "base64").toString()));
const kubernetes = new k8s.Provider("platform", { kubeconfig });

// Each component reads the cluster while it is constructed, so each waits for the one before it
// (`dependsOn`), and the first `up` skips the preview (README.md here).
const pools = new aksGpu.GpuPools("gpu-pools", {
    clusterId,
    gpuPools: { t4: { vmSize: config.require("gpuVmSize"), minCount: 0, maxCount: 2 } },
}, { dependsOn: [aks] });
const gpuStack = new aksGpu.GpuStack("gpu-stack", {
    clusterId,
    gpuPoolNames: ["t4"],
}, { dependsOn: [pools] });
const proof = new aksGpu.GpuProof("gpu-proof", {
    clusterId,
    gpuPoolNames: ["t4"],
}, { dependsOn: [gpuStack], providers: { kubernetes } });

// The components read what they declared from the stack's outputs on the next `up`: export some.
export const cluster = aks.name;
export const gpuPools = pools.gpuPools;
export const gpuMetrics = gpuStack.gpuMetrics;
export const proofLogs = proof.jobLogsCommand;
