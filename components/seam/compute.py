"""What Azure says of a subscription in a region, live (azure_facts.py parses it): azure-mgmt-compute's
ResourceSkus, Usage and VirtualMachineScaleSets lists, each model turned back into its REST shape."""

from __future__ import annotations

from typing import Any

from components.seam.azure_facts import Facts, parse_skus, parse_usages
from components.seam.deadline import gather

# How long the live calls may take together before preflight gives up on them.
LIVE_TIMEOUT_SECONDS = 30
# AKS tags each node pool's scale set with its pool's name.
POOL_TAG = "aks-managed-poolName"


def facts(
    subscription_id: str,
    location: str,
    node_group: str,
    credential: Any,
    base_url: str | None = None,
    timeout: float = LIVE_TIMEOUT_SECONDS,
) -> Facts:
    """The three lists at once, within `timeout` seconds; raises on any failure. `base_url`: the tests' fake of ARM."""
    from azure.core.exceptions import ResourceNotFoundError
    from azure.mgmt.compute import ComputeManagementClient

    options: dict[str, Any] = {"connection_timeout": 5, "read_timeout": timeout, "retry_total": 2}
    if base_url:
        options["base_url"] = base_url
    client = ComputeManagementClient(credential, subscription_id, **options)
    call: dict[str, Any] = {"enforce_https": not (base_url or "").startswith("http://")}

    def skus() -> list[dict[str, Any]]:
        return [s.as_dict() for s in client.resource_skus.list(filter=f"location eq '{location}'", **call)]

    def usages() -> list[dict[str, Any]]:
        return [u.as_dict() for u in client.usage.list(location, **call)]

    def pools() -> dict[str, tuple[str, int]]:
        try:
            sets = list(client.virtual_machine_scale_sets.list(node_group, **call))
        except ResourceNotFoundError:  # no node resource group yet: a first deployment
            return {}
        return {s.tags[POOL_TAG]: (str(s.sku.name), s.sku.capacity or 0) for s in sets if s.tags and POOL_TAG in s.tags and s.sku}

    sku_items, usage_items, existing = gather([skus, usages, pools], timeout)
    return Facts(
        source=f"Azure, subscription {subscription_id}",
        skus=parse_skus(sku_items, location),
        usages=parse_usages(usage_items),
        existing_pools=existing,
    )
