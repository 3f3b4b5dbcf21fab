"""Spot GPU pools (gpuPool.spot, spotMaxPrice): evicted nodes deleted, the spot taint tolerated by
what runs there, and the cost: a pool from zero costs nothing idle, its cap is
its ceiling (even above pay-as-you-go), and a cap below today's Spot price gets no node."""

from __future__ import annotations

import json

import fake_prices
import pytest
from conftest import run_cached
from fake_prices import saved_list, with_prices
from support.plan import estimated_cost, plan_infos, plan_warnings, planned

from components.errors import ConfigError, CostError
from components.plan import Plan
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
POOL = "azure-native:containerservice:AgentPool"
JOB = "kubernetes:batch/v1:Job"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
RELEASE = "kubernetes:helm.sh/v3:Release"
ITEMS = fake_prices.price_list()


def spot_plan(tmp_path, items, **pool) -> Plan:
    """The dev stack's preview with one Spot pool, priced from `items`: its plan (support/plan.py)."""
    return planned(
        "dev", gpuPool={"vmSize": T4, "nodeCount": 1, "spot": True, **pool}, preflight={"pricesFile": saved_list(tmp_path, items)}
    )


def run(**overrides):
    return run_cached("dev", **overrides)[0]


def tolerations(run, type_):
    name = "nvidia-device-plugin-daemonset" if type_ == DAEMONSET else None
    return run.one(type_, name).inputs["spec"]["template"]["spec"]["tolerations"]


# --------------------------------------------------------------------------- the cost of a Spot pool


def test_a_spot_pool_from_zero_costs_nothing_idle_and_counts_at_its_ceiling_at_most(price_file):
    """With no cap (spotMaxPrice -1), a Spot node is billed "the lower price of either the
    current price for a Spot instance or for a standard instance" (spot-node-pool.md): at
    most the pay-as-you-go price, which the most figures count; today's Spot price is shown."""
    pool = {"vmSize": T4, "minCount": 0, "maxCount": 4, "spot": True}
    plan = planned("dev", **with_prices(price_file, gpuPool=pool))
    out = estimated_cost(plan)
    gpu = out["pools"]["gpu"]
    assert (gpu["spot"], gpu["hourlyPerNode"], gpu["ceilingPerNode"], gpu["leastHourly"]) == (True, fake_prices.T4_SPOT, fake_prices.T4, 0)
    assert gpu["mostHourly"] == round(4 * fake_prices.T4, 4) and gpu["mostMonthly"] == round(4 * fake_prices.T4 * 730, 2)
    assert out["expectedMostHourly"] == pytest.approx(4 * fake_prices.T4_SPOT + fake_prices.D2S)
    assert (
        "cost: aks-gpu:gpuPool Standard_NC4as_T4_v3 Spot: 0.05 USD per node-hour at today's Spot price, up to 0.53 USD "
        "(pay-as-you-go: Spot with no cap) x 0-4 nodes = 0.00 USD to 2.10 USD per hour (0.21 USD per hour at today's "
        "Spot price), at most 1,535.92 USD per month"
    ) in plan_infos(plan)


@pytest.mark.parametrize("cap, ceiling", [(0.1, 0.1), (0.25, 0.25), (5, 5)])
def test_a_spot_max_price_is_the_ceiling_even_above_pay_as_you_go(price_file, cap, ceiling):
    """Azure's Spot page bounds the charge by the standard price only for -1; with a cap, the
    cap is what the configuration allows, so the limit counts it."""
    pool = {"vmSize": T4, "nodeCount": 2, "spot": True, "spotMaxPrice": cap}
    run = run_cached("dev", **with_prices(price_file, gpuPool=pool))[0]
    assert run.one("azure-native:containerservice:AgentPool").inputs["spotMaxPrice"] == cap, "AKS's own field"
    gpu = run.outputs["estimatedCost"].value["pools"]["gpu"]
    assert (gpu["ceilingPerNode"], gpu["mostHourly"]) == (ceiling, round(2 * ceiling, 4))


