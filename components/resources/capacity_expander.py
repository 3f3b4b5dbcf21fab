"""The cluster autoscaler's priorities for capacity groups (gpuGroups), on a cluster the stack
creates: the ConfigMap `kube-system/cluster-autoscaler-priority-expander` that the profile's
`expander: priority` (components/resources/cluster.py) reads, so a group's pools are scaled in
the team's order. Its content is the plan's (components/deciding/azure/priority_expander.py);
docs/design/capacity-groups.md has the mechanism at its sources."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.deciding.azure.priority_expander import CONFIG_MAP_KEY, CONFIG_MAP_NAME, CONFIG_MAP_NAMESPACE, Priorities


@dataclass(frozen=True)
class CapacityExpanderArgs:
    provider: k8s.Provider
    priorities: Priorities
    #: The created cluster: its delete takes the ConfigMap with it (`deletedWith`, as every
    #: Kubernetes object of the stack: docs/lifecycle.md "pulumi destroy"); None while it is protected.
    deleted_with: pulumi.Resource | None = None
    #: The deployer's access to the cluster (GpuCluster.access).
    depends_on: Sequence[pulumi.Input[pulumi.Resource]] = field(default_factory=tuple)


class CapacityExpander(pulumi.ComponentResource):
    """The priority expander's ConfigMap, one for every group of the stack."""

    config_map: k8s.core.v1.ConfigMap

    def __init__(self, name: str, args: CapacityExpanderArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-gpu:kubernetes:CapacityExpander", name, None, opts)
        # The name and namespace are the autoscaler's (priority.go PriorityConfigMapName, its
        # --namespace): set explicitly, never autonamed. Read on every scale-up: a change needs
        # no restart, so an update in place is enough.
        self.config_map = k8s.core.v1.ConfigMap(
            f"{name}-priorities",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=CONFIG_MAP_NAME, namespace=CONFIG_MAP_NAMESPACE),
            data={CONFIG_MAP_KEY: args.priorities.yaml()},
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.provider, deleted_with=args.deleted_with, depends_on=list(args.depends_on)
            ),
        )
        self.register_outputs({"configMap": self.config_map.metadata.name})
