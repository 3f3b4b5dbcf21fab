"""A capacity group's sizes held to Azure's facts before anything is created: each listed size
retired, not offered, without quota for one node, or able to run with its free quota in
nodes; plain calls on the saved az CLI answers (tests/fixtures/preflight/)."""

from __future__ import annotations

import dataclasses

from support.config import parsed
from support.preflight import FIXTURES, T4

from components.deciding.azure import capacity
from components.deciding.azure.group_capacity import GroupPool, Verdict, fit, fits
from components.reading import azure_facts

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
