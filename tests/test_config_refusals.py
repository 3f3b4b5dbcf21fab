"""The classes of bad input a generator outside the project found (#31), each pinned at its
root: a traceback that is now one line, or a value that was accepted and is now refused, or
refused and now accepted as the docs say. tests/test_generated_input.py generates more."""

from __future__ import annotations

import pytest
from conftest import run_cached
from support.config import parsed, refused

from components.errors import ConfigError
from tools.azure_mocks import AzureMocks, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}
SUBNET = "/subscriptions/s/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/gpu"


@pytest.mark.parametrize(
    "pool, says",
    [
        ({"minCount": 0, "maxCount": None}, "minCount is set without maxCount"),
        ({"minCount": None, "maxCount": 3}, "maxCount is set without minCount"),
    ],
)
def test_both_or_neither_counts_by_value_a_null_is_not_a_count(pool, says):
    """{minCount: 0, maxCount: null} was a bare AssertionError; {minCount: null, maxCount: 3}
    quietly dropped maxCount."""
    refused(rf"^invalid config aks-gpu:gpuPool: {says}; set both", gpuPool={"vmSize": T4, **pool})
    assert not parsed(gpuPool={"vmSize": T4, "minCount": None, "maxCount": None}).gpu_pools[0].autoscaling


def test_a_number_past_a_floats_range_is_refused_in_one_line_not_taken_as_infinity():
    """`maxHourly: 1e400` is JSON, which Python's parser made infinity: a cost limit that never stops."""
    refused(r"""^invalid config aks-gpu:cost = '{"maxHourly": 1e400}': expected an object""", cost='{"maxHourly": 1e400}')


def test_a_pool_named_twice_in_a_gpu_pools_string_is_refused_not_merged():
    """Python's JSON parser keeps the last of two members of one name: one pool would vanish,
    and on a deployed stack be deleted."""
    raw = '{"a": {"vmSize": "Standard_NC4as_T4_v3"}, "a": {"vmSize": "Standard_NC24ads_A100_v4"}}'
    refused(r"^invalid config aks-gpu:gpuPools: 'a' is given twice; expected each member once$", gpuPools=raw)


@pytest.mark.parametrize(
    "keys, key",
    [
        ({"existingCluster": TEAM, "gpuPool": {"vmSize": T4, "vnetSubnetId": SUBNET[:-3] + "g\x00u"}}, r"gpuPool\.vnetSubnetId"),
        ({"cost": {"budget": {"amount": 5, "contactEmails": ["gpu\u200b@example.com"]}}}, r"cost\.budget\.contactEmails\[0\]"),
        ({"mnistJob": {"namespace": "gpu\u202eworkloads"}}, r"mnistJob\.namespace"),
        ({"clusterName": "aks\u2028gpu"}, "clusterName"),
    ],
    ids=["NUL in a subnet", "zero-width space in an e-mail", "right-to-left override", "line separator"],
)
def test_an_invisible_character_anywhere_is_one_line_naming_the_member(keys, key):
    message = refused(
        rf"^invalid config aks-gpu:{key} = .*: contains U\+[0-9A-F]{{4}} \(.*\), which is invisible; expected printable text$", **keys
    )
    assert "\x00" not in message and "\u200b" not in message, "the line shows the character escaped"


def test_the_same_admin_group_in_two_cases_is_one_group_given_twice():
    group = "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
    refused(
        r"^invalid config aks-gpu:access\.adminGroupObjectIds = .*expected each entry once \(case aside\)",
        access={"mode": "entra", "adminGroupObjectIds": [group, group.upper()]},
    )


@pytest.mark.parametrize("namespace", ["kube-gpu", "kube-system", "default"])
def test_a_kube_namespace_is_refused_as_the_readme_says(namespace):
    refused(
        rf"^invalid config aks-gpu:mnistJob\.namespace = '{namespace}': .*cannot be 'default' or a 'kube-' namespace",
        mnistJob={"namespace": namespace},
    )


