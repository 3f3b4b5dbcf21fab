"""The prices (components/cost/prices.py): a node priced Linux pay-as-you-go in its own region
from a list full of distractors and untidy (meters out of order, a meter that does not say
whether its region is primary, prices per another unit), in the stack's currency, paging that
runs to the cap or never ends, an API slow enough to use up the time budget, the live API's
answers against a local fake, and `make prices`. (What the figures say: test_cost_estimate.py.)"""

from __future__ import annotations

import datetime
import json
import re
import types
from pathlib import Path
from typing import Any

import fake_prices
import pytest
from fake_prices import saved_list

from components.catalog import gpu_sizes
from components.cost import cost, prices, retail_prices
from components.live_reader import LiveReader
from components.plan import billed
from components.seam.reader import BadAnswer
from components.stack import parse
from tools.mock_engine import run_program

PRODUCT = "Virtual Machines NCasT4_v3 Series"


def meter(price: float, start: str = "2024-01-01T00:00:00Z", **changes: Any) -> dict[str, Any]:
    found = fake_prices.item(T4, "eastus", price, "NC4as T4 v3", PRODUCT, start=start)
    found.update(changes)
    return {k: v for k, v in found.items() if v is not None}


T4, A100 = "Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4"

ITEMS = fake_prices.price_list()


@pytest.fixture
def api():
    yield from fake_prices.serve(page_size=7)


def estimated(run) -> dict[str, Any]:
    return run.outputs["estimatedCost"].value


def spot_run(tmp_path, items, **pool) -> Any:
    overrides = {"gpuPool": {"vmSize": T4, "nodeCount": 1, "spot": True, **pool}, "preflight": {"pricesFile": saved_list(tmp_path, items)}}
    return run_program("dev", overrides=overrides, preview=True)


# The cap docs/design/cost.md states: a filtered list for a few sizes is a page or two.
PAGE_CAP = 20


def clock(monkeypatch, *readings: float) -> None:
    """time.monotonic in the price lookup, reading the given seconds one call after another."""
    ticks = iter(readings)
    monkeypatch.setattr(retail_prices, "time", types.SimpleNamespace(monotonic=lambda: next(ticks)))


def answering(monkeypatch, *pages: Any) -> None:
    """The live lookup's requests answered with these JSON documents, one a request."""
    import io
    import json

    answers = iter(pages)
    monkeypatch.setattr(retail_prices.urllib.request, "urlopen", lambda url, timeout: io.BytesIO(json.dumps(next(answers)).encode()))


# --------------------------------------------------------------------------- sizes


def test_every_catalog_size_is_its_own_arm_spelling_whatever_the_case_written():
    """The query's case-sensitive filter: a catalog size is spelt as the catalog spells it, `_xl_` included."""
    for name in gpu_sizes.CATALOG:
        assert prices.arm_spelling(name) == name
        assert prices.arm_spelling("Standard_" + name.split("_", 1)[1].lower()) == name


# --------------------------------------------------------------------------- picking


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


def test_the_newest_meter_wins_wherever_the_list_puts_it():
    """An older and a newer Linux meter of one size: the newer price, listed first or last."""
    old, new = meter(0.60, "2020-06-01T00:00:00Z"), meter(0.526, "2024-01-01T00:00:00Z")
    for items in ([old, new], [new, old]):
        assert prices.pick(items, T4, "eastus", False).hourly == 0.526


def test_a_meter_that_does_not_say_whether_its_region_is_primary_counts_as_primary():
    """Older answers carry no isPrimaryMeterRegion: such a meter is not passed over for a
    newer one that says it is not the primary meter region's."""
    unsaid = meter(0.526, "2024-01-01T00:00:00Z", isPrimaryMeterRegion=None)
    secondary = meter(0.70, "2025-01-01T00:00:00Z", isPrimaryMeterRegion=False)
    assert prices.pick([unsaid, secondary], T4, "eastus", False).hourly == 0.526


@pytest.mark.parametrize("unit", ["1 Day", "1/Month", "10 Hours"])
def test_a_price_per_another_unit_is_never_taken_for_an_hours(unit):
    """A newer meter priced per day or month (a list merged from other queries) is no VM
    hour: the hourly meter is picked, and with none the size is unpriced."""
    hourly, other = meter(0.526), meter(12.6, "2025-06-01T00:00:00Z", unitOfMeasure=unit)
    assert prices.pick([hourly, other], T4, "eastus", False).hourly == 0.526
    assert prices.pick([other], T4, "eastus", False) is None


# --------------------------------------------------------------------------- currency


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


def test_live_prices_are_asked_in_cost_currency():
    """The API answers in the currency asked for: `currencyCode='EUR'` beside the filter."""
    for api in fake_prices.serve(page_size=50):
        retail_prices.read("eastus", [T4], "EUR", base_url=api.url, timeout=10)
        retail_prices.read("eastus", [T4], base_url=api.url, timeout=10)
        asked = [q.get("currencyCode") for q in api.queries if "$skip" not in q]
    assert asked == [["'EUR'"], ["'USD'"]]


