"""The hourly limit (cost.maxHourly, docs/preflight.md): a preview above it warns, a deployment above
it, or exactly a cent over it, stops before anything is registered, an incomplete total stops
a deployment with a limit, and without prices (cost.withoutPrices) the limit stops it unless
told to go on. (The figures themselves: test_cost_estimate.py.)"""

from __future__ import annotations

import json
from typing import Any

import fake_prices
import pytest
from conftest import run_cached
from fake_prices import saved_list, with_prices
from support.plan import lines

from components.cost import cost, retail_prices
from components.errors import ConfigError, CostError
from components.live_reader import LiveReader
from components.plan import billed
from components.stack import parse
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"


def exact(t4: float, system: float) -> list[dict[str, Any]]:
    """The dev stack's two sizes at prices of the caller's choosing."""
    return [
        *fake_prices.family(T4, "NC4as T4 v3", "NCasT4_v3", "eastus", t4, t4 / 10),
        *fake_prices.family("Standard_D2s_v5", "D2s v5", "Dsv5", "eastus", system, system / 10),
    ]


# --------------------------------------------------------------------------- the limit


def test_a_preview_above_the_limit_warns_with_the_figure_and_the_limit(price_file):
    [warning] = [w for w in lines("prod", **with_prices(price_file, cost={"maxHourly": 2})).warnings if "cost.maxHourly" in w]
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


def test_an_incomplete_total_stops_a_deployment_with_a_limit(price_file):
    monitor = RecordingMonitor(AzureMocks())
    overrides = with_prices(price_file, gpuPool={"vmSize": "Standard_NC40ads_H100_v5"}, cost={"maxHourly": 1000})
    with pytest.raises(CostError, match=r"could not be checked \(the total leaves out aks-gpu:gpuPool Standard_NC40ads_H100_v5"):
        run_program("dev", overrides=overrides, monitor=monitor, preview=False)
    assert monitor.registrations == []


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


# --------------------------------------------------------------------------- without prices


def test_without_prices_a_preview_says_the_limit_stops_the_deployment(monkeypatch):
    """A preview that cannot reach the Retail Prices API prices from the shipped snapshot, but
    never holds the limit against it: the deployment would stop."""
    monkeypatch.setattr(retail_prices, "PRICES_URL", "http://127.0.0.1:9/api/retail/prices")  # nothing listens on port 9
    capped = parse({"aks-gpu:cost": json.dumps({"maxHourly": 0.01})}, "aks-gpu", "dev")
    _, _, warnings = cost.run(billed(capped), "eastus", LiveReader(), dry_run=True)
    [warning] = [w for w in warnings if "maxHourly" in w]
    assert warning.startswith("aks-gpu:cost.maxHourly = 0.01 USD could not be checked (the Retail Prices API was not read, and the shipped")
    assert "set aks-gpu:cost.withoutPrices to deploy" in warning and warning.endswith("(a deployment stops here)")


def test_without_prices_a_deployment_with_a_limit_stops_before_anything_is_registered():
    """A cap fails closed: a deployment that read no prices from the API deploys nothing, the
    shipped snapshot not being today's list."""
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(CostError) as error:
        run_program("prod", overrides={"cost": {"maxHourly": 100}}, monitor=monitor, preview=False)
    assert "\n" not in str(error.value) and str(error.value).endswith("(nothing was created)")
    assert "the shipped snapshot of " in str(error.value)
    assert monitor.registrations == []


def test_without_prices_a_limit_with_without_prices_deploy_goes_on_and_says_so():
    run, _ = run_cached("prod", preview=False, cost={"maxHourly": 0.01, "withoutPrices": "deploy"})
    [warning] = [w for w in run.warnings if "maxHourly" in w]
    assert warning.startswith("aks-gpu:cost.maxHourly = 0.01 USD could not be checked (the Retail Prices API was not read")
    assert warning.endswith("): a deployment goes on without it (aks-gpu:cost.withoutPrices = deploy)")
    assert run.of_type("azure-native:containerservice:AgentPool")


def test_without_prices_says_what_a_limit_does_and_is_refused_without_one():
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:cost\.withoutPrices = 'deploy': only with aks-gpu:cost\.maxHourly"):
        parse({"aks-gpu:cost": json.dumps({"withoutPrices": "deploy"})}, "aks-gpu", "dev")
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:cost\.withoutPrices = 'yes': expected one of stop, deploy$"):
        parse({"aks-gpu:cost": json.dumps({"maxHourly": 1, "withoutPrices": "yes"})}, "aks-gpu", "dev")


def test_prices_that_cannot_be_had_warn_and_stop_only_a_deployment_with_a_limit(monkeypatch):
    monkeypatch.setattr(retail_prices, "PRICES_URL", "http://127.0.0.1:9/api/retail/prices")  # nothing listens on port 9
    free = parse({}, "aks-gpu", "dev")
    est, lines, warnings = cost.run(billed(free), "eastus", LiveReader(), dry_run=False)
    assert est is not None and est.snapshot_date and len(warnings) == 2
    assert warnings[0].startswith("cost: the Retail Prices API could not be read (URLError: ")
    assert warnings[1].startswith("cost: the shipped price snapshot (prices of ") and "Standard_NC6" in warnings[1]
    capped = parse({"aks-gpu:cost": json.dumps({"maxHourly": 1})}, "aks-gpu", "dev")
    with pytest.raises(CostError, match=r"^aks-gpu:cost\.maxHourly = 1\.00 USD could not be checked \(the Retail Prices API was not read"):
        cost.run(billed(capped), "eastus", LiveReader(), dry_run=False)
