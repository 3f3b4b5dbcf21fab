"""Where a proof Job may connect: the cluster's DNS, HTTPS to the internet (the MNIST mirror), and
the cluster's HTTP proxy when it has one at an IP address (components/cluster/cluster_egress.py)."""

from __future__ import annotations

import pulumi_kubernetes as k8s

# AKS runs CoreDNS in kube-system with the label k8s-app=kube-dns.
DNS_PEER = k8s.networking.v1.NetworkPolicyPeerArgs(
    namespace_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"kubernetes.io/metadata.name": "kube-system"}),
    pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"k8s-app": "kube-dns"}),
)
# Private ranges (RFC 1918) stay closed: the download goes to the internet.
INTERNET = k8s.networking.v1.NetworkPolicyPeerArgs(
    ip_block=k8s.networking.v1.IPBlockArgs(cidr="0.0.0.0/0", except_=["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"])
)
EGRESS = (
    k8s.networking.v1.NetworkPolicyEgressRuleArgs(
        to=[DNS_PEER],
        ports=[
            k8s.networking.v1.NetworkPolicyPortArgs(protocol="UDP", port=53),
            k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=53),
        ],
    ),
    k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=[INTERNET], ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=443)]),
)


def _proxy(proxy: tuple[str, int] | None) -> list[k8s.networking.v1.NetworkPolicyEgressRuleArgs]:
    """TCP to the cluster's HTTP proxy, which may sit in a private range that INTERNET leaves out."""
    if proxy is None:
        return []
    to = [k8s.networking.v1.NetworkPolicyPeerArgs(ip_block=k8s.networking.v1.IPBlockArgs(cidr=proxy[0]))]
    return [
        k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=to, ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=proxy[1])])
    ]


def job_egress(proxy: tuple[str, int] | None) -> tuple[k8s.networking.v1.NetworkPolicyEgressRuleArgs, ...]:
    """The Job's egress rules: DNS, HTTPS outside the private ranges, and the proxy."""
    return (*EGRESS, *_proxy(proxy))
