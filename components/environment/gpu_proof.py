"""The package's GpuProof: the proof on an AKS cluster another program owns, named by its resource
ID: one MNIST Job per GPU pool, their namespace, egress policy and script, awaited without the
program's watch (the package declares no dynamic resource: docs/design/package-dynamic.md),
through the program's own parser, plan and declaring code (component.py), the plan's proof only.
The pools are the cluster's own, named by `gpuPoolNames` and used as they are.

Its Kubernetes objects sign in with the consumer's Kubernetes provider (the `providers` resource
option) or its `kubeconfig` input where given, else with the user kubeconfig Azure answers the
deployer, as the program's do (components/environment/sign_in.py; docs/design/package-proof-component.md).
No annotation here may be a string: the analyser reads them unevaluated (no `from __future__
import annotations`).
"""

from typing import Any

import pulumi

from components.environment.args import GpuProofArgs
from components.environment.component import build
from components.environment.kinds import GPU_PROOF
from components.seam.reader import AzureReader

TYPE = GPU_PROOF.type


class GpuProof(pulumi.ComponentResource):
    # One line: the analyser takes __doc__ as it is (analyze_component).
    """The aks-gpu proof on an existing AKS cluster named by its resource ID: one MNIST training Job per GPU pool, which `pulumi up` waits for (until the Job's deadline where it cannot run: the package declares no watch). The pools are the cluster's own, named in gpuPoolNames and used as they are (a stack file's gpuPools entry with existing: use); its other inputs are the stack file's mnistJob, preflight and cost settings under the same names. Its Kubernetes objects sign in with the Kubernetes provider passed in the `providers` resource option, or the kubeconfig input, or else the user kubeconfig Azure answers the deployer; the cluster's reads use the deployer's Azure credentials."""

    # Written out here, not shared with the other components: the analyser takes a base class's annotations
    # but each description from this class's own source, and the inputs from __init__'s `args` annotation
    # (pulumi 3.272.0 provider/experimental/analyzer.py analyze_type, get_docstring: inspect.getsource(typ)).
    gpu_pools: pulumi.Output[dict[str, Any]]
    """Each GPU pool by name: its VM size, generation, GPUs per node, who manages its GPU stack, the command that lists its nodes, and its proof Job."""
    mnist_job_name: pulumi.Output[str] | None
    """The first pool's proof Job's name (gpuPoolNames' first); unset with mnistJob.enabled false."""
    mnist_job_namespace: pulumi.Output[str] | None
    """The first proof Job's namespace."""
    job_logs_command: pulumi.Output[str] | None
    """The command that prints the first proof Job's log."""
    mnist_job_urn: pulumi.Output[str] | None
    """The first proof Job's URN, for `pulumi up --replace` (docs/proof.md)."""

    def __init__(
        self, name: str, args: GpuProofArgs, opts: pulumi.ResourceOptions | None = None, *, reader: AzureReader | None = None
    ) -> None:
        """`reader`: how Azure and the cluster are read; unset, live, with the deployer's credentials
        (a test hands its own, as the program's tests do)."""
        build(self, GPU_PROOF, name, args, opts, reader)
