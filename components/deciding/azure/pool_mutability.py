"""Which agent-pool properties AKS changes on an existing pool, and which it fixes when the
pool is created: every property this program sets on a GPU pool, each with its source.

Both kinds of pool stand on this table. The typed `AgentPool` (components/resources/gpu_pool.py)
replaces, deleting first, on every fixed property (`replaceOnChanges`; azure-native itself
replaces only on gpuInstanceProfile, vmSize and nodePublicIPTags: pulumi-azure-native
provider/pkg/gen/replacement.go at 1b7112af, PR #3655); the `ManagedGpuPool`'s own diff (components/resources/managed_gpu_pool.py) updates in place only
what the table says AKS changes in place. A property AKS cannot change would otherwise show
`~ update` in a pull request's preview and then fail at `pulumi up`
(docs/lifecycle.md has the table as a user reads it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mutability:
    #: AKS changes it on an existing pool (`az aks nodepool update`, `scale` or `upgrade`).
    in_place: bool
    #: Where that is said.
    source: str


# The agentPools REST names (api 2025-09-01 and 2026-08-01 spell them alike). Sources:
# azure-aks-docs at fb060abe (ms.date per page), azure-cli acs `_params.py` at 0088c878 (the
# flags of `az aks nodepool update`).
AGENT_POOL = {
    "vmSize": Mutability(
        False, 'create-node-pools.md (07/13/2026): "You can\'t change the virtual machine (VM) size of a node pool after you create it"'
    ),
    "osType": Mutability(False, "no `az aks nodepool update` flag; set at `nodepool add`"),
    "type": Mutability(
        False, 'no `az aks nodepool update` flag; "The AKS cluster must use Virtual Machine Scale Sets" (create-node-pools.md)'
    ),
    "mode": Mutability(True, 'use-system-pools.md (04/30/2026): "You can change modes for both system node pools and user node pools"'),
    "count": Mutability(True, "`az aks nodepool scale`"),
    "enableAutoScaling": Mutability(True, "`az aks nodepool update --enable-cluster-autoscaler / --disable-cluster-autoscaler`"),
    "minCount": Mutability(True, "`az aks nodepool update --update-cluster-autoscaler --min-count`"),
    "maxCount": Mutability(True, "`az aks nodepool update --update-cluster-autoscaler --max-count`"),
    "maxPods": Mutability(False, 'create-node-pools.md: "You can\'t change the max pods setting of a node pool after you create it"'),
    "vnetSubnetID": Mutability(
        False, "no update flag; AKS: \"Changing property 'agentPoolProfile.vnetSubnetID' is not allowed\" (Azure/AKS#695)"
    ),
    "podSubnetID": Mutability(False, "no `az aks nodepool update` flag: set at `nodepool add --pod-subnet-id` only"),
    "nodeTaints": Mutability(
        True, 'use-node-taints.md (05/07/2024): "Update a node pool to add a node taint using the az aks nodepool update command"'
    ),
    "nodeLabels": Mutability(
        True,
        'use-labels.md (06/10/2024): "You can update the labels on an existing node pool. Note that updating labels will overwrite the old labels"',
    ),
    "tags": Mutability(True, "`az aks nodepool update --tags`"),
    "orchestratorVersion": Mutability(True, "`az aks nodepool upgrade --kubernetes-version`"),
    "scaleSetPriority": Mutability(
        False, 'spot-node-pool.md (04/06/2025): "You can\'t change ScaleSetPriority or SpotMaxPrice after creation"'
    ),
    "scaleSetEvictionPolicy": Mutability(
        False, 'spot-node-pool.md: "The priority and eviction-policy values can only be set during node pool creation"'
    ),
    "spotMaxPrice": Mutability(False, 'spot-node-pool.md: "You can\'t change ScaleSetPriority or SpotMaxPrice after creation"'),
    "gpuInstanceProfile": Mutability(
        False, 'gpu-multi-instance.md (05/22/2026): "You can\'t change the applied GPU instance profile after node pool creation"'
    ),
    "gpuProfile": Mutability(
        False,
        'aks-managed-gpu-nodes.md (07/02/2026): "The managementMode, migStrategy, and driver fields under gpuProfile are immutable after node pool creation"',
    ),
    "upgradeSettings": Mutability(
        True, "`az aks nodepool update --max-surge --max-unavailable --drain-timeout --node-soak-duration --undrainable-node-behavior`"
    ),
}


def fixed() -> list[str]:
    """The properties AKS fixes when the pool is created, in the table's order."""
    return [name for name, how in AGENT_POOL.items() if not how.in_place]


def in_place() -> tuple[str, ...]:
    """The properties AKS changes on an existing pool."""
    return tuple(name for name, how in AGENT_POOL.items() if how.in_place)


def left_to_azure(declared: Mapping[str, Any], switched_on: Collection[str] = ()) -> list[str]:
    """The fixed properties a typed pool leaves to Azure (its `ignoreChanges`): those the
    declaration leaves unset, unless the pool that runs has one set (`switched_on`,
    components/deciding/existing/pool_modes.py), which the declaration then switches off: a replacement.
    Why (a refresh copies Azure's values into the inputs, and a replaceOnChanges path would replace
    the pool): docs/design/lifecycle.md, "A refresh and the fixed properties left unset"."""
    return [name for name in fixed() if declared.get(name) is None and name not in switched_on]
