"""The package's GpuStack: the GPU stack on an AKS cluster's own GPU pools, the cluster named by its
resource ID and the pools by name; the stack file's devicePlugin, gpuOperator, monitoring and
preflight settings as inputs, through the program's own parser, plan and declaring code
(component.py), the plan's GPU stack only.

Each named pool is a stack file's `gpuPools.<name>: {existing: use}`: read from Azure as it is,
never registered or changed. What the cluster runs in Kubernetes is read first, as the program
reads it on an existing cluster: a device plugin of the cluster's that serves a pool already is
left to serve it, and two on one node are never declared.

Its Kubernetes objects sign in as GpuProof's do (one code path, component.py `signing_in`): with the
consumer's Kubernetes provider (the `providers` resource option) or its `kubeconfig` input where
given, else with the user kubeconfig Azure answers the deployer (components/environment/sign_in.py;
docs/design/package-stack-sign-in.md). No annotation here may be a string: the analyser reads them
unevaluated (no `from __future__ import annotations`).
"""

from typing import Any

import pulumi

from components.environment.args import GpuStackArgs
from components.environment.component import build
from components.environment.kinds import GPU_STACK
from components.seam.reader import AzureReader

TYPE = GPU_STACK.type


class GpuStack(pulumi.ComponentResource):
    # One line: the analyser takes __doc__ as it is (analyze_component).
    """The GPU stack on an existing AKS cluster's GPU pools, as the aks-gpu program installs it on pools it uses: the NVIDIA device plugin (and NVIDIA's DCGM exporter for GPU metrics) on pools AKS installs the driver on, NVIDIA's GPU Operator on pools without a driver, nothing on AKS-managed pools. The cluster is named by its resource ID and the pools by name; its other inputs are the stack file's devicePlugin, gpuOperator, monitoring and preflight settings under the same names. Its Kubernetes objects sign in with the Kubernetes provider passed in the `providers` resource option, or the kubeconfig input, or else the user kubeconfig Azure answers the deployer. What the cluster runs in Kubernetes is checked while it is constructed, with the deployer's Azure credentials: two device plugins on one node are never declared."""

    # Written out here, not shared with the other components: the analyser takes a base class's annotations
    # but each description from this class's own source, and the inputs from __init__'s `args` annotation
    # (pulumi 3.272.0 provider/experimental/analyzer.py analyze_type, get_docstring: inspect.getsource(typ)).
    resource_group_name: pulumi.Output[str]
    """The cluster's resource group."""
    cluster_name: pulumi.Output[str]
    """The AKS cluster's name."""
    gpu_pools: pulumi.Output[dict[str, Any]]
    """Each GPU pool served, by name: its VM size, generation, GPUs per node, who manages its GPU stack, and the command that lists its nodes."""
    gpu_metrics: pulumi.Output[str]
    """Where the GPU metrics are: the DCGM exporter's URL inside the cluster, or what serves them."""
    device_plugin_namespace: pulumi.Output[str] | None
    """The NVIDIA device plugin's namespace; unset where nothing installs it."""
    adopted: pulumi.Output[dict[str, Any]] | None
    """The guide's device plugin and its namespace where adopted (devicePlugin.adopt), with what `pulumi destroy` does to them; unset when nothing was adopted."""

    def __init__(
        self, name: str, args: GpuStackArgs, opts: pulumi.ResourceOptions | None = None, *, reader: AzureReader | None = None
    ) -> None:
        """`reader`: how Azure and the cluster are read; unset, live, with the deployer's credentials
        (a test hands its own, as the program's tests do)."""
        build(self, GPU_STACK, name, args, opts, reader)
