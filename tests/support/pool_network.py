"""An existing cluster whose owner moved its System pool beside the stack's GPU pool."""

from __future__ import annotations

from components.cluster.cluster_facts import OWNER_TAG
from tools.azure_mocks import existing_cluster

T4 = "Standard_NC4as_T4_v3"
VNET = "/subscriptions/3333/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/team-vnet/subnets"
NODES, PODS = f"{VNET}/nodes", f"{VNET}/pods"
# Where the owner moved the System pool since the stack added its GPU pool.
NEW_NODES, NEW_PODS = f"{VNET}/nodes-2026", f"{VNET}/pods-2026"
OURS = {OWNER_TAG: "aks-gpu/dev"}
DYNAMIC_POD_IPS = {"networkPlugin": "azure", "networkPolicy": "cilium", "networkDataplane": "cilium"}


def moved_cluster(gpu_tags: dict | None = OURS, gpu_name: str = "gpu") -> dict:
    """A cluster with dynamic pod IPs whose System pool its owner moved to new subnets and 50
    pods per node, beside the GPU pool the stack added before, on the old ones with 30."""
    system = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "osType": "Linux"}
    gpu = {"name": gpu_name, "mode": "User", "vmSize": T4, "count": 1, "osType": "Linux", "provisioningState": "Succeeded"}
    pools = [
        {**system, "vnetSubnetID": NEW_NODES, "podSubnetID": NEW_PODS, "maxPods": 50},
        {**gpu, "vnetSubnetID": NODES, "podSubnetID": PODS, "maxPods": 30, **({"tags": gpu_tags} if gpu_tags else {})},
    ]
    return existing_cluster(networkProfile=DYNAMIC_POD_IPS, agentPoolProfiles=pools)


def network_of(declared: dict) -> tuple:
    return declared.get("vnetSubnetID"), declared.get("podSubnetID"), declared["maxPods"]


def replace_warnings(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "replaces pool" in w]
