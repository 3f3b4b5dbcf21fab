"""A capacity group's sizes held to Azure's facts before anything is created: each listed size
retired, not offered, without quota for one node, or able to run with its free quota in
nodes; plain calls on the saved az CLI answers (tests/fixtures/preflight/)."""

from __future__ import annotations

import dataclasses

import fake_prices
import pytest
from support.config import parsed
from support.plan import plan_infos, plan_warnings
from support.preflight import FIXTURES, T4

from components.errors import CostError, PreflightError
from components.plan import Mode, Said, build_plan
from components.pools.group_capacity import GroupPool, Verdict, fit, fits
from components.preflight import capacity
from components.seam import azure_facts
from tools.azure_mocks import OfflineReader
from tools.mock_engine import run_program

A100 = "Standard_NC24ads_A100_v4"
H100 = "Standard_NC40ads_H100_v5"
A10 = "Standard_NV36ads_A10_v5"
T4_8 = "Standard_NC8as_T4_v3"


def recorded(**usage: tuple[int, int]) -> azure_facts.Facts:
    """The saved eastus answers: no T4 or Spot quota, 48 A100 vCPUs, 88 regional vCPUs free;
    `usage` sets a quota's (in use, limit)."""
    facts = azure_facts.from_files(FIXTURES / "eastus-skus.json", FIXTURES / "eastus-usage.json", "eastus")
    changed = {name: dataclasses.replace(facts.usages[name], current=used, limit=limit) for name, (used, limit) in usage.items()}
    return dataclasses.replace(facts, usages={**facts.usages, **changed})


def verdicts(pools, facts, drawn=None):
    return [(f.pool, f.verdict, f.free_nodes) for f in fits(pools, facts, "eastus", drawn or {})]


def test_every_listed_size_is_read_in_the_teams_order():
    pools = [GroupPool("t4", T4), GroupPool("a10", A10), GroupPool("a100", A100), GroupPool("old", "Standard_NC6")]
    assert verdicts(pools, recorded()) == [
        ("t4", Verdict.NO_QUOTA, 0),
        ("a10", Verdict.NOT_OFFERED, None),
        ("a100", Verdict.RUNS, 2),
        ("old", Verdict.RETIRED, None),
    ]


def test_a_retired_size_cannot_run_even_where_azure_was_not_read():
    said = fit(GroupPool("old", "Standard_NC6"), None, "eastus", {})
    assert said.verdict is Verdict.RETIRED and said.verdict.cannot_run
    assert said.why == "retired by Azure on 2023-09-06 and AKS refuses it"


def test_a_size_azure_does_not_list_in_the_region_is_not_offered():
    said = fit(GroupPool("a10", A10), recorded(), "eastus", {})
    assert said.verdict is Verdict.NOT_OFFERED and said.why.startswith("Azure lists no such size in eastus (files eastus-skus.json")


def test_a_size_restricted_for_the_subscription_is_not_offered():
    facts = recorded()
    restricted = dataclasses.replace(facts.skus[H100], restriction="NotAvailableForSubscription")
    said = fit(GroupPool("h100", H100), dataclasses.replace(facts, skus={**facts.skus, H100: restricted}), "eastus", {})
    assert (said.verdict, said.why) == (Verdict.NOT_OFFERED, "not offered to this subscription in eastus (NotAvailableForSubscription)")


def test_a_family_without_quota_for_one_node_says_the_quota_and_its_numbers():
    said = fit(GroupPool("t4", T4), recorded(), "eastus", {})
    assert said.verdict is Verdict.NO_QUOTA
    assert said.why == (
        "no quota for one node of 4 vCPUs: 'Standard NCASv3_T4 Family vCPUs' (standardNCASv3_T4Family) has 0 vCPUs free "
        "in eastus (limit 0, 0 in use)"
    )


def test_quota_for_one_node_is_enough_and_the_free_nodes_are_the_fewest_any_quota_holds():
    facts = recorded(standardNCASv3_T4Family=(0, 8), cores=(90, 100))
    assert verdicts([GroupPool("t4", T4), GroupPool("t4b", T4_8)], facts) == [("t4", Verdict.RUNS, 2), ("t4b", Verdict.RUNS, 1)]


def test_a_spot_pool_draws_on_the_spot_quota_not_its_family():
    """azure-aks-docs spot-node-pool.md: Spot VMs count against the regional Spot quota."""
    said = fit(GroupPool("a100", A100, spot=True), recorded(), "eastus", {})
    assert said.verdict is Verdict.NO_QUOTA and "no quota for one Spot node of 24 vCPUs" in said.why
    assert "(lowPriorityCores) has 0 vCPUs free" in said.why and "A100" not in said.why
    assert fit(GroupPool("a100", A100, spot=True), recorded(lowPriorityCores=(0, 24)), "eastus", {}).verdict is Verdict.RUNS


