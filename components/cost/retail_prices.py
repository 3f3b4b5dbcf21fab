"""VM prices from Azure's public Retail Prices API, live: an unauthenticated GET of PRICES_URL
with prices.py's filter, page after page. Plain urllib: the API has no maintained SDK
(azure-mgmt-commerce is the older RateCard API, which needs a sign-in)."""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable
from typing import Any

from components.config.messages import refuse_constant
from components.cost.prices import item_problem, price_filter
from components.seam.reader import BadAnswer

PRICES_URL = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
# A short wait: a preview must not hang on a slow price list, and without prices the program
# warns and goes on.
LIVE_TIMEOUT_SECONDS = 15.0
# A filtered list for a few sizes in one region is a page or two; the cap keeps a broken
# NextPageLink from looping.
MAX_PAGES = 20


def read(
    region: str, sizes: Iterable[str], currency: str = "USD", base_url: str | None = None, timeout: float = LIVE_TIMEOUT_SECONDS
) -> list[dict[str, Any]]:
    """Every item of the filtered list in `currency`, page after page, within `timeout` seconds in
    all; raises on any failure. `base_url`: the tests' fake. The currency is asked as `currencyCode='EUR'`
    beside the filter (learn.microsoft.com "Azure Retail Prices overview", "Supported currencies")."""
    query = urllib.parse.urlencode(
        {"api-version": API_VERSION, "currencyCode": f"'{currency}'", "$filter": price_filter(region, sizes)}, quote_via=urllib.parse.quote
    )
    url = f"{base_url or PRICES_URL}?{query}"
    deadline = time.monotonic() + timeout
    items: list[dict[str, Any]] = []
    for _ in range(MAX_PAGES):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the Retail Prices API did not answer within {timeout:g} s")
        with urllib.request.urlopen(url, timeout=left) as response:
            try:
                page = json.load(response, parse_constant=refuse_constant)
            except ValueError as error:  # no JSON, or a NaN
                raise BadAnswer(f"the Retail Prices API answered no JSON list: {error}") from None
        found = page.get("Items") if isinstance(page, dict) else None
        if not isinstance(found, list) or not all(isinstance(i, dict) for i in found):
            raise BadAnswer("the Retail Prices API answered something other than a page of Items")
        for index, item in enumerate(found):
            if problem := item_problem(item):
                raise BadAnswer(f"the Retail Prices API answered an item it cannot have meant: item {index}: {problem}")
        items += found
        next_link = page.get("NextPageLink") or None
        if next_link is not None and not isinstance(next_link, str):
            raise BadAnswer("the Retail Prices API answered a NextPageLink that is not a URL")
        if next_link is None:
            return items
        url = next_link
    raise BadAnswer(f"the Retail Prices API gave more than {MAX_PAGES} pages")
