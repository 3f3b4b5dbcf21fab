"""The cost figures at their edges, where a team relies on them: a stack exactly at its limit,
node counts in plain words, Spot caps at and around today's price, a list in another
currency, a pool the list cannot price beside pools it can, the output's rounding, and what a
failed price lookup says. (The figures in general: test_cost.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fake_prices
import pytest

from components.azure import cost, prices
from components.azure.live_reader import LiveReader
from components.config import parse
from components.errors import CostError
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"


def saved_list(tmp_path: Path, items: list[dict[str, Any]], name: str = "prices.json") -> str:
    path = tmp_path / name
    path.write_text(fake_prices.saved(items))
    return str(path)


def exact(t4: float, system: float) -> list[dict[str, Any]]:
    """The dev stack's two sizes at prices of the caller's choosing."""
    return [
        *fake_prices.family(T4, "NC4as T4 v3", "NCasT4_v3", "eastus", t4, t4 / 10),
        *fake_prices.family("Standard_D2s_v5", "D2s v5", "Dsv5", "eastus", system, system / 10),
    ]


def estimated(run) -> dict[str, Any]:
    return run.outputs["estimatedCost"].value


# --------------------------------------------------------------------------- the limit


@pytest.mark.parametrize("limit, deploys", [(0.75, True), (0.74, False)])
def test_a_stack_exactly_at_its_hourly_limit_deploys_and_one_cent_over_it_stops(tmp_path, limit, deploys):
    """One T4 node at 0.50 and one System node at 0.25 cost 0.75 an hour: a limit of 0.75
    lets the deployment through, 0.74 stops it before anything is created."""
    overrides = {
        "gpuPool": {"vmSize": T4},
        "preflight": {"pricesFile": saved_list(tmp_path, exact(0.5, 0.25))},
        "cost": {"maxHourly": limit},
    }
    monitor = RecordingMonitor(AzureMocks())
    if deploys:
        run_program("dev", overrides=overrides, monitor=monitor, preview=False)
        assert monitor.registrations
        return
    with pytest.raises(CostError, match=r"may cost up to 0\.75 USD per hour"):
        run_program("dev", overrides=overrides, monitor=monitor, preview=False)
    assert monitor.registrations == []


# --------------------------------------------------------------------------- the preview line


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
    run = run_program("dev", overrides=overrides, preview=True)
    [line] = [i for i in run.infos if i.startswith("cost: aks-gpu:gpuPool ")]
    assert says in line
    gpu = estimated(run)["pools"]["gpu"]
    assert (gpu["leastNodes"], gpu["mostNodes"]) == nodes


# --------------------------------------------------------------------------- Spot


def spot_run(tmp_path, items, **pool) -> Any:
    overrides = {"gpuPool": {"vmSize": T4, "nodeCount": 1, "spot": True, **pool}, "preflight": {"pricesFile": saved_list(tmp_path, items)}}
    return run_program("dev", overrides=overrides, preview=True)


def test_a_spot_max_price_of_minus_one_written_out_is_no_cap(tmp_path):
    """-1 is AKS's "no cap": billed up to pay-as-you-go, so that is the ceiling, not -1."""
    gpu = estimated(spot_run(tmp_path, fake_prices.price_list(), spotMaxPrice=-1))["pools"]["gpu"]
    assert (gpu["ceilingPerNode"], gpu["mostHourly"]) == (fake_prices.T4, fake_prices.T4)


def test_a_cap_exactly_at_todays_spot_price_is_deployed_and_warns_nothing(tmp_path):
    """ "Max price is set to >= the current price: VM is deployed" (spot-vms.md)."""
    run = spot_run(tmp_path, fake_prices.price_list(), spotMaxPrice=fake_prices.T4_SPOT)
    assert not [w for w in run.warnings if "spotMaxPrice" in w]
    assert estimated(run)["pools"]["gpu"]["ceilingPerNode"] == fake_prices.T4_SPOT


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
    run = run_program("dev", overrides=overrides, preview=True)
    out = estimated(run)
    assert out["currency"] == "EUR"
    assert out["pools"]["gpu"]["ceilingPerNode"] == fake_prices.T4, "not the USD cap of 0.01"
    [line] = [i for i in run.infos if i.startswith("cost: aks-gpu:gpuPool ")]
    assert "up to 0.53 EUR (pay-as-you-go: spotMaxPrice is USD, the list EUR)" in line
    assert not [w for w in run.warnings if "spotMaxPrice" in w], "no cap to be below today's price"


def test_a_stack_that_writes_out_cost_currency_usd_compares_its_spot_cap_as_the_default_does(tmp_path):
    """cost.currency: USD in the stack file is the default's currency, read from the file: a
    spotMaxPrice, in US dollars, is compared with the list's dollars and is the ceiling."""
    overrides = {
        "gpuPool": {"vmSize": T4, "nodeCount": 1, "spot": True, "spotMaxPrice": 0.3},
        "preflight": {"pricesFile": saved_list(tmp_path, fake_prices.price_list())},
        "cost": {"currency": "USD"},
    }
    run = run_program("dev", overrides=overrides, preview=True)
    assert estimated(run)["pools"]["gpu"]["ceilingPerNode"] == 0.3
    [line] = [i for i in run.infos if i.startswith("cost: aks-gpu:gpuPool ")]
    assert "up to 0.30 USD (spotMaxPrice)" in line


