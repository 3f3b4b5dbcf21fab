"""The guide's other entry point: "This article assumes that you have an existing AKS
cluster" (use-nvidia-gpu.md). With `aks-gpu:existingCluster` the cluster is read, never
registered: `getManagedCluster` is an invoke, so the stack holds no resource for it, a
`pulumi refresh` or `up` cannot change it, and `pulumi destroy` removes only what the stack
added (its GPU pools, and the Kubernetes objects on them).

Everything the program needs from the cluster comes from Azure at each run: its resource
UID (which tells a managed pool that the cluster was re-created), and the user credential,
fetched in the format the cluster's own sign-in needs. "exec" is asked for always: it
"only take[s] effect when requesting clusterUser credential of AAD clusters" (the az CLI's
`aks get-credentials --format` help; the SDK's listManagedClusterUserCredentials docs), and
an Entra ID cluster then answers with a kubelogin exec plugin, which cluster.entra_kubeconfig
makes sign in without a prompt. A local-accounts cluster answers with its token, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice

from components.cluster import _decode_entra_kubeconfig, get_credentials_command


@dataclass(frozen=True)
class ExistingClusterArgs:
    resource_group_name: str
    cluster_name: str


class ExistingCluster(pulumi.ComponentResource):
    """An AKS cluster this stack does not own, read from Azure, and a Kubernetes provider for it."""

    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    resource_uid: pulumi.Output[str]
    #: Nothing to wait for: the cluster exists before the stack does.
    dependencies: Sequence[pulumi.Resource]
    location: pulumi.Output[str]
    #: The control plane's version as AKS reports it (currentKubernetesVersion).
    kubernetes_version: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    get_credentials_command: pulumi.Output[str]

    def __init__(self, name: str, args: ExistingClusterArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("aks-gpu:azure:ExistingCluster", name, None, opts)
        # Read again here, not handed over from preflight's plain read: preflight may be off
        # (preflight.mode), and this read is part of the graph in every run.
        found = containerservice.get_managed_cluster_output(
            resource_group_name=args.resource_group_name, resource_name=args.cluster_name
        )
        self.resource_group_name = pulumi.Output.from_input(args.resource_group_name)
        self.cluster_name = pulumi.Output.from_input(args.cluster_name)
        self.resource_uid = found.resource_uid
        self.location = found.location
        self.kubernetes_version = found.current_kubernetes_version
        self.dependencies = ()
        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=args.resource_group_name, resource_name=args.cluster_name, format="exec"
        )
        self.kubeconfig = pulumi.Output.secret(credentials.kubeconfigs[0].value.apply(_decode_entra_kubeconfig))
        # No deleteUnreachable, as for a created cluster (cluster.GpuCluster._create_provider).
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self))
        self.get_credentials_command = pulumi.Output.from_input(
            get_credentials_command(args.resource_group_name, args.cluster_name)
        )
        self.register_outputs({"resourceGroupName": self.resource_group_name, "clusterName": self.cluster_name})
