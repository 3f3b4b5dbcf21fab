"""VM prices from Azure's public Retail Prices API, live or saved. One list holds every kind of
price side by side, so `pick` is strict: a node's price is the Linux pay-as-you-go meter (or for
a Spot pool the Linux Spot meter) of its size in the cluster's region, per hour. The API, its
answer's fields and the rules: docs/design/cost.md, "Where the prices come from"."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.catalog import gpu_sizes
from components.seam import saved_files

HOUR = "1 Hour"


@dataclass(frozen=True)
class Price:
    vm_size: str
    region: str
    spot: bool
    #: Per node and hour, in `currency`.
    hourly: float
    currency: str
    #: The meter it came from, for the reader: "NC4as T4 v3 Spot (Virtual Machines NCasT4_v3 Series)".
    meter: str


# Azure's size names: "[Family] + [Sub-family*] + [# of vCPUs] + [Constrained vCPUs*] +
# [Additive Features] + [Accelerator Type*] + [Version]", the family upper case, "Lower case
# letters denote additive features" (azure-compute-docs vm-naming-conventions.md, ms.date
# 05/01/2023; the same in sizes/overview.md, ms.date 03/09/2026): NC4as_T4_v3, M8-2ms_v2.
_SIZE_HEAD = re.compile(r"^([a-z]+)(\d+)(-\d+)?([a-z]*)$", re.IGNORECASE)


_CATALOG_SPELLING = {name.lower(): name for name in gpu_sizes.CATALOG}


def arm_spelling(vm_size: str) -> str:
    """A size as ARM spells it, whatever case the config gave: "Filter values are
    case-sensitive" from api-version 2023-01-01-preview on (learn.microsoft.com "Azure Retail
    Prices overview"), so `Standard_nc4as_t4_v3` would find nothing. The naming convention's
    spelling: family and accelerator upper case, features and version lower case (every size
    of the catalog spells itself so: tests/test_prices.py). The config takes `Standard_` sizes
    only (components/config/values.py VmSize). A size that still matches no meter is listed
    as unpriced, and the total says it is incomplete. A size of the catalog is spelt as the
    catalog spells it: the RTX PRO 6000 sizes' `_xl_` is lower case, against the convention."""
    known = _CATALOG_SPELLING.get(vm_size.lower())
    if known is not None:
        return known
    _, _, rest = vm_size.partition("_")
    head = _SIZE_HEAD.match(rest.split("_")[0])
    if head is None:
        return vm_size
    family, vcpus, constrained, features = head.groups()
    tail = [part.lower() if re.fullmatch(r"v\d+", part, re.IGNORECASE) else part.upper() for part in rest.split("_")[1:]]
    return "_".join(["Standard", f"{family.upper()}{vcpus}{constrained or ''}{features.lower()}", *tail])


def price_filter(region: str, sizes: Iterable[str]) -> str:
    """Virtual Machines, pay-as-you-go, in one region (ARM's region names are lowercase), for
    these sizes, each as ARM spells it."""
    skus = " or ".join(f"armSkuName eq '{size}'" for size in sorted({arm_spelling(s) for s in sizes}))
    return f"serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq '{region.lower()}' and ({skus})"


SAVED_HOLDS = 'a saved Retail Prices API answer, {"Items": [...]} with a numeric retailPrice of at least 0 in each item'

# What `pick` reads of an item (the API's price item).
ITEM_MEMBERS = {
    name: saved_files.STRING
    for name in (
        "armSkuName",
        "armRegionName",
        "type",
        "reservationTerm",
        "unitOfMeasure",
        "skuName",
        "productName",
        "currencyCode",
        "effectiveStartDate",
    )
}
ITEM_MEMBERS["isPrimaryMeterRegion"] = saved_files.BOOL


def item_problem(item: dict[str, Any]) -> str | None:
    """What in one price item `pick` could not read, or None: a price is a finite number of at
    least 0 (a NaN or negative one would price the stack below any cost.maxHourly)."""
    return (
        saved_files.missing(item, ("retailPrice",))
        or saved_files.number(item, "retailPrice", least=0)
        or saved_files.typed(item, ITEM_MEMBERS)
    )


@dataclass(frozen=True)
class SavedList:
    items: list[dict[str, Any]]
    #: When it was saved (`savedAt`, which `make prices` writes), if the file says.
    saved_at: str | None = None


