"""How each GPU pool joins its cluster's network: its nodes' subnet, its pods' subnet and
its pods per node, decided from the cluster (components/azure/cluster_facts.py) and the pool's
config. Pure: no resource, no call.

The rules, from azure-aks-docs at fb060abe (2026-08-21) and AKS's own answers:
  - "All node pools must reside in the same virtual network" (create-node-pools.md, ms.date
    07/13/2026; node-pool-unique-subnet.md: "All subnets assigned to node pools must belong
    to the same virtual network"). A cluster in its own VNet carries `vnetSubnetID` on its
    pools, and one in AKS's managed VNet carries none: AKS refuses a subnet there ("Cannot
    use a custom subnet because agent pool agentpool is using a managed subnet. Please omit
    the vnetSubnetID parameter", MicrosoftDocs/azure-docs#116169). A new pool joins with the
    System pool's subnet, or another of its VNet that `vnetSubnetId` names;
  - Azure CNI with dynamic pod IPs carries `podSubnetID`, and AKS answers a mix with
    "InvalidParameter: All or none of the agentpools should set podsubnet": the System
    pool's pod subnet, or `podSubnetId`;
  - "You can't change the max pods setting of a node pool after you create it"
    (create-node-pools.md), and the default differs by model ("Azure CNI Overlay 250, Azure
    CNI Pod subnet 110, Azure CNI (Legacy) 30, Kubenet 110", concepts-network-ip-address-
    planning.md, ms.date 04/16/2026). Without overlay every pod takes an address of the
    node's (or the pod) subnet, sized for the pods per node the cluster was planned with: a
    new pool takes the System pool's `maxPods` unless `maxPods` says otherwise;
  - Azure CNI Overlay, kubenet and a cluster this program creates (Overlay) take 250, as
    they always have here: "The default for Azure CNI Overlay is 250", the most AKS allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from components.azure.cluster_facts import ClusterFacts, id_segment
from components.config import StackConfig

# "The default for Azure CNI Overlay is 250. The maximum value you can specify in Azure CNI
# Overlay is 250" pods per node (azure-aks-docs articles/aks/azure-cni-overlay.md).
MAX_PODS = 250
# AKS's defaults without overlay, when the cluster's System pool does not say what it was
# created with (concepts-network-ip-address-planning.md): legacy Azure CNI 30, pod subnet 110.
AZURE_CNI_DEFAULT_MAX_PODS = 30
POD_SUBNET_DEFAULT_MAX_PODS = 110


@dataclass(frozen=True)
class PoolNetwork:
    """What a GPU pool's agent pool sets, and why (preflight's line for the pool)."""

    max_pods: int
    vnet_subnet_id: str | None = None
    pod_subnet_id: str | None = None
    why: str = ""
    #: What AKS would refuse (a subnet on a cluster whose pools have none), if anything.
    problem: str | None = None


def model(found: ClusterFacts) -> str:
    """The cluster's network model, as the AKS docs name them."""
    plugin, mode = (found.network_plugin or "").lower(), (found.network_plugin_mode or "").lower()
    if plugin == "azure" and mode == "overlay":
        return "Azure CNI Overlay"
    if plugin == "azure":
        pods = any(p.pod_subnet_id for p in found.pools)
        return "Azure CNI with dynamic pod IPs" if pods else "Azure CNI (pods on the node subnet)"
    if plugin == "kubenet":
        return "kubenet"
    return f"network plugin {found.network_plugin or 'unset'}"


def _subnet(name: str, given: str | None, cluster_uses: bool, system: str | None, key: str) -> tuple[str | None, str, str | None]:
    """The subnet a pool gets, how to say so, and what AKS would refuse."""
    if given and not cluster_uses:
        return (
            given,
            f"{name} {short(given)}",
            (
                f"{key}.{'vnetSubnetId' if name == 'subnet' else 'podSubnetId'} is set, but the cluster's pools have no "
                f"{'vnetSubnetID' if name == 'subnet' else 'podSubnetID'}, and AKS takes it on all of a cluster's pools or none; remove it"
            ),
        )
    if given:
        return given, f"{name} {short(given)}", None
    if cluster_uses and system:
        return system, f"{name} {short(system)} (the System pool's)", None
    if cluster_uses:
        return (
            None,
            f"no {name}: the cluster has no System pool with one; set {key}.{'vnetSubnetId' if name == 'subnet' else 'podSubnetId'}",
            (
                f"{key}: the cluster's pools carry {'vnetSubnetID' if name == 'subnet' else 'podSubnetID'}, but no System pool says which; "
                f"set {key}.{'vnetSubnetId' if name == 'subnet' else 'podSubnetId'}"
            ),
        )
    return None, "", None