def test_what_the_rest_of_the_run_starts_is_not_free_for_the_group():
    facts = recorded()
    said = fit(GroupPool("a100", A100), facts, "eastus", {"cores": 70})
    assert said.verdict is Verdict.NO_QUOTA
    assert (
        "'Total Regional vCPUs' (cores) has 18 vCPUs free in eastus (limit 100, 12 in use, 70 of them for the rest of this run)" in said.why
    )
    assert fit(GroupPool("a100", A100), facts, "eastus", {"cores": 64}).free_nodes == 1


def test_the_created_clusters_system_pool_is_drawn_from_the_regional_quota():
    cfg = parsed(
        gpuPool={"vmSize": T4, "nodeCount": 0, "minCount": 0, "maxCount": 2}, systemPool={"vmSize": "Standard_D4s_v5", "nodeCount": 3}
    )
    needs = capacity.pool_needs(capacity.Demand(cfg.pools, False, cfg.system_pool), recorded())
    assert capacity.drawn(needs, recorded()) == {"standardNCASv3_T4Family": 0, "cores": 12, "standardDSv5Family": 12}


def test_without_azures_answers_or_a_quota_by_that_name_a_size_is_not_checked_and_kept():
    assert fit(GroupPool("a100", A100), None, "eastus", {}).verdict is Verdict.NOT_CHECKED
    facts = recorded()
    unnamed = dataclasses.replace(facts, usages={k: v for k, v in facts.usages.items() if k != "StandardNCADSA100v4Family"})
    said = fit(GroupPool("a100", A100), unnamed, "eastus", {})
    assert (said.verdict, said.verdict.cannot_run) == (Verdict.NOT_CHECKED, False)
    assert said.why == "no quota named StandardNCADSA100v4Family in eastus (files eastus-skus.json, eastus-usage.json)"


# --------------------------------------------------------------------------- the plan: what is dropped, and said

POOLS = {
    "t4": {"vmSize": T4, "minCount": 0, "maxCount": 1},
    "t4b": {"vmSize": T4_8, "minCount": 0, "maxCount": 1},
    "a10": {"vmSize": A10, "minCount": 0, "maxCount": 1},
    "a100": {"vmSize": A100, "minCount": 0, "maxCount": 1},
}


def group_plan(names, mode=Mode.PREVIEW, facts=None, running=None, said=None, **keys):
    """The plan of a created cluster whose gpuPools are `names`, all in one group `inference`, first choice first."""
    cfg = parsed(gpuPools={n: POOLS[n] for n in names}, gpuGroups={"inference": list(names)}, **keys)
    reader = OfflineReader(facts=facts or recorded(), prices=fake_prices.price_list(), pool_modes=running or {})
    return build_plan(cfg, reader, mode, project="aks-gpu", stack="test", environ={}, said=said)


def test_a_group_pool_whose_size_cannot_run_is_dropped_with_one_warning_and_the_deployment_goes_on():
    built = group_plan(["t4", "a10", "a100"], Mode.DEPLOYMENT)
    assert [p.name for p in built.pools.pools] == ["a100"], "what the steps declare"
    assert [a.pool.name for a in built.gpu_pools] == ["a100"] and "t4" not in built.networks
    dropping = [w for w in plan_warnings(built) if "dropping" in w]
    assert dropping == [
        "aks-gpu:gpuGroups.inference: dropping pool t4 (Standard_NC4as_T4_v3): no quota for one node of 4 vCPUs: 'Standard "
        "NCASv3_T4 Family vCPUs' (standardNCASv3_T4Family) has 0 vCPUs free in eastus (limit 0, 0 in use); the group serves "
        "from a100 (Standard_NC24ads_A100_v4)",
        "aks-gpu:gpuGroups.inference: dropping pool a10 (Standard_NV36ads_A10_v5): Azure lists no such size in eastus (files "
        "eastus-skus.json, eastus-usage.json); the group serves from a100 (Standard_NC24ads_A100_v4)",
    ]
    assert not [w for w in plan_warnings(built) if "gpuPools.t4" in w or "gpuPools.a10" in w], "not also today's problems"
    assert {p.node.name for p in built.estimate.pools} == {"a100", "system"}, "a dropped pool is not counted"


