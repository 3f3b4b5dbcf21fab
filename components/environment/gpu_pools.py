"""The package's GpuPools: GPU pools (and capacity groups) on an AKS cluster another program owns,
named by its resource ID; the stack file's pool keys as inputs, with preflight and the cost limit,
through the program's own parser, plan and declaring code (component.py), the plan's pools only.

It declares the pools (a new pool, or one adopted with `existing: adopt`; `existing: use` is read
and registers nothing) and no Kubernetes object: without the GPU stack or the proof the existing
cluster's Kubernetes provider is not declared either (ExistingClusterArgs.kubernetes), so the
consumer's state does not hold the cluster's user credential for nothing. No annotation here may be
a string: the analyser reads them unevaluated (no `from __future__ import annotations`).
"""

from typing import Any

import pulumi

from components.environment.args import GpuPoolsArgs
from components.environment.component import build
from components.environment.kinds import GPU_POOLS
from components.seam.reader import AzureReader

TYPE = GPU_POOLS.type


class GpuPools(pulumi.ComponentResource):
    # One line: the analyser takes __doc__ as it is (analyze_component).
    """GPU pools, and capacity groups of them, on an existing AKS cluster named by its resource ID, as the aks-gpu program adds them to an existing cluster: its inputs are the stack file's gpuPool, gpuPools, gpuGroups, preflight and cost settings under the same names; preflight, the cost estimate and its limit, and the checks of adopting a pool run while it is constructed, with the deployer's Azure credentials. It declares no Kubernetes object: the GPU stack and the proof are GpuStack's and GpuProof's."""

    # Written out here, not shared with the other components: the analyser takes a base class's annotations
    # but each description from this class's own source, and the inputs from __init__'s `args` annotation
    # (pulumi 3.272.0 provider/experimental/analyzer.py analyze_type, get_docstring: inspect.getsource(typ)).
    resource_group_name: pulumi.Output[str]
    """The cluster's resource group."""
    cluster_name: pulumi.Output[str]
    """The AKS cluster's name."""
    gpu_pools: pulumi.Output[dict[str, Any]]
    """Each GPU pool by name: its VM size, generation, GPUs per node, who manages its GPU stack, and the command that lists its nodes."""
    gpu_groups: pulumi.Output[dict[str, Any]] | None
    """Each capacity group (gpuGroups) by name: its pools, first choice first; unset without capacity groups."""
    estimated_cost: pulumi.Output[dict[str, Any]] | None
    """What the pools cost per hour at their largest sizes, as estimated before anything was created; unset when not estimated."""
    adopted: pulumi.Output[dict[str, Any]] | None
    """The pools adopted from the cluster's owner, each with what `pulumi destroy` does to it; unset when nothing was adopted."""

    def __init__(
        self, name: str, args: GpuPoolsArgs, opts: pulumi.ResourceOptions | None = None, *, reader: AzureReader | None = None
    ) -> None:
        """`reader`: how Azure and the cluster are read; unset, live, with the deployer's credentials
        (a test hands its own, as the program's tests do)."""
        build(self, GPU_POOLS, name, args, opts, reader)
