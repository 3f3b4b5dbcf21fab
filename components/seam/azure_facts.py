"""What Azure says about a subscription in a region: the VM sizes it offers, its vCPU quotas
and usage, and the nodes a deployed stack already runs. Two sources give the REST API's objects
(ResourceSku, Usage; Azure/azure-rest-api-specs Microsoft.Compute Skus and ComputeRP), so one
parser reads them: the az CLI's saved JSON (`az vm list-skus --location <loc> --resource-type
virtualMachines --all`, `az vm list-usage --location <loc>`) and the Azure SDK's models turned
back into their REST shape (compute.py, `as_dict()`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.config.values import NAMESPACE
from components.seam import saved_files

# Quota names for the regional totals (Usage.name.value).
REGIONAL_CORES = "cores"  # "Total Regional vCPUs"
REGIONAL_SPOT_CORES = "lowPriorityCores"  # "Total Regional Low-priority vCPUs" (Spot)


@dataclass(frozen=True)
class Sku:
    """One VM size as Azure offers it to this subscription in this region."""

    name: str
    family: str
    vcpus: int
    gpus: int | None
    generations: tuple[str, ...]
    #: The reason Azure does not offer it here ("NotAvailableForSubscription"), if it does not.
    restriction: str | None = None
    #: The availability zones it is offered in here, less those restricted to this subscription.
    zones: tuple[str, ...] = ()


@dataclass(frozen=True)
class Usage:
    """One vCPU quota: how much is in use, and the limit."""

    name: str
    display: str
    current: int
    limit: int

    @property
    def free(self) -> int:
        return max(self.limit - self.current, 0)


@dataclass(frozen=True)
class Facts:
    source: str
    skus: dict[str, Sku]
    usages: dict[str, Usage]
    #: Nodes the stack's pools already run: pool name -> (VM size, node count).
    existing_pools: dict[str, tuple[str, int]] = field(default_factory=dict)


def parse_skus(items: Iterable[dict[str, Any]], location: str) -> dict[str, Sku]:
    skus = {}
    for item in items:
        if item.get("resourceType") != "virtualMachines":
            continue
        if location.lower() not in [loc.lower() for loc in item.get("locations") or []]:
            continue
        capabilities = {c["name"]: c["value"] for c in item.get("capabilities") or []}
        restrictions = [r.get("reasonCode") or "restricted" for r in item.get("restrictions") or [] if r.get("type") == "Location"]
        skus[item["name"]] = Sku(
            name=item["name"],
            family=item.get("family") or "",
            vcpus=int(capabilities.get("vCPUs", 0)),
            gpus=int(capabilities["GPUs"]) if "GPUs" in capabilities else None,
            generations=tuple(g.strip() for g in capabilities.get("HyperVGenerations", "").split(",") if g.strip()),
            restriction=restrictions[-1] if restrictions else None,
            zones=_zones(item, location),
        )
    return skus


def _zones(item: dict[str, Any], location: str) -> tuple[str, ...]:
    # ResourceSku.locationInfo[].zones: "List of availability zones where the SKU is supported";
    # a restriction of type Zone names in restrictionInfo.zones those the subscription may not use
    # (azure-mgmt-compute 39.0.0 models: ResourceSkuLocationInfo, ResourceSkuRestrictionsType.ZONE).
    offered = {
        z
        for info in item.get("locationInfo") or []
        if str(info.get("location", "")).lower() == location.lower()
        for z in info.get("zones") or []
    }
    restricted = {
        z for r in item.get("restrictions") or [] if r.get("type") == "Zone" for z in (r.get("restrictionInfo") or {}).get("zones") or []
    }
    return tuple(sorted(offered - restricted))


def parse_usages(items: Iterable[dict[str, Any]]) -> dict[str, Usage]:
    usages = {}
    for item in items:
        name = item.get("name") or {}
        value = name.get("value") if isinstance(name, dict) else name
        display = (name.get("localizedValue") if isinstance(name, dict) else None) or item.get("localName") or value
        usages[str(value)] = Usage(name=str(value), display=str(display), current=int(item["currentValue"]), limit=int(item["limit"]))
    return usages


# What `parse_skus` reads of an item, and of its parts (the REST shapes: ResourceSku,
# ResourceSkuCapabilities, ResourceSkuRestrictions, ResourceSkuRestrictionInfo).
SKU_MEMBERS = {
    "name": saved_files.STRING,
    "resourceType": saved_files.STRING,
    "family": saved_files.STRING,
    "locations": saved_files.STRINGS,
    "capabilities": saved_files.OBJECTS,
    "restrictions": saved_files.OBJECTS,
    "locationInfo": saved_files.OBJECTS,
}
LOCATION_INFO_MEMBERS = {"location": saved_files.STRING, "zones": saved_files.STRINGS}
RESTRICTION_MEMBERS = {"type": saved_files.STRING, "reasonCode": saved_files.STRING, "restrictionInfo": saved_files.OBJECT}
RESTRICTION_INFO_MEMBERS = {"zones": saved_files.STRINGS, "locations": saved_files.STRINGS}


def sku_problem(item: dict[str, Any]) -> str | None:
    """What in one saved `az vm list-skus` item `parse_skus` could not read, or None."""
    if problem := saved_files.missing(item, ("name", "resourceType", "locations")) or saved_files.typed(item, SKU_MEMBERS):
        return problem
    for index, capability in enumerate(item.get("capabilities") or []):
        if not isinstance(capability.get("name"), str) or not isinstance(capability.get("value"), str):
            return f"capabilities[{index}] is not an object with a string name and value"
        # The list gives numbers as strings of digits ("4").
        if capability["name"] in ("vCPUs", "GPUs") and not capability["value"].strip().isdigit():
            return f"capability {capability['name']} is {capability['value']!r}, not a whole number"
    for index, restriction in enumerate(item.get("restrictions") or []):
        problem = saved_files.typed(restriction, RESTRICTION_MEMBERS) or saved_files.typed(
            restriction.get("restrictionInfo") or {}, RESTRICTION_INFO_MEMBERS
        )
        if problem:
            return f"restrictions[{index}]: {problem}"
    for index, info in enumerate(item.get("locationInfo") or []):
        if problem := saved_files.typed(info, LOCATION_INFO_MEMBERS):
            return f"locationInfo[{index}]: {problem}"
    return None


def usage_problem(item: dict[str, Any]) -> str | None:
    """What in one saved `az vm list-usage` item `parse_usages` could not read, or None."""
    name = item.get("name")
    named = isinstance(name, str) or (isinstance(name, dict) and isinstance(name.get("value"), str))
    localized = name.get("localizedValue") if isinstance(name, dict) else None
    return (
        saved_files.missing(item, ("name", "currentValue", "limit"))
        or (None if named else "name is neither a string nor an object with a string value")
        or (None if localized is None or isinstance(localized, str) else "name.localizedValue is not a string")
        or saved_files.typed(item, {"localName": saved_files.STRING})
        or saved_files.number(item, "currentValue", least=0)
        or saved_files.number(item, "limit")
    )


SKUS_HOLD = "the JSON list `az vm list-skus --location <loc> --resource-type virtualMachines --all --output json` prints"
USAGE_HOLD = "the JSON list `az vm list-usage --location <loc> --output json` prints"


def _saved(key: str, path: Path, holds: str, bad: Callable[[dict[str, Any]], str | None]) -> list[dict[str, Any]]:
    return saved_files.check_items(key, path, saved_files.read_json(key, path, holds), holds, bad)


def from_files(skus_file: Path, usage_file: Path, location: str) -> Facts:
    """The saved az CLI answers; a file that is not such a list is one line naming its key."""
    skus = _saved(f"{NAMESPACE}:preflight.skusFile", skus_file, SKUS_HOLD, sku_problem)
    usages = _saved(f"{NAMESPACE}:preflight.usageFile", usage_file, USAGE_HOLD, usage_problem)
    return Facts(source=f"files {skus_file.name}, {usage_file.name}", skus=parse_skus(skus, location), usages=parse_usages(usages))


def node_resource_group(resource_group: str, cluster: str, location: str) -> str:
    """AKS's default node resource group, MC_<group>_<cluster>_<location> (azure-aks-docs
    articles/aks/faq.yml, ms.date 11/06/2023, "Why are two resource groups created with AKS?")."""
    return f"MC_{resource_group}_{cluster}_{location}"