def test_the_limit_stops_a_spot_deployment_that_only_todays_spot_price_would_let_through(price_file):
    """Two Spot T4 nodes: 0.11 USD an hour at today's Spot price, up to 1.05 at pay-as-you-go."""
    overrides = with_prices(price_file, gpuPool={"vmSize": T4, "nodeCount": 2, "spot": True}, cost={"maxHourly": 1})
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(CostError, match=r"the stack may cost up to 1\.15 USD per hour"):
        run_program("dev", overrides=overrides, monitor=monitor, preview=False)
    assert monitor.registrations == []


def test_a_spot_pool_without_a_pay_as_you_go_price_makes_the_total_incomplete_everywhere(price_file, tmp_path):
    spot_only = [i for i in ITEMS if not (i["armSkuName"] == T4 and "Spot" not in i["skuName"])]
    path = tmp_path / "spot-only.json"
    path.write_text(json.dumps({"Items": spot_only}))
    plan = planned("dev", preflight={"pricesFile": str(path)}, gpuPool={"vmSize": T4, "spot": True}, cost={"maxHourly": 50})
    out = estimated_cost(plan)
    assert out["complete"] is False and out["pools"]["gpu"]["ceilingPerNode"] is None
    assert out["missing"] == ["aks-gpu:gpuPool Standard_NC4as_T4_v3 (no pay-as-you-go price: its Spot ceiling)"]
    [total] = [i for i in plan_infos(plan) if i.startswith("cost: the stack:")]
    assert total.startswith("cost: the stack: INCOMPLETE, without aks-gpu:gpuPool Standard_NC4as_T4_v3 (no pay-as-you-go price")
    assert any(
        w.startswith("aks-gpu:cost.maxHourly = 50.00 USD could not be checked (the total leaves out aks-gpu:gpuPool")
        and w.endswith("(a deployment stops here)")
        for w in plan_warnings(plan)
    ), "a limit fails closed"


def test_a_spot_max_price_needs_spot_and_a_price_azure_takes():
    for pool, says in [
        ({"vmSize": T4, "spotMaxPrice": 0.2}, "only with aks-gpu:gpuPool.spot = true"),
        ({"vmSize": T4, "spot": True, "spotMaxPrice": 0}, "a price per hour above 0 with at most five decimals, or -1"),
        ({"vmSize": T4, "spot": True, "spotMaxPrice": 0.123456}, "at most five decimals"),
    ]:
        with pytest.raises(ConfigError, match=rf"^invalid config aks-gpu:gpuPool\.spotMaxPrice = .*{says}"):
            planned("dev", gpuPool=pool)


def test_a_spot_cap_below_todays_spot_price_warns_that_the_pool_gets_no_node_and_expects_no_more_than_the_cap(price_file):
    """Today's Spot T4 is 0.0526 USD; a cap of 0.01 deploys no VM ("max price needs to be >=
    current price"), so the preview says so, and the expected figure never passes the ceiling."""
    pool = {"vmSize": T4, "nodeCount": 2, "spot": True, "spotMaxPrice": 0.01}
    plan = planned("dev", **with_prices(price_file, gpuPool=pool))
    [warning] = [w for w in plan_warnings(plan) if "spotMaxPrice" in w]
    assert warning.startswith(
        "cost: aks-gpu:gpuPool.spotMaxPrice = 0.01 USD is below today's Spot price of Standard_NC4as_T4_v3 in eastus (0.05 USD)"
    )
    assert "Azure deploys no Spot VM whose max price is below the current price" in warning
    out = estimated_cost(plan)
    gpu = out["pools"]["gpu"]
    assert (gpu["ceilingPerNode"], gpu["mostHourly"]) == (0.01, 0.02)
    assert out["expectedMostHourly"] == pytest.approx(0.02 + fake_prices.D2S), "at the cap, not at today's higher Spot price"


def test_a_spot_cap_above_todays_spot_price_warns_nothing(price_file):
    plan = planned("dev", **with_prices(price_file, gpuPool={"vmSize": T4, "nodeCount": 1, "spot": True, "spotMaxPrice": 0.25}))
    assert not [w for w in plan_warnings(plan) if "spotMaxPrice" in w]


