"""The value types every concept's settings are made of: names Azure and Kubernetes accept,
images, sizes, subnets, ranges and lists, each with what a one-line error says is allowed
(`Allowed`). No key lives here: each concept's module (cluster, pools, ...) uses them."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from components.catalog.proof_images import repository

NAMESPACE = "aks-gpu"
MAX_POOL_NODES = 1000  # AKS: at most 1000 nodes per VMSS node pool (quotas-skus-regions.md)
# Namespaces that exist in every cluster: this program creates and deletes its namespaces,
# so each must be one the program can own.
RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

# Strict: `nodeCount: "3"` or `gen2: "yes"` is an error, not a guess. Members are spelled in
# camelCase in the stack files (`nodeCount`), in snake_case in Python (`node_count`).
MODEL = ConfigDict(strict=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, use_attribute_docstrings=True)


# The schema keyword that carries `Allowed`'s words (tools/schema.py, tools/config_docs.py).
ALLOWED_KEYWORD = "x-allowed"


@dataclass(frozen=True)
class Allowed:
    """What a one-line error says is allowed, attached to a type: `Annotated[str, ..., Allowed("...")]`."""

    text: str

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        # The same words in the stack schema, as an annotation keyword (JSON Schema 2020-12
        # core, 6.5: unknown keywords are annotations), for the generated key reference
        # (tools/config_docs.py, docs/configuration-keys.md).
        schema = handler(core_schema)
        schema[ALLOWED_KEYWORD] = self.text
        return schema


def pattern(regex: str, allowed: str) -> Any:
    """A string matching `regex`."""
    return Annotated[str, Field(pattern=regex), Allowed(allowed)]


def whole_number(low: int, high: int) -> Any:
    """An integer from `low` to `high`."""
    return Annotated[int, Field(ge=low, le=high), Allowed(f"a whole number from {low} to {high}")]


def one_of(*values: str) -> Any:
    """One of these strings, as the stack file spells it."""
    return Annotated[Literal[values], Allowed(f"one of {', '.join(values)}")]  # type: ignore[valid-type]


Bool = Annotated[bool, Allowed("true or false")]


# Azure naming rules (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules):
#   Microsoft.Resources/resourcegroups: 1-90; alphanumerics, underscores, parentheses,
#   hyphens, periods; cannot end in a period. (Unicode letters are allowed too; we keep ASCII.)
#   Microsoft.ContainerService/managedClusters: 1-63; alphanumerics, underscores, hyphens;
#   start and end with an alphanumeric.
ResourceGroupName = pattern(
    r"^[A-Za-z0-9_().-]{0,89}[A-Za-z0-9_()-]$", "1-90 letters, digits, '_', '-', '.', '(' or ')', not ending in '.'"
)
ClusterName = pattern(
    r"^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$",
    "1-63 letters, digits, '_' or '-', starting and ending with a letter or digit",
)
# "1.NN" (AKS picks the latest patch) or "1.NN.P". Keep it a string: YAML `1.30` is a float.
KubernetesVersion = pattern(r"^1\.\d{2}(\.\d+)?$", "'1.NN' or '1.NN.P', such as '1.33'")
# Region names as ARM spells them (`az account list-locations -o table`, Name column).
Location = pattern(
    r"^[a-z][a-z0-9]{0,63}$",
    "an Azure region name in lowercase (at most 64 characters), such as 'eastus' (az account list-locations -o table)",
)
# Azure VM size names (learn.microsoft.com/azure/virtual-machines/vm-naming-conventions).
VmSize = pattern(r"^[Ss]tandard_[A-Za-z0-9_]{1,64}$", "an Azure VM size name such as 'Standard_NC4as_T4_v3' (at most 73 characters)")
# AKS agent pool names (Linux): lowercase letters and digits, start with a letter, at most
# 12 characters (azure-aks-docs create-node-pools.md "Limitations"; the agentPools REST spec
# pattern ^[a-z][a-z0-9]{0,11}$).
POOL_NAME_PATTERN = r"^[a-z][a-z0-9]{0,11}$"
POOL_NAME_ALLOWED = "1-12 lowercase letters and digits, starting with a letter (AKS Linux node pool names)"
PoolName = pattern(POOL_NAME_PATTERN, POOL_NAME_ALLOWED)
# A container image reference, after the grammar of distribution/reference (reference.go):
# [host[:port]/]path-component[/path-component...][:tag][@sha256:digest].
_IMAGE_PATTERN = (
    r"^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]+)?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$"
)


def _image_name_length(reference: str) -> str:
    # distribution/reference: NameTotalLengthMax = 255, the name without its tag or digest.
    if len(name := repository(reference)) > 255:
        raise ValueError(f"an image name of at most 255 characters (distribution/reference), not {len(name)}")
    return reference


Image = Annotated[
    str,
    Field(pattern=_IMAGE_PATTERN),
    AfterValidator(_image_name_length),
    Allowed("a container image reference such as 'registry/repo:tag', its name at most 255 characters"),
]
# A subnet's ARM resource ID (azure-rest-api-specs agentPools: vnetSubnetID and podSubnetID
# are "arm-id" strings of type Microsoft.Network/virtualNetworks/subnets).
SubnetId = pattern(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+$",
    "a subnet's resource ID, /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>",
)


# Entra ID object IDs are GUIDs.
Guid = pattern(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "an Entra ID object ID (a GUID)",
)


def _not_reserved(namespace: str) -> str:
    # "Avoid creating namespaces with the prefix kube-, since it is reserved for Kubernetes
    # system namespaces" (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces).
    if namespace in RESERVED_NAMESPACES or namespace.startswith("kube-"):
        raise ValueError(
            "this program creates and deletes its namespace, so it cannot be 'default' or a 'kube-' namespace, "
            "which Kubernetes reserves for itself"
        )
    return namespace


# RFC 1123 DNS label: what Kubernetes requires of a namespace name.
OwnedNamespace = Annotated[
    str,
    Field(pattern=r"^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$"),
    AfterValidator(_not_reserved),
    Allowed("a DNS label: 1-63 lowercase letters, digits or '-', starting and ending with a letter or digit; not 'default' or 'kube-*'"),
]

_IPV4_ALLOWED = "an IPv4 address or CIDR range such as '203.0.113.0/24'"


def _ipv4_range(value: str) -> str:
    """AKS authorized ranges are IPv4 only (api-server-authorized-ip-ranges.md): the pattern holds
    it to a dotted quad, so the address library sees IPv4 alone."""
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as error:
        raise ValueError(f"expected {_IPV4_ALLOWED} ({error})") from None
    return value


Ipv4Range = Annotated[str, Field(pattern=r"^\d{1,3}(\.\d{1,3}){3}(/\d{1,2})?$"), AfterValidator(_ipv4_range), Allowed(_IPV4_ALLOWED)]


def unique(items: tuple[str, ...]) -> tuple[str, ...]:
    """Each entry once, case aside: Entra object IDs, e-mail domains and the like are the same
    in any case."""
    folded = [v.casefold() for v in items]
    repeated = sorted({v for v, f in zip(items, folded, strict=True) if folded.count(f) > 1})
    if repeated:
        raise ValueError(f"expected each entry once (case aside); repeated: {', '.join(repeated)}")
    return items


def list_of(item: Any, most: int) -> Any:
    return Annotated[
        tuple[item, ...],
        Field(max_length=most, json_schema_extra={"uniqueItems": True}),
        AfterValidator(unique),
        Allowed("a list"),
    ]


def whole_numbers(value: Any) -> Any:
    """`value` with each whole float an int, as the CLI writes a stack file's number (Go's
    encoding/json writes float64 2 as `2`). The engine's protobuf Struct carries every number as a
    double: an AgentPool's `count`, `minCount`, `maxPods` are `integer`s in its spec (a component's
    inputs over Construct are written whole by components/config/cli_values.py instead)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {key: whole_numbers(item) for key, item in value.items()}
    return [whole_numbers(item) for item in value] if isinstance(value, (list, tuple)) else value
