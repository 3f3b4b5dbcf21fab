"""The members of an agent pool's description, as an adopted pool meets them: every input of
azure-native's AgentPool (declared as Azure has it), those the stack sets itself, and those
Azure only reports. Pure: components/deciding/existing/existing_pools.py and adoption.py read them."""

from __future__ import annotations

from typing import Any

from components.deciding.azure.cluster_facts import PoolFacts

# Every input of azure-native's AgentPool (SDK 3.29.0, api 2025-09-01) by its REST name, with its
# SDK argument; tests/test_adoption.py holds it to the SDK. An import reads each into the state,
# and the update after it deletes a member the program leaves out (docs/existing-cluster.md,
# "What the adopting `up` changes", has the sources).
AGENT_POOL_INPUTS = {
    "availabilityZones": "availability_zones",
    "capacityReservationGroupID": "capacity_reservation_group_id",
    "count": "count",
    "creationData": "creation_data",
    "enableAutoScaling": "enable_auto_scaling",
    "enableEncryptionAtHost": "enable_encryption_at_host",
    "enableFIPS": "enable_fips",
    "enableNodePublicIP": "enable_node_public_ip",
    "enableUltraSSD": "enable_ultra_ssd",
    "gatewayProfile": "gateway_profile",
    "gpuInstanceProfile": "gpu_instance_profile",
    "gpuProfile": "gpu_profile",
    "hostGroupID": "host_group_id",
    "kubeletConfig": "kubelet_config",
    "kubeletDiskType": "kubelet_disk_type",
    "linuxOSConfig": "linux_os_config",
    "localDNSProfile": "local_dns_profile",
    "maxCount": "max_count",
    "maxPods": "max_pods",
    "messageOfTheDay": "message_of_the_day",
    "minCount": "min_count",
    "mode": "mode",
    "networkProfile": "network_profile",
    "nodeLabels": "node_labels",
    "nodePublicIPPrefixID": "node_public_ip_prefix_id",
    "nodeTaints": "node_taints",
    "orchestratorVersion": "orchestrator_version",
    "osDiskSizeGB": "os_disk_size_gb",
    "osDiskType": "os_disk_type",
    "osSKU": "os_sku",
    "osType": "os_type",
    "podIPAllocationMode": "pod_ip_allocation_mode",
    "podSubnetID": "pod_subnet_id",
    "powerState": "power_state",
    "proximityPlacementGroupID": "proximity_placement_group_id",
    "scaleDownMode": "scale_down_mode",
    "scaleSetEvictionPolicy": "scale_set_eviction_policy",
    "scaleSetPriority": "scale_set_priority",
    "securityProfile": "security_profile",
    "spotMaxPrice": "spot_max_price",
    "tags": "tags",
    "type": "type",
    "upgradeSettings": "upgrade_settings",
    "virtualMachineNodesStatus": "virtual_machine_nodes_status",
    "virtualMachinesProfile": "virtual_machines_profile",
    "vmSize": "vm_size",
    "vnetSubnetID": "vnet_subnet_id",
    "windowsProfile": "windows_profile",
    "workloadRuntime": "workload_runtime",
}
# What the stack sets on an adopted pool itself: the members AKS changes in place, from the
# config where it sets them and from the live pool otherwise (settings_from_azure), its tags
# with the stack's added, and the version it leaves to the owner (ignoreChanges).
SET_BY_THE_STACK = {"count", "enableAutoScaling", "minCount", "maxCount", "upgradeSettings", "tags", "orchestratorVersion"}
# Every other input is declared as Azure has it, absent where the pool has none (the fixed
# ones are then left to Azure: pool_settings.typed_pool_ignores), so the import changes none of them.
PASSED_THROUGH = {rest: sdk for rest, sdk in AGENT_POOL_INPUTS.items() if rest not in SET_BY_THE_STACK}
# Members of the description that are no input (Azure reports them; the import reads none
# of them into the inputs, and no update sends them), or that name the pool.
READ_ONLY = {
    "name",
    "id",
    "currentOrchestratorVersion",
    "provisioningState",
    "nodeImageVersion",
    "etag",
    "eTag",
    "e_tag",
    "resourceGroup",
    "systemData",
    "properties",
    "status",
}
_SPELT = {rest.lower(): rest for rest in AGENT_POOL_INPUTS}


def unset(value: Any) -> bool:
    """No value, as the agentPools API omits one: null, an empty list or object."""
    return value is None or value == [] or value == {}


def live_inputs(facts: PoolFacts) -> dict[str, Any]:
    """The inputs of azure-native's AgentPool the pool's description has, by their REST name
    (a saved `az aks show` spells some otherwise: osDiskSizeGb, vnetSubnetId)."""
    return {_SPELT[m.lower()]: v for m, v in facts.profile.items() if m.lower() in _SPELT and not unset(v)}


def declared_members(facts: PoolFacts) -> dict[str, Any]:
    """The members of PASSED_THROUGH the pool's description has, by their REST name."""
    return {m: v for m, v in live_inputs(facts).items() if m in PASSED_THROUGH}


def undeclared_members(facts: PoolFacts) -> list[str]:
    """The members of the pool's description that azure-native's AgentPool has no input for:
    the import does not read them, and no update sends them."""
    known = {m.lower() for m in (*AGENT_POOL_INPUTS, *READ_ONLY)}
    return sorted(m for m, v in facts.profile.items() if m.lower() not in known and not unset(v) and v is not False)