def test_outside_a_group_the_same_size_still_stops_a_deployment():
    cfg = parsed(gpuPools={"t4": POOLS["t4"], "a100": POOLS["a100"]})
    with pytest.raises(PreflightError, match=r"- aks-gpu:gpuPools\.t4\.vmSize Standard_NC4as_T4_v3 \(1 x 4 vCPUs\) needs 4 vCPUs"):
        build_plan(cfg, OfflineReader(facts=recorded()), Mode.DEPLOYMENT, project="aks-gpu", stack="test", environ={})


def test_a_pool_that_runs_already_is_never_dropped():
    built = group_plan(["t4", "a100"], Mode.DEPLOYMENT, running={"t4": "device-plugin"})
    assert [p.name for p in built.pools.pools] == ["a100", "t4"]
    [kept] = [w for w in plan_warnings(built) if "inference" in w]
    assert kept.startswith("aks-gpu:gpuGroups.inference: keeping pool t4 (Standard_NC4as_T4_v3), which runs already, though no quota")


def test_a_group_with_no_pool_left_stops_a_deployment_in_one_line_naming_each_size_and_why():
    said = Said()
    with pytest.raises(PreflightError) as error:
        group_plan(["t4", "a10"], Mode.DEPLOYMENT, said=said)
    lines = str(error.value).splitlines()
    assert lines[0].startswith("preflight: Azure would refuse this deployment (1 problem(s); nothing was created")
    assert lines[1] == (
        "- aks-gpu:gpuGroups.inference: no pool of the group can run: t4 (Standard_NC4as_T4_v3): no quota for one node of 4 "
        "vCPUs: 'Standard NCASv3_T4 Family vCPUs' (standardNCASv3_T4Family) has 0 vCPUs free in eastus (limit 0, 0 in use); "
        "a10 (Standard_NV36ads_A10_v5): Azure lists no such size in eastus (files eastus-skus.json, eastus-usage.json); "
        "request quota, or add a size that can run to the group (the config as given is what a preview shows)"
    )


def test_a_preview_warns_of_an_empty_group_and_shows_the_config_as_given():
    built = group_plan(["t4", "a10"])
    [stop] = [w for w in plan_warnings(built) if "no pool of the group can run" in w]
    assert stop.endswith("(a deployment stops here)")
    assert [p.name for p in built.pools.pools] == ["a10", "t4"]


def test_the_proof_asks_one_node_of_a_group_not_one_of_each_of_its_pools():
    """Two T4 pools and quota for one T4 node: two pools of their own need two nodes for their
    two Jobs; a group's one Job needs one."""
    one_node = recorded(standardNCASv3_T4Family=(0, 4))
    pools = {"t4": POOLS["t4"], "t4z": POOLS["t4"]}
    with pytest.raises(PreflightError, match=r"\(1 x 4 vCPUs\) need 8 vCPUs of 'Standard NCASv3_T4 Family vCPUs'"):
        build_plan(parsed(gpuPools=pools), OfflineReader(facts=one_node), Mode.DEPLOYMENT, project="aks-gpu", stack="test", environ={})
    grouped = parsed(gpuPools=pools, gpuGroups={"inference": ["t4", "t4z"]})
    built = build_plan(grouped, OfflineReader(facts=one_node), Mode.DEPLOYMENT, project="aks-gpu", stack="test", environ={})
    assert [p.name for p in built.pools.pools] == ["t4", "t4z"], "the deployment goes on with both"
    [grows] = [w for w in plan_warnings(built) if "vCPUs" in w]
    assert "(0 x 4 vCPUs) may grow to 8 vCPUs" in grows, "their maxCount, still said"


def test_a_maxcount_the_quota_cannot_hold_is_still_said_for_each_pool_of_a_group():
    pools = {"t4": {**POOLS["t4"], "maxCount": 3}, "a100": POOLS["a100"]}
    cfg = parsed(gpuPools=pools, gpuGroups={"inference": ["t4", "a100"]})
    built = build_plan(
        cfg, OfflineReader(facts=recorded(standardNCASv3_T4Family=(0, 4))), Mode.PREVIEW, project="aks-gpu", stack="test", environ={}
    )
    [grows] = [w for w in plan_warnings(built) if "may grow" in w]
    assert grows.startswith("aks-gpu:gpuPools.t4.vmSize Standard_NC4as_T4_v3 (0 x 4 vCPUs) may grow to 12 vCPUs")


# --------------------------------------------------------------------------- cost: the ceiling counts every size

T4_QUOTA = {"standardNCASv3_T4Family": (0, 16)}