def plan(
    found: ClusterFacts | None, key: str, max_pods: int | None, vnet_subnet_id: str | None = None, pod_subnet_id: str | None = None
) -> PoolNetwork:
    """The network of one GPU pool (`key` names it in messages) in `found`, or in a cluster
    this program creates (None: Azure CNI Overlay, no VNet of its own)."""
    if found is None:
        pods = max_pods or MAX_PODS
        return PoolNetwork(pods, why=f"network: {key}: maxPods {pods} (the cluster this stack creates: Azure CNI Overlay)")
    system = found.system_pool
    vnet, vnet_text, vnet_problem = _subnet(
        "subnet", vnet_subnet_id, any(p.vnet_subnet_id for p in found.pools), system.vnet_subnet_id if system else None, key
    )
    pod, pod_text, pod_problem = _subnet(
        "pod subnet", pod_subnet_id, any(p.pod_subnet_id for p in found.pools), system.pod_subnet_id if system else None, key
    )
    kind = model(found)
    if max_pods:
        pods, pods_text = max_pods, f"maxPods {max_pods} ({key}.maxPods)"
    elif kind.startswith("Azure CNI") and kind != "Azure CNI Overlay":
        default = POD_SUBNET_DEFAULT_MAX_PODS if pod else AZURE_CNI_DEFAULT_MAX_PODS
        pods = (system.max_pods if system else None) or default
        pods_text = (
            f"maxPods {pods} ({'the System pool' if system and system.max_pods else 'the AKS default'}'s: every pod takes a subnet address)"
        )
    else:
        pods, pods_text = MAX_PODS, f"maxPods {MAX_PODS}"
    parts = ", ".join(t for t in (vnet_text, pod_text, pods_text) if t)
    other_vnet = _other_vnet(vnet, found, f"{key}.vnetSubnetId") or _other_vnet(pod, found, f"{key}.podSubnetId")
    return PoolNetwork(pods, vnet, pod, f"network: {key} joins {kind}: {parts}", vnet_problem or pod_problem or other_vnet)


def short(subnet_id: str) -> str:
    """A subnet as a person reads it, `<vnet>/<subnet>`: the line is a summary, and the full
    ID is in the pool's inputs (resources.json)."""
    vnet, subnet = id_segment(subnet_id, "virtualNetworks"), id_segment(subnet_id, "subnets")
    return f"{vnet}/{subnet}" if vnet and subnet else subnet_id


def _vnet(subnet_id: str | None) -> str | None:
    return subnet_id.lower().split("/subnets/")[0] if subnet_id else None


def _other_vnet(subnet: str | None, found: ClusterFacts, key: str) -> str | None:
    """ "All subnets assigned to node pools must belong to the same virtual network"
    (node-pool-unique-subnet.md), and "the pod subnet should be from the same VNet as the
    cluster" (configure-azure-cni-dynamic-ip-allocation.md, FAQ, ms.date 07/09/2024): the
    cluster's VNet is its pools' node subnets'."""
    theirs = {vnet for p in found.pools if (vnet := _vnet(p.vnet_subnet_id))}
    if subnet and theirs and _vnet(subnet) not in theirs:
        return (
            f"{key} {subnet} is not in the cluster's virtual network ({', '.join(sorted(theirs))}); "
            "AKS puts all of a cluster's pools, and their pods' subnets, in one virtual network: pick a subnet of it"
        )
    return None


def problems(networks: Sequence[PoolNetwork]) -> list[str]:
    return [n.problem for n in networks if n.problem]


def plan_pools(cfg: StackConfig, found: ClusterFacts | None) -> dict[str, PoolNetwork]:
    """Every GPU pool's network, by pool name."""
    return {pool.name: plan(found, cfg.pool_key(pool), pool.max_pods, pool.vnet_subnet_id, pool.pod_subnet_id) for pool in cfg.gpu_pools}
