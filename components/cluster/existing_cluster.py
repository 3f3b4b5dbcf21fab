"""The guide's other entry point: "This article assumes that you have an existing AKS
cluster" (use-nvidia-gpu.md). With `aks-gpu:existingCluster` the cluster is read, never
registered: `pulumi destroy` removes only what the stack added. The cluster and its user
credential are read once, before anything is registered (cluster_facts.py), and handed in as
plain values. A component package's consumer may sign the Kubernetes objects in its own way
instead: its Kubernetes provider, or its kubeconfig (docs/design/package-proof-component.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.cluster import InCluster, get_credentials_command
from components.cluster.cluster_facts import ClusterFacts
from components.cluster.kubeconfig import provider_kubeconfig
from components.proof.watch_live import ClusterRef


@dataclass(frozen=True)
class ExistingClusterArgs:
    """The existing cluster the GPU pools go into, as the plan read it."""

    facts: ClusterFacts
    #: listClusterUserCredential's kubeconfig, base64.
    user_kubeconfig: str
    #: The run's subscription; None: not read.
    subscription_id: str | None = None
    #: Whether anything is declared inside the cluster (False: no Kubernetes provider, which would
    #: hold the user credential in the state and serve nothing).
    kubernetes: bool = True
    #: A consumer's Kubernetes provider (a component's `providers` option), which every object
    #: uses as it is: none is declared here. None: the one declared here.
    provider: pulumi.ProviderResource | None = None
    #: A consumer's kubeconfig, which the provider declared here signs in with instead of
    #: user_kubeconfig's. None: user_kubeconfig's. Never both this and `provider`.
    kubeconfig: pulumi.Input[str] | None = None

    def __post_init__(self) -> None:
        if self.provider is not None and self.kubeconfig is not None:
            raise ValueError("a consumer's Kubernetes provider or its kubeconfig signs the objects in, not both")


class ExistingCluster(pulumi.ComponentResource):
    """An AKS cluster this stack does not own, read from Azure, and a Kubernetes provider for it."""

    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    resource_uid: pulumi.Output[str]
    #: Nothing to wait for: the cluster exists before the stack does.
    dependencies: Sequence[pulumi.Resource]
    location: str
    kubernetes_version: str | None
    #: The user kubeconfig Azure answered (a secret), whoever signs the objects in.
    kubeconfig: pulumi.Output[str]
    #: What every Kubernetes object of the cluster uses: the consumer's, or the one declared here;
    #: None where nothing is declared inside the cluster.
    provider: pulumi.ProviderResource | None
    get_credentials_command: pulumi.Output[str]
    ref: ClusterRef | None

    def __init__(self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-gpu:azure:ExistingCluster", name, None, opts)
        facts = args.facts
        self.resource_group_name = pulumi.Output.from_input(facts.resource_group)
        self.cluster_name = pulumi.Output.from_input(facts.name)
        self.resource_uid = pulumi.Output.from_input(facts.resource_uid)  # type: ignore[arg-type]  # None where Azure's answer had no UID; the managed pool then sends none
        self.location = facts.location
        self.kubernetes_version = facts.kubernetes_version
        self.dependencies = ()
        self.ref = ClusterRef(args.subscription_id, facts.resource_group, facts.name, entra=facts.entra) if args.subscription_id else None
        self.kubeconfig = pulumi.Output.secret(provider_kubeconfig(args.user_kubeconfig))
        self.provider = (args.provider or self._declare_provider(name, args)) if args.kubernetes else None
        self.get_credentials_command = pulumi.Output.from_input(get_credentials_command(facts.resource_group, facts.name))
        # The budget watches the owner tag here; nothing of the cluster is deleted with it.
        self.billing_groups: Sequence[pulumi.Output[str]] = ()
        self.objects = InCluster(self.provider, None, (), self.ref) if self.provider is not None else None
        self.register_outputs({"resourceGroupName": self.resource_group_name, "clusterName": self.cluster_name})

    def _declare_provider(self, name: str, args: ExistingClusterArgs) -> k8s.Provider:
        """The provider of the stack's own, signed in with the consumer's kubeconfig where one is
        given (a secret, as the user kubeconfig is), else with Azure's user kubeconfig. No
        deleteUnreachable, as for a created cluster (cluster.GpuCluster._create_provider)."""
        kubeconfig = self.kubeconfig if args.kubeconfig is None else pulumi.Output.secret(args.kubeconfig)
        return k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig, opts=pulumi.ResourceOptions(parent=self))
