"""An existing cluster that runs node auto-provisioning (NAP: `nodeProvisioningProfile.mode:
Auto`), where AKS creates no autoscaled pool unless its owner lets the cluster autoscaler run
beside NAP (docs/design/capacity-groups.md, "Node auto-provisioning"). The sources: azure-native
3.29.0 `containerservice.NodeProvisioningMode.AUTO` (NOT_ALLOWED's words); azure-aks-docs
migrate-from-autoscaler-to-node-auto-provisioning.md (ms.date 6/25/2026, "Path 2"): the feature
flag, the cas-block taint "(required)", and that both scalers "can lead to double provisioning"."""

from __future__ import annotations

from components.cluster.cluster_facts import ClusterFacts
from components.config.values import NAMESPACE
from components.errors import error_line
from components.pools.groups import GpuGroups
from components.pools.settings import Pools, pool_taints
from components.problem import Problem
from components.seam.reader import AzureReader, read_errors

AUTO = "Auto"
FEATURE_NAMESPACE = "Microsoft.ContainerService"
FEATURE = "AllowClusterAutoscalerAndNAP"
REGISTERED = "Registered"
CAS_BLOCK_TAINT = "autoscaling.azure.com/cas-block=true:NoSchedule"
REGISTER = (
    f"`az feature register --namespace {FEATURE_NAMESPACE} --name {FEATURE}`, then, once `az feature show` says "
    f"Registered, `az provider register --namespace {FEATURE_NAMESPACE}`"
)
NOT_ALLOWED = '"Fixed size Node Pools can still be created, but autoscaling Node Pools cannot be"'


def check(pools: Pools, groups: GpuGroups, found: ClusterFacts, reader: AzureReader) -> list[Problem]:
    """Where the cluster runs NAP and this stack declares an autoscaled pool: a blocking problem
    unless the flag is Registered and each such pool carries the cas-block taint; else a warning."""
    if (found.node_provisioning_mode or "").lower() != AUTO.lower():
        return []
    autoscaled = [p for p in pools.owned if p.autoscaling]
    if not autoscaled:
        return []
    running = {p.name: p.taints for p in found.pools}
    untainted = [p.name for p in autoscaled if CAS_BLOCK_TAINT not in (running.get(p.name, ()) if p.existing else pool_taints(p))]
    state = _feature_state(reader)
    where = f"{NAMESPACE}:existingCluster {found.resource_group}/{found.name}"
    keys = ", ".join(pools.key(p) for p in autoscaled)
    mode = f"node auto-provisioning (nodeProvisioningProfile.mode {found.node_provisioning_mode})"
    if state == REGISTERED and not untainted:
        return [
            Problem(
                f"{where} runs {mode} beside the cluster autoscaler of {keys} ({FEATURE} is {REGISTERED}, and each pool "
                f'carries {CAS_BLOCK_TAINT}): both react to pending pods, and AKS warns they "can lead to double '
                'provisioning of nodes"; only pods that tolerate the taint land on these pools',
                blocking=False,
            )
        ]
    needs = []
    if state != REGISTERED:
        needs.append(f"the subscription feature {FEATURE_NAMESPACE}/{FEATURE} registered (it is {state}: {REGISTER})")
    if untainted:
        needs.append(
            f"the taint {CAS_BLOCK_TAINT} on every cluster-autoscaler pool ({', '.join(untainted)} would have none: "
            "this stack gives the pools it creates its own taints only, and an adopted pool keeps Azure's)"
        )
    alone = [pools.key(p) for p in autoscaled if groups.group_of(p.name) is None]
    fixed = f"; or give {', '.join(alone)} a fixed nodeCount" if alone else ""
    grouped = " (a capacity group's pools always autoscale)" if len(alone) < len(autoscaled) else ""
    return [
        Problem(
            f"{where} runs {mode}, where AKS refuses autoscaled pools ({NOT_ALLOWED}), and this stack would declare the "
            f"autoscaled pools {keys}: beside NAP, AKS needs {' and '.join(needs)}{fixed}{grouped}"
        )
    ]


def _feature_state(reader: AzureReader) -> str:
    try:
        return reader.feature_state(FEATURE_NAMESPACE, FEATURE) or "unknown"
    except read_errors() as error:  # Azure's answer is the message
        return f"not read ({error_line(error)})"
