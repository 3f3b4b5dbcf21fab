"""`make prices`: save the Azure Retail Prices API's answer for every stack's sizes and region
into `prices/retail-prices.json`, with the date it was saved, so that `make render` prices
the stacks on a machine without the network (docs/design/cost.md).

It asks the same filtered query the program asks (components/cost/retail_prices.py: Virtual Machines,
pay-as-you-go, the region, the sizes as ARM spells them), once per region of the stacks
(`azure-native:location`; an existing cluster's region is only known by reading it, so its
stack's location is taken, which says where its saved description puts it when one is
named). Needs the network; nothing else does.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from components import stack as config
from components.cost import cost, retail_prices
from components.plan import billed
from tools.azure_mocks import saved_cluster
from tools.stack_files import ROOT, project_name, stack_config, stacks

SAVED = ROOT / "prices" / "retail-prices.json"


def wanted(names: list[str]) -> dict[tuple[str, str], set[str]]:
    """(Region, currency: the stack's cost.currency) -> the sizes the stacks price there."""
    found: dict[tuple[str, str], set[str]] = {}
    for stack in names:
        raw = stack_config(stack)
        cfg = config.parse(raw, project_name(), stack, ROOT)
        saved = saved_cluster(cfg) if cfg.existing_cluster else None
        region = (saved or {}).get("location") or cfg.location
        found.setdefault((region.lower(), cfg.cost.currency), set()).update(n.vm_size for n in cost.nodes(billed(cfg)))
    return found


def save(out: Path, names: list[str], base_url: str | None = None, today: datetime.date | None = None) -> dict:
    items = []
    regions = wanted(names)
    for (region, currency), sizes in sorted(regions.items()):
        items += retail_prices.read(region, sorted(sizes), currency, base_url=base_url)
    saved = {
        "savedAt": (today or datetime.datetime.now(datetime.timezone.utc).date()).isoformat(),
        "source": f"{retail_prices.PRICES_URL}?api-version={retail_prices.API_VERSION}",
        "regions": {f"{region} {currency}": sorted(sizes) for (region, currency), sizes in sorted(regions.items())},
        "Items": items,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", action="append", help="a stack (repeatable; default: every Pulumi.<stack>.yaml)")
    parser.add_argument("--out", type=Path, default=SAVED)
    args = parser.parse_args(argv)
    try:
        saved = save(args.out, args.stack or stacks())
    except OSError as error:  # no network, a timeout
        print(f"error: the Retail Prices API could not be read ({error}); nothing was saved", file=sys.stderr)
        return 1
    print(f"{len(saved['Items'])} prices for {', '.join(saved['regions'])}, saved {saved['savedAt']} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
