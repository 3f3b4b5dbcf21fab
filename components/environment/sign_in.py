"""How a component's Kubernetes objects sign in to the cluster it names: with the consumer's
Kubernetes provider (its `providers` resource option), with its `kubeconfig` input, or else as the
program's do, with the user kubeconfig Azure answers the deployer (docs/design/package-proof-component.md).
"""

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

# The package whose provider signs the objects in: pulumi-kubernetes' (`pulumi:providers:kubernetes`).
KUBERNETES = "kubernetes"
# A type token of that package, to ask a parent for its provider of the package (resource.py get_provider).
KUBERNETES_TYPE = f"{KUBERNETES}:core/v1:Namespace"
# The input that signs the objects in with a kubeconfig.
KUBECONFIG = "kubeconfig"
# Why a component refuses a kubeconfig beside a provider.
BOTH = (
    "a kubeconfig is given, and a Kubernetes provider is passed in the `providers` resource option too: "
    "either signs the Kubernetes objects in, so pass one of them"
)


def consumers_provider(opts: pulumi.ResourceOptions | None) -> pulumi.ProviderResource | None:
    """The consumer's Kubernetes provider, found as the SDK finds a child's (pulumi 3.272.0
    resource.py `Resource._get_providers`): `provider` when it is Kubernetes', then the `providers`
    option's entry for the package (a map, or a list of providers), then the parent's. Over
    Construct the host hands the consumer's `providers` here (provider/server.py `_construct_options`)."""
    if opts is None:
        return None
    if opts.provider is not None and opts.provider.package == KUBERNETES:
        return opts.provider
    found = by_package(opts.providers)
    if KUBERNETES in found:
        return found[KUBERNETES]
    return opts.parent.get_provider(KUBERNETES_TYPE) if opts.parent is not None else None


def by_package(providers: Mapping[str, pulumi.ProviderResource] | Sequence[pulumi.ProviderResource] | None) -> dict[str, Any]:
    """The `providers` option by package: a map as it is, a list by each provider's package."""
    if providers is None:
        return {}
    if isinstance(providers, Mapping):
        return dict(providers)
    return {provider.package: provider for provider in providers}
