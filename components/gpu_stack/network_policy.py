"""The NetworkPolicy every Kubernetes component declares for its pods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s


def network_policy(
    resource_name: str,
    object_name: str,
    namespace: pulumi.Input[str],
    pod_labels: Mapping[str, str],
    egress: Sequence[k8s.networking.v1.NetworkPolicyEgressRuleArgs],
    opts: pulumi.ResourceOptions,
    ingress: Sequence[k8s.networking.v1.NetworkPolicyIngressRuleArgs] = (),
) -> k8s.networking.v1.NetworkPolicy:
    """Denies all ingress to the pods but the rules given, and all egress but the rules
    given. Enforced when the cluster runs a network policy engine (`network.policy`)."""
    return k8s.networking.v1.NetworkPolicy(
        resource_name,
        metadata=k8s.meta.v1.ObjectMetaArgs(name=object_name, namespace=namespace),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(pod_labels)),
            policy_types=["Ingress", "Egress"],
            ingress=list(ingress),
            egress=list(egress),
        ),
        opts=opts,
    )
