"""What the stack will cost (docs/design/cost.md): the figures a preview prints and the estimatedCost
output, to the cent, pools the list cannot price, and the offline render. (Where a price comes
from: test_prices.py; the limit: test_cost_limit.py; Spot: test_spot.py; the budget:
test_budget.py.) Most read the plan by a plain call (support/plan.py): its lines and the
estimatedCost output made from its estimate; a whole run checks the output is exported."""

from __future__ import annotations

import json
from typing import Any

import fake_prices
import pytest
from conftest import run_cached
from fake_prices import saved_list, with_prices
from support.plan import estimated_cost, lines, plan_infos, plan_warnings, planned

from components.cost import cost
from components.errors import ConfigError
from components.live_reader import LiveReader
from components.plan import billed
from components.stack import parse
from tools.azure_mocks import existing_cluster

T4, T4_8 = "Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3"


def exact(t4: float, system: float) -> list[dict[str, Any]]:
    """The dev stack's two sizes at prices of the caller's choosing."""
    return [
        *fake_prices.family(T4, "NC4as T4 v3", "NCasT4_v3", "eastus", t4, t4 / 10),
        *fake_prices.family("Standard_D2s_v5", "D2s v5", "Dsv5", "eastus", system, system / 10),
    ]


# --------------------------------------------------------------------------- the figures


def test_a_preview_prints_one_line_per_pool_and_the_stack(price_file):
    said = [i for i in lines("prod", **with_prices(price_file)).infos if i.startswith("cost:")]
    assert said == [
        "cost: aks-gpu:gpuPool Standard_NC4as_T4_v3: 0.53 USD per node-hour x 0-3 nodes = 0.00 USD to 1.58 USD per hour, at most 1,151.94 USD per month",
        "cost: aks-gpu:systemPool Standard_D4s_v5: 0.19 USD per node-hour x 3 nodes = 0.58 USD to 0.58 USD per hour, at most 420.48 USD per month",
        "cost: the stack: 0.58 USD to 2.15 USD per hour, at most 1,572.42 USD per month (730 h; VMs only: no disks, egress, "
        "tier fee or taxes; prices from file prices.json)",
    ]


@pytest.mark.parametrize(
    "pool, job, says, nodes",
    [
        ({"nodeCount": 1}, True, "x 1 node =", (1, 1)),
        ({"nodeCount": 2}, True, "x 2 nodes =", (2, 2)),
        ({"nodeCount": 0}, False, "x 0 nodes =", (0, 0)),
        ({"minCount": 0, "maxCount": 1}, True, "x 0-1 nodes =", (0, 1)),
        ({"minCount": 1, "maxCount": 3}, True, "x 1-3 nodes =", (1, 3)),
        # An autoscaler range of one size: a count, not a range (300 is past the integers
        # CPython keeps a single object of, so counts compared by identity would differ).
        ({"minCount": 300, "maxCount": 300}, True, "x 300 nodes =", (300, 300)),
    ],
)
def test_the_preview_line_counts_a_pools_nodes_in_plain_words(tmp_path, pool, job, says, nodes):
    overrides = {
        "gpuPool": {"vmSize": T4, **pool},
        "mnistJob": {"enabled": job},
        "preflight": {"pricesFile": saved_list(tmp_path, exact(0.5, 0.25))},
    }
    plan = planned("dev", **overrides)
    [line] = [i for i in plan_infos(plan) if i.startswith("cost: aks-gpu:gpuPool ")]
    assert says in line
    gpu = estimated_cost(plan)["pools"]["gpu"]
    assert (gpu["leastNodes"], gpu["mostNodes"]) == nodes


def test_the_estimated_cost_output_carries_the_figures_as_numbers(price_file):
    out = run_cached("prod", **with_prices(price_file))[0].outputs["estimatedCost"].value
    assert (out["currency"], out["leastHourly"], out["mostHourly"], out["mostMonthly"]) == ("USD", 0.576, 2.154, 1572.42)
    gpu = out["pools"]["gpu"]
    assert (gpu["hourlyPerNode"], gpu["leastNodes"], gpu["mostNodes"], gpu["leastHourly"]) == (fake_prices.T4, 0, 3, 0)
    assert out["unpriced"] == []


def test_the_output_gives_hourly_figures_to_four_decimals_and_monthly_ones_to_two(tmp_path):
    """estimatedCost as a dashboard or a script reads it: 0.123456 + 0.011111 an hour is
    0.1346, and 730 hours of it 98.23."""
    out = estimated_cost(planned("dev", gpuPool={"vmSize": T4}, preflight={"pricesFile": saved_list(tmp_path, exact(0.123456, 0.011111))}))
    assert (out["leastHourly"], out["mostHourly"], out["expectedMostHourly"], out["mostMonthly"]) == (0.1346, 0.1346, 0.1346, 98.23)
    gpu = out["pools"]["gpu"]
    assert (gpu["leastHourly"], gpu["mostHourly"], gpu["mostMonthly"], gpu["hourlyPerNode"]) == (0.1235, 0.1235, 90.12, 0.123456)