# The shipped snapshot: the catalog's sizes (and SNAPSHOT's systemSizes) in the catalog's
# regions, which `make prices` refreshes (tools/prices.py); where its prices come from and
# when: docs/design/cost.md, "The shipped snapshot".
SNAPSHOT = Path(__file__).resolve().parents[1] / "catalog" / "prices.json"
SNAPSHOT_SHOWN = "components/catalog/prices.json"
SNAPSHOT_KEY = f"the shipped price snapshot {SNAPSHOT_SHOWN}"


@dataclass(frozen=True)
class Snapshot:
    listed: SavedList
    #: Its date (`savedAt`): the day `make prices` saved it, or the oldest recording of its items.
    date: str
    #: The ARM regions it prices (lower case), and the sizes besides the catalog's (the System pools').
    regions: tuple[str, ...]
    system_sizes: tuple[str, ...]

    @property
    def sizes(self) -> list[str]:
        """What `make prices` asks for: every size of the catalog, and the System pools'."""
        return sorted({*gpu_sizes.CATALOG, *self.system_sizes})


def snapshot(path: Path = SNAPSHOT) -> Snapshot:
    """The shipped snapshot, read as a saved list is, with its date and regions; a broken one is
    one line naming it (the repository's own file: a test holds it whole)."""
    listed = from_file(path, SNAPSHOT_KEY)
    raw = saved_files.read_json(SNAPSHOT_KEY, path, SAVED_HOLDS)
    regions, system = raw.get("regions"), raw.get("systemSizes", [])
    if listed.saved_at is None or not regions or not _strings(regions) or not _strings(system):
        raise saved_files.refused(SNAPSHOT_KEY, path, "expected savedAt, a list of regions and a list of systemSizes beside Items")
    return Snapshot(listed, listed.saved_at, tuple(r.lower() for r in regions), tuple(system))


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def from_file(path: Path, key: str = "aks-gpu:preflight.pricesFile") -> SavedList:
    """A saved API response: `{"Items": [...]}` (one page, or pages merged), with the date
    `make prices` saved it on, if any. Anything else is one line naming `key`: a list with
    nothing in it would price nothing, silently."""
    saved = saved_files.read_json(key, path, SAVED_HOLDS)
    if not isinstance(saved, dict) or "Items" not in saved:
        raise saved_files.refused(key, path, f"no Items; expected {SAVED_HOLDS}")
    items = saved_files.check_items(key, path, saved["Items"], SAVED_HOLDS, item_problem)
    if not items:
        raise saved_files.refused(key, path, f"Items is empty, so it prices nothing; expected {SAVED_HOLDS}")
    return SavedList(items, saved.get("savedAt") if isinstance(saved.get("savedAt"), str) else None)


def _is(item: dict[str, Any], vm_size: str, region: str, spot: bool, currency: str) -> bool:
    sku_name, product = item.get("skuName") or "", item.get("productName") or ""
    return (
        (item.get("currencyCode") or "USD") == currency
        and (item.get("armSkuName") or "").lower() == vm_size.lower()
        and (item.get("armRegionName") or "").lower() == region.lower()
        and item.get("type") == "Consumption"
        and not item.get("reservationTerm")
        and item.get("unitOfMeasure") == HOUR
        and "Windows" not in product
        and "Low Priority" not in sku_name
        and ("Spot" in sku_name) == spot
    )


def pick(items: Iterable[dict[str, Any]], vm_size: str, region: str, spot: bool, currency: str = "USD") -> Price | None:
    """The Linux pay-as-you-go (or Spot) price of one node of `vm_size` in `region`, in
    `currency` (an item without `currencyCode` is the API's default, USD), or None. Several
    matching meters (a primary and a secondary meter region, an older and a newer price):
    the primary meter region's, then the newest."""
    found = [i for i in items if _is(i, vm_size, region, spot, currency)]
    if not found:
        return None
    best = max(found, key=lambda i: (bool(i.get("isPrimaryMeterRegion", True)), i.get("effectiveStartDate") or ""))
    return Price(
        vm_size=vm_size,
        region=region,
        spot=spot,
        hourly=float(best["retailPrice"]),
        currency=currency,
        meter=f"{best.get('skuName')} ({best.get('productName')})",
    )
