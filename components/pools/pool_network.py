"""How each GPU pool joins its cluster's network: its nodes' subnet, its pods' subnet and its pods
per node, decided from the cluster (components/cluster/cluster_facts.py) and the pool's config; a
pool that runs already keeps what it has in Azure unless its config names another. Pure: no
resource, no call to Azure. The rules and their sources (azure-aks-docs, AKS's answers):
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
    #: What AKS would refuse (a subnet on a cluster whose pools have none), if anything.
    problem: str | None = None
    #: The config moves a pool that runs already to another subnet, pod subnet or maxPods,
    #: which replaces it (deleting it first): the preview's warning, if so.
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


# The config's keys of a pool's network, which AKS fixes when it creates the pool.
CONFIG_KEYS = ("maxPods", "vnetSubnetId", "podSubnetId")


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
    """The network of one GPU pool (`key` names it in messages) in `found`, or in a cluster
    this program creates (None: Azure CNI Overlay, no VNet of its own). `current` is the pool
    as it runs in `found` already, if it does: what the config leaves unset is kept from it."""
    if found is None:
        pods = max_pods or MAX_PODS
        return PoolNetwork(pods, why=f"network: {key}: maxPods {pods} (the cluster this stack creates: Azure CNI Overlay)")
    if current is not None:
        return _kept(found, key, max_pods, vnet_subnet_id, pod_subnet_id, current)
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
    else:
        pods, pods_text = _default_pods(found, kind, pod)
    parts = ", ".join(t for t in (vnet_text, pod_text, pods_text) if t)
    other_vnet = _other_vnet(vnet, found, f"{key}.vnetSubnetId") or _other_vnet(pod, found, f"{key}.podSubnetId")
    return PoolNetwork(pods, vnet, pod, f"network: {key} joins {kind}: {parts}", vnet_problem or pod_problem or other_vnet)


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


KEPT = "kept from the live pool"


def _same_subnet(a: str | None, b: str | None) -> bool:
    """ARM resource IDs compare without case (the az CLI writes `resourcegroups`)."""
    return (a or "").lower() == (b or "").lower()


def _kept(
    found: ClusterFacts, key: str, max_pods: int | None, vnet_subnet_id: str | None, pod_subnet_id: str | None, current: PoolFacts
) -> PoolNetwork:
    """A pool that runs already: each member the config sets is the config's, and replaces the
    pool where it differs from the live one (AKS fixes all three at creation:
    pool_fields.AGENT_POOL's network fields); each it leaves unset
    is the live pool's, whatever the System pool has now."""
    texts: list[str] = []
    moves: list[str] = []
    problems: list[str | None] = []
    members = (
        ("subnet", "vnetSubnetId", vnet_subnet_id, current.vnet_subnet_id, any(p.vnet_subnet_id for p in found.pools)),
        ("pod subnet", "podSubnetId", pod_subnet_id, current.pod_subnet_id, any(p.pod_subnet_id for p in found.pools)),
    )
    chosen: list[str | None] = []
    for name, member, given, live, cluster_uses in members:
        if given is None:
            chosen.append(live)
            texts.append(f"{name} {short(live)} ({KEPT})" if live else "")
            continue
        chosen.append(given)
        problems.append(_subnet(name, given, cluster_uses, None, key)[2])
        if _same_subnet(given, live):
            texts.append(f"{name} {short(given)}")
        else:
            texts.append(f"{name} {short(given)} ({key}.{member}; the live pool has {short(live) if live else 'none'}: replaces it)")
            moves.append(f"{key}.{member} is {short(given)} and the live pool's {short(live) if live else 'none'}")
    vnet, pod = chosen
    if max_pods is None and current.max_pods:
        pods, pods_text = current.max_pods, f"maxPods {current.max_pods} ({KEPT})"
    elif max_pods is None:  # a description without it (a saved file): what a new pool would get
        pods, pods_text = _default_pods(found, model(found), pod)
    elif current.max_pods is not None and max_pods != current.max_pods:
        pods, pods_text = max_pods, f"maxPods {max_pods} ({key}.maxPods; the live pool has {current.max_pods}: replaces it)"
        moves.append(f"{key}.maxPods is {max_pods} and the live pool's {current.max_pods}")
    else:
        pods, pods_text = max_pods, f"maxPods {max_pods} ({key}.maxPods)"
    parts = ", ".join(t for t in (*texts, pods_text) if t)
    if vnet_subnet_id is not None:
        problems.append(_other_vnet(vnet, found, f"{key}.vnetSubnetId"))
    if pod_subnet_id is not None:
        problems.append(_other_vnet(pod, found, f"{key}.podSubnetId"))
    replaces = (
        f"{'; '.join(moves)}: AKS fixes a pool's subnet, pod subnet and maxPods when it creates the pool, so `pulumi up` "
        f"replaces pool {current.name}, deleting it first (its nodes and the pods on them go, and it is created anew); "
        "unset the key to keep what the pool has"
        if moves
        else None
    )
    why = f"network: {key} joins {model(found)}: {parts}"
    return PoolNetwork(pods, vnet, pod, why, next((p for p in problems if p), None), replaces)


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


def plan_pools(
    pools: Pools,
    found: ClusterFacts | None,
    stack: str,
    live: Mapping[str, PoolFacts] | None = None,
    state: StackState = NOT_READ,
) -> dict[str, PoolNetwork]:
    """Every GPU pool's network, by pool name: a pool that runs in `found` already keeps what it
    has, whether this stack added it (its state holds it, or it carries the stack's tag:
    existing_cluster_checks.stack_pools) or takes it over (`live`, by name).

    A pool that lost the stack's tag is still the stack's where the state holds it; where the
    state is not known, a pool with no stack's tag under a new pool's name keeps its own values too:
    followed to where the System pool now is, a pool the stack holds would be replaced,
    deleted first (under preflight.mode warn, which lets the run go on), and a pool of
    somebody else's is left as it is (preflight says whose it may be)."""
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
    """The cluster in one line, as the offline render shows what it read: where, its state,
    its version, its network (in the docs' words) and its pools."""
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
