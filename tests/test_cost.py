"""What the stack will cost (docs/cost.md): prices picked from a list full of distractors,
the figures a preview prints and the estimatedCost output, the limit that stops a
deployment, and the live path against a local fake of the API (the budget: test_budget.py)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import fake_prices
import pytest
from conftest import run_cached

from components.azure import cost, prices
from components.azure.live_reader import LiveReader
from components.config import ConfigError, parse
from components.errors import CostError
from tools.azure_mocks import AzureMocks, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

T4, T4_8, A100 = "Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NC24ads_A100_v4"
ITEMS = fake_prices.price_list()


@pytest.fixture(scope="module")
def price_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("prices") / "prices.json"
    path.write_text(fake_prices.saved())
    return str(path)


def with_prices(price_file: str, **overrides):
    return {"preflight": {"pricesFile": price_file}, **overrides}


# --------------------------------------------------------------------------- picking a price


@pytest.mark.parametrize(
    "size, region, spot, expected",
    [
        (T4, "eastus", False, fake_prices.T4),  # not Windows, Spot, Low Priority, DevTest, a reservation, or the older meter
        (T4, "eastus", True, fake_prices.T4_SPOT),  # the Linux Spot meter, not the Windows Spot one
        (T4, "EastUS", False, fake_prices.T4),  # ARM region names compare without case
        (T4, "westeurope", False, 0.631),
        (A100, "westeurope", False, 4.41),
    ],
)
def test_a_node_is_priced_linux_pay_as_you_go_in_its_own_region(size, region, spot, expected):
    price = prices.pick(ITEMS, size, region, spot)
    assert price is not None and price.hourly == pytest.approx(expected) and price.currency == "USD"
    assert ("Spot" in price.meter) == spot and "Windows" not in price.meter


def test_no_price_is_made_up_for_a_size_or_region_the_list_lacks():
    assert prices.pick(ITEMS, "Standard_NC40ads_H100_v5", "eastus", False) is None
    assert prices.pick(ITEMS, A100, "westus2", False) is None


def test_a_list_of_only_distractors_gives_no_price():
    distractors = [
        i
        for i in ITEMS
        if i["armSkuName"] == T4 and i["armRegionName"] == "eastus" and i["retailPrice"] not in (fake_prices.T4, fake_prices.T4_SPOT, 0.6)
    ]
    assert len(distractors) == 6
    assert prices.pick(distractors, T4, "eastus", False) is None


# --------------------------------------------------------------------------- the figures


def test_a_preview_prints_one_line_per_pool_and_the_stack(price_file):
    run, _ = run_cached("prod", **with_prices(price_file))
    lines = [i for i in run.infos if i.startswith("cost:")]
    assert lines == [
        "cost: aks-gpu:gpuPool Standard_NC4as_T4_v3: 0.53 USD per node-hour x 0-3 nodes = 0.00 USD to 1.58 USD per hour, at most 1,151.94 USD per month",
        "cost: aks-gpu:systemPool Standard_D4s_v5: 0.19 USD per node-hour x 3 nodes = 0.58 USD to 0.58 USD per hour, at most 420.48 USD per month",
        "cost: the stack: 0.58 USD to 2.15 USD per hour, at most 1,572.42 USD per month (730 h; VMs only: no disks, egress, "
        "tier fee or taxes; prices from file prices.json)",
    ]


def test_the_estimated_cost_output_carries_the_figures_as_numbers(price_file):
    out = run_cached("prod", **with_prices(price_file))[0].outputs["estimatedCost"].value
    assert (out["currency"], out["leastHourly"], out["mostHourly"], out["mostMonthly"]) == ("USD", 0.576, 2.154, 1572.42)
    gpu = out["pools"]["gpu"]
    assert (gpu["hourlyPerNode"], gpu["leastNodes"], gpu["mostNodes"], gpu["leastHourly"]) == (fake_prices.T4, 0, 3, 0)
    assert out["unpriced"] == []


def test_a_spot_pool_from_zero_costs_nothing_idle_and_counts_at_its_ceiling_at_most(price_file):
    """With no cap (spotMaxPrice -1), a Spot node is billed "the lower price of either the
    current price for a Spot instance or for a standard instance" (spot-node-pool.md): at
    most the pay-as-you-go price, which the most figures count; today's Spot price is shown."""
    pool = {"vmSize": T4, "minCount": 0, "maxCount": 4, "spot": True}
    run = run_cached("dev", **with_prices(price_file, gpuPool=pool))[0]
    out = run.outputs["estimatedCost"].value
    gpu = out["pools"]["gpu"]
    assert (gpu["spot"], gpu["hourlyPerNode"], gpu["ceilingPerNode"], gpu["leastHourly"]) == (True, fake_prices.T4_SPOT, fake_prices.T4, 0)
    assert gpu["mostHourly"] == round(4 * fake_prices.T4, 4) and gpu["mostMonthly"] == round(4 * fake_prices.T4 * 730, 2)
    assert out["expectedMostHourly"] == pytest.approx(4 * fake_prices.T4_SPOT + fake_prices.D2S)
    assert (
        "cost: aks-gpu:gpuPool Standard_NC4as_T4_v3 Spot: 0.05 USD per node-hour at today's Spot price, up to 0.53 USD "
        "(pay-as-you-go: Spot with no cap) x 0-4 nodes = 0.00 USD to 2.10 USD per hour (0.21 USD per hour at today's "
        "Spot price), at most 1,535.92 USD per month"
    ) in run.infos


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
    run = run_program(
        "dev",
        overrides={"preflight": {"pricesFile": str(path)}, "gpuPool": {"vmSize": T4, "spot": True}, "cost": {"maxHourly": 50}},
        preview=True,
    )
    out = run.outputs["estimatedCost"].value
    assert out["complete"] is False and out["pools"]["gpu"]["ceilingPerNode"] is None
    assert out["missing"] == ["aks-gpu:gpuPool Standard_NC4as_T4_v3 (no pay-as-you-go price: its Spot ceiling)"]
    [total] = [i for i in run.infos if i.startswith("cost: the stack:")]
    assert total.startswith("cost: the stack: INCOMPLETE, without aks-gpu:gpuPool Standard_NC4as_T4_v3 (no pay-as-you-go price")
    assert any(
        w.startswith("aks-gpu:cost.maxHourly = 50.00 USD could not be checked (the total leaves out aks-gpu:gpuPool")
        and w.endswith("(a deployment stops here)")
        for w in run.warnings
    ), "a limit fails closed"


