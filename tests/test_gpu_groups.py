"""Capacity groups (`aks-gpu:gpuGroups`, issue #55): a workload that asks for a group lands on
the next size when Azure has none of the first. The config: every rule of a group refused in
one line naming the group's key, before anything is registered."""

from __future__ import annotations

from typing import Any

import pytest
from support.config import parsed, refused

T4, T4_8, A10 = "Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NV36ads_A10_v5"
GB200 = "Standard_ND128isr_NDR_GB200_v6"
POOLS: dict[str, Any] = {
    "t4": {"vmSize": T4, "minCount": 0, "maxCount": 2},
    "t4b": {"vmSize": T4_8, "minCount": 0, "maxCount": 2},
    "a10": {"vmSize": A10, "minCount": 0, "maxCount": 1},
}
GROUPS = {"inference": ["t4", "t4b", "a10"]}


# --------------------------------------------------------------------------- the config


def test_a_group_keeps_the_teams_order_and_knows_its_pools() -> None:
    cfg = parsed(gpuPools=POOLS, gpuGroups=GROUPS)
    groups = cfg.gpu_groups
    assert groups.groups == {"inference": ("t4", "t4b", "a10")}
    assert [p.name for p in groups.pools_of("inference", cfg.gpu_pools)] == ["t4", "t4b", "a10"]  # not gpuPools' name order
    assert (groups.group_of("a10"), groups.group_of("nope")) == ("inference", None)


def test_a_config_without_groups_has_none() -> None:
    assert not parsed(gpuPools=POOLS).gpu_groups


def test_a_pool_preflight_dropped_is_not_among_its_groups_pools() -> None:
    cfg = parsed(gpuPools=POOLS, gpuGroups=GROUPS)
    kept = [p for p in cfg.gpu_pools if p.name != "t4b"]
    assert [p.name for p in cfg.gpu_groups.pools_of("inference", kept)] == ["t4", "a10"]


def _pools(**changed: dict[str, Any]) -> dict[str, Any]:
    return {**POOLS, **changed}


@pytest.mark.parametrize(
    ("groups", "pools", "says"),
    [
        ({"Inference": ["t4", "a10"]}, POOLS, r"gpuGroups\.Inference = 'Inference': a group name must be 1-63 lowercase"),
        ({"-x": ["t4", "a10"]}, POOLS, r"gpuGroups\.-x = '-x': a group name"),
        ({"x" * 64: ["t4", "a10"]}, POOLS, r"gpuGroups\.x{64} = 'x{64}': a group name must be 1-63"),
        ({}, POOLS, r"gpuGroups = \{\}: expected at least one group"),
        ({"inference": ["t4"]}, POOLS, r"gpuGroups\.inference = \[\"t4\"\]: a group lists 2 or more gpuPools names"),
        ({"inference": "t4"}, POOLS, r"gpuGroups\.inference = 't4': expected a list of 2 or more gpuPools names"),
        ({"inference": ["t4", "T4"]}, POOLS, r"gpuGroups\.inference\[1\] = 'T4': expected 1-12 lowercase letters"),
        ({"inference": ["t4", "t4"]}, POOLS, r"gpuGroups\.inference = \[\"t4\", \"t4\"\]: 't4' is listed twice"),
        (
            {"inference": ["t4", "l4"]},
            POOLS,
            r"gpuGroups\.inference = .*'l4' is not an entry of aks-gpu:gpuPools; expected one of a10, t4, t4b",
        ),
        ({"a": ["t4", "a10"], "b": ["t4b", "t4"]}, POOLS, r"gpuGroups\.b = .*'t4' is in aks-gpu:gpuGroups\.a already"),
        (
            GROUPS,
            _pools(t4={"vmSize": T4}),
            r"gpuGroups\.inference = 't4': aks-gpu:gpuPools\.t4 has a fixed nodeCount 1: each pool of a group scales from zero",
        ),
        (
            GROUPS,
            _pools(t4={"vmSize": T4, "minCount": 1, "maxCount": 2}),
            r"gpuGroups\.inference = 't4': aks-gpu:gpuPools\.t4 has minCount 1: each pool of a group scales from zero",
        ),
        (
            GROUPS,
            _pools(t4={"vmSize": T4, "nodeCount": 1, "management": "aks-managed"}),
            r"gpuGroups\.inference = 't4': aks-gpu:gpuPools\.t4 is aks-managed, which has no cluster autoscaler during its preview",
        ),
        (
            GROUPS,
            _pools(a10={"vmSize": A10, "minCount": 0, "maxCount": 1, "management": "gpu-operator"}),
            r"gpuGroups\.inference = .*more than one management \(t4: device-plugin, t4b: device-plugin, a10: gpu-operator\)",
        ),
        (
            GROUPS,
            _pools(a10={"vmSize": GB200, "minCount": 0, "maxCount": 1}),
            r"gpuGroups\.inference = .*more than one CPU architecture \(t4: amd64, t4b: amd64, a10: arm64\)",
        ),
        (
            GROUPS,
            _pools(a10={"vmSize": "Standard_NC8ads_L4_v9", "minCount": 0, "maxCount": 1}),
            r"gpuGroups\.inference = 'a10': .*Standard_NC8ads_L4_v9 is not in this program's GPU size catalog, so its CPU architecture and GPU memory",
        ),
    ],
)
def test_a_group_the_pools_cannot_serve_is_refused_in_one_line(groups: Any, pools: dict[str, Any], says: str) -> None:
    refused(r"^invalid config aks-gpu:" + says, gpuPools=pools, gpuGroups=groups)


def test_a_group_of_the_guides_one_pool_is_refused() -> None:
    refused(
        r"^invalid config aks-gpu:gpuGroups with aks-gpu:gpuPool: a group lists gpuPools entries", gpuGroups={"inference": ["gpu", "a10"]}
    )


def test_a_pool_the_stack_only_uses_cannot_be_in_a_group() -> None:
    team = {"resourceGroupName": "team-rg", "name": "team-aks"}
    refused(
        r"^invalid config aks-gpu:gpuGroups\.inference = .*'gpunp' is existing: use, the owner's pool",
        existingCluster=team,
        gpuPools={"gpunp": {"existing": "use"}, "t4": POOLS["t4"]},
        gpuGroups={"inference": ["t4", "gpunp"]},
    )