def test_a_list_in_another_currency_than_cost_currency_prices_nothing(tmp_path):
    """A list in euros for a stack that counts in dollars: no figure is mixed; every pool is
    unpriced, and says in which currency it found no price."""
    euros = [{**item, "currencyCode": "EUR"} for item in fake_prices.price_list()]
    run = spot_run(tmp_path, euros)
    out = estimated(run)
    assert out["currency"] == "USD" and out["pools"] == {} and out["complete"] is False
    assert any(w.startswith("cost: no file ") and " price in USD for aks-gpu:gpuPool.vmSize" in w for w in run.warnings)


def test_a_list_in_dollars_for_a_stack_that_counts_in_euros_prices_nothing(tmp_path):
    """The other way round: cost.currency EUR and a saved list in dollars (every item says
    USD, or, as the API's default, nothing): no dollar figure is passed off as euros."""
    dollars = fake_prices.price_list()
    dollars[::2] = [{k: v for k, v in item.items() if k != "currencyCode"} for item in dollars[::2]]
    overrides = {"gpuPool": {"vmSize": T4}, "preflight": {"pricesFile": saved_list(tmp_path, dollars)}, "cost": {"currency": "EUR"}}
    run = run_program("dev", overrides=overrides, preview=True)
    out = estimated(run)
    assert out["currency"] == "EUR" and out["pools"] == {} and out["complete"] is False
    assert any(w.startswith("cost: no file ") and " price in EUR for aks-gpu:gpuPool.vmSize" in w for w in run.warnings)


# --------------------------------------------------------------------------- pools the list lacks


def test_a_pool_the_list_cannot_price_leaves_the_pools_after_it_priced(tmp_path):
    """gpuPools in name order: `a` (an H100 the list lacks) comes first; `b` and the System
    pool are still priced, and only `a` is missing from the total."""
    overrides = {
        "gpuPool": None,
        "preflight": {"pricesFile": saved_list(tmp_path, fake_prices.price_list())},
        "gpuPools": {"a": {"vmSize": "Standard_NC40ads_H100_v5"}, "b": {"vmSize": T4}},
    }
    out = estimated(run_program("dev", overrides=overrides, preview=True))
    assert set(out["pools"]) == {"b", "system"}
    assert out["missing"] == ["aks-gpu:gpuPools.a Standard_NC40ads_H100_v5 (no price)"]


# --------------------------------------------------------------------------- rounding


def test_the_output_gives_hourly_figures_to_four_decimals_and_monthly_ones_to_two(tmp_path):
    """estimatedCost as a dashboard or a script reads it: 0.123456 + 0.011111 an hour is
    0.1346, and 730 hours of it 98.23."""
    out = estimated(
        run_program(
            "dev",
            overrides={"gpuPool": {"vmSize": T4}, "preflight": {"pricesFile": saved_list(tmp_path, exact(0.123456, 0.011111))}},
            preview=True,
        )
    )
    assert (out["leastHourly"], out["mostHourly"], out["expectedMostHourly"], out["mostMonthly"]) == (0.1346, 0.1346, 0.1346, 98.23)
    gpu = out["pools"]["gpu"]
    assert (gpu["leastHourly"], gpu["mostHourly"], gpu["mostMonthly"], gpu["hourlyPerNode"]) == (0.1235, 0.1235, 90.12, 0.123456)


# --------------------------------------------------------------------------- a failed lookup


def test_a_price_lookup_that_fails_says_why_in_one_line_cut_at_300_characters(monkeypatch):
    """The Retail Prices API's answer can be a page of HTML: the warning keeps its first 300
    characters, on one line, and the deployment goes on."""
    answer = "Service Unavailable\n" + "x" * 500

    def down(*args: Any, **kwargs: Any) -> list:
        raise RuntimeError(answer)

    monkeypatch.setattr(prices, "live", down)
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4})}, "aks-gpu", "dev")
    estimate, lines, warnings = cost.run(cfg, "eastus", LiveReader(), dry_run=False)
    assert estimate is None and lines == []
    [warning] = warnings
    reason = " ".join(answer.split())[:300]
    assert warning == f"cost: not estimated: RuntimeError: {reason}" and len(reason) == 300


@pytest.mark.parametrize("preview", [True, False])
def test_an_existing_cluster_whose_region_was_not_read_warns_that_nothing_is_estimated(preview):
    """Preflight could not read the team's cluster (region None): without a limit the preview
    and the deployment go on, and the missing figures are a warning, not a quiet note."""
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4})}, "aks-gpu", "dev")
    estimate, lines, warnings = cost.run(cfg, None, LiveReader(), dry_run=preview)
    assert estimate is None and lines == []
    assert warnings == ["cost: not estimated: the existing cluster's region is not known (it was not read: see preflight)"]


def test_live_prices_are_asked_in_cost_currency():
    """The API answers in the currency asked for: `currencyCode='EUR'` beside the filter."""
    for api in fake_prices.serve(page_size=50):
        prices.live("eastus", [T4], "EUR", base_url=api.url, timeout=10)
        prices.live("eastus", [T4], base_url=api.url, timeout=10)
        asked = [q.get("currencyCode") for q in api.queries if "$skip" not in q]
    assert asked == [["'EUR'"], ["'USD'"]]