@pytest.mark.parametrize(
    "keys, key",
    [
        ({"gpuOperator": {"version": "v" + "1" * 10 + ".0.0"}}, r"gpuOperator\.version"),
        ({"systemPool": {"vmSize": "Standard_" + "D" * 100}}, r"systemPool\.vmSize"),
        ({"mnistJob": {"image": "r" * 256 + ":1"}}, r"mnistJob\.image"),
        ({"devicePlugin": {"image": "registry.example.com/" + "p" * 250 + "@sha256:" + "0" * 64}}, r"devicePlugin\.image"),
        ({"cost": {"budget": {"amount": 5, "contactEmails": ["a" * 65 + "@example.com"]}}}, r"cost\.budget\.contactEmails\[0\]"),
    ],
)
def test_values_longer_than_azure_or_kubernetes_take_are_refused(keys, key):
    message = refused(rf"^invalid config aks-gpu:{key} = ", **keys)
    assert len(message) < 500, "a long value is shown cut, with its length"


def test_a_location_longer_than_any_region_is_refused():
    from components.stack import parse

    with pytest.raises(
        ConfigError, match=r"^invalid config azure-native:location = 'e+'\.\.\. \(300 characters\): expected an Azure region name"
    ):
        parse({"azure-native:location": "e" * 300}, "aks-gpu", "dev")


@pytest.mark.parametrize("preview", [True, False])
def test_access_at_its_default_spelt_out_is_allowed_on_an_existing_cluster(preview):
    """The docs allow `access` at its default; the check compared the given object with a dataclass."""
    run, _ = run_cached(
        "dev", preview=preview, cluster=existing_cluster(), existingCluster=TEAM, gpuPool={"vmSize": T4}, access={"mode": "local"}
    )
    assert run.of_type("azure-native:containerservice:AgentPool")
    refused(
        r"^invalid config aks-gpu:access = \{\"mode\": \"entra\"\}: not used with aks-gpu:existingCluster",
        existingCluster=TEAM,
        access={"mode": "entra"},
    )


@pytest.mark.parametrize("version, supported", [("v1.33.3", True), ("1.34.2", True), ("1.32.9", False), ("unknown", False)])
def test_a_cluster_version_azure_writes_with_a_v_is_read(version, supported):
    """`v1.33.3` crashed the GPU Operator's version check with a ValueError."""
    cluster = existing_cluster(currentKubernetesVersion=version, kubernetesVersion=version)
    run, _ = run_cached("dev", cluster=cluster, existingCluster=TEAM, gpuPool={"vmSize": T4, "management": "gpu-operator"})
    warned = [w for w in run.warnings if "NVIDIA supports the GPU Operator" in w]
    assert (not warned) is supported


def test_a_long_value_is_shown_cut_with_its_length_in_a_line_that_stays_one_line():
    message = refused(r"^invalid config aks-gpu:clusterName = 'x{100,}'\.\.\. \(10000 characters\): ", clusterName="x" * 10_000)
    assert len(message) < 400


def test_an_unknown_member_nested_two_deep_is_one_line_in_a_deployment_too():
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(ConfigError, match=r"^unknown config aks-gpu:cost\.budget\.amout \(did you mean amount\?\)"):
        run_program(
            "dev",
            overrides={"cost": {"budget": {"amout": 5, "amount": 5, "contactEmails": ["a@example.com"]}}},
            monitor=monitor,
            preview=False,
        )
    assert monitor.registrations == []


def test_an_unknown_key_with_a_line_break_in_its_name_is_still_one_line():
    from components.stack import parse

    with pytest.raises(ConfigError) as raised:
        parse({"aks-gpu:gpu\nPool": "{}"}, "aks-gpu", "dev")
    assert str(raised.value).startswith("unknown config 'aks-gpu:gpu\\nPool'") and "\n" not in str(raised.value)
