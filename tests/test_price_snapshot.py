"""The shipped price snapshot (components/catalog/prices.json): what it holds, how the render
and a preview use it and say its date, what it lacks, and the proof's node on a pool the stack
uses as it is. Where its prices come from: docs/design/cost.md, "The shipped snapshot"."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import run_cached
from fake_prices import with_prices
from support.plan import lines

from components.catalog import gpu_sizes
from components.cost import cost, prices, retail_prices
from components.errors import CostError
from components.live_reader import LiveReader
from components.plan import billed
from components.proof.job_deadline import job_deadline
from components.stack import parse
from tools import render
from tools.azure_mocks import OfflineReader, existing_cluster

SNAP = prices.snapshot()
T4 = "Standard_NC4as_T4_v3"
UNREACHABLE = "http://127.0.0.1:9/api/retail/prices"  # nothing listens on port 9


def cost_said(said: list[str]) -> list[str]:
    return [line for line in said if line.startswith("cost:") or "cost.maxHourly" in line]


def test_the_prod_stacks_render_prints_a_non_zero_hourly_cost_and_the_snapshots_date(tmp_path):
    """The prod stack as the tests build it (tests/fixtures/stacks/, not the project's sample),
    rendered offline with no pricesFile: priced from the snapshot, whose date the line says."""
    run, _ = run_cached("prod")
    text = render.unfold(render.summary(run, tmp_path))
    [total] = [line for line in text.splitlines() if line.startswith("cost: the stack:")]
    assert total.startswith("cost: the stack: 0.58 USD to 2.15 USD per hour, at most 1,572.42 USD per month")
    assert f"prices from the shipped snapshot components/catalog/prices.json, prices of {SNAP.date}, which `make prices` refreshes" in total
    assert not [w for w in run.warnings if w.startswith("cost:")]


def test_every_snapshot_item_is_a_catalog_size_in_a_catalog_region_at_a_price_above_zero():
    assert SNAP.regions and SNAP.date
    for item in SNAP.listed.items:
        assert item["armSkuName"] in gpu_sizes.CATALOG or item["armSkuName"] in SNAP.system_sizes, item
        assert item["armRegionName"] in SNAP.regions and item["currencyCode"] == "USD", item
        assert item["retailPrice"] > 0 and item["unitOfMeasure"] == "1 Hour" and item["type"] == "Consumption", item
        assert item.get("recordedIn") or item.get("meterId"), f"an item without its source: {item}"


def test_each_snapshot_price_is_one_size_and_region_and_kind_once():
    """`pick` takes the newest of several meters; a transcription that listed one twice would
    hide which was meant."""
    seen = [(i["armSkuName"], i["armRegionName"], "Spot" in i["skuName"]) for i in SNAP.listed.items]
    assert len(seen) == len(set(seen))


def test_the_sample_stacks_sizes_are_priced_by_the_snapshot_in_eastus():
    for size, spot in [
        (T4, False),
        (T4, True),
        ("Standard_NC24ads_A100_v4", False),
        ("Standard_D4s_v5", False),
        ("Standard_D2s_v5", False),
    ]:
        assert prices.pick(SNAP.listed.items, size, "eastus", spot) is not None, (size, spot)


def test_a_stack_whose_size_the_snapshot_lacks_says_so_and_no_total_of_zero():
    """An existing cluster's pool of a retired size (no System pool of the stack's own): nothing
    is priced, and the line says the snapshot lacks it rather than "0.00 to 0.00"."""
    cfg = parse(
        {
            "aks-gpu:existingCluster": json.dumps({"resourceGroupName": "rg", "name": "aks"}),
            "aks-gpu:gpuPool": json.dumps({"vmSize": "Standard_NC6"}),
        },
        "aks-gpu",
        "dev",
    )
    est, said, warnings = cost.run(billed(cfg), "eastus", OfflineReader(), dry_run=True)
    assert est is not None and est.unpriced and not est.pools
    assert said[0] == (
        "cost: the stack: not estimated: the shipped snapshot components/catalog/prices.json, prices of "
        f"{SNAP.date}, which `make prices` refreshes has no USD price for aks-gpu:gpuPool Standard_NC6"
    )
    # Offline, the snapshot's gap is said beside the figures: a preview reads the API, which has its own.
    assert said[1].startswith(
        f"cost: the shipped price snapshot (prices of {SNAP.date}) has no USD price for aks-gpu:gpuPool.vmSize Standard_NC6 in eastus"
    )
    assert warnings == []
    assert not [line for line in said + warnings if "0.00" in line]


def test_a_used_pool_the_proof_scales_from_zero_is_priced_for_the_jobs_deadline():
    gpunp: dict[str, Any] = {
        "name": "gpunp", "mode": "User", "vmSize": T4, "count": 0, "minCount": 0, "maxCount": 3, "enableAutoScaling": True,
        "nodeTaints": ["sku=gpu:NoSchedule"], "osType": "Linux", "maxPods": 250,
    }  # fmt: skip
    system = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250, "osType": "Linux"}
    found = existing_cluster(location="eastus", agentPoolProfiles=[system, gpunp])
    said = cost_said(lines("team", cluster=found, gpuPools={"gpunp": {"existing": "use"}}).infos)
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4, "minCount": 0, "maxCount": 3})}, "aks-gpu", "dev")
    seconds = job_deadline(cfg.pools.pools[0], cfg.mnist_job.max_seconds)
    t4 = prices.pick(SNAP.listed.items, T4, "eastus", False)
    assert t4 is not None
    minutes, usd = -(-seconds // 60), t4.hourly * seconds / 3600
    assert f"cost: the proof: up to {minutes} min of one {T4} (the Job's deadline), about {usd:,.2f} USD: the owner's pool" in " ".join(
        said
    )
    assert usd > 0.005, "a figure that prints as more than 0.00"
    assert not [line for line in said if "0.00 USD to 0.00 USD" in line]


def test_a_prices_file_wins_over_the_snapshot(price_file):
    said = cost_said(lines("prod", **with_prices(price_file)).infos)
    assert "prices from file prices.json)" in said[-1] and "snapshot" not in " ".join(said)


def test_a_preview_that_cannot_reach_the_api_prices_from_the_snapshot_and_says_so(monkeypatch):
    monkeypatch.setattr(retail_prices, "PRICES_URL", UNREACHABLE)
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4, "nodeCount": 1})}, "aks-gpu", "dev")
    est, said, warnings = cost.run(billed(cfg), "eastus", LiveReader(), dry_run=True)
    assert est is not None and est.snapshot_date == SNAP.date and est.least_hourly > 0
    assert warnings[0].startswith("cost: the Retail Prices API could not be read (URLError: ")
    assert warnings[0].endswith(
        f"priced from the shipped snapshot components/catalog/prices.json, prices of {SNAP.date}, which `make prices` refreshes"
    )


@pytest.mark.parametrize("preview", [True, False])
def test_a_limit_is_never_held_against_the_snapshot_where_the_api_cannot_be_read(monkeypatch, preview):
    """The snapshot is not today's list: a deployment with cost.maxHourly stops, and a preview says it would."""
    monkeypatch.setattr(retail_prices, "PRICES_URL", UNREACHABLE)
    cfg = parse({"aks-gpu:cost": json.dumps({"maxHourly": 100})}, "aks-gpu", "dev")
    says = rf"^aks-gpu:cost\.maxHourly = 100\.00 USD could not be checked \(the Retail Prices API was not read, and the shipped snapshot of {SNAP.date} is not"
    if preview:
        _, _, warnings = cost.run(billed(cfg), "eastus", LiveReader(), dry_run=True)
        assert any(w.endswith("(a deployment stops here)") and "could not be checked" in w for w in warnings)
    else:
        with pytest.raises(CostError, match=says):
            cost.run(billed(cfg), "eastus", LiveReader(), dry_run=False)


def test_the_offline_render_holds_a_limit_against_the_snapshot():
    """Offline, the snapshot stands in for the API a preview reads: a limit below the prod stack's
    most per hour is said, with the figure, as `pulumi preview` would say it."""
    [warning] = [w for w in lines("prod", cost={"maxHourly": 1}).warnings if "maxHourly" in w]
    assert warning.startswith("aks-gpu:cost.maxHourly = 1.00 USD: the stack may cost up to 2.15 USD per hour")


def test_make_prices_without_the_network_says_so_in_one_line_and_saves_nothing(tmp_path, monkeypatch, capsys):
    from tools import prices as refresh

    out = tmp_path / "prices.json"
    out.write_text(prices.SNAPSHOT.read_text())
    monkeypatch.setattr(retail_prices, "PRICES_URL", UNREACHABLE)
    assert refresh.main(["--out", str(out)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("error: the Retail Prices API could not be read (") and line.endswith("nothing was saved")
    assert out.read_text() == prices.SNAPSHOT.read_text()