def test_an_unpriced_pool_makes_the_total_and_the_limit_say_incomplete(price_file):
    run = run_cached("dev", **with_prices(price_file, gpuPool={"vmSize": "Standard_NC40ads_H100_v5"}, cost={"maxHourly": 10}))[0]
    assert run.outputs["estimatedCost"].value["complete"] is False
    assert [
        i for i in run.infos if i.startswith("cost: the stack: INCOMPLETE, without aks-gpu:gpuPool Standard_NC40ads_H100_v5 (no price):")
    ]
    [warning] = [w for w in run.warnings if "maxHourly" in w]
    assert warning.startswith(
        "aks-gpu:cost.maxHourly = 10.00 USD could not be checked (the total leaves out aks-gpu:gpuPool Standard_NC40ads_H100_v5 "
        "(no price)): a limit that cannot be checked stops a deployment;"
    )


def test_a_spot_max_price_needs_spot_and_a_price_azure_takes():
    for pool, says in [
        ({"vmSize": T4, "spotMaxPrice": 0.2}, "only with aks-gpu:gpuPool.spot = true"),
        ({"vmSize": T4, "spot": True, "spotMaxPrice": 0}, "a price per hour above 0 with at most five decimals, or -1"),
        ({"vmSize": T4, "spot": True, "spotMaxPrice": 0.123456}, "at most five decimals"),
    ]:
        with pytest.raises(ConfigError, match=rf"^invalid config aks-gpu:gpuPool\.spotMaxPrice = .*{says}"):
            run_program("dev", overrides={"gpuPool": pool}, preview=True)


def test_several_pools_are_priced_each_and_summed(price_file):
    pools = {"t4": {"vmSize": T4, "nodeCount": 2}, "big": {"vmSize": T4_8, "minCount": 1, "maxCount": 3}}
    out = run_cached("dev", **with_prices(price_file, gpuPool=None, gpuPools=pools))[0].outputs["estimatedCost"].value
    assert sorted(out["pools"]) == ["big", "system", "t4"]
    system = fake_prices.D2S  # dev's System pool: one Standard_D2s_v5
    assert out["leastHourly"] == pytest.approx(2 * fake_prices.T4 + 1 * fake_prices.T4_8 + system)
    assert out["mostHourly"] == pytest.approx(2 * fake_prices.T4 + 3 * fake_prices.T4_8 + system)


