"""A GPU pool's upgradeSettings (components/pools/pool_upgrades.py): by default an upgrade adds
no GPU node, which a GPU quota rarely holds; what a team sets reaches both kinds of pool,
changes in place, and its surge is counted in preflight's quota check."""

from __future__ import annotations

import pytest
from conftest import run_cached
from support.config import refused
from support.preflight import T4, preview, problems

from components.pools import pool_upgrades
from components.pools.managed_gpu_pool import diff_pool
from components.pools.pool_upgrades import PoolUpgradeSettings

POOL = "azure-native:containerservice:AgentPool"
MANAGED = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"


def typed(preview: bool = True, **pool):
    return run_cached("dev", preview=preview, gpuPool={"vmSize": T4, **pool})[0].one(POOL)


def managed(**pool):
    return run_cached("dev", gpuPool={"vmSize": T4, "management": "aks-managed", **pool})[0].one(MANAGED)


@pytest.mark.parametrize("preview", [True, False])
def test_by_default_an_upgrade_adds_no_gpu_node_and_takes_one_down_at_a_time(preview):
    """AKS's own default, maxSurge 10% rounded up, is one extra GPU node per upgrade."""
    assert typed(preview).inputs["upgradeSettings"] == {"maxSurge": "0", "maxUnavailable": "1"}
    assert managed().inputs["properties"]["upgradeSettings"] == {"maxSurge": "0", "maxUnavailable": "1"}


def test_what_a_team_sets_reaches_both_kinds_of_pool_as_arm_spells_it():
    given = {"maxSurge": "33%", "drainTimeoutInMinutes": 60, "nodeSoakDurationInMinutes": 5, "undrainableNodeBehavior": "Cordon"}
    assert typed(upgradeSettings=given).inputs["upgradeSettings"] == given, "no maxUnavailable beside a surge: AKS's 0"
    assert managed(upgradeSettings=given).inputs["properties"]["upgradeSettings"] == given
    assert typed(upgradeSettings={"maxUnavailable": "2"}).inputs["upgradeSettings"] == {"maxSurge": "0", "maxUnavailable": "2"}
    assert typed(upgradeSettings={"maxSurge": "0"}).inputs["upgradeSettings"] == {"maxSurge": "0", "maxUnavailable": "1"}


def test_upgrade_settings_change_in_place_in_either_kind_of_pool():
    assert "upgradeSettings" not in typed().options["replaceOnChanges"]
    before, after = managed().inputs, managed(upgradeSettings={"maxSurge": "1"}).inputs
    diff = diff_pool(before, after)
    assert diff.changes and diff.replaces == []


@pytest.mark.parametrize(
    "given, message",
    [
        ({"maxSurge": "0", "maxUnavailable": "0"}, r"upgradeSettings: maxSurge 0 with maxUnavailable 0: AKS requires maxSurge above 0"),
        (
            {"maxSurge": "1", "maxUnavailable": "1"},
            r"upgradeSettings: maxSurge 1 with maxUnavailable 1: both above 0 is AKS's MaxUnavailable fallback",
        ),
        ({"maxSurge": "101%"}, r"upgradeSettings\.maxSurge = '101%': expected a node count from 0 to 1000, or a percentage"),
        ({"maxSurge": 1}, r"upgradeSettings\.maxSurge = 1: expected a node count"),
        ({"drainTimeoutInMinutes": 0}, r"upgradeSettings\.drainTimeoutInMinutes = 0: expected a whole number from 1 to 1440"),
        ({"nodeSoakDurationInMinutes": 31}, r"upgradeSettings\.nodeSoakDurationInMinutes = 31: expected a whole number from 0 to 30"),
        ({"undrainableNodeBehavior": "cordon"}, r"upgradeSettings\.undrainableNodeBehavior = 'cordon': expected one of Cordon, Schedule"),
    ],
)
def test_what_aks_would_refuse_is_one_line(given, message):
    refused(rf"^invalid config aks-gpu:gpuPool[. ].*{message}", gpuPool={"vmSize": T4, "upgradeSettings": given})


def test_an_unknown_member_inside_upgrade_settings_is_one_line_that_suggests_the_right_one():
    refused(
        r"^unknown config aks-gpu:gpuPools\.a\.upgradeSettings\.maxSurg \(did you mean maxSurge\?\); allowed: maxSurge, maxUnavailable, ",
        gpuPools={"a": {"vmSize": T4, "upgradeSettings": {"maxSurg": "1"}}},
    )


@pytest.mark.parametrize(
    "share, nodes, surge", [(None, 5, 0), ("0", 5, 0), ("2", 5, 2), ("10%", 3, 1), ("50%", 3, 2), ("100%", 4, 4), ("10%", 0, 0)]
)
def test_a_percentage_rounds_up_to_whole_nodes(share, nodes, surge):
    assert pool_upgrades.surge_nodes(PoolUpgradeSettings(max_surge=share), nodes) == surge


def test_preflight_counts_an_upgrades_surge_in_the_gpu_quota(facts):
    """One T4 node (4 vCPUs) and 4 free: the pool fits, its upgrade's surge node does not."""
    quota = facts(usage={"standardNCASv3_T4Family": (0, 4), "cores": (0, 100)})
    surging = problems(preview(gpuPool={"vmSize": T4, "upgradeSettings": {"maxSurge": "1"}}, preflight=quota))
    [warning] = [w for w in surging if "upgradeSettings.maxSurge" in w]
    assert warning.startswith(
        "aks-gpu:gpuPool.upgradeSettings.maxSurge (1 node(s)): an upgrade adds 4 vCPUs to 4 of 'Standard NCASv3_T4 Family vCPUs'"
    )
    assert "QuotaExceeded" in warning and not warning.endswith("(a deployment stops here)")
    assert not [w for w in problems(preview(gpuPool={"vmSize": T4}, preflight=quota)) if "upgrade" in w], "the default adds no node"
