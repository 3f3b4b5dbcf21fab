"""The ConfigMap the cluster autoscaler's `expander: priority` reads on a cluster the stack
creates, so a capacity group's pools are scaled in the team's order; its content is the plan's
(priority_expander.py). docs/design/capacity-groups.md has the mechanism at its sources."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.cluster import InCluster
from components.pools.priority_expander import CONFIG_MAP_KEY, CONFIG_MAP_NAME, CONFIG_MAP_NAMESPACE, Priorities


@dataclass(frozen=True)
class CapacityExpanderArgs:
    """The cluster autoscaler's priority ConfigMap, on a created cluster while a group has a pool."""

    priorities: Priorities


class CapacityExpander(pulumi.ComponentResource):
    """The priority expander's ConfigMap, one for every group of the stack."""

    config_map: k8s.core.v1.ConfigMap

    def __init__(self, name: str, args: CapacityExpanderArgs, *, cluster: InCluster, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-gpu:kubernetes:CapacityExpander", name, None, opts)
        # The name and namespace are the autoscaler's (priority.go PriorityConfigMapName, its
        # --namespace): set explicitly, never autonamed. Read on every scale-up: a change needs
        # no restart, so an update in place is enough.
        self.config_map = k8s.core.v1.ConfigMap(
            f"{name}-priorities",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=CONFIG_MAP_NAME, namespace=CONFIG_MAP_NAMESPACE),
            data={CONFIG_MAP_KEY: args.priorities.yaml()},
            opts=cluster.options(self),
        )
        self.register_outputs({"configMap": self.config_map.metadata.name})