def test_an_existing_clusters_own_system_pool_is_not_counted_and_its_region_is_the_clusters(price_file):
    cluster = existing_cluster(location="westeurope")
    overrides = with_prices(price_file, existingCluster={"resourceGroupName": "team-rg", "name": "team-aks"}, gpuPool={"vmSize": T4})
    out = run_cached("dev", cluster=cluster, **overrides)[0].outputs["estimatedCost"].value
    assert sorted(out["pools"]) == ["gpu"] and out["pools"]["gpu"]["hourlyPerNode"] == 0.631


def test_a_pool_without_a_price_is_left_out_with_a_warning(price_file):
    run, _ = run_cached("dev", **with_prices(price_file, gpuPool={"vmSize": "Standard_NC40ads_H100_v5"}))
    assert (
        "cost: no file prices.json price in USD for aks-gpu:gpuPool.vmSize Standard_NC40ads_H100_v5 in eastus; it is not counted"
        in run.warnings
    )
    assert run.outputs["estimatedCost"].value["unpriced"] == ["aks-gpu:gpuPool Standard_NC40ads_H100_v5"]


def test_an_offline_render_without_a_list_estimates_nothing_and_warns_nothing():
    run, _ = run_cached("prod")
    assert "estimatedCost" not in run.outputs
    assert not [w for w in run.warnings if w.startswith("cost:")]
    assert [i for i in run.infos if i.startswith("cost:")] == [
        "cost: not estimated: the offline render makes no calls to the Retail Prices API; set aks-gpu:preflight.pricesFile to price a saved list"
    ]


# --------------------------------------------------------------------------- the limit


def test_a_preview_above_the_limit_warns_with_the_figure_and_the_limit(price_file):
    run, _ = run_cached("prod", **with_prices(price_file, cost={"maxHourly": 2}))
    [warning] = [w for w in run.warnings if "cost.maxHourly" in w]
    assert warning.startswith("aks-gpu:cost.maxHourly = 2.00 USD: the stack may cost up to 2.15 USD per hour")
    assert warning.endswith("(a deployment stops here)")


@pytest.mark.parametrize("preview", [True, False])
def test_within_the_limit_nothing_is_said_and_the_deployment_goes_on(price_file, preview):
    run, _ = run_cached("prod", preview=preview, **with_prices(price_file, cost={"maxHourly": 2.5}))
    assert not [w for w in run.warnings if "maxHourly" in w]
    assert run.of_type("azure-native:containerservice:ManagedCluster")


def test_a_deployment_above_the_limit_stops_before_anything_is_registered(price_file):
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(CostError) as error:
        run_program("prod", overrides=with_prices(price_file, cost={"maxHourly": 2}), monitor=monitor, preview=False)
    message = str(error.value)
    assert "\n" not in message and message.startswith("aks-gpu:cost.maxHourly = 2.00 USD: the stack may cost up to 2.15 USD per hour")
    assert monitor.registrations == []


def test_without_prices_a_preview_says_the_limit_stops_the_deployment():
    run, _ = run_cached("prod", preview=True, cost={"maxHourly": 0.01})
    [warning] = [w for w in run.warnings if "maxHourly" in w]
    assert warning.startswith("aks-gpu:cost.maxHourly = 0.01 USD could not be checked (no prices; docs/cost.md): a limit that")
    assert "set aks-gpu:cost.withoutPrices to deploy" in warning and warning.endswith("(a deployment stops here)")


def test_without_prices_a_deployment_with_a_limit_stops_before_anything_is_registered():
    """A cap fails closed: a runner with no route to the Retail Prices API deploys nothing."""
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(CostError) as error:
        run_program("prod", overrides={"cost": {"maxHourly": 100}}, monitor=monitor, preview=False)
    assert "\n" not in str(error.value) and str(error.value).endswith("(nothing was created)")
    assert monitor.registrations == []


