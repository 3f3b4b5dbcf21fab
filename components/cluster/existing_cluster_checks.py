"""An existing cluster as a deployment would meet it, and what a preview of it cannot show
(namespaces that exist already)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pulumi

from components.catalog import gpu_sizes
from components.cluster.cluster_facts import OWNER_TAG, ClusterFacts, PoolFacts
from components.cluster.existing_settings import ExistingClusterConfig
from components.cluster.settings import ranges_listed
from components.config.values import NAMESPACE
from components.gpu_stack.settings import GpuOperatorConfig
from components.ownership.ownership import owner_of
from components.ownership.stack_state import NOT_READ, StackState, unknown_pool_advice
from components.pools.settings import Pools
from components.problem import Problem

# A pool of one of the stack's names without its OWNER_TAG is somebody else's: both creates
# refuse it (docs/design/lifecycle.md, "A pool that lost the stack's tag"). NVIDIA's support range for
# the GPU Operator's chart; the other modes name no version (docs/preflight.md, "What is checked").
GPU_OPERATOR_KUBERNETES = ((1, 33), (1, 36))
SUCCEEDED = "Succeeded"
# A pool whose last operation ended without Succeeded runs none now; any other state is one in
# progress, and AKS refuses a new pool meanwhile (docs/preflight.md, "What is checked").
ENDED = ("Failed", "Canceled")
# "Starting on March 31, 2028, Azure Kubernetes Service (AKS) no longer supports kubenet
# networking" (azure-aks-docs includes/kubenet-retirement.md, ms.date 01/14/2026).
KUBENET_RETIRES = "2028-03-31"


def owner_tags(project: str, stack: str) -> dict[str, str]:
    return {OWNER_TAG: f"{project}/{stack}"}


def namespaces_line(owned_namespaces: Sequence[str], found: ClusterFacts) -> str:
    """A namespace this stack would create that the cluster already has: pulumi-kubernetes 4.29.0
    and later create client-side, answered AlreadyExists (its CHANGELOG, #2926), which a preview's
    dry-run hides (provider.go Create, `failedPreview`)."""
    names = " ".join(owned_namespaces)
    return (
        f"namespaces: this stack creates {', '.join(owned_namespaces)} in {found.name} and deletes them on destroy; if the "
        f"cluster has one already, `pulumi up` stops at it (AlreadyExists), which a preview cannot show: check with "
        f"`kubectl get namespace {names}`, and rename with devicePlugin.namespace, gpuOperator.namespace or mnistJob.namespace"
    )


def stack_pools(found: ClusterFacts, stack: str, held: frozenset[str] | None = None) -> dict[str, PoolFacts]:
    """The cluster's pools this stack added, by name: those its state holds and those with its tag."""
    mine = owner_tags(pulumi.get_project(), stack)[OWNER_TAG]
    return {p.name: p for p in found.pools if owner_of(p.tags) == mine or p.name in (held or ())}


def pools_of_stack(found: ClusterFacts, stack: str, held: frozenset[str] | None = None) -> dict[str, tuple[str, int]]:
    return {name: (p.vm_size or "", p.count or 0) for name, p in stack_pools(found, stack, held).items()}


def check_existing_cluster(
    existing: ExistingClusterConfig,
    pools: Pools,
    operator: GpuOperatorConfig,
    found: ClusterFacts,
    stack: str,
    state: StackState = NOT_READ,
) -> list[Problem]:
    """Succeeded and running, no other owner's pool under one of this stack's pool names, a
    Kubernetes version the chosen mode supports, and no GPU pool of others that the GPU Operator
    would take over."""
    where = f"{NAMESPACE}:existingCluster {found.resource_group}/{found.name}"
    problems = []
    if found.provisioning_state != SUCCEEDED:
        problems.append(
            Problem(
                f"{where} is {found.provisioning_state or 'without a provisioningState'}, not {SUCCEEDED}: AKS runs one operation at a time on a cluster "
                '("Another operation ... is in progress"), and this program adds pools only to a cluster in Succeeded; '
                "wait, or repair it (`az aks update` with no changes)"
            )
        )
    if found.power_state == "Stopped":
        problems.append(
            Problem(
                f'{where} is stopped: "You can only perform start or delete operations on a stopped AKS cluster" '
                f"(start-stop-cluster.md); start it with `az aks start --resource-group {existing.resource_group_name} --name {existing.name}`"
            )
        )
    policy = found.network_policy
    if policy in (None, "none"):
        problems.append(
            Problem(
                f"{where} enforces no NetworkPolicy (networkProfile.networkPolicy is {policy or 'unset'}): the policies this "
                "program declares for its namespaces have no effect there",
                blocking=False,
            )
        )
    problems += pool_states(found, where)
    if found.network_plugin == "kubenet":
        problems.append(
            Problem(
                f"{where} uses kubenet, which AKS stops supporting on {KUBENET_RETIRES} (includes/kubenet-retirement.md): the GPU "
                "pools join it as they are, and its owner's migration to Azure CNI Overlay moves them too",
                blocking=False,
            )
        )
    if found.private:
        problems.append(Problem(private_line(where, found), blocking=False))
    if found.authorized_ip_ranges:
        problems.append(Problem(authorized_ranges_line(where, found.authorized_ip_ranges), blocking=False))
    problems += pool_name_conflicts(pools, found, stack, state)
    problems += mode_against_cluster(pools, operator, found)
    return problems


def pool_states(found: ClusterFacts, where: str) -> list[Problem]:
    """A pool in an operation: AKS runs one at a time, so the first GPU pool would be refused
    (409 OperationNotAllowed). One whose last operation failed blocks nothing, but says so."""
    problems = []
    for pool in found.pools:
        state = pool.provisioning_state
        if state in ENDED:
            problems.append(
                Problem(
                    f"{where}: its pool {pool.name} is {state}: its last operation did not finish; the GPU pools can still be added, "
                    "but its owner should repair it (`az aks nodepool update` with no changes)",
                    blocking=False,
                )
            )
        elif state not in (None, SUCCEEDED):
            problems.append(
                Problem(
                    f"{where}: its pool {pool.name} is {state}, not {SUCCEEDED}: AKS refuses another operation on the cluster while one is "
                    'in progress ("Another operation ... is in progress on agent pool"), so the first GPU pool would fail; wait for it to finish'
                )
            )
    return problems


def private_line(where: str, found: ClusterFacts) -> str:
    """A private cluster's API server has only a private address, reached from "a virtual machine
    (VM) or container that has access to the virtual network (VNet)" (azure-aks-docs
    private-cluster-connect.md, ms.date 08/13/2026; private-clusters.md: "For DevOps pipelines,
    use self-hosted agents on a connected network"; api-server-vnet-integration.md, 04/15/2026)."""
    how = " (API server VNet integration, private)" if found.vnet_integration else ""
    return (
        f"{where} is a private cluster{how}: its API server has no public address, so `pulumi preview` and `pulumi up` "
        "must run where they can reach it: in its VNet or a peered one, over VPN or ExpressRoute, or on a self-hosted CI "
        "runner there (the PR workflow's GitHub-hosted runners cannot); elsewhere the Kubernetes objects fail to connect "
        "(docs/deploying.md, a private cluster)"
    )


# The placeholder that lets only the cluster itself reach its API server (api-server-authorized-ip-ranges.md).
OWN_OUTBOUND = "0.0.0.0/32"


def authorized_ranges_line(where: str, ranges: tuple[str, ...]) -> str:
    """ "The API server blocks requests from IP addresses that aren't included in the authorized
    ranges" (azure-aks-docs api-server-authorized-ip-ranges.md, ms.date 08/03/2026, at fb060abe).
    GitHub-hosted runners have no fixed address: "we recommend you use larger runners with a
    static IP address range, or self-hosted runners" (github/docs@159bd1b0
    content/actions/reference/runners/github-hosted-runners.md, "IP addresses")."""
    listed = ranges_listed(tuple(f"{r} (the cluster's own outbound address)" if r == OWN_OUTBOUND else r for r in ranges))
    return (
        f"{where} limits its API server to authorized IP ranges ({listed}): `pulumi preview` and `pulumi up` must run "
        "from an address in them, or the Kubernetes objects fail to connect; GitHub-hosted runners' addresses are not in them "
        "unless added (they change from run to run: a self-hosted runner, or a larger runner with a static IP range, has one "
        "to add), so ask the cluster's owner to add your egress address (docs/deploying.md, authorized IP ranges)"
    )


def pool_name_conflicts(pools: Pools, found: ClusterFacts, stack: str, state: StackState = NOT_READ) -> list[Problem]:
    """A new pool's name that the cluster has already: a pool the state holds is the stack's
    whatever its tags say; one it does not hold is somebody else's. Where the state is not
    known, the line says how to check, and gives no advice that would delete it."""
    mine = owner_tags(pulumi.get_project(), stack)[OWNER_TAG]
    theirs = {p.name: owner_of(p.tags) for p in found.pools}  # its name matched as Azure matches tag names
    held = state.pools()
    problems = []
    for pool in pools.new:  # `existing` names the cluster's own pool (components/pools/existing_pools.py)
        if pool.name not in theirs or theirs[pool.name] == mine:
            continue
        key = pools.key(pool)
        owner = f"it carries {OWNER_TAG} = {theirs[pool.name]}" if theirs[pool.name] else f"it has no {OWNER_TAG} tag"
        ours = held is not None and pool.name in held
        if ours:
            said = (
                f"{key}: the pool {pool.name!r} lacks {OWNER_TAG} = {mine} ({owner}), but the stack's state holds it "
                f"({state.pool_urn(pool.name)}): it is this stack's, and this `up` puts the tag back"
            )
        elif held is not None:
            said = (
                f"{key}: the cluster already has a pool named {pool.name!r}, which this stack did not add ({owner}; the "
                f"stack's state does not hold it); pick another pool name, or set {key}.existing to use or adopt it "
                "(docs/existing-cluster.md)"
            )
        else:
            said = (
                f"{key}: the cluster already has a pool named {pool.name!r} ({owner}), and "
                f"{unknown_pool_advice(pool.name, state)}: then pick another pool name, or set {key}.existing to use or "
                'adopt it (docs/existing-cluster.md, "Handing back what was adopted")'
            )
        problems.append(Problem(said, blocking=not ours))
    return problems


def mode_against_cluster(pools: Pools, operator: GpuOperatorConfig, found: ClusterFacts) -> list[Problem]:
    served = [p for p in pools.pools if p.mode == "gpu-operator"]
    if not served:
        return []
    key = pools.key(served[0])
    problems = []
    # A version as Azure writes it, "1.33.3" (a saved file or another tool may write "v1.33.3"):
    # its minor. One that cannot be read is not known to be supported.
    read = re.match(r"^v?(\d+)\.(\d+)", found.kubernetes_version or "")
    version = (int(read[1]), int(read[2])) if read else None
    low, high = GPU_OPERATOR_KUBERNETES
    if version is None or not low <= version <= high:
        problems.append(
            Problem(
                f"{key}.management = gpu-operator: the cluster runs Kubernetes {found.kubernetes_version}, and NVIDIA "
                f"supports the GPU Operator {operator.version} on {low[0]}.{low[1]} to {high[0]}.{high[1]} only "
                "(NVIDIA's platform support page)",
                blocking=False,
            )
        )
    ours = {p.name for p in pools.pools}
    others = [p for p in found.pools if p.name not in ours and gpu_sizes.is_gpu_family(p.vm_size or "")]
    if others:
        names = ", ".join(f"{p.name} ({p.vm_size})" for p in others)
        problems.append(
            Problem(
                f"{key}.management = gpu-operator, but the cluster has GPU pools this stack does not manage: {names}; the GPU "
                "Operator deploys its driver and device plugin on every NVIDIA GPU node of the cluster (NVIDIA GPU Operator "
                "docs, getting-started), which would give those pools a second device plugin; use device-plugin or aks-managed"
            )
        )
    return problems
