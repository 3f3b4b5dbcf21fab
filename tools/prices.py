"""`make prices`: refresh the shipped price snapshot, components/catalog/prices.json, from the
Azure Retail Prices API: every size of the catalog (components/catalog/gpu_sizes.json) and the
snapshot's systemSizes, in each of its regions, in US dollars, with the date it was saved. The
render prices a stack from it when the stack names no `preflight.pricesFile`
(docs/design/cost.md, "The shipped snapshot").

It asks the same filtered query the program asks (components/cost/retail_prices.py: Virtual
Machines, pay-as-you-go, the region, the sizes as ARM spells them), a few sizes at a time. Needs
the network; without it, it says so in one line and leaves the snapshot as it was.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

from components.cost import prices, retail_prices
from components.seam.reader import BadAnswer

# Sizes per query: the catalog's sixty-odd sizes in one $filter would make a URL of several
# kilobytes; a dozen keeps each request short.
SIZES_PER_QUERY = 12
CURRENCY = "USD"


def save(out: Path = prices.SNAPSHOT, base_url: str | None = None, today: datetime.date | None = None) -> dict[str, Any]:
    """Read every item for the snapshot's sizes in its regions, then write the snapshot whole:
    nothing is written unless every query answered."""
    snap = prices.snapshot(out)
    sizes = snap.sizes
    items: list[dict[str, Any]] = []
    for region in snap.regions:
        for start in range(0, len(sizes), SIZES_PER_QUERY):
            items += retail_prices.read(region, sizes[start : start + SIZES_PER_QUERY], CURRENCY, base_url=base_url)
    kept = json.loads(out.read_text())
    saved = {
        **{k: v for k, v in kept.items() if k in ("about", "regions", "systemSizes")},
        "savedAt": (today or datetime.datetime.now(datetime.timezone.utc).date()).isoformat(),
        "dateSays": "the day `make prices` read the Retail Prices API",
        "source": f"{retail_prices.PRICES_URL}?api-version={retail_prices.API_VERSION}",
        "Items": items,
    }
    out.write_text(json.dumps(saved, indent=1) + "\n")
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=prices.SNAPSHOT, help="the snapshot to refresh (default: the shipped one)")
    args = parser.parse_args(argv)
    try:
        saved = save(args.out)
    except (OSError, BadAnswer) as error:  # no network, a timeout, an answer that is no price list
        print(f"error: the Retail Prices API could not be read ({type(error).__name__}: {error}); nothing was saved", file=sys.stderr)
        return 1
    print(f"{len(saved['Items'])} prices for {', '.join(saved['regions'])}, saved {saved['savedAt']} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