def test_several_pools_are_priced_each_and_summed(price_file):
    pools = {"t4": {"vmSize": T4, "nodeCount": 2}, "big": {"vmSize": T4_8, "minCount": 1, "maxCount": 3}}
    out = estimated_cost(planned("dev", **with_prices(price_file, gpuPool=None, gpuPools=pools)))
    assert sorted(out["pools"]) == ["big", "system", "t4"]
    system = fake_prices.D2S  # dev's System pool: one Standard_D2s_v5
    assert out["leastHourly"] == pytest.approx(2 * fake_prices.T4 + 1 * fake_prices.T4_8 + system)
    assert out["mostHourly"] == pytest.approx(2 * fake_prices.T4 + 3 * fake_prices.T4_8 + system)


def test_an_existing_clusters_own_system_pool_is_not_counted_and_its_region_is_the_clusters(price_file):
    cluster = existing_cluster(location="westeurope")
    overrides = with_prices(price_file, existingCluster={"resourceGroupName": "team-rg", "name": "team-aks"}, gpuPool={"vmSize": T4})
    out = estimated_cost(planned("dev", cluster=cluster, **overrides))
    assert sorted(out["pools"]) == ["gpu"] and out["pools"]["gpu"]["hourlyPerNode"] == 0.631


# --------------------------------------------------------------------------- pools the list lacks


def test_a_pool_without_a_price_is_left_out_with_a_warning(price_file):
    plan = planned("dev", **with_prices(price_file, gpuPool={"vmSize": "Standard_NC40ads_H100_v5"}))
    assert (
        "cost: no file prices.json price in USD for aks-gpu:gpuPool.vmSize Standard_NC40ads_H100_v5 in eastus; it is not counted"
        in plan_warnings(plan)
    )
    assert estimated_cost(plan)["unpriced"] == ["aks-gpu:gpuPool Standard_NC40ads_H100_v5"]


def test_a_pool_the_list_cannot_price_leaves_the_pools_after_it_priced(tmp_path):
    """gpuPools in name order: `a` (an H100 the list lacks) comes first; `b` and the System
    pool are still priced, and only `a` is missing from the total."""
    overrides = {
        "gpuPool": None,
        "preflight": {"pricesFile": saved_list(tmp_path, fake_prices.price_list())},
        "gpuPools": {"a": {"vmSize": "Standard_NC40ads_H100_v5"}, "b": {"vmSize": T4}},
    }
    out = estimated_cost(planned("dev", **overrides))
    assert set(out["pools"]) == {"b", "system"}
    assert out["missing"] == ["aks-gpu:gpuPools.a Standard_NC40ads_H100_v5 (no price)"]


def test_an_unpriced_pool_makes_the_total_and_the_limit_say_incomplete(price_file):
    plan = planned("dev", **with_prices(price_file, gpuPool={"vmSize": "Standard_NC40ads_H100_v5"}, cost={"maxHourly": 10}))
    assert estimated_cost(plan)["complete"] is False
    assert [
        i
        for i in plan_infos(plan)
        if i.startswith("cost: the stack: INCOMPLETE, without aks-gpu:gpuPool Standard_NC40ads_H100_v5 (no price):")
    ]
    [warning] = [w for w in plan_warnings(plan) if "maxHourly" in w]
    assert warning.startswith(
        "aks-gpu:cost.maxHourly = 10.00 USD could not be checked (the total leaves out aks-gpu:gpuPool Standard_NC40ads_H100_v5 "
        "(no price)): a limit that cannot be checked stops a deployment;"
    )


@pytest.mark.parametrize("preview", [True, False])
def test_an_existing_cluster_whose_region_was_not_read_warns_that_nothing_is_estimated(preview):
    """Preflight could not read the team's cluster (region None): without a limit the preview
    and the deployment go on, and the missing figures are a warning, not a quiet note."""
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4})}, "aks-gpu", "dev")
    estimate, lines, warnings = cost.run(billed(cfg), None, LiveReader(), dry_run=preview)
    assert estimate is None and lines == []
    assert warnings == ["cost: not estimated: the existing cluster's region is not known (it was not read: see preflight)"]


# --------------------------------------------------------------------------- the offline render


def test_an_offline_render_without_a_list_prices_from_the_shipped_snapshot_and_warns_nothing():
    plan = planned("prod")
    assert plan.estimate is not None and plan.estimate.snapshot_date, "an estimatedCost output, from the snapshot"
    assert not [w for w in plan_warnings(plan) if w.startswith("cost:")]
    assert [i for i in plan_infos(plan) if i.startswith("cost: the stack:")][0].endswith(
        "prices from the shipped snapshot components/catalog/prices.json, prices of "
        f"{plan.estimate.snapshot_date}, which `make prices` refreshes)"
    )


def test_the_offline_render_prints_the_figures_when_a_price_list_is_given(price_file, tmp_path):
    from tools import render

    run, _ = run_cached("prod", **with_prices(price_file))
    text = render.unfold(render.summary(run, tmp_path))
    assert "cost: the stack: 0.58 USD to 2.15 USD per hour, at most 1,572.42 USD per month" in text


def test_a_missing_prices_file_names_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:preflight\.pricesFile = 'nope\.json': expected an existing file"):
        parse({"aks-gpu:preflight": json.dumps({"pricesFile": "nope.json"})}, "aks-gpu", "dev", root=tmp_path)