# --------------------------------------------------------------------------- paging


def test_a_list_of_exactly_the_page_cap_is_read_whole():
    items = [meter(0.5 + n / 1000) for n in range(PAGE_CAP)]
    for api in fake_prices.serve(items, page_size=1):
        assert len(retail_prices.read("eastus", [T4], base_url=api.url, timeout=10)) == PAGE_CAP
        assert len(api.queries) == PAGE_CAP


def test_a_next_page_link_that_never_ends_stops_at_the_cap():
    for api in fake_prices.serve([meter(0.526)], page_size=1, loop=True):
        with pytest.raises(BadAnswer, match=r"^the Retail Prices API gave more than 20 pages$"):
            retail_prices.read("eastus", [T4], base_url=api.url, timeout=10)
        assert len(api.queries) == PAGE_CAP


# The fake clock's seconds are what the lookup counts; what is left of the budget is also the
# socket's real timeout against the local fake API, so the budgets are large (100 s) and a
# loaded machine's slow answer cannot decide a test.
@pytest.mark.parametrize(
    "readings, pages",
    [
        ((0.0, 25.0, 50.0, 100.0), 2),  # 100 s left, then 50, then none: two pages read
        ((0.0, 50.0, 100.0), 1),  # exactly at the limit after one page: out of time
        ((0.0, 100.0), 0),  # the budget gone before the first page
        ((0.0, 150.0), 0),  # overdrawn before the first page
    ],
)
def test_an_api_slow_enough_to_use_up_the_time_budget_stops_between_pages(monkeypatch, readings, pages):
    for api in fake_prices.serve([meter(0.5 + n / 1000) for n in range(5)], page_size=1):
        clock(monkeypatch, *readings)
        with pytest.raises(TimeoutError, match=r"^the Retail Prices API did not answer within 100 s$"):
            retail_prices.read("eastus", [T4], base_url=api.url, timeout=100.0)
        assert len(api.queries) == pages


def test_a_budget_left_of_under_a_second_is_still_used(monkeypatch):
    """0.9 s of the budget left, as the lookup counts it: every page is read, each asked with
    what is left as its time limit (recorded; the local fake is asked with a long one)."""
    limits = []
    real = retail_prices.urllib.request.urlopen

    def urlopen(url, timeout):
        limits.append(timeout)
        return real(url, timeout=60)

    monkeypatch.setattr(retail_prices.urllib.request, "urlopen", urlopen)
    for api in fake_prices.serve([meter(0.5), meter(0.6)], page_size=1):
        clock(monkeypatch, 0.0, 0.05, 0.1)
        assert len(retail_prices.read("eastus", [T4], base_url=api.url, timeout=0.9)) == 2
    assert limits == pytest.approx([0.85, 0.8])


def test_a_preview_waits_fifteen_seconds_for_prices_and_says_so(monkeypatch):
    """The live lookup's budget, as the warning a preview shows states it."""
    clock(monkeypatch, 0.0, 15.0)
    with pytest.raises(TimeoutError, match=r"did not answer within 15 s$"):
        retail_prices.read("eastus", [T4], base_url="http://127.0.0.1:9")


def test_the_query_spells_sizes_and_regions_as_arm_does_and_the_answer_matches_without_case():
    """Filter values are case-sensitive from api-version 2023-01-01-preview on."""
    assert prices.price_filter("EastUS", ["standard_nc4as_t4_v3"]) == (
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq 'eastus' "
        "and (armSkuName eq 'Standard_NC4as_T4_v3')"
    )
    lower = [{**i, "armSkuName": i["armSkuName"].lower()} for i in fake_prices.price_list()]
    assert prices.pick(lower, "Standard_NC4as_T4_v3", "eastus", False).hourly == fake_prices.T4


@pytest.mark.parametrize(
    "written, arm",
    [
        ("standard_d4s_v5", "Standard_D4s_v5"),  # a System pool size: not in the GPU catalog
        ("STANDARD_ND96ISR_H100_V5", "Standard_ND96isr_H100_v5"),
        ("Standard_nv36ads_a10_v5", "Standard_NV36ads_A10_v5"),
        ("Standard_DS2_v2", "Standard_DS2_v2"),
    ],
)
def test_a_size_outside_the_catalog_is_queried_as_azures_naming_convention_spells_it(written, arm):
    """Family and accelerator upper case, features and version lower case: what the API's
    case-sensitive filter finds, where the stack's own spelling would find nothing."""
    assert f"armSkuName eq '{arm}'" in prices.price_filter("eastus", [written])


# --------------------------------------------------------------------------- the live API