def test_a_spot_max_price_of_minus_one_written_out_is_no_cap(tmp_path):
    """-1 is AKS's "no cap": billed up to pay-as-you-go, so that is the ceiling, not -1."""
    gpu = estimated_cost(spot_plan(tmp_path, fake_prices.price_list(), spotMaxPrice=-1))["pools"]["gpu"]
    assert (gpu["ceilingPerNode"], gpu["mostHourly"]) == (fake_prices.T4, fake_prices.T4)


def test_a_cap_exactly_at_todays_spot_price_is_deployed_and_warns_nothing(tmp_path):
    """ "Max price is set to >= the current price: VM is deployed" (spot-vms.md)."""
    plan = spot_plan(tmp_path, fake_prices.price_list(), spotMaxPrice=fake_prices.T4_SPOT)
    assert not [w for w in plan_warnings(plan) if "spotMaxPrice" in w]
    assert estimated_cost(plan)["pools"]["gpu"]["ceilingPerNode"] == fake_prices.T4_SPOT


def test_a_list_in_another_currency_is_priced_in_it_and_a_dollar_cap_is_not_compared_with_it(tmp_path):
    """cost.currency EUR: the API answers in the currency asked for (its currencyCode
    parameter); a cap is in US dollars, so against a list in euros the ceiling is
    pay-as-you-go, and it says why."""
    euros = [{**item, "currencyCode": "EUR"} for item in fake_prices.price_list()]
    overrides = {
        "gpuPool": {"vmSize": T4, "nodeCount": 1, "spot": True, "spotMaxPrice": 0.01},
        "preflight": {"pricesFile": saved_list(tmp_path, euros)},
        "cost": {"currency": "EUR"},
    }
    plan = planned("dev", **overrides)
    out = estimated_cost(plan)
    assert out["currency"] == "EUR"
    assert out["pools"]["gpu"]["ceilingPerNode"] == fake_prices.T4, "not the USD cap of 0.01"
    [line] = [i for i in plan_infos(plan) if i.startswith("cost: aks-gpu:gpuPool ")]
    assert "up to 0.53 EUR (pay-as-you-go: spotMaxPrice is USD, the list EUR)" in line
    assert not [w for w in plan_warnings(plan) if "spotMaxPrice" in w], "no cap to be below today's price"


def test_a_stack_that_writes_out_cost_currency_usd_compares_its_spot_cap_as_the_default_does(tmp_path):
    """cost.currency: USD in the stack file is the default's currency, read from the file: a
    spotMaxPrice, in US dollars, is compared with the list's dollars and is the ceiling."""
    overrides = {
        "gpuPool": {"vmSize": T4, "nodeCount": 1, "spot": True, "spotMaxPrice": 0.3},
        "preflight": {"pricesFile": saved_list(tmp_path, fake_prices.price_list())},
        "cost": {"currency": "USD"},
    }
    plan = planned("dev", **overrides)
    assert estimated_cost(plan)["pools"]["gpu"]["ceilingPerNode"] == 0.3
    [line] = [i for i in plan_infos(plan) if i.startswith("cost: aks-gpu:gpuPool ")]
    assert "up to 0.30 USD (spotMaxPrice)" in line


# --------------------------------------------------------------------------- evictions and the spot taint


def test_spot_pools_delete_on_eviction_without_a_price_cap(program):
    pool = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "spot": True}).one(POOL).inputs
    assert (pool["scaleSetPriority"], pool["scaleSetEvictionPolicy"], pool["spotMaxPrice"]) == ("Spot", "Delete", -1)
    assert pool["nodeTaints"] == ["sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]


def test_the_device_plugin_and_the_job_tolerate_the_spot_taint(program):
    run = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "spot": True})
    spot = {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
    assert spot in tolerations(run, JOB)
    assert spot in tolerations(run, DAEMONSET)


def test_regular_pools_have_no_spot_settings(dev):
    pool = dev.one(POOL).inputs
    assert not {"scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice"} & set(pool)
    assert all("scalesetpriority" not in t["key"] for t in tolerations(dev, JOB))


def test_the_operator_also_tolerates_a_spot_pool():
    values = run(gpuPool={"vmSize": T4, "management": "gpu-operator", "spot": True}).one(RELEASE).inputs["values"]
    assert any(t["key"] == "kubernetes.azure.com/scalesetpriority" for t in values["daemonsets"]["tolerations"])
