"""How each GPU pool joins its cluster's network: subnet, pod subnet and pods per node; a pool
that runs already keeps what it has unless its config names another. The rules' sources:
docs/existing-cluster.md, "Its network" and "The network rules' sources"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components.cluster import existing_cluster_checks
from components.cluster.cluster_facts import ClusterFacts, PoolFacts, id_segment
from components.ownership.ownership import owner_of
from components.ownership.stack_state import NOT_READ, StackState
from components.pools.settings import GpuPoolConfig, Pools

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
    #: What AKS would refuse, if anything.
    problem: str | None = None
    #: The preview's warning where the config moves a running pool, which replaces it.
    replaces: str | None = None


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


# The config's keys of a pool's network, which AKS fixes when it creates the pool.
CONFIG_KEYS = ("maxPods", "vnetSubnetId", "podSubnetId")
# Each subnet: as a line says it, its config key, its REST name and its PoolFacts member.
SUBNETS = (("subnet", "vnetSubnetId", "vnetSubnetID", "vnet_subnet_id"), ("pod subnet", "podSubnetId", "podSubnetID", "pod_subnet_id"))
KEPT = "kept from the live pool"


def of_created(pool: GpuPoolConfig) -> PoolNetwork:
    """A pool's network in a cluster this program creates."""
    return plan(None, "", pool.max_pods)


def plan(
    found: ClusterFacts | None,
    key: str,
    max_pods: int | None,
    vnet_subnet_id: str | None = None,
    pod_subnet_id: str | None = None,
    current: PoolFacts | None = None,
) -> PoolNetwork:
    """One GPU pool's network in `found`, or in a created cluster (None: Azure CNI Overlay).
    `current`, the pool as it runs already: a member the config sets replaces the pool where it
    differs (AKS fixes all three at creation); one it leaves unset is the live pool's."""
    if found is None:
        pods = max_pods or MAX_PODS
        return PoolNetwork(pods, why=f"network: {key}: maxPods {pods} (the cluster this stack creates: Azure CNI Overlay)")
    texts: list[str] = []
    moves: list[str] = []
    unused: list[str] = []
    other: list[str | None] = []
    chosen: list[str | None] = []
    for (name, member, rest, attr), given in zip(SUBNETS, (vnet_subnet_id, pod_subnet_id), strict=True):
        cluster_uses = any(getattr(p, attr) for p in found.pools)
        live = getattr(current, attr) if current is not None else None
        system = getattr(found.system_pool, attr) if found.system_pool is not None else None
        value, text = given, f"{name} {short(given)}" if given else ""
        if given is None and current is not None:
            value, text = live, f"{name} {short(live)} ({KEPT})" if live else ""
        elif given is None and cluster_uses and system:
            value, text = system, f"{name} {short(system)} (the System pool's)"
        elif given is None and cluster_uses:
            text = f"no {name}: the cluster has no System pool with one; set {key}.{member}"
            unused.append(f"{key}: the cluster's pools carry {rest}, but no System pool says which; set {key}.{member}")
        elif given is not None and not cluster_uses:
            unused.append(
                f"{key}.{member} is set, but the cluster's pools have no {rest}, and AKS takes it on all of a cluster's pools or none; remove it"
            )
        if given is not None and current is not None and not _same_subnet(given, live):
            text = f"{name} {short(given)} ({key}.{member}; the live pool has {short(live) if live else 'none'}: replaces it)"
            moves.append(f"{key}.{member} is {short(given)} and the live pool's {short(live) if live else 'none'}")
        if given is not None or current is None:
            other.append(_other_vnet(value, found, f"{key}.{member}"))
        texts.append(text)
        chosen.append(value)
    vnet, pod = chosen
    live_pods = current.max_pods if current is not None else None
    if max_pods is None and live_pods:
        pods, pods_text = live_pods, f"maxPods {live_pods} ({KEPT})"
    elif max_pods is None:  # a description without it (a saved file): what a new pool would get
        pods, pods_text = _default_pods(found, model(found), pod)
    elif live_pods is not None and max_pods != live_pods:
        pods, pods_text = max_pods, f"maxPods {max_pods} ({key}.maxPods; the live pool has {live_pods}: replaces it)"
        moves.append(f"{key}.maxPods is {max_pods} and the live pool's {live_pods}")
    else:
        pods, pods_text = max_pods, f"maxPods {max_pods} ({key}.maxPods)"
    parts = ", ".join(t for t in (*texts, pods_text) if t)
    replaces = (
        f"{'; '.join(moves)}: AKS fixes a pool's subnet, pod subnet and maxPods when it creates the pool, so `pulumi up` "
        f"replaces pool {current.name}, deleting it first (its nodes and the pods on them go, and it is created anew); "
        "unset the key to keep what the pool has"
        if moves and current is not None
        else None
    )
    why = f"network: {key} joins {model(found)}: {parts}"
    return PoolNetwork(pods, vnet, pod, why, next((p for p in (*unused, *other) if p), None), replaces)