def test_the_live_path_follows_next_page_link_to_the_end(api):
    items = retail_prices.read("eastus", [T4, "Standard_D4s_v5"], base_url=api.url, timeout=10)
    assert len(items) == len(ITEMS) and len(api.queries) == -(-len(ITEMS) // 7)
    first = api.queries[0]
    assert first["api-version"] == ["2023-01-01-preview"]
    assert first["$filter"] == [
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq 'eastus' "
        "and (armSkuName eq 'Standard_D4s_v5' or armSkuName eq 'Standard_NC4as_T4_v3')"
    ]
    assert prices.pick(items, T4, "eastus", False).hourly == fake_prices.T4


def test_a_live_estimate_equals_the_saved_ones(api, monkeypatch, price_file):
    monkeypatch.setattr(retail_prices, "PRICES_URL", api.url)
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4, "minCount": 0, "maxCount": 3})}, "aks-gpu", "dev")
    est, lines, warnings = cost.run(billed(cfg), "eastus", LiveReader(), dry_run=True)
    assert warnings == [] and est.source == "the Azure Retail Prices API"
    saved = cost.estimate(billed(cfg), prices.from_file(Path(price_file)).items, "eastus", "file")
    assert (est.least_hourly, est.most_hourly) == (saved.least_hourly, saved.most_hourly)


@pytest.mark.parametrize(
    "page",
    [
        ["not", "an", "object"],
        {"error": {"code": "BadRequest"}},
        {"Items": {"retailPrice": 0.526}},
        {"Items": [meter(0.526), "0.526"]},
        {"Items": [meter(0.526), [0.526]]},
    ],
    ids=["not an object", "no Items", "Items not a list", "an item that is a string", "an item that is a list"],
)
def test_a_live_answer_that_is_not_a_page_of_items_is_refused_in_one_line(monkeypatch, page):
    answering(monkeypatch, page)
    with pytest.raises(ValueError, match=r"^the Retail Prices API answered something other than a page of Items$"):
        retail_prices.read("eastus", [T4], timeout=10)


@pytest.mark.parametrize("bad", [-0.5, "0.526", None], ids=["below zero", "a string", "null"])
def test_a_live_item_without_a_usable_price_is_refused_naming_it_on_any_page(bad, monkeypatch):
    """A price below zero (or none) would price the stack below any cost.maxHourly: the whole
    answer is refused, whichever page and place the item has, and the lookup says which."""
    second = {"Items": [meter(0.526), {**meter(0.5), "retailPrice": bad}], "NextPageLink": None}
    answering(monkeypatch, {"Items": [meter(0.526)], "NextPageLink": "https://prices.azure.com/next"}, second)
    with pytest.raises(ValueError, match=r"^the Retail Prices API answered an item it cannot have meant: item 1: retailPrice "):
        retail_prices.read("eastus", [T4], timeout=10)


def test_a_next_page_link_that_is_not_a_url_is_refused(monkeypatch):
    answering(monkeypatch, {"Items": [meter(0.526)], "NextPageLink": {"href": "https://prices.azure.com/next"}})
    with pytest.raises(ValueError, match=r"^the Retail Prices API answered a NextPageLink that is not a URL$"):
        retail_prices.read("eastus", [T4], timeout=10)


def test_a_price_lookup_that_fails_says_why_in_one_line_cut_at_300_characters(monkeypatch):
    """The Retail Prices API's answer can be a page of HTML: the warning keeps its first 300
    characters, on one line, says the shipped snapshot priced the stack instead, and the
    deployment goes on."""
    answer = "Service Unavailable\n" + "x" * 500

    def down(*args: Any, **kwargs: Any) -> list:
        raise BadAnswer(answer)

    monkeypatch.setattr(retail_prices, "read", down)
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4})}, "aks-gpu", "dev")
    estimate, lines, warnings = cost.run(billed(cfg), "eastus", LiveReader(), dry_run=False)
    assert estimate is not None and estimate.snapshot_date == prices.snapshot().date
    [warning] = warnings
    reason = " ".join(answer.split())[:300]
    assert warning.startswith(f"cost: the Retail Prices API could not be read (BadAnswer: {reason}); priced from the shipped snapshot ")
    assert len(reason) == 300


# --------------------------------------------------------------------------- make prices


def test_make_prices_refreshes_the_snapshot_with_the_catalogs_sizes_in_its_regions_and_its_date(tmp_path):
    """No network here: the fake API answers. The snapshot's regions and systemSizes stay, its
    items become the API's, its date the day it was saved, and the render's reading of it works."""
    from tools import prices as refresh

    out = tmp_path / "prices.json"
    out.write_text(prices.SNAPSHOT.read_text())
    for api in fake_prices.serve(page_size=7):
        saved = refresh.save(out, base_url=api.url, today=datetime.date(2026, 11, 25))
        filters = [q["$filter"][0] for q in api.queries if "$skip" not in q]
    snap = prices.snapshot(out)
    assert snap.date == saved["savedAt"] == "2026-11-25" and snap.regions == prices.snapshot().regions
    asked = {size for f in filters for size in re.findall(r"armSkuName eq '([^']+)'", f)}
    assert asked == {prices.arm_spelling(s) for s in snap.sizes} and set(gpu_sizes.CATALOG) <= set(snap.sizes)
    assert all(f"armRegionName eq '{snap.regions[0]}'" in f for f in filters)
    assert prices.pick(snap.listed.items, T4, "eastus", False).hourly == fake_prices.T4
