"""The team's order at run time (issue #55): on a cluster the stack creates, while a capacity
group exists, the cluster autoscaler's profile says `expander: priority` and the ConfigMap
`kube-system/cluster-autoscaler-priority-expander` ranks each group's pools first choice first;
a config without groups declares neither, and an existing cluster's autoscaler is its owner's
(the plan says what they would set)."""

from __future__ import annotations

import re
from typing import Any

import test_gpu_groups
import yaml
from conftest import ROOT, run_cached
from support.existing_pools import GPUNP, cluster
from support.plan import lines, planned
from test_gpu_groups import MANY, POOLS

from components.cluster.cluster import GpuClusterArgs
from components.pools import priority_expander

CLUSTER, CONFIG_MAP, JOB = "azure-native:containerservice:ManagedCluster", "kubernetes:core/v1:ConfigMap", "kubernetes:batch/v1:Job"
EXPANDER_MAP = "cluster-autoscaler-priority-expander"
# The scale set AKS makes for each pool: `aks-<pool>-<digits>-vmss` (docs/design/capacity-groups.md).
SCALE_SETS = {name: f"aks-{name}-31415926-vmss" for name in (*MANY, "system", "byhand")}


def many() -> Any:
    """The two groups' preview; a deployment declares from the same plan (test_gpu_groups.many checks it)."""
    return test_gpu_groups.many()


def _priorities(run: Any) -> dict[int, list[str]]:
    """The ConfigMap's `priorities` as priority.go reads it: YAML into map[int][]string."""
    config_map = run.one(CONFIG_MAP, EXPANDER_MAP)
    assert config_map.inputs["metadata"]["namespace"] == "kube-system"
    parsed = yaml.safe_load(config_map.inputs["data"]["priorities"])
    assert all(isinstance(k, int) and all(isinstance(p, str) for p in v) for k, v in parsed.items()), parsed
    return parsed


def _best_options(priorities: dict[int, list[str]], options: list[str], levels_in: Any = sorted) -> list[str]:
    """The options priority.go BestOptions keeps (kubernetes/autoscaler cluster-autoscaler-1.35.2),
    step for step: each option against each priority whose patterns it matches (a search, as Go's
    FindStringIndex); one below the best so far is skipped, one above it starts the list anew. An
    option that matches nothing is dropped; when none matches, every option is kept. `levels_in`:
    the order the priorities are walked in, which Go's map leaves to chance."""
    best_priority, best = -1, []
    for option in options:
        for level in levels_in(priorities):
            if not any(re.search(pattern, SCALE_SETS[option]) for pattern in priorities[level]):
                continue
            if level < best_priority:
                continue
            if level > best_priority:
                best_priority, best = level, []
            best.append(option)
    return best or options


def _chosen_first(priorities: dict[int, list[str]], options: list[str]) -> list[str]:
    """What the expander keeps, the same whichever order Go's map walks the priorities in."""
    kept = _best_options(priorities, options)
    assert _best_options(priorities, options, lambda levels: sorted(levels, reverse=True)) == kept
    return kept


def test_a_created_cluster_with_a_group_gets_the_priority_expander_in_its_autoscaler_profile() -> None:
    assert many().one(CLUSTER).inputs["autoScalerProfile"] == {"expander": "priority"}


def test_the_priorities_rank_each_groups_pools_in_the_teams_order_and_every_other_declared_pool_first() -> None:
    assert _priorities(many()) == {
        # Each group's first choice, the System pool and the pools in no group: no group outranks those.
        40: ["^aks-b2-[0-9]+-vmss$", "^aks-t4-[0-9]+-vmss$", "^aks-system-[0-9]+-vmss$", "^aks-solo-[0-9]+-vmss$"],
        30: ["^aks-b1-[0-9]+-vmss$", "^aks-t4b-[0-9]+-vmss$"],  # two groups' pools share a level: a pod fits one group's
        20: ["^aks-a10-[0-9]+-vmss$"],
        10: [".*"],  # what the stack does not declare
    }


def test_the_autoscaler_scales_a_groups_pools_in_the_teams_order_as_each_before_fails() -> None:
    """Among the pools the pending pod fits (its group's, less those backed off), the priority
    expander keeps the team's first choice."""
    priorities = _priorities(many())
    assert _chosen_first(priorities, ["a10", "t4b", "t4"]) == ["t4"]
    assert _chosen_first(priorities, ["a10", "t4b"]) == ["t4b"]  # t4 backed off
    assert _chosen_first(priorities, ["a10"]) == ["a10"]
    assert _chosen_first(priorities, ["b1", "b2"]) == ["b2"]
    assert _chosen_first(priorities, ["b1"]) == ["b1"]


def test_a_pod_that_fits_a_groups_pool_and_a_pool_outside_groups_is_not_steered_onto_the_groups_pool() -> None:
    """A pod that tolerates every taint and selects no pool fits a group's pools and the others:
    the pools outside groups are never ranked below a group's, so it is not sent to the GPUs."""
    priorities = _priorities(many())
    assert _chosen_first(priorities, ["t4", "solo"]) == ["t4", "solo"]  # a tie: random, as AKS's default expander
    assert _chosen_first(priorities, ["t4b", "solo"]) == ["solo"]
    assert _chosen_first(priorities, ["a10", "b1", "system"]) == ["system"]
    assert _chosen_first(priorities, ["solo", "system"]) == ["solo", "system"]
    # A pool added by hand, which this stack does not declare, matches only the catch-all.
    assert _chosen_first(priorities, ["a10", "byhand"]) == ["a10"]
    assert _chosen_first(priorities, ["byhand"]) == ["byhand"]


