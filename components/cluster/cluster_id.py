"""An AKS cluster named by its Azure resource ID (the package's `clusterId` input), read into the
stack file's own settings: `existingCluster` {resourceGroupName, name} and `azure-native:subscriptionId`.

The ID is split by azure-mgmt-core's parser, the one the Azure SDK's management clients use
(azure-mgmt-core 1.6.0 azure/mgmt/core/tools.py `parse_resource_id`, `is_valid_resource_id`),
not a pattern of our own. That parser takes any text between the slashes (a space, a newline),
matches a prefix only (what follows the name lands in `children`) and is case-insensitive, as
ARM is; so the provider and type are compared without case, a child (`.../agentPools/gpu`) is
refused, and each part is held to the rule the stack file's key holds it to.
"""

from __future__ import annotations

from typing import Any

from azure.mgmt.core.tools import is_valid_resource_id, parse_resource_id
from pydantic import TypeAdapter, ValidationError

from components.config.messages import allowed_text, fail
from components.config.values import ClusterName, ResourceGroupName, pattern

SHAPE = "/subscriptions/<subscription ID>/resourceGroups/<resource group>/providers/Microsoft.ContainerService/managedClusters/<name>"
# ARM's provider namespace and type of an AKS cluster (azure-rest-api-specs, containerservice's
# managedClusters path), compared as ARM compares them: without case.
PROVIDER, TYPE = "microsoft.containerservice", "managedclusters"
# A subscription's ID is a GUID (`az account show --query id`).
SubscriptionId = pattern(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", "a GUID")
PARTS = (
    ("subscription", "subscription ID", SubscriptionId),
    ("resource_group", "resource group", ResourceGroupName),
    ("name", "name", ClusterName),
)


def cluster_settings(key: str, value: Any) -> tuple[dict[str, str], str]:
    """The cluster `value` names, as existingCluster's members, and its subscription; a refusal is
    one line naming `key`, the value and the shape allowed."""
    if not isinstance(value, str) or not is_valid_resource_id(value):
        raise fail(key, value, f"expected an AKS cluster's resource ID, {SHAPE}")
    parts = parse_resource_id(value)
    kind = f"{parts.get('namespace', '')}/{parts.get('type', '')}"
    if kind.lower() != f"{PROVIDER}/{TYPE}" or parts.get("children"):
        what = (
            f"a child of {kind} ({parts['children']})" if parts.get("children") else f"a {kind}" if "namespace" in parts else "no resource"
        )
        raise fail(key, value, f"expected an AKS cluster's resource ID, {SHAPE}; this names {what}")
    for part, words, rule in PARTS:
        try:
            TypeAdapter(rule).validate_python(parts.get(part))
        except ValidationError:
            raise fail(key, value, f"expected {SHAPE}, its {words} {allowed_text(rule)}") from None
    return {"resourceGroupName": str(parts["resource_group"]), "name": str(parts["name"])}, str(parts["subscription"])