@pytest.mark.parametrize("preview", [True, False])
def test_without_prices_a_limit_with_without_prices_deploy_goes_on_and_says_so(preview):
    run, _ = run_cached("prod", preview=preview, cost={"maxHourly": 0.01, "withoutPrices": "deploy"})
    assert (
        "aks-gpu:cost.maxHourly = 0.01 USD could not be checked (no prices; docs/cost.md): a deployment goes on without it "
        "(aks-gpu:cost.withoutPrices = deploy)"
    ) in run.warnings
    assert run.of_type("azure-native:containerservice:AgentPool")


def test_an_incomplete_total_stops_a_deployment_with_a_limit(price_file):
    monitor = RecordingMonitor(AzureMocks())
    overrides = with_prices(price_file, gpuPool={"vmSize": "Standard_NC40ads_H100_v5"}, cost={"maxHourly": 1000})
    with pytest.raises(CostError, match=r"could not be checked \(the total leaves out aks-gpu:gpuPool Standard_NC40ads_H100_v5"):
        run_program("dev", overrides=overrides, monitor=monitor, preview=False)
    assert monitor.registrations == []


def test_without_prices_says_what_a_limit_does_and_is_refused_without_one():
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:cost\.withoutPrices = 'deploy': only with aks-gpu:cost\.maxHourly"):
        parse({"aks-gpu:cost": json.dumps({"withoutPrices": "deploy"})}, "aks-gpu", "dev")
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:cost\.withoutPrices = 'yes': expected one of stop, deploy$"):
        parse({"aks-gpu:cost": json.dumps({"maxHourly": 1, "withoutPrices": "yes"})}, "aks-gpu", "dev")


# --------------------------------------------------------------------------- the live path


@pytest.fixture
def api():
    yield from fake_prices.serve(page_size=7)


def test_the_live_path_follows_next_page_link_to_the_end(api):
    items = prices.live("eastus", [T4, "Standard_D4s_v5"], base_url=api.url, timeout=10)
    assert len(items) == len(ITEMS) and len(api.queries) == -(-len(ITEMS) // 7)
    first = api.queries[0]
    assert first["api-version"] == ["2023-01-01-preview"]
    assert first["$filter"] == [
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq 'eastus' "
        "and (armSkuName eq 'Standard_D4s_v5' or armSkuName eq 'Standard_NC4as_T4_v3')"
    ]
    assert prices.pick(items, T4, "eastus", False).hourly == fake_prices.T4


def test_a_live_estimate_equals_the_saved_ones(api, monkeypatch, price_file):
    monkeypatch.setattr(prices, "PRICES_URL", api.url)
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4, "minCount": 0, "maxCount": 3})}, "aks-gpu", "dev")
    est, lines, warnings = cost.run(cfg, "eastus", LiveReader(), dry_run=True)
    assert warnings == [] and est.source == "the Azure Retail Prices API"
    saved = cost.estimate(cfg, prices.from_file(Path(price_file)).items, "eastus", "file")
    assert (est.least_hourly, est.most_hourly) == (saved.least_hourly, saved.most_hourly)


def test_prices_that_cannot_be_had_warn_and_stop_only_a_deployment_with_a_limit(monkeypatch):
    monkeypatch.setattr(prices, "PRICES_URL", "http://127.0.0.1:9/api/retail/prices")  # nothing listens on port 9
    free = parse({}, "aks-gpu", "dev")
    est, lines, warnings = cost.run(free, "eastus", LiveReader(), dry_run=False)
    assert est is None and lines == [] and len(warnings) == 1 and warnings[0].startswith("cost: not estimated: URLError")
    capped = parse({"aks-gpu:cost": json.dumps({"maxHourly": 1})}, "aks-gpu", "dev")
    with pytest.raises(CostError, match=r"^aks-gpu:cost\.maxHourly = 1\.00 USD could not be checked \(no prices; docs/cost\.md\)"):
        cost.run(capped, "eastus", LiveReader(), dry_run=False)


