"""A price list in the Azure Retail Prices API's shape, and a local fake of the API with paging.

The items carry the fields Microsoft's page lists ("Azure Retail Prices overview",
learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices). The prices
are illustrative, not Azure's: what matters is that every kind of distractor stands beside
the one price that is right (Windows, Spot, Low Priority, DevTest, 1- and 3-year
reservations, other regions, an older meter).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fake_arm import JsonHandler, serve_handler

REGIONS = {"eastus": "US East", "westeurope": "EU West", "westus2": "US West 2"}


def item(
    sku: str,
    region: str,
    price: float,
    sku_name: str,
    product: str,
    type_: str = "Consumption",
    term: str | None = None,
    start: str = "2024-01-01T00:00:00Z",
) -> dict[str, Any]:
    found = {
        "currencyCode": "USD",
        "tierMinimumUnits": 0.0,
        "retailPrice": price,
        "unitPrice": price,
        "armRegionName": region,
        "location": REGIONS[region],
        "effectiveStartDate": start,
        "meterId": f"{sku}|{sku_name}|{type_}|{term}|{region}|{product}",
        "meterName": sku_name.split(" ", 1)[-1],
        "productName": product,
        "skuName": sku_name,
        "serviceName": "Virtual Machines",
        "serviceFamily": "Compute",
        "unitOfMeasure": "1 Hour",
        "type": type_,
        "isPrimaryMeterRegion": True,
        "armSkuName": sku,
    }
    if term:
        found["reservationTerm"] = term
    return found


def family(sku: str, short: str, series: str, region: str, linux: float, spot: float) -> list[dict[str, Any]]:
    """One size in one region: the Linux pay-as-you-go and Spot prices, and their distractors."""
    product = f"Virtual Machines {series} Series"
    return [
        item(sku, region, linux, short, product),
        item(sku, region, linux * 1.4, short, f"{product} Windows"),
        item(sku, region, spot, f"{short} Spot", product),
        item(sku, region, spot * 1.8, f"{short} Spot", f"{product} Windows"),
        item(sku, region, spot * 2, f"{short} Low Priority", product),
        item(sku, region, linux * 0.9, short, product, type_="DevTestConsumption"),
        item(sku, region, linux * 0.6, short, product, type_="Reservation", term="1 Year"),
        item(sku, region, linux * 0.4, short, product, type_="Reservation", term="3 Years"),
    ]


T4, T4_SPOT = 0.526, 0.0526
T4_8 = 0.752
A100 = 3.673
D2S, D4S = 0.096, 0.192


def price_list() -> list[dict[str, Any]]:
    items = [
        *family("Standard_NC4as_T4_v3", "NC4as T4 v3", "NCasT4_v3", "eastus", T4, T4_SPOT),
        *family("Standard_NC8as_T4_v3", "NC8as T4 v3", "NCasT4_v3", "eastus", T4_8, 0.0752),
        *family("Standard_NC24ads_A100_v4", "NC24ads A100 v4", "NCads_A100_v4", "eastus", A100, 0.7346),
        *family("Standard_D2s_v5", "D2s v5", "Dsv5", "eastus", D2S, 0.0115),
        *family("Standard_D4s_v5", "D4s v5", "Dsv5", "eastus", D4S, 0.023),
        # The same sizes in other regions, dearer and cheaper: a price from the wrong region shows.
        *family("Standard_NC4as_T4_v3", "NC4as T4 v3", "NCasT4_v3", "westus2", 0.421, 0.04),
        *family("Standard_NC4as_T4_v3", "NC4as T4 v3", "NCasT4_v3", "westeurope", 0.631, 0.0631),
        *family("Standard_NC24ads_A100_v4", "NC24ads A100 v4", "NCads_A100_v4", "westeurope", 4.41, 0.88),
        *family("Standard_D4s_v5", "D4s v5", "Dsv5", "westeurope", 0.23, 0.03),
        # An older Linux meter of the T4 in eastus: the newest price counts.
        item("Standard_NC4as_T4_v3", "eastus", 0.6, "NC4as T4 v3", "Virtual Machines NCasT4_v3 Series", start="2020-06-01T00:00:00Z"),
    ]
    return items


def saved(items: list[dict[str, Any]] | None = None) -> str:
    """A saved API response, as `curl` would write one page."""
    items = price_list() if items is None else items
    return json.dumps(
        {
            "BillingCurrency": "USD",
            "CustomerEntityId": "Default",
            "CustomerEntityType": "Retail",
            "Items": items,
            "NextPageLink": None,
            "Count": len(items),
        }
    )


class FakePrices:
    """Serves the list `page_size` items a page, each page's NextPageLink naming the next
    (`$skip`), as the API pages; records each request's query."""

    def __init__(self, items: list[dict[str, Any]], page_size: int) -> None:
        self.items, self.page_size = items, page_size
        self.queries: list[dict[str, list[str]]] = []
        self.url = ""


def serve(items: list[dict[str, Any]] | None = None, page_size: int = 10, loop: bool = False) -> Iterator[FakePrices]:
    """The fake API; with `loop`, every page's NextPageLink names the first page again (a
    broken paging that never ends)."""
    fake = FakePrices(price_list() if items is None else items, page_size)

    class Handler(JsonHandler):
        def do_GET(self) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(parsed.query)
            fake.queries.append(query)
            skip = int(query.get("$skip", ["0"])[0])
            page = fake.items[skip : skip + fake.page_size]
            following = skip + fake.page_size
            next_link = None
            if loop:
                next_link = f"{fake.url}?{urllib.parse.urlencode({k: v[0] for k, v in query.items() if k != '$skip'})}"
            elif following < len(fake.items):
                next_query = urllib.parse.urlencode({**{k: v[0] for k, v in query.items()}, "$skip": following})
                next_link = f"{fake.url}?{next_query}"
            self.answer_json(200, {"Items": page, "NextPageLink": next_link, "Count": len(page)})

    for url in serve_handler(Handler):
        fake.url = f"{url}/api/retail/prices"
        yield fake


def saved_list(tmp_path: Path, items: list[dict[str, Any]], name: str = "prices.json") -> str:
    """A price list saved as `make prices` saves one, in `tmp_path`; its path."""
    path = tmp_path / name
    path.write_text(saved(items))
    return str(path)


def with_prices(price_file: str, **overrides: Any) -> dict[str, Any]:
    """A stack's overrides that price it from `price_file` (preflight.pricesFile)."""
    return {"preflight": {"pricesFile": price_file}, **overrides}
