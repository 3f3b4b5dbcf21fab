"""The cluster's config rules (components/cluster/settings.py): who may reach the API server and
how they sign in, the network policy engine, upgrade channels. A bad value is one line
naming the key."""

from __future__ import annotations

import pytest
from support.config import parsed, refused

from components import stack as config


def test_security_defaults_are_the_guides_cluster_with_network_policy():
    cfg = parsed()
    assert cfg.access == config.AccessConfig(mode="local")
    assert cfg.network.policy == "cilium"
    assert (cfg.upgrade.channel, cfg.upgrade.node_os_channel) == ("none", "NodeImage")
    assert cfg.cluster_tier == "Free"
    assert cfg.mnist_job.namespace == "gpu-workloads"


def test_entra_access_takes_admin_groups_and_ip_ranges():
    group = "0d9f7c3a-5b1e-4f2a-9c8d-7e6f5a4b3c2d"
    cfg = parsed(access={"mode": "entra", "adminGroupObjectIds": [group], "authorizedIpRanges": ["203.0.113.0/24", "198.51.100.7"]})
    assert cfg.access.entra
    assert cfg.access.admin_group_object_ids == (group,)
    assert cfg.access.authorized_ip_ranges == ("203.0.113.0/24", "198.51.100.7")
    assert cfg.access.deployer_type == "ServicePrincipal"


@pytest.mark.parametrize("mode", ["aad", "Entra", "", True])
def test_access_mode_is_local_or_entra(mode):
    refused(r"^invalid config aks-gpu:access.mode = .*: expected one of local, entra$", access={"mode": mode})


@pytest.mark.parametrize("member", [{"adminGroupObjectIds": ["0d9f7c3a-5b1e-4f2a-9c8d-7e6f5a4b3c2d"]}, {"deployerType": "User"}])
def test_entra_only_settings_are_refused_with_local_accounts(member):
    key = next(iter(member))
    refused(rf"^invalid config aks-gpu:access.{key} = .*only applies to Entra ID; set aks-gpu:access.mode to entra", access=member)


@pytest.mark.parametrize("group", ["not-a-guid", "0d9f7c3a5b1e4f2a9c8d7e6f5a4b3c2d", 42])
def test_admin_groups_are_object_ids(group):
    refused(
        r"aks-gpu:access.adminGroupObjectIds\[0\] = .*expected an Entra ID object ID",
        access={"mode": "entra", "adminGroupObjectIds": [group]},
    )


def test_entra_without_a_deployer_grant_needs_an_admin_group():
    refused(r"deployerType = 'none' with no aks-gpu:access.adminGroupObjectIds", access={"mode": "entra", "deployerType": "none"})
    group = "0d9f7c3a-5b1e-4f2a-9c8d-7e6f5a4b3c2d"
    assert parsed(access={"mode": "entra", "deployerType": "none", "adminGroupObjectIds": [group]}).access.deployer_type == "none"


@pytest.mark.parametrize(
    "value, why",
    [
        ("203.0.113.5/24", "has host bits set"),
        ("2001:db8::/32", "expected an IPv4 address"),
        ("203.0.113.0/33", "expected an IPv4 address"),
        ("everywhere", "expected an IPv4 address"),
    ],
)
def test_authorized_ranges_are_ipv4_networks(value, why):
    message = refused(r"^invalid config aks-gpu:access.authorizedIpRanges\[0\] = ", access={"authorizedIpRanges": [value]})
    assert why in message


def test_authorized_ranges_are_a_list_of_at_most_200_distinct_entries():
    refused(r"authorizedIpRanges = .*expected a list", access={"authorizedIpRanges": "203.0.113.0/24"})
    many = [f"10.0.{i // 256}.{i % 256}" for i in range(201)]
    refused(r"expected at most 200 entries", access={"authorizedIpRanges": many})
    refused(r"repeated: 203.0.113.0/24", access={"authorizedIpRanges": ["203.0.113.0/24", "203.0.113.0/24"]})


@pytest.mark.parametrize("policy", ["azure", "Cilium", "off"])
def test_network_policy_is_cilium_calico_or_none(policy):
    refused(r"^invalid config aks-gpu:network.policy = .*: expected one of cilium, calico, none$", network={"policy": policy})


def test_no_network_policy_is_allowed_with_a_warning():
    cfg = parsed(network={"policy": "none"})
    assert any("network.policy = none" in w and "no effect" in w for w in cfg.warnings)


@pytest.mark.parametrize("member, value", [("channel", "weekly"), ("nodeOsChannel", "nodeimage")])
def test_upgrade_channels_are_the_aks_values(member, value):
    refused(rf"^invalid config aks-gpu:upgrade.{member} = '{value}': expected one of ", upgrade={member: value})


def test_the_patch_channel_refuses_a_pinned_patch_version():
    message = refused(
        r"kubernetesVersion = '1.33.2' with aks-gpu:upgrade.channel = 'patch'", kubernetesVersion="1.33.2", upgrade={"channel": "patch"}
    )
    assert "'1.33'" in message
    assert parsed(kubernetesVersion="1.33", upgrade={"channel": "patch"}).kubernetes_version == "1.33"


@pytest.mark.parametrize("tier", ["free", "Gold", ""])
def test_cluster_tier_is_free_standard_or_premium(tier):
    if tier == "":
        assert parsed(clusterTier="").cluster_tier == "Free", "empty means the Pulumi.yaml default"
        return
    refused(rf"^invalid config aks-gpu:clusterTier = '{tier}': expected one of Free, Standard, Premium$", clusterTier=tier)


def test_the_job_and_the_device_plugin_cannot_share_a_namespace():
    refused(
        r"mnistJob.namespace = 'gpu-resources': expected a namespace other than aks-gpu:devicePlugin.namespace",
        mnistJob={"namespace": "gpu-resources"},
    )
    assert parsed(mnistJob={"namespace": "gpu-resources", "enabled": False}).mnist_job.namespace == "gpu-resources"


@pytest.mark.parametrize("namespace", ["default", "kube-system", "Training"])
def test_the_job_namespace_is_one_the_program_can_own(namespace):
    refused(r"^invalid config aks-gpu:mnistJob.namespace = ", mnistJob={"namespace": namespace})
