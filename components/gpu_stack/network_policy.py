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


def traffic(
    ingress: Sequence[k8s.networking.v1.NetworkPolicyIngressRuleArgs], egress: Sequence[k8s.networking.v1.NetworkPolicyEgressRuleArgs]
) -> str:
    """What `network_policy` with these rules lets through, in words (the adopting preview says it)."""
    admits = [_rule(rule) for rule in ingress]
    inbound = "denies all ingress" if not admits else f"denies all ingress but {' and '.join(admits)}"
    outbound = "all egress" if not egress else f"all egress but {len(egress)} rule(s)"
    return f"{inbound}{',' if admits else ''} and {outbound} of its pods"


def _rule(rule: k8s.networking.v1.NetworkPolicyIngressRuleArgs) -> str:
    """An ingress rule as this program writes them (plain values): from every namespace (an empty
    namespaceSelector matches all: Kubernetes NetworkPolicy docs, "Behavior of to and from
    selectors"), or from the pods it selects, on its ports."""
    peers = [p for p in rule.from_ or [] if isinstance(p, k8s.networking.v1.NetworkPolicyPeerArgs)]  # type: ignore[union-attr]
    ports = [p for p in rule.ports or [] if isinstance(p, k8s.networking.v1.NetworkPolicyPortArgs)]  # type: ignore[union-attr]
    everywhere = any(_matches_all(p.namespace_selector) and p.pod_selector is None for p in peers)
    source = "from anywhere" if not peers else "from any pod in the cluster" if everywhere else "from the pods it selects"
    on = ", ".join(f"{p.protocol or 'TCP'} {p.port}" for p in ports)
    return f"{source}{' on ' + on if on else ''}"


def _matches_all(selector: object) -> bool:
    return isinstance(selector, k8s.meta.v1.LabelSelectorArgs) and not selector.match_labels and not selector.match_expressions