@pytest.mark.parametrize(
    "cost_config, match",
    [
        ({"maxHourly": 0}, r"^invalid config aks-gpu:cost\.maxHourly = 0: expected a number greater than 0$"),
        ({"maxHourly": "ten"}, r"^invalid config aks-gpu:cost\.maxHourly = 'ten': expected a number greater than 0$"),
        (
            {"budget": {"amount": -5, "contactEmails": ["a@example.com"]}},
            r"^invalid config aks-gpu:cost\.budget\.amount = -5: expected a number greater than 0$",
        ),
        (
            {"budget": {"amount": 5, "contactEmails": ["not-an-address"]}},
            r"^invalid config aks-gpu:cost\.budget\.contactEmails\[0\] = 'not-an-address': expected an e-mail address",
        ),
        (
            {"budget": {"amount": 5, "contactEmails": []}},
            r"^invalid config aks-gpu:cost\.budget\.contactEmails = \[\]: expected a list of 1 to 50 e-mail addresses$",
        ),
        ({"budget": {"amount": 5}}, r"^invalid config aks-gpu:cost\.budget\.contactEmails is missing"),
    ],
)
def test_bad_cost_settings_are_one_line_errors(cost_config, match):
    with pytest.raises(ConfigError, match=match):
        parse({"aks-gpu:cost": json.dumps(cost_config)}, "aks-gpu", "dev")


def test_a_missing_prices_file_names_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:preflight\.pricesFile = 'nope\.json': expected an existing file"):
        parse({"aks-gpu:preflight": json.dumps({"pricesFile": "nope.json"})}, "aks-gpu", "dev", root=tmp_path)


def test_the_offline_render_prints_the_figures_when_a_price_list_is_given(price_file, tmp_path):
    from tools import render

    run, _ = run_cached("prod", **with_prices(price_file))
    text = render.unfold(render.summary(run, tmp_path))
    assert "cost: the stack: 0.58 USD to 2.15 USD per hour, at most 1,572.42 USD per month" in text


def test_make_prices_saves_every_stacks_sizes_with_its_date_and_make_render_prices_from_it(tmp_path, monkeypatch, capsys):
    """No network here: the fake API answers. `make render` then prices every stack without one."""
    from tools import prices as save_prices
    from tools import render

    for api in fake_prices.serve(page_size=7):
        saved = save_prices.save(
            tmp_path / "retail-prices.json", ["dev", "prod", "team"], base_url=api.url, today=datetime.date(2026, 11, 25)
        )
        filters = [q["$filter"][0] for q in api.queries if "$skip" not in q]
    assert saved["savedAt"] == "2026-11-25" and saved["regions"] == {
        "eastus USD": ["Standard_D2s_v5", "Standard_D4s_v5", "Standard_NC24ads_A100_v4", "Standard_NC4as_T4_v3", "Standard_NC6"]
    }
    assert filters == [prices.price_filter("eastus", saved["regions"]["eastus USD"])], "one query per region and currency"
    monkeypatch.setattr(render, "SAVED_PRICES", tmp_path / "retail-prices.json")
    assert render.main(["--stack", "prod", "--out", str(tmp_path / "out")]) == 0
    out = render.unfold(capsys.readouterr().out)
    assert "cost: the stack: 0.58 USD to 2.15 USD per hour" in out and "prices from file retail-prices.json, saved 2026-11-25)" in out


def test_a_spot_cap_below_todays_spot_price_warns_that_the_pool_gets_no_node_and_expects_no_more_than_the_cap(price_file):
    """Today's Spot T4 is 0.0526 USD; a cap of 0.01 deploys no VM ("max price needs to be >=
    current price"), so the preview says so, and the expected figure never passes the ceiling."""
    pool = {"vmSize": T4, "nodeCount": 2, "spot": True, "spotMaxPrice": 0.01}
    run = run_cached("dev", **with_prices(price_file, gpuPool=pool))[0]
    [warning] = [w for w in run.warnings if "spotMaxPrice" in w]
    assert warning.startswith(
        "cost: aks-gpu:gpuPool.spotMaxPrice = 0.01 USD is below today's Spot price of Standard_NC4as_T4_v3 in eastus (0.05 USD)"
    )
    assert "Azure deploys no Spot VM whose max price is below the current price" in warning
    gpu = run.outputs["estimatedCost"].value["pools"]["gpu"]
    assert (gpu["ceilingPerNode"], gpu["mostHourly"]) == (0.01, 0.02)
    out = run.outputs["estimatedCost"].value
    assert out["expectedMostHourly"] == pytest.approx(0.02 + fake_prices.D2S), "at the cap, not at today's higher Spot price"


def test_a_spot_cap_above_todays_spot_price_warns_nothing(price_file):
    run = run_cached("dev", **with_prices(price_file, gpuPool={"vmSize": T4, "nodeCount": 1, "spot": True, "spotMaxPrice": 0.25}))[0]
    assert not [w for w in run.warnings if "spotMaxPrice" in w]