def test_the_group_line_says_each_size_in_order_with_its_price_and_the_priciest():
    built = group_plan(["t4", "t4b", "a100"], facts=recorded(**T4_QUOTA))
    [line] = [i for i in plan_infos(built) if i.startswith("aks-gpu:gpuGroups.inference")]
    assert line == (
        "aks-gpu:gpuGroups.inference: serves from t4 (Standard_NC4as_T4_v3, 0.53 USD per node-hour), then t4b "
        "(Standard_NC8as_T4_v3, 0.75 USD per node-hour), then a100 (Standard_NC24ads_A100_v4, 3.67 USD per node-hour); the cost "
        "ceiling counts every size at its maxCount, the priciest Standard_NC24ads_A100_v4 (a100)"
    )


def test_the_group_line_prices_a_spot_size_at_the_most_it_may_be_billed_and_names_the_priciest_by_it():
    """A Spot A100 with no cap: today's Spot price (0.73) is under the T4's pay-as-you-go 0.75,
    but Azure may bill it up to its pay-as-you-go 3.67, which the line and the ceiling count."""
    pools = {"t4b": POOLS["t4b"], "a100": {**POOLS["a100"], "spot": True}}
    cfg = parsed(gpuPools=pools, gpuGroups={"inference": ["t4b", "a100"]})
    reader = OfflineReader(facts=recorded(lowPriorityCores=(0, 24), **T4_QUOTA), prices=fake_prices.price_list())
    built = build_plan(cfg, reader, Mode.PREVIEW, project="aks-gpu", stack="test", environ={})
    [line] = [i for i in plan_infos(built) if i.startswith("aks-gpu:gpuGroups.inference")]
    assert line == (
        "aks-gpu:gpuGroups.inference: serves from t4b (Standard_NC8as_T4_v3, 0.75 USD per node-hour), then a100 "
        "(Standard_NC24ads_A100_v4 Spot, 3.67 USD per node-hour); the cost ceiling counts every size at its maxCount, "
        "the priciest Standard_NC24ads_A100_v4 (a100)"
    )


def test_a_cost_limit_between_the_first_size_and_the_last_is_refused():
    """The autoscaler may fill one pool and go on to the next while pods wait: every size counts at its maxCount."""
    said = Said()
    with pytest.raises(CostError, match=r"^aks-gpu:cost\.maxHourly = 2\.00 USD: the stack may cost up to 5\.05 USD per hour"):
        group_plan(["t4", "t4b", "a100"], Mode.DEPLOYMENT, facts=recorded(**T4_QUOTA), said=said, cost={"maxHourly": 2.0})
    assert group_plan(["t4", "t4b", "a100"], facts=recorded(**T4_QUOTA), cost={"maxHourly": 5.05}).estimate.most_hourly <= 5.05


def test_a_spot_pool_of_a_group_counts_at_its_cap():
    pools = {"t4": POOLS["t4"], "a100": {**POOLS["a100"], "spot": True, "spotMaxPrice": 4.5}}
    cfg = parsed(gpuPools=pools, gpuGroups={"inference": ["t4", "a100"]}, cost={"maxHourly": 5.0})
    facts = recorded(lowPriorityCores=(0, 24), **T4_QUOTA)
    reader = OfflineReader(facts=facts, prices=fake_prices.price_list())
    with pytest.raises(CostError, match=r"the stack may cost up to 5\.12 USD per hour"):
        build_plan(cfg, reader, Mode.DEPLOYMENT, project="aks-gpu", stack="test", environ={})


def test_the_budget_says_it_cannot_cover_a_group_at_every_size():
    budget = {"amount": 2000, "contactEmails": ["ml@example.com"]}
    built = group_plan(["t4", "t4b", "a100"], facts=recorded(**T4_QUOTA), cost={"budget": budget})
    [line] = [i for i in plan_infos(built) if i.startswith("cost: budget")]
    assert line.endswith("; below the stack's most per month, 3,684.31 USD: it cannot cover the worst case")


# --------------------------------------------------------------------------- the program: a dropped pool is not declared


def test_a_dropped_pool_is_not_declared(facts):
    overrides = {
        "gpuPool": None,
        "gpuPools": {n: POOLS[n] for n in ("t4", "a10", "a100")},
        "gpuGroups": {"inference": ["t4", "a10", "a100"]},
        "preflight": facts(),
    }
    run = run_program("dev", overrides=overrides, preview=False)
    assert [r.inputs["agentPoolName"] for r in run.of_type("azure-native:containerservice:AgentPool")] == ["a100"]
