"""The package's GpuEnvironment: the whole environment as one component, from a stack file's
settings given as inputs (args.py), through the program's own parser, plan and declaring code.

Pulumi's component host (package/__main__.py) builds the schema from this class: its inputs are
GpuEnvironmentArgs' fields, its outputs the annotations below, each described by the string
after it (pulumi 3.272.0 provider/experimental/analyzer.py). No annotation here may be a string:
the analyser reads them unevaluated (no `from __future__ import annotations`).
"""

from typing import Any

import pulumi

from components.environment.args import GpuEnvironmentArgs
from components.environment.component import build
from components.environment.kinds import GPU_ENVIRONMENT
from components.seam.reader import AzureReader

TYPE = GPU_ENVIRONMENT.type


class GpuEnvironment(pulumi.ComponentResource):
    # One line: the analyser takes __doc__ as it is, indentation and all (analyze_component), for every SDK's docs.
    """GPU-ready AKS, as the aks-gpu program declares it: a cluster (created, or an existing one named by existingCluster), its GPU pools, the GPU stack (the NVIDIA device plugin or NVIDIA's GPU Operator) with GPU metrics, and one MNIST training Job per pool that `pulumi up` waits for until it completes or fails. Its inputs are the stack file's `aks-gpu:` settings under the same names; preflight and the cost limit run while it is constructed, with the deployer's Azure credentials. What Pulumi would run in your program's own Python, where its code is not installed, it leaves out: the proof's watch (a Job whose pod cannot start fails only at its deadline, and no servedBy or result command is set: one info line says so), and it refuses management aks-managed and, with Entra ID, a deployerType other than none."""

    # Written out here, not shared with the other components: the analyser takes a base class's annotations
    # but each description from this class's own source, and the inputs from __init__'s `args` annotation
    # (pulumi 3.272.0 provider/experimental/analyzer.py analyze_type, get_docstring: inspect.getsource(typ)).
    resource_group_name: pulumi.Output[str]
    """The resource group of the cluster (created, or the existing cluster's)."""
    cluster_name: pulumi.Output[str]
    """The AKS cluster's name."""
    gpu_pools: pulumi.Output[dict[str, Any]]
    """Each GPU pool by name: its VM size, generation, GPUs per node, who manages its GPU stack, the command that lists its nodes, and its proof Job."""
    gpu_groups: pulumi.Output[dict[str, Any]] | None
    """Each capacity group (gpuGroups) by name: its pools, first choice first, and its one proof Job; unset without capacity groups."""
    estimated_cost: pulumi.Output[dict[str, Any]] | None
    """What the environment costs per hour at its pools' largest sizes, as estimated before anything was created; unset when not estimated."""
    gpu_metrics: pulumi.Output[str]
    """Where the GPU metrics are: the DCGM exporter's URL inside the cluster, or what serves them."""
    device_plugin_namespace: pulumi.Output[str] | None
    """The NVIDIA device plugin's namespace; unset where nothing installs it."""
    adopted: pulumi.Output[dict[str, Any]] | None
    """What the environment adopted from the cluster's owner; unset when nothing was adopted."""
    kubeconfig: pulumi.Output[str]
    """The cluster's kubeconfig (a secret)."""
    get_credentials_command: pulumi.Output[str]
    """The `az aks get-credentials` command for the cluster."""
    mnist_job_name: pulumi.Output[str] | None
    """The proof Job's name (gpuPool's one pool only)."""
    mnist_job_namespace: pulumi.Output[str] | None
    """The proof Job's namespace (gpuPool's one pool only)."""
    job_logs_command: pulumi.Output[str] | None
    """The command that prints the proof Job's log (gpuPool's one pool only)."""
    job_result_command: pulumi.Output[str] | None
    """The command that prints the last proof's line, kept by its watch (gpuPool's one pool only); unset here, where the proof has no watch."""
    mnist_job_urn: pulumi.Output[str] | None
    """The proof Job's URN (gpuPool's one pool only)."""

    def __init__(
        self, name: str, args: GpuEnvironmentArgs, opts: pulumi.ResourceOptions | None = None, *, reader: AzureReader | None = None
    ) -> None:
        """`reader`: how Azure and the cluster are read; unset, live, with the deployer's credentials
        (a test hands its own, as the program's tests do)."""
        build(self, GPU_ENVIRONMENT, name, args, opts, reader)
