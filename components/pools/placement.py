"""Where a pod lands: on the nodes of the named GPU pools."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi_kubernetes as k8s

from components.gpu_stack.cluster_objects import AGENT_POOL_LABEL


def on_pools(names: Sequence[str]) -> k8s.core.v1.AffinityArgs:
    """Pods only on the nodes of these pools, by the label AKS puts on every node (cluster_objects reads it too)."""
    return k8s.core.v1.AffinityArgs(
        node_affinity=k8s.core.v1.NodeAffinityArgs(
            required_during_scheduling_ignored_during_execution=k8s.core.v1.NodeSelectorArgs(
                node_selector_terms=[
                    k8s.core.v1.NodeSelectorTermArgs(
                        match_expressions=[k8s.core.v1.NodeSelectorRequirementArgs(key=AGENT_POOL_LABEL, operator="In", values=list(names))]
                    )
                ]
            )
        )
    )