def test_each_pattern_matches_its_own_pools_scale_set_and_no_others() -> None:
    """Anchored: t4's pattern does not match t4b's scale set. Only RE2's syntax (^ $ [0-9] +)."""
    for pool in ("t4", "t4b", "a10", "b1", "b2"):
        pattern = priority_expander.scale_set_pattern(pool)
        assert re.fullmatch(r"\^aks-[a-z0-9]+-\[0-9\]\+-vmss\$", pattern), pattern
        assert [name for name, scale_set in SCALE_SETS.items() if re.search(pattern, scale_set)] == [pool]


def test_the_groups_job_waits_for_the_priorities_so_its_first_scale_up_follows_them() -> None:
    run = many()
    config_map = run.one(CONFIG_MAP, EXPANDER_MAP).urn
    assert config_map in run.one(JOB, "mnist-proof-inference").dependencies
    assert config_map not in run.one(JOB, "mnist-proof-solo").dependencies


def test_a_created_cluster_with_a_group_says_what_it_sets_and_that_the_expander_stays_after_the_last_group() -> None:
    (line,) = [i for i in lines(gpuPool=None, gpuPools=POOLS, gpuGroups={"inference": ["t4", "t4b", "a10"]}).infos if "expander" in i]
    assert "expander to priority" in line and "kube-system/cluster-autoscaler-priority-expander" in line
    assert (
        "{40: ['^aks-t4-[0-9]+-vmss$', '^aks-system-[0-9]+-vmss$'], 30: ['^aks-t4b-[0-9]+-vmss$'], "
        "20: ['^aks-a10-[0-9]+-vmss$'], 10: ['.*']}" in line
    )
    assert "a pod that fits one of them and a group's pool is not steered onto the group's" in line
    assert "pools this stack does not declare match only '.*' and rank below the groups" in line
    assert "Azure keeps expander=priority" in line
    # The stack knows the cluster it created: the command names it.
    assert line.endswith("az aks update --resource-group aks-gpu-dev-rg --name aks-gpu-dev --cluster-autoscaler-profile expander=random")


def test_a_config_without_groups_declares_no_autoscaler_profile_nor_priorities_and_says_nothing_of_them() -> None:
    run = run_cached("dev", gpuPool=None, gpuPools=POOLS)[0]
    assert "autoScalerProfile" not in run.one(CLUSTER).inputs
    assert not [c for c in run.of_type(CONFIG_MAP) if c.inputs["metadata"]["name"] == EXPANDER_MAP]
    assert not [c for c in run.resources if c.type == "aks-gpu:kubernetes:CapacityExpander"]
    assert not [i for i in lines(gpuPool=None, gpuPools=POOLS).infos if "expander" in i]
    without = planned(gpuPool=None, gpuPools=POOLS)
    assert without.expander is None and isinstance(without.cluster, GpuClusterArgs) and not without.cluster.priority_expander


TEAM_POOLS = {"gpunp": {"existing": "adopt"}, "t4": POOLS["t4"]}
TEAM_GROUPS = {"inference": ["gpunp", "t4"]}


def test_an_existing_cluster_gets_no_profile_nor_priorities_and_the_plan_says_what_its_owner_would_set() -> None:
    run = run_cached("team", cluster=cluster(GPUNP), gpuPools=TEAM_POOLS, gpuGroups=TEAM_GROUPS)[0]
    assert not run.of_type(CLUSTER)
    assert not [c for c in run.of_type(CONFIG_MAP) if c.inputs["metadata"]["name"] == EXPANDER_MAP]
    said = lines("team", cluster=cluster(GPUNP), gpuPools=TEAM_POOLS, gpuGroups=TEAM_GROUPS).infos
    (line,) = [i for i in said if "expander" in i]
    assert "changes none of them" in line and "in the order of the owner's expander" in line
    assert "az aks update --resource-group team-rg --name team-aks --cluster-autoscaler-profile expander=priority" in line
    # The cluster's System pool, outside the group, is on the group's first level: never outranked.
    assert "{30: ['^aks-gpunp-[0-9]+-vmss$', '^aks-system-[0-9]+-vmss$'], 20: ['^aks-t4-[0-9]+-vmss$'], 10: ['.*']}" in line
    assert "every pool outside a group on the groups' top level" in line


def test_the_priorities_docs_gpu_capacity_shows_are_those_the_program_declares_for_its_example() -> None:
    page = (ROOT / "docs" / "design" / "capacity-groups.md").read_text()
    shown = page.split("## What the program does", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    run = run_cached("dev", gpuPool=None, gpuPools=POOLS, gpuGroups={"inference": ["t4", "t4b", "a10"]})[0]
    assert yaml.safe_load(yaml.safe_load(shown)["priorities"]) == _priorities(run)
