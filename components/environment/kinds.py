"""The package's components as data: each one's name, the parts of the plan it declares, the stack
file's keys it takes as inputs (under the same names) and its own inputs. tools/package_args.py
writes each one's Args from this table and the stack schema; components/environment/component.py
builds each one from it. Nothing here imports the generated Args, so the table can change before
`make package-args` writes them again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.cluster.cluster_id import SHAPE
from components.environment.package import NAME
from components.environment.sign_in import KUBECONFIG
from components.plan import ALL, Part


@dataclass(frozen=True)
class OwnInput:
    """An input that is no stack file key: its annotation, whether it is required, its description."""

    annotation: str
    required: bool
    description: str


@dataclass(frozen=True)
class Kind:
    """One component of the package."""

    #: The class's name: its type token is `aks-gpu:index:<name>`, its inputs `<name>Args`.
    name: str
    #: The Args class's description (its docstring, the schema's).
    args_doc: str
    #: What the plan declares for it.
    parts: frozenset[Part] = ALL
    #: The stack file's keys it takes, without `aks-gpu:`, in the stack file's order; None: every key.
    keys: tuple[str, ...] | None = None
    #: Its inputs that are no stack file key.
    own: Mapping[str, OwnInput] = field(default_factory=dict)
    #: Its Kubernetes objects sign in with the consumer's Kubernetes provider (the `providers`
    #: option) or its `kubeconfig` input, where given (components/environment/sign_in.py).
    signs_in: bool = False
    #: What it sets that no input does, as a stack file writes it: a component without the proof
    #: runs none, so mnistJob.enabled is false for the parser's checks too (a pool of 0 nodes).
    fixed: Mapping[str, Any] = field(default_factory=dict)
    #: The stack file's keys its own inputs stand for, by key: a refusal of the key names the input.
    stands_for: Mapping[str, str] = field(default_factory=dict)

    @property
    def type(self) -> str:
        """The type token the host gives it (`<package>:index:<class>`, pulumi 3.272.0 provider/experimental/schema.py)."""
        return f"{NAME}:index:{self.name}"

    @property
    def args(self) -> str:
        return f"{self.name}Args"


CLUSTER_ID = "clusterId"
CLUSTER_ID_INPUT = OwnInput(
    "str",
    True,
    f"The AKS cluster, by its Azure resource ID: {SHAPE} (`az aks show --query id`). It is read, never changed; "
    "the component reads it with the deployer's Azure credentials.",
)
POOL_NAMES = "gpuPoolNames"
POOL_NAMES_INPUT = OwnInput(
    "list[str]",
    True,
    "The cluster's GPU pools the GPU stack serves, by AKS pool name, each read from Azure as it is (a stack file's "
    "gpuPools entry with existing: use) and never changed: the device plugin on a pool AKS installs the driver on "
    "(unless a device plugin of the cluster's serves it already), NVIDIA's GPU Operator on one without a driver, "
    "nothing on an AKS-managed one.",
)


def kubeconfig_input(objects: str) -> OwnInput:
    """The `kubeconfig` input of a component that signs `objects` (the proof's, the GPU stack's) in
    the consumer's way (Kind.signs_in): one description, one rule, for every such component."""
    return OwnInput(
        "pulumi.Input[str]",
        False,
        f"A kubeconfig (its contents, or a file's path) that signs {objects} Kubernetes objects in; a secret, or another "
        "resource's output, is fine: it decides nothing, and the component keeps it secret. Unset: the Kubernetes provider passed in the `providers` resource option, "
        "or else the user kubeconfig Azure answers the deployer. Not with such a provider. The cluster's reads "
        "still go through Azure with the deployer's credentials.",
    )


NO_PROOF = {"mnistJob": {"enabled": False}}

GPU_ENVIRONMENT = Kind(
    "GpuEnvironment", "The whole environment's settings: a stack file's `aks-gpu:` keys, each optional, as in a stack file."
)
GPU_POOLS = Kind(
    "GpuPools",
    "GPU pools (and capacity groups) on an AKS cluster named by its resource ID: the stack file's pool keys, with preflight and cost.",
    parts=frozenset({Part.POOLS}),
    keys=("gpuPool", "gpuPools", "gpuGroups", "preflight", "cost"),
    own={CLUSTER_ID: CLUSTER_ID_INPUT},
    fixed=NO_PROOF,
    stands_for={"existingCluster": CLUSTER_ID},
)
GPU_STACK = Kind(
    "GpuStack",
    "The GPU stack on an AKS cluster's own GPU pools, the cluster named by its resource ID and the pools by name: the stack "
    "file's devicePlugin, gpuOperator, monitoring and preflight settings.",
    parts=frozenset({Part.GPU_STACK}),
    keys=("devicePlugin", "monitoring", "gpuOperator", "preflight"),
    own={CLUSTER_ID: CLUSTER_ID_INPUT, POOL_NAMES: POOL_NAMES_INPUT, KUBECONFIG: kubeconfig_input("the GPU stack's")},
    fixed=NO_PROOF,
    stands_for={"existingCluster": CLUSTER_ID, "gpuPools": POOL_NAMES},
    signs_in=True,
)
PROVED_POOLS_INPUT = OwnInput(
    "list[str]",
    True,
    "The cluster's GPU pools the proof runs on, one MNIST Job each, by AKS pool name, each read from Azure as it is (a stack "
    "file's gpuPools entry with existing: use) and never changed. The GPU stack is GpuStack's: where the cluster's objects are read, a pool "
    "no device plugin serves stops a deployment (a preview warns).",
)
GPU_PROOF = Kind(
    "GpuProof",
    "The proof on an AKS cluster's own GPU pools, the cluster named by its resource ID and the pools by name: the stack "
    "file's mnistJob, preflight and cost settings.",
    parts=frozenset({Part.PROOF}),
    # No gpuGroups: a group's pools carry its label, which only a pool the stack declares can
    # (groups.check_pools refuses a pool used as it is).
    keys=("mnistJob", "preflight", "cost"),
    own={CLUSTER_ID: CLUSTER_ID_INPUT, POOL_NAMES: PROVED_POOLS_INPUT, KUBECONFIG: kubeconfig_input("the proof's")},
    stands_for={"existingCluster": CLUSTER_ID, "gpuPools": POOL_NAMES},
    signs_in=True,
)
KINDS = (GPU_ENVIRONMENT, GPU_POOLS, GPU_STACK, GPU_PROOF)