def _default_pods(found: ClusterFacts, kind: str, pod_subnet: str | None) -> tuple[int, str]:
    """A new pool's pods per node when its config names none, and how to say so."""
    system = found.system_pool
    if kind.startswith("Azure CNI") and kind != "Azure CNI Overlay":
        default = POD_SUBNET_DEFAULT_MAX_PODS if pod_subnet else AZURE_CNI_DEFAULT_MAX_PODS
        pods = (system.max_pods if system else None) or default
        return (
            pods,
            f"maxPods {pods} ({'the System pool' if system and system.max_pods else 'the AKS default'}'s: every pod takes a subnet address)",
        )
    return MAX_PODS, f"maxPods {MAX_PODS}"


def _same_subnet(a: str | None, b: str | None) -> bool:
    """ARM resource IDs compare without case (the az CLI writes `resourcegroups`)."""
    return (a or "").lower() == (b or "").lower()


def short(subnet_id: str) -> str:
    """A subnet as a person reads it, `<vnet>/<subnet>`."""
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


def plan_pools(
    pools: Pools,
    found: ClusterFacts | None,
    stack: str,
    live: Mapping[str, PoolFacts] | None = None,
    state: StackState = NOT_READ,
) -> dict[str, PoolNetwork]:
    """Every GPU pool's network, by name: a pool running in `found` keeps what it has, whether
    the stack added it (its state or tag) or takes it over (`live`). Where the state is not
    known, an untagged pool under a new pool's name keeps its own too: following the System pool
    would replace one the stack holds, and somebody else's is left as it is."""
    held = state.pools()
    if found is not None and held is None:  # a pool without the stack's tag may have lost it
        untagged = {p.name for p in found.pools if owner_of(p.tags) is None}
        held = frozenset(p.name for p in pools.new if p.name in untagged)
    live = {**(existing_cluster_checks.stack_pools(found, stack, held) if found is not None else {}), **(live or {})}
    return {
        pool.name: plan(found, pools.key(pool), pool.max_pods, pool.vnet_subnet_id, pool.pod_subnet_id, live.get(pool.name))
        for pool in pools.owned  # a pool used as it is (`existing: use`) joins nothing
    }


def summary(found: ClusterFacts) -> str:
    """The cluster in one line, as the offline render shows what it read."""
    own_vnet = any(p.vnet_subnet_id for p in found.pools)
    network = f"{model(found)}{' in its own virtual network' if own_vnet else ''}"
    pools = ", ".join(
        f"{p.name} ({p.mode or 'User'}, {p.count or 0} x {p.vm_size}"
        + (f", maxPods {p.max_pods}" if p.max_pods else "")
        + (f", subnet {p.vnet_subnet_id.rsplit('/', 1)[-1]}" if p.vnet_subnet_id else "")
        + ")"
        for p in found.pools
    )
    state = f"{found.provisioning_state or 'state unknown'} and {(found.power_state or 'power state unknown').lower()}"
    sign_in = "Entra ID" if found.entra else "local accounts"
    version = found.kubernetes_version or "version unknown"
    return f"in {found.location}, {state}, Kubernetes {version}, {network}, {sign_in}; pools: {pools or 'none'}"
