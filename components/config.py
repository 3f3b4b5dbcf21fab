"""Stack configuration: parsed and validated once, into frozen typed objects.

This is the only module that knows configuration keys. Components receive the typed
objects below and never call `pulumi.Config()`.

One source of truth: each key is a field of a pydantic dataclass below, with its type, its
default, its allowed values (a pattern, a range, a `Literal`) and its description. The same
definitions validate a stack's config (`parse`) and generate the JSON Schema of the stack
files (`stack_file_schema`, committed as `schema/stack.schema.json`).

Every rule raises `ConfigError`, a `pulumi.RunError`: the CLI prints its one-line message
(key path, bad value, what is allowed) without a stack trace, and since `load()` runs before
any resource is registered, a bad value never leaves a half-created stack behind.

Values arrive the way the Pulumi CLI hands them to a program: a flat map from
`namespace:key` to a string (objects JSON-encoded, booleans as "true"/"false").
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import re
import typing
from dataclasses import field, fields
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, Optional

import pulumi
from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass

from components.azure import gpu_sizes
from components.errors import ConfigError

NAMESPACE = "aks-gpu"
LOCATION_KEY = "azure-native:location"

# The guide creates everything in eastus (`az group create ... --location eastus`).
DEFAULT_LOCATION = "eastus"

# Image defaults. The device plugin default is the one today's AKS guide applies
# (azure-aks-docs articles/aks/use-nvidia-gpu.md); the 2020 guide's own image,
# `mcr.microsoft.com/oss/nvidia/k8s-device-plugin:1.11`, is one config value away.
DEFAULT_DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"
GUIDE_DEVICE_PLUGIN_IMAGE = "mcr.microsoft.com/oss/nvidia/k8s-device-plugin:1.11"
DEFAULT_MNIST_IMAGE = "mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu"
# NVIDIA's DCGM exporter and GPU Operator chart, pinned (docs/gpu.md says where they come from).
DEFAULT_DCGM_EXPORTER_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless"
DEFAULT_GPU_OPERATOR_VERSION = "v26.7.0"

SYSTEM_POOL_NAME = "system"
# "AKS supports up to 100 node pools per cluster" (azure-aks-docs articles/aks/quotas-skus-regions.md);
# one is the System pool.
MAX_GPU_POOLS = 99
# Budget notifications: "contactEmails ... maximum of 50" (consumption budgets spec).
MAX_BUDGET_EMAILS = 50
MAX_POOL_NODES = 1000  # AKS: at most 1000 nodes per VMSS node pool (quotas-skus-regions.md)
# "You can specify up to 200 authorized IP address ranges" (azure-aks-docs
# articles/aks/api-server-authorized-ip-ranges.md).
MAX_AUTHORIZED_IP_RANGES = 200
# Namespaces that exist in every cluster: this program creates and deletes its namespaces,
# so each must be one the program can own.
RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


# --------------------------------------------------------------------------- value types


class Allowed:
    """What a one-line error says is allowed, attached to a type: `Annotated[str, ..., Allowed("...")]`."""

    def __init__(self, text: str) -> None:
        self.text = text


def _pattern(regex: str, allowed: str, description: str = "") -> Any:
    return Annotated[str, Field(pattern=regex, description=description or None), Allowed(allowed)]


def _count(low: int, high: int) -> Any:
    return Annotated[int, Field(ge=low, le=high), Allowed(f"a whole number from {low} to {high}")]


def _one_of(*values: str) -> Any:
    return Annotated[Literal[values], Allowed(f"one of {', '.join(values)}")]  # type: ignore[valid-type]


Bool = Annotated[bool, Allowed("true or false")]

# Azure naming rules (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules):
#   Microsoft.Resources/resourcegroups: 1-90; alphanumerics, underscores, parentheses,
#   hyphens, periods; cannot end in a period. (Unicode letters are allowed too; we keep ASCII.)
#   Microsoft.ContainerService/managedClusters: 1-63; alphanumerics, underscores, hyphens;
#   start and end with an alphanumeric.
ResourceGroupName = _pattern(
    r"^[A-Za-z0-9_().-]{0,89}[A-Za-z0-9_()-]$", "1-90 letters, digits, '_', '-', '.', '(' or ')', not ending in '.'"
)
ClusterName = _pattern(
    r"^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$",
    "1-63 letters, digits, '_' or '-', starting and ending with a letter or digit",
)
# "1.NN" (AKS picks the latest patch) or "1.NN.P". Keep it a string: YAML `1.30` is a float.
KubernetesVersion = _pattern(r"^1\.\d{2}(\.\d+)?$", "'1.NN' or '1.NN.P', such as '1.33'")
# Region names as ARM spells them (`az account list-locations -o table`, Name column).
Location = _pattern(r"^[a-z][a-z0-9]*$", "an Azure region name in lowercase, such as 'eastus' (az account list-locations -o table)")
# Azure VM size names (learn.microsoft.com/azure/virtual-machines/vm-naming-conventions).
VmSize = _pattern(r"^Standard_[A-Za-z0-9_]+$", "an Azure VM size name such as 'Standard_NC4as_T4_v3'")
# AKS agent pool names (Linux): lowercase letters and digits, start with a letter, at most
# 12 characters (azure-aks-docs create-node-pools.md "Limitations"; the agentPools REST spec
# pattern ^[a-z][a-z0-9]{0,11}$).
POOL_NAME_PATTERN = r"^[a-z][a-z0-9]{0,11}$"
POOL_NAME_ALLOWED = "1-12 lowercase letters and digits, starting with a letter (AKS Linux node pool names)"
PoolName = _pattern(POOL_NAME_PATTERN, POOL_NAME_ALLOWED)
# A container image reference, after the grammar of distribution/reference (reference.go):
# [host[:port]/]path-component[/path-component...][:tag][@sha256:digest].
Image = _pattern(
    r"^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]+)?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$",
    "a container image reference such as 'registry/repo:tag'",
)
# A subnet's ARM resource ID (azure-rest-api-specs agentPools: vnetSubnetID and podSubnetID
# are "arm-id" strings of type Microsoft.Network/virtualNetworks/subnets).
SubnetId = _pattern(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+$",
    "a subnet's resource ID, /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>",
)


def _spot_price(value: float) -> float:
    # "set a max price, in US dollars (USD) using up to five decimal places ... If you set the
    # max price to -1, the instance won't be evicted based on price" (azure-aks-docs
    # spot-node-pool.md, ms.date 04/06/2025).
    if value != -1 and (value <= 0 or round(value, 5) != value):
        raise ValueError("a price per hour above 0 with at most five decimals, or -1")
    return value


SpotMaxPrice = Annotated[
    float, Field(allow_inf_nan=False), AfterValidator(_spot_price),
    Allowed("-1 (no cap) or a price per hour in US dollars above 0, with at most five decimals, such as 0.25"),
]
# Entra ID object IDs are GUIDs.
Guid = _pattern(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "an Entra ID object ID (a GUID)",
)


def _not_reserved(namespace: str) -> str:
    if namespace in RESERVED_NAMESPACES:
        raise ValueError(
            f"this program creates and deletes its namespace, so it cannot be one of {', '.join(RESERVED_NAMESPACES)}"
        )
    return namespace


# RFC 1123 DNS label: what Kubernetes requires of a namespace name.
OwnedNamespace = Annotated[
    str,
    Field(pattern=r"^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$", description="Created and deleted by this program."),
    AfterValidator(_not_reserved),
    Allowed("a DNS label: 1-63 lowercase letters, digits or '-', starting and ending with a letter or digit"),
]

_IPV4_ALLOWED = "an IPv4 address or CIDR range such as '203.0.113.0/24'"


def _ipv4_range(value: str) -> str:
    """AKS authorized ranges are IPv4 only (api-server-authorized-ip-ranges.md)."""
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as error:
        raise ValueError(f"expected {_IPV4_ALLOWED} ({error})") from None
    if network.version != 4:
        raise ValueError(f"expected {_IPV4_ALLOWED}")
    return value


Ipv4Range = Annotated[
    str, Field(pattern=r"^\d{1,3}(\.\d{1,3}){3}(/\d{1,2})?$"), AfterValidator(_ipv4_range), Allowed(_IPV4_ALLOWED)
]


def _unique(items: tuple[str, ...]) -> tuple[str, ...]:
    repeated = sorted({v for v in items if items.count(v) > 1})
    if repeated:
        raise ValueError(f"expected each entry once; repeated: {', '.join(repeated)}")
    return items


def _list_of(item: Any, most: int) -> Any:
    return Annotated[
        tuple[item, ...],
        Field(max_length=most, json_schema_extra={"uniqueItems": True}),
        AfterValidator(_unique),
        Allowed("a list"),
    ]


# Who manages the GPU stack (azure-aks-docs articles/aks/use-nvidia-gpu.md,
# aks-managed-gpu-nodes.md, nvidia-gpu-operator.md).
GPU_MANAGEMENT_MODES = ("device-plugin", "aks-managed", "gpu-operator")
# AKS agent pool gpuInstanceProfile values (the 2025-09-01 agentPools schema's enum;
# azure-aks-docs articles/aks/gpu-multi-instance.md).
MIG_PROFILES = ("MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g")

# Access modes. "local": the guide's `az aks get-credentials` with Kubernetes RBAC and the
# cluster's local accounts. "entra": Microsoft Entra ID sign-in with Azure RBAC for
# Kubernetes authorization and local accounts disabled (azure-aks-docs
# articles/aks/manage-azure-rbac.md, manage-local-accounts-managed-azure-ad.md).
ACCESS_MODES = ("local", "entra")
# roleAssignments principalType values for whoever runs `pulumi up` (Azure RBAC checks that
# it matches the principal), or "none" for no role assignment.
DEPLOYER_TYPES = ("ServicePrincipal", "User", "none")
# Network policy engines on Azure CNI Overlay. "cilium" is Azure CNI Powered by Cilium
# (dataplane and policy); "calico" enforces policy on the Azure dataplane; "none" leaves
# NetworkPolicy objects unenforced. Azure Network Policy Manager ("azure") is not offered:
# Microsoft retires it (azure-aks-docs articles/aks/use-network-policies.md).
NETWORK_POLICIES = ("cilium", "calico", "none")
# autoUpgradeProfile values, as the AKS API spells them (azure-aks-docs
# articles/aks/auto-upgrade-cluster.md, auto-upgrade-node-os-image.md).
UPGRADE_CHANNELS = ("none", "patch", "stable", "rapid", "node-image")
NODE_OS_CHANNELS = ("None", "Unmanaged", "SecurityPatch", "NodeImage")
# managedClusters sku.tier: Free (no SLA), Standard (uptime SLA), Premium (Standard plus
# long-term support) (azure-aks-docs articles/aks/free-standard-pricing-tiers.md).
CLUSTER_TIERS = ("Free", "Standard", "Premium")
# Channels that change the cluster's Kubernetes version by themselves: "patch" moves the
# patch release, "stable" and "rapid" the minor version too (auto-upgrade-cluster.md).
# "node-image" and "none" leave the version alone.
VERSION_UPGRADE_CHANNELS = ("patch", "stable", "rapid")


# --------------------------------------------------------------------------- typed config

# Strict: `nodeCount: "3"` or `gen2: "yes"` is an error, not a guess. Members are spelled in
# camelCase in the stack files (`nodeCount`), in snake_case in Python (`node_count`).
_MODEL = ConfigDict(
    strict=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, use_attribute_docstrings=True
)


@dataclass(frozen=True, config=_MODEL)
class SystemPoolConfig:
    """The small Linux System pool that runs kube-system pods (GPU nodes are tainted).
    Applied when the cluster is created: Azure cannot update it through the cluster."""

    vm_size: VmSize = "Standard_D2s_v5"
    """The System pool's VM size."""
    node_count: _count(1, MAX_POOL_NODES) = 1
    """System nodes; a System pool needs at least one for CoreDNS and metrics-server."""


@dataclass(frozen=True, config=_MODEL)
class GpuPoolSettings:
    """One GPU User pool (`az aks nodepool add`): an entry of gpuPools, whose key names it."""

    vm_size: VmSize = gpu_sizes.GUIDE_SIZE
    """A GPU (N-series) size. Unset: the guide's Standard_NC6 (retired), or Standard_NC6s_v2 with gen2."""
    node_count: _count(0, MAX_POOL_NODES) = 1
    """GPU nodes; with autoscaling, the starting count (default: minCount)."""
    min_count: Optional[_count(0, MAX_POOL_NODES)] = None
    """With maxCount: the cluster autoscaler's floor (0 scales to zero)."""
    max_count: Optional[_count(1, MAX_POOL_NODES)] = None
    """With minCount: the cluster autoscaler's ceiling."""
    gen2: Bool = False
    """The guide's Gen2 variant: refuses a Gen1-only size (Linux pools boot Gen2 when they can)."""
    dedicated_vhd: Bool = False
    """The guide's dedicated GPU image, today AKS-managed GPU nodes (preview): AKS installs the GPU stack."""
    spot: Bool = False
    """Spot VMs: Delete on eviction; no price cap unless spotMaxPrice sets one."""
    spot_max_price: Optional[SpotMaxPrice] = None
    """spot only: the most a node may cost per hour, in US dollars, above which Azure evicts it; -1 (the default): no cap, billed up to the pay-as-you-go price."""
    management: _one_of(*GPU_MANAGEMENT_MODES) = "device-plugin"
    """Who installs the GPU driver and device plugin: device-plugin (the guide's DaemonSet), aks-managed (AKS, preview; what dedicatedVhd selects), or gpu-operator (NVIDIA's GPU Operator)."""
    mig_profile: Optional[_one_of(*MIG_PROFILES)] = None
    """Multi-instance GPU: slice each GPU (A100, H100 sizes); each slice is one nvidia.com/gpu."""
    max_pods: Optional[_count(10, 250)] = None
    """Pods per node. Unset: 250, or on an existing cluster with Azure CNI without overlay its System pool's, which its subnets are sized for."""
    vnet_subnet_id: Optional[SubnetId] = None
    """existingCluster only: the nodes' subnet. Unset: the System pool's, when the cluster's pools have subnets of their own."""
    pod_subnet_id: Optional[SubnetId] = None
    """existingCluster only: the pods' subnet (Azure CNI with dynamic pod IPs). Unset: the System pool's, when it has one."""

    @property
    def managed(self) -> bool:
        """AKS installs the GPU stack: `management: aks-managed`, or the card's `dedicatedVhd: true`."""
        return self.dedicated_vhd or self.management == "aks-managed"

    @property
    def mode(self) -> str:
        return "aks-managed" if self.managed else self.management

    @property
    def autoscaling(self) -> bool:
        return self.min_count is not None

    @property
    def can_scale_to_zero(self) -> bool:
        # A fixed pool of 0 nodes is refused while the Job is enabled, so only the
        # autoscaler's floor matters to anything that waits for a node.
        return self.min_count == 0


@dataclass(frozen=True, config=_MODEL)
class GpuPoolConfig(GpuPoolSettings):
    """The separate User pool of GPU nodes (`az aks nodepool add --name gpu`)."""

    name: PoolName = "gpu"
    """The pool's name (the guide's `--name gpu`); not 'system'."""


# gpuPools: AKS pool name -> the members of gpuPool but its name.
GpuPoolMap = Annotated[
    dict[str, GpuPoolSettings],
    Field(min_length=1, max_length=MAX_GPU_POOLS, json_schema_extra={"propertyNames": {"pattern": POOL_NAME_PATTERN}}),
    Allowed(f"a map from pool name to pool settings, with 1 to {MAX_GPU_POOLS} pools"),
]


@dataclass(frozen=True, config=_MODEL)
class ExistingClusterConfig:
    """An AKS cluster this stack does not own: it adds its GPU pools to it, and reads
    everything else from it (docs/existing-cluster.md)."""

    resource_group_name: ResourceGroupName
    """The existing cluster's resource group."""
    name: ClusterName
    """The existing cluster's name."""


@dataclass(frozen=True, config=_MODEL)
class DevicePluginConfig:
    """The NVIDIA device plugin DaemonSet (guide steps 4-5)."""

    namespace: OwnedNamespace = "gpu-resources"
    """The device plugin's namespace (the guide's gpu-resources)."""
    image: Image = DEFAULT_DEVICE_PLUGIN_IMAGE
    """The device plugin image; the 2020 guide's is mcr.microsoft.com/oss/nvidia/k8s-device-plugin:1.11."""


@dataclass(frozen=True, config=_MODEL)
class MnistJobConfig:
    """The TensorFlow MNIST training Job that proves the GPU works (guide steps 8-9)."""

    enabled: Bool = True
    """false: no Job."""
    image: Image = DEFAULT_MNIST_IMAGE
    """The training image."""
    max_steps: _count(1, 1_000_000) = 500
    """Training steps (--max_steps)."""
    wait_for_completion: Bool = True
    """false: pulumi up returns once the Job is created (pulumi.com/skipAwait); its name then carries a hash of its spec."""
    # The guide's `kubectl apply` lands the Job in `default`; a namespace of its own lets it
    # have its own NetworkPolicy and keeps workloads out of `default` (Checkov CKV_K8S_21).
    namespace: OwnedNamespace = "gpu-workloads"
    """The Job's namespace, other than the device plugin's."""


@dataclass(frozen=True, config=_MODEL)
class AccessConfig:
    """Who may reach the cluster's API server, and how they sign in."""

    mode: _one_of(*ACCESS_MODES) = "local"
    """local: the guide's local accounts and Kubernetes RBAC; entra: Entra ID sign-in, Azure RBAC, local accounts off."""
    admin_group_object_ids: _list_of(Guid, 100) = ()
    """entra only: Entra ID groups whose members are cluster admins."""
    authorized_ip_ranges: _list_of(Ipv4Range, MAX_AUTHORIZED_IP_RANGES) = ()
    """IPv4 addresses or ranges allowed to reach the API server; empty allows any address."""
    deployer_type: _one_of(*DEPLOYER_TYPES) = "ServicePrincipal"
    """entra only: what kind of identity runs pulumi up, granted cluster-admin; none grants nothing."""
    deployer_object_id: Optional[Guid] = None
    """entra only: the object ID granted cluster-admin; unset, whoever runs the program."""

    @property
    def entra(self) -> bool:
        return self.mode == "entra"

    @property
    def grants_deployer(self) -> bool:
        return self.entra and self.deployer_type != "none"


@dataclass(frozen=True, config=_MODEL)
class NetworkConfig:
    """The network policy engine on Azure CNI Overlay (chosen when the cluster is created)."""

    policy: _one_of(*NETWORK_POLICIES) = "cilium"
    """cilium (Azure CNI powered by Cilium), calico, or none (NetworkPolicies unenforced)."""


@dataclass(frozen=True, config=_MODEL)
class UpgradeConfig:
    """Automatic upgrades. The AKS API's defaults for a new cluster: no automatic Kubernetes
    upgrades, weekly node images. Stated here so the stack says what the cluster does."""

    channel: _one_of(*UPGRADE_CHANNELS) = "none"
    """autoUpgradeProfile.upgradeChannel; patch, stable and rapid move the Kubernetes version."""
    node_os_channel: _one_of(*NODE_OS_CHANNELS) = "NodeImage"
    """autoUpgradeProfile.nodeOSUpgradeChannel."""


@dataclass(frozen=True, config=_MODEL)
class MonitoringConfig:
    """GPU metrics (docs/gpu.md)."""

    gpu_metrics: Bool = True
    """NVIDIA's DCGM exporter on the GPU nodes: this program's DaemonSet (device-plugin) or the chart's (gpu-operator); AKS runs its own (aks-managed)."""
    dcgm_exporter_image: Image = DEFAULT_DCGM_EXPORTER_IMAGE
    """The DCGM exporter image the device-plugin mode deploys."""


@dataclass(frozen=True, config=_MODEL)
class GpuOperatorConfig:
    """NVIDIA's GPU Operator Helm chart (gpuPool.management: gpu-operator)."""

    # NVIDIA's chart index lists its versions with a leading v (`v26.7.0`), and Helm matches
    # the version string as listed: `26.7.0` is "chart not found" at deploy time.
    version: _pattern(
        r"^v\d+\.\d+\.\d+$", "a chart version with its leading v, as NVIDIA's chart index lists it, such as 'v26.7.0'"
    ) = DEFAULT_GPU_OPERATOR_VERSION
    """The gpu-operator chart version, from NVIDIA's chart repository."""
    namespace: OwnedNamespace = "gpu-operator"
    """The operator's namespace (NVIDIA's install guide uses gpu-operator)."""


PREFLIGHT_MODES = ("enforce", "warn", "off")


@dataclass(frozen=True, config=_MODEL)
class PreflightConfig:
    """Checks against the Azure subscription before anything is created (docs/preflight.md)."""

    mode: _one_of(*PREFLIGHT_MODES) = "enforce"
    """enforce: a deployment stops on a problem Azure would refuse; warn: it warns and goes on; off: no checks."""
    skus_file: Optional[Annotated[str, Allowed("a file path")]] = None
    """With usageFile: `az vm list-skus --location <loc> --resource-type virtualMachines --all -o json`, saved (relative to the project). Set, no live call is made."""
    usage_file: Optional[Annotated[str, Allowed("a file path")]] = None
    """With skusFile: `az vm list-usage --location <loc> -o json`, saved (relative to the project)."""
    prices_file: Optional[Annotated[str, Allowed("a file path")]] = None
    """A saved Azure Retail Prices API response (JSON with Items), relative to the project. Set, no live call is made (docs/cost.md)."""
    cluster_file: Optional[Annotated[str, Allowed("a file path")]] = None
    """existingCluster only: `az aks show --output json` of the cluster, saved (relative to the project), which the offline render (make render) uses instead of assumed facts. pulumi preview and up read the cluster from Azure."""


# An e-mail address, as Azure's budget notifications take it: one '@', no spaces, a dot in
# the domain (a plausibility check: the mailbox is Azure's to reach).
Email = _pattern(r"^[^@\s]+@[^@\s]+\.[^@\s]+$", "an e-mail address such as 'gpu-team@example.com'")
PositiveAmount = Annotated[float, Field(gt=0, allow_inf_nan=False), Allowed("a number greater than 0")]


@dataclass(frozen=True, config=_MODEL)
class BudgetConfig:
    """A monthly Azure consumption budget over what the stack runs (docs/cost.md)."""

    amount: PositiveAmount
    """The monthly budget, in the billing currency."""
    contact_emails: Annotated[
        tuple[Email, ...],
        Field(min_length=1, max_length=MAX_BUDGET_EMAILS, json_schema_extra={"uniqueItems": True}),
        AfterValidator(_unique),
        Allowed(f"a list of 1 to {MAX_BUDGET_EMAILS} e-mail addresses"),
    ]
    """Who is told at 80% and 100% of actual cost and at 100% of forecast cost."""


@dataclass(frozen=True, config=_MODEL)
class CostConfig:
    """What the stack may cost (docs/cost.md)."""

    max_hourly: Optional[PositiveAmount] = None
    """The most the stack may cost per hour at its pools' largest sizes, in the price list's currency; a deployment above it stops."""
    budget: Optional[BudgetConfig] = None
    """A monthly consumption budget over what the stack runs (its resource groups, or on an existing cluster its pools' tag), with e-mail alerts."""


@dataclass(frozen=True, config=_MODEL)
class ProjectConfig:
    """Every `aks-gpu:` key of a stack file."""

    resource_group_name: Optional[ResourceGroupName] = None
    """The resource group's name. Unset or empty: <project>-<stack>-rg."""
    cluster_name: Optional[ClusterName] = None
    """The AKS cluster's name. Unset or empty: <project>-<stack>."""
    kubernetes_version: Optional[KubernetesVersion] = None
    """'1.NN' or '1.NN.P' (quote it in YAML). Unset or empty: the AKS default."""
    system_pool: SystemPoolConfig = SystemPoolConfig()
    gpu_pool: GpuPoolConfig = GpuPoolConfig()
    gpu_pools: Optional[GpuPoolMap] = None
    """Several GPU pools, keyed by AKS pool name, each with gpuPool's members but name; instead of gpuPool."""
    existing_cluster: Optional[ExistingClusterConfig] = None
    """Add the GPU pools to this AKS cluster instead of creating one; the stack owns only what it adds."""
    device_plugin: DevicePluginConfig = DevicePluginConfig()
    mnist_job: MnistJobConfig = MnistJobConfig()
    access: AccessConfig = AccessConfig()
    network: NetworkConfig = NetworkConfig()
    upgrade: UpgradeConfig = UpgradeConfig()
    monitoring: MonitoringConfig = MonitoringConfig()
    gpu_operator: GpuOperatorConfig = GpuOperatorConfig()
    preflight: PreflightConfig = PreflightConfig()
    cost: CostConfig = CostConfig()
    cluster_tier: _one_of(*CLUSTER_TIERS) = "Free"
    """The AKS pricing tier: Free, Standard (uptime SLA) or Premium."""
    protect: Bool = False
    """Protect the resource group and the cluster from pulumi destroy and replacement."""


@dataclass(frozen=True)
class StackConfig:
    """What the program runs on: every key resolved, every default applied."""

    location: str
    resource_group_name: str
    cluster_name: str
    kubernetes_version: Optional[str]
    system_pool: SystemPoolConfig
    #: The GPU pools: gpuPool's one pool, or gpuPools' entries in the stack file's order.
    gpu_pools: tuple[GpuPoolConfig, ...]
    device_plugin: DevicePluginConfig
    mnist_job: MnistJobConfig
    access: AccessConfig = AccessConfig()
    network: NetworkConfig = NetworkConfig()
    upgrade: UpgradeConfig = UpgradeConfig()
    cluster_tier: str = "Free"
    protect: bool = False
    preflight: PreflightConfig = PreflightConfig()
    monitoring: MonitoringConfig = MonitoringConfig()
    gpu_operator: GpuOperatorConfig = GpuOperatorConfig()
    cost: CostConfig = CostConfig()
    #: azure-native:subscriptionId, if the stack sets it.
    subscription_id: Optional[str] = None
    #: Set: the pools go into this cluster, which the stack reads but does not own; its
    #: names are resource_group_name and cluster_name.
    existing_cluster: Optional[ExistingClusterConfig] = None
    #: The pools came from the gpuPools map (keys `aks-gpu:gpuPools.<name>`), not gpuPool.
    pool_map: bool = False
    # Things the user should know at preview time (preview features, unknown sizes, ...).
    warnings: tuple[str, ...] = field(default=())


    def pool_key(self, pool: GpuPoolConfig) -> str:
        """The config key that declares `pool`, as error messages and warnings name it."""
        return f"{NAMESPACE}:gpuPools.{pool.name}" if self.pool_map else f"{NAMESPACE}:gpuPool"

    @property
    def modes(self) -> frozenset[str]:
        """Who manages the GPU stack, over all pools."""
        return frozenset(p.mode for p in self.gpu_pools)

    def pools_of(self, mode: str) -> tuple[GpuPoolConfig, ...]:
        return tuple(p for p in self.gpu_pools if p.mode == mode)

    @property
    def owned_namespaces(self) -> tuple[str, ...]:
        """The namespaces the stack creates, and deletes on destroy."""
        names = [self.device_plugin.namespace] if "device-plugin" in self.modes else []
        names += [self.gpu_operator.namespace] if "gpu-operator" in self.modes else []
        names += [self.mnist_job.namespace] if self.mnist_job.enabled else []
        return tuple(names)

    @property
    def select_pools(self) -> bool:
        """The cluster may hold GPU pools this program does not manage the GPU stack of (an
        existing cluster, or several pools of different modes), so the DaemonSets and Jobs
        select this program's pools by their agentpool label. The guide's single pool in its
        own new cluster keeps the guide's manifests as they are."""
        return self.existing_cluster is not None or self.pool_map


# The structured keys: members are checked against their dataclass before validation.
_OBJECT_KEYS = {
    **{to_camel(f.name): f.type for f in fields(ProjectConfig) if hasattr(f.default, "__dataclass_fields__")},
    "existingCluster": "ExistingClusterConfig",
}
_KEYS = [to_camel(f.name) for f in fields(ProjectConfig)]


def known_keys() -> list[str]:
    """Every `aks-gpu:` key, in the order the README documents them."""
    return [f"{NAMESPACE}:{k}" for k in _KEYS]


def members(cls: type) -> list[str]:
    """A structured key's members, as the stack files spell them."""
    return [to_camel(f.name) for f in fields(cls)]


# --------------------------------------------------------------------------- parse


SUBSCRIPTION_KEY = "azure-native:subscriptionId"


def parse(raw: Mapping[str, str], project: str, stack: str, root: Optional[Path] = None) -> StackConfig:
    """Builds the typed configuration from the CLI's flat `namespace:key -> string` map.

    Keys outside the `aks-gpu:` namespace belong to providers and are ignored, except
    `azure-native:location`, which also places the resource group, and
    `azure-native:subscriptionId`, which preflight reads. Relative paths are taken from
    `root`, the project directory (the Pulumi CLI runs the program there).
    """
    values = _decode(raw)
    try:
        project_config = _ADAPTER.validate_json(json.dumps(values))
    except ValidationError as error:
        raise _one_line(error) from None

    existing = project_config.existing_cluster
    location = _validated(Location, LOCATION_KEY, raw.get(LOCATION_KEY) or DEFAULT_LOCATION)
    if existing is not None:
        _check_existing_cluster(values)
        resource_group_name, cluster_name = existing.resource_group_name, existing.name
    else:
        base = _default_base_name(project, stack)
        resource_group_name = project_config.resource_group_name or _validated(
            ResourceGroupName, f"{NAMESPACE}:resourceGroupName", f"{base}-rg"
        )
        cluster_name = project_config.cluster_name or _validated(
            ClusterName,
            f"{NAMESPACE}:clusterName",
            base,
            hint=" (the default comes from project and stack names: set it explicitly)",
        )

    pools, pool_keys, members_given = _gpu_pools(project_config, values)
    mnist_job, device_plugin = project_config.mnist_job, project_config.device_plugin
    warnings: list[str] = []
    for pool in pools:
        key = pool_keys[pool.name]
        _check_gpu_pool(pool, mnist_job, key)
        warnings += gpu_sizes.check_pool(pool.vm_size, pool.gen2, key)
        warnings += _check_pool_stack(pool, members_given[pool.name], key)
    _check_modes(pools, pool_keys)
    _check_unused_settings(pools, values, pool_keys)
    _check_namespaces(frozenset(p.mode for p in pools), device_plugin, mnist_job, project_config.gpu_operator)
    _check_access(project_config.access)
    _check_upgrade(project_config.upgrade, project_config.kubernetes_version)
    _check_preflight(project_config.preflight, root or Path.cwd())
    for pool in pools if existing is None else ():
        for member, value in (("vnetSubnetId", pool.vnet_subnet_id), ("podSubnetId", pool.pod_subnet_id)):
            if value:
                raise _fail(
                    f"{pool_keys[pool.name]}.{member}", value,
                    f"only with {NAMESPACE}:existingCluster: the cluster this program creates has no VNet of its own, and AKS "
                    "takes subnets on all of a cluster's pools or none; remove it",
                )  # fmt: skip
    if project_config.preflight.cluster_file and existing is None:
        raise _fail(
            f"{NAMESPACE}:preflight.clusterFile", project_config.preflight.cluster_file,
            f"only with {NAMESPACE}:existingCluster: it describes the existing cluster for the offline render; remove it",
        )  # fmt: skip
    if project_config.network.policy == "none":
        warnings.append(NO_NETWORK_POLICY_WARNING)
    if project_config.access.grants_deployer and project_config.access.deployer_object_id is None:
        warnings.append(UNPINNED_DEPLOYER_WARNING)

    return StackConfig(
        location=location,
        resource_group_name=resource_group_name,
        cluster_name=cluster_name,
        kubernetes_version=project_config.kubernetes_version,
        system_pool=project_config.system_pool,
        gpu_pools=pools,
        device_plugin=device_plugin,
        mnist_job=mnist_job,
        access=project_config.access,
        network=project_config.network,
        upgrade=project_config.upgrade,
        cluster_tier=project_config.cluster_tier,
        protect=project_config.protect,
        preflight=project_config.preflight,
        monitoring=project_config.monitoring,
        gpu_operator=project_config.gpu_operator,
        cost=project_config.cost,
        subscription_id=raw.get(SUBSCRIPTION_KEY) or None,
        existing_cluster=existing,
        pool_map=project_config.gpu_pools is not None,
        warnings=tuple(warnings),
    )


def _gpu_pools(
    project_config: ProjectConfig, values: Mapping[str, Any]
) -> tuple[tuple[GpuPoolConfig, ...], dict[str, str], dict[str, Mapping[str, Any]]]:
    """The pools, each pool's config key, and the members each pool's stack entry sets.

    gpuPools' entries come sorted by name, so nothing (resources, outputs, messages) depends on
    the order in which the stack file, `pulumi config set` or the CLI's JSON hand them over."""
    if project_config.gpu_pools is None:
        pool = project_config.gpu_pool
        return (pool,), {pool.name: f"{NAMESPACE}:gpuPool"}, {pool.name: values.get("gpuPool", {})}
    if "gpuPool" in values:
        raise ConfigError(
            f"invalid config {NAMESPACE}:gpuPool with {NAMESPACE}:gpuPools: gpuPool is the guide's one GPU pool, "
            "gpuPools several; set one of them"
        )
    settings = [f.name for f in fields(GpuPoolSettings)]
    entries = sorted(project_config.gpu_pools.items())
    pools = tuple(GpuPoolConfig(name=name, **{f: getattr(entry, f) for f in settings}) for name, entry in entries)
    return (
        pools,
        {name: f"{NAMESPACE}:gpuPools.{name}" for name, _ in entries},
        {name: values["gpuPools"][name] for name, _ in entries},
    )


_ADAPTER = TypeAdapter(ProjectConfig)
_BOOLEAN_SCALARS = {to_camel(f.name) for f in fields(ProjectConfig) if f.type in ("Bool", Bool)}


def _decode(raw: Mapping[str, str]) -> dict[str, Any]:
    """The `aks-gpu:` keys as JSON-like values: objects decoded (and their members checked),
    "true"/"false" made booleans, an empty string (a `Pulumi.yaml` default: "not set") dropped."""
    values: dict[str, Any] = {}
    for full_key, value in raw.items():
        if not full_key.startswith(NAMESPACE + ":"):
            continue
        key = full_key[len(NAMESPACE) + 1 :]
        if key not in _KEYS:
            raise ConfigError(f"unknown config {full_key}{_did_you_mean(key, _KEYS)}; allowed: {', '.join(known_keys())}")
        if key in _OBJECT_KEYS:
            values[key] = _object(full_key, value, _OBJECT_KEYS[key])
            if key == "gpuPool":
                values[key] = _gpu_pool_defaults(values[key], full_key)
        elif key == "gpuPools":
            values[key] = _pool_map(full_key, value)
        elif value == "":
            continue
        elif key in _BOOLEAN_SCALARS and value in ("true", "false"):
            values[key] = value == "true"
        else:
            values[key] = value
    return values


def _json_object(key: str, raw: Any) -> dict[str, Any]:
    """A structured key's value, decoded: an object, or a one-line error."""
    allowed_text = "expected an object (a YAML mapping in Pulumi.<stack>.yaml)"
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        raise _fail(key, raw, allowed_text) from None
    if not isinstance(value, dict):
        raise _fail(key, value, allowed_text)
    return value


def _object(key: str, raw: Any, cls: Any) -> dict[str, Any]:
    """Decodes a structured key and refuses members its dataclass does not have."""
    value = _json_object(key, raw)
    allowed = members(_resolve(cls))
    for member in value:
        if member not in allowed:
            raise ConfigError(f"unknown config {key}.{member}{_did_you_mean(member, allowed)}; allowed: {', '.join(allowed)}")
    return value


def _pool_map(key: str, raw: Any) -> dict[str, Any]:
    """Decodes gpuPools: each key an AKS pool name, each entry gpuPool's members but name."""
    entries = _json_object(key, raw)
    if not entries:
        raise _fail(key, entries, f"expected at least one pool, such as {{gpu: {{vmSize: {gpu_sizes.GUIDE_GEN2_SIZE}}}}}")
    pools = {}
    for name, entry in entries.items():
        if not re.fullmatch(POOL_NAME_PATTERN, name) or name == SYSTEM_POOL_NAME:
            raise _fail(f"{key}.{name}", name, f"a pool name must be {POOL_NAME_ALLOWED}, and not '{SYSTEM_POOL_NAME}'")
        if isinstance(entry, dict) and "name" in entry:
            raise _fail(f"{key}.{name}.name", entry["name"], f"the entry's key, {name!r}, is the pool's name; remove name")
        pools[name] = _gpu_pool_defaults(_object(f"{key}.{name}", entry, GpuPoolSettings), f"{key}.{name}")
    return pools


def _gpu_pool_defaults(value: dict[str, Any], key: str) -> dict[str, Any]:
    """The GPU pool's defaults that depend on other members."""
    value = dict(value)
    if ("minCount" in value) != ("maxCount" in value):
        given, missing = ("minCount", "maxCount") if "minCount" in value else ("maxCount", "minCount")
        raise ConfigError(
            f"invalid config {key}: {given} is set without {missing}; "
            "set both to turn the cluster autoscaler on, or neither for a fixed nodeCount"
        )
    if "vmSize" not in value:
        # The guide's size for the chosen generation (Standard_NC6, or Standard_NC6s_v2).
        value["vmSize"] = gpu_sizes.default_size(value.get("gen2") is True)
    if "nodeCount" not in value and "minCount" in value:
        # The autoscaler owns the count; start at the floor so an idle pool costs nothing.
        value["nodeCount"] = value["minCount"]
    return value


def _validated(type_: Any, key: str, value: Any, hint: str = "") -> Any:
    try:
        return TypeAdapter(type_, config=ConfigDict(strict=True)).validate_python(value)
    except ValidationError:
        raise _fail(key, value, f"expected {_allowed(type_)}{hint}") from None


def _default_base_name(project: str, stack: str) -> str:
    """`<project>-<stack>`, so two stacks in one subscription never share a name.

    Stack names may contain '.', which AKS names may not: it becomes '-'.
    """
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{project}-{stack}")


# --------------------------------------------------------------------------- one-line errors


def _fail(key: str, value: Any, allowed: str) -> ConfigError:
    return ConfigError(f"invalid config {key} = {_show(value)}: {allowed}")


def _show(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else repr(value)


def _one_line(error: ValidationError) -> ConfigError:
    """The first problem pydantic found, as `invalid config <key path> = <value>: <allowed>`."""
    problem = error.errors()[0]
    loc = problem["loc"]
    key = f"{NAMESPACE}:{loc[0]}" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
    if problem["type"] == "missing":
        return ConfigError(f"invalid config {key} is missing: expected {_allowed(_annotation_at(ProjectConfig, loc))}")
    if problem["type"] == "value_error":  # this module's validators word their own message
        text = str(problem["ctx"]["error"])
    elif problem["type"] == "too_long":
        text = f"expected at most {problem['ctx']['max_length']} entries"
    else:
        text = f"expected {_allowed(_annotation_at(ProjectConfig, loc))}"
    return _fail(key, problem["input"], text)


def _annotation_at(cls: Any, loc: tuple[Any, ...]) -> Any:
    """The type annotation of the member a pydantic error location points at."""
    annotation: Any = cls
    for part in loc:
        annotation = _strip_optional(annotation)
        if isinstance(part, int):
            annotation = typing.get_args(_strip_annotated(annotation))[0]
        elif typing.get_origin(_strip_annotated(annotation)) is dict:  # a map's entry
            annotation = typing.get_args(_strip_annotated(annotation))[1]
        else:
            hints = typing.get_type_hints(_resolve(annotation), include_extras=True)
            annotation = hints[_snake(part)]
    return annotation


def _allowed(annotation: Any) -> str:
    annotation = _strip_optional(annotation)
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, Allowed):
            return meta.text
    return "an object (a YAML mapping in Pulumi.<stack>.yaml)"


def _strip_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) is typing.Union:
        return next(a for a in typing.get_args(annotation) if a is not type(None))
    return annotation


def _strip_annotated(annotation: Any) -> Any:
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation


def _resolve(annotation: Any) -> Any:
    """A dataclass named by a string annotation (this module uses `from __future__ import annotations`)."""
    return globals()[annotation] if isinstance(annotation, str) else annotation


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


def camel_case(snake: str) -> str:
    """`node_count` -> `nodeCount`: config members and ARM properties are spelled so."""
    return to_camel(snake)


def _did_you_mean(word: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(word, allowed, n=1, cutoff=0.6)
    if not close:
        lowered = {a.lower(): a for a in allowed}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f" (did you mean {close[0]}?)" if close else ""


# --------------------------------------------------------------------------- combinations


def _check_gpu_pool(pool: GpuPoolConfig, mnist_job: MnistJobConfig, key: str) -> None:
    if pool.name == SYSTEM_POOL_NAME:
        raise _fail(f"{key}.name", pool.name, f"'{SYSTEM_POOL_NAME}' is the System pool's name; pick another")
    if pool.autoscaling:
        assert pool.min_count is not None and pool.max_count is not None
        if pool.min_count > pool.max_count:
            raise ConfigError(
                f"invalid config {key}: minCount {pool.min_count} is greater than maxCount {pool.max_count}; "
                "expected minCount <= maxCount"
            )
        if not pool.min_count <= pool.node_count <= pool.max_count:
            raise ConfigError(
                f"invalid config {key}.nodeCount = {pool.node_count}: an autoscaled pool starts inside its range; "
                f"expected {pool.min_count} <= nodeCount <= {pool.max_count}"
            )
    elif mnist_job.enabled and pool.node_count == 0:
        raise ConfigError(
            f"invalid config {key}.nodeCount = 0 with {NAMESPACE}:mnistJob.enabled = true: "
            "the Job would wait forever for a GPU node; set nodeCount >= 1, set minCount/maxCount, "
            "or set mnistJob.enabled to false"
        )
    if pool.spot_max_price is not None and not pool.spot:
        raise _fail(f"{key}.spotMaxPrice", pool.spot_max_price, f"only with {key}.spot = true: it caps a Spot node's price; remove it")
    # "The minimum value that can be set for maximum pods per node is 10 if and only if the
    # configuration of each node pool has space for a minimum of 30 pods" (azure-aks-docs
    # concepts-network-ip-address-planning.md, ms.date 04/16/2026).
    if pool.max_pods is not None and pool.max_pods < 30 and pool.node_count * pool.max_pods < 30:
        raise ConfigError(
            f"invalid config {key}.maxPods = {pool.max_pods}: AKS takes fewer than 30 pods per node only when the pool's "
            f"{pool.node_count} node(s) have room for 30 pods in all; set maxPods to at least {-(-30 // max(pool.node_count, 1))} "
            "or more nodes"
        )


def _check_namespaces(
    modes: frozenset[str], device_plugin: DevicePluginConfig, mnist_job: MnistJobConfig, operator: GpuOperatorConfig
) -> None:
    # Each component creates and deletes its own namespace; two cannot own one.
    if mnist_job.enabled and "device-plugin" in modes and mnist_job.namespace == device_plugin.namespace:
        raise _fail(
            f"{NAMESPACE}:mnistJob.namespace",
            mnist_job.namespace,
            f"expected a namespace other than {NAMESPACE}:devicePlugin.namespace: each is created and deleted by its own component",
        )
    if mnist_job.enabled and "gpu-operator" in modes and mnist_job.namespace == operator.namespace:
        raise _fail(
            f"{NAMESPACE}:mnistJob.namespace",
            mnist_job.namespace,
            f"expected a namespace other than {NAMESPACE}:gpuOperator.namespace: each is created and deleted by its own component",
        )


def _check_access(access: AccessConfig) -> None:
    key = f"{NAMESPACE}:access"
    if not access.entra:
        given = {
            "adminGroupObjectIds": access.admin_group_object_ids or None,
            "deployerType": None if access.deployer_type == AccessConfig.deployer_type else access.deployer_type,
            "deployerObjectId": access.deployer_object_id,
        }
        for member, value in given.items():
            if value is not None:
                raise _fail(f"{key}.{member}", list(value) if isinstance(value, tuple) else value,
                            f"only applies to Entra ID; set {key}.mode to entra, or remove it")  # fmt: skip
    elif access.deployer_type == "none" and not access.admin_group_object_ids:
        raise ConfigError(
            f"invalid config {key}.deployerType = 'none' with no {key}.adminGroupObjectIds: the identity that runs "
            "pulumi up could not create the Kubernetes objects; name its admin group, or set deployerType to "
            "ServicePrincipal or User"
        )
    elif access.deployer_type == "none" and access.deployer_object_id is not None:
        raise _fail(
            f"{key}.deployerObjectId",
            access.deployer_object_id,
            f"nothing is granted with {key}.deployerType = 'none'; remove it, or set deployerType to ServicePrincipal or User",
        )


def _check_preflight(preflight: PreflightConfig, root: Path) -> None:
    key = f"{NAMESPACE}:preflight"
    files = {"skusFile": preflight.skus_file, "usageFile": preflight.usage_file}
    given = [member for member, path in files.items() if path]
    if len(given) == 1:
        missing = "usageFile" if given == ["skusFile"] else "skusFile"
        raise ConfigError(f"invalid config {key}: {given[0]} is set without {missing}; set both, or neither for live facts")
    for member, path in {**files, "pricesFile": preflight.prices_file, "clusterFile": preflight.cluster_file}.items():
        if path and not (root / path).is_file():
            raise _fail(f"{key}.{member}", path, f"expected an existing file (relative to {root})")


def _check_upgrade(upgrade: UpgradeConfig, kubernetes_version: Optional[str]) -> None:
    """The "patch" channel keeps the minor version and moves the patch: a pinned patch
    version would be upgraded by AKS and put back by the next `pulumi up`."""
    if upgrade.channel == "patch" and kubernetes_version is not None and kubernetes_version.count(".") == 2:
        raise ConfigError(
            f"invalid config {NAMESPACE}:kubernetesVersion = {kubernetes_version!r} with "
            f"{NAMESPACE}:upgrade.channel = 'patch': AKS upgrades the patch version itself; "
            f"expected '1.NN' (such as {'.'.join(kubernetes_version.split('.')[:2])!r}) or no version"
        )


UNPINNED_DEPLOYER_WARNING = (
    f"{NAMESPACE}:access.deployerObjectId is not set: cluster-admin goes to whichever identity runs this "
    "program, so a preview or up run by another identity (a PR preview, a colleague) replaces the grant; "
    f"pin it with `pulumi config set --path {NAMESPACE}:access.deployerObjectId <object ID>`"
)

NO_NETWORK_POLICY_WARNING = (
    f"{NAMESPACE}:network.policy = none: the cluster enforces no NetworkPolicy, so the policies this "
    "program declares for its namespaces have no effect"
)


def managed_key(pool: GpuPoolConfig, key: str) -> str:
    """The key that asked for AKS-managed GPU nodes, as the stack file spells it; `key` is
    the pool's (StackConfig.pool_key)."""
    if pool.dedicated_vhd:
        return f"{key}.dedicatedVhd = true"
    return f"{key}.management = aks-managed"


def managed_gpu_warnings(pool: GpuPoolConfig, key: str) -> list[str]:
    """What a preview says about a managed pool, in the words of the key that asked for it."""
    what = (
        "AKS-managed GPU nodes, an Azure PREVIEW: AKS installs the GPU driver, device plugin and DCGM exporter, "
        "and this program deploys no device plugin; the pool is created, read and deleted through the AKS "
        "agentPools REST API with your Azure sign-in (docs/variants.md)"
    )
    if pool.dedicated_vhd:
        warnings = [
            f"{managed_key(pool, key)}: the guide's AKS GPU image (UseGPUDedicatedVHD) was retired on 2025-01-10; "
            f"deploying its successor instead, {what}"
        ]
    else:
        warnings = [f"{managed_key(pool, key)}: {what}"]
    if pool.mig_profile:
        warnings.append(
            f"{key}.migProfile = {pool.mig_profile} on AKS-managed GPU nodes: the pool is sent with the "
            f"PREVIEW agentPools API {MANAGED_MIG_API_VERSION}, the only kind that has gpuProfile.nvidia.migStrategy"
        )
    return warnings


# No Kubernetes version floor: "This feature requires Kubernetes version 1.34 or later" left
# aks-managed-gpu-nodes.md in azure-aks-docs f21c5e447 (2025-10-29), and the page at
# f63267b4 (2026-07-15, ms.date 07/02/2026) states no minimum.

# Must equal components.managed_gpu_pool.MIG_API_VERSION (a test checks): config cannot
# import the components.
MANAGED_MIG_API_VERSION = "2026-01-02-preview"


def _check_pool_stack(pool: GpuPoolConfig, given: Mapping[str, Any], key: str) -> list[str]:
    """One pool's GPU management settings; returns its warnings. `given` is what its entry sets."""
    if pool.dedicated_vhd and "management" in given and pool.management != "aks-managed":
        raise ConfigError(
            f"invalid config {key}.management = {pool.management!r} with {key}.dedicatedVhd = true: dedicatedVhd "
            "selects AKS-managed GPU nodes; set management to aks-managed, or remove one of them"
        )
    _check_mig(pool, key)
    warnings = []
    if pool.mode != "device-plugin":
        warnings.append(
            f"{key}.management = {pool.mode}: switching a deployed stack to or from this mode replaces the GPU pool "
            "(its GPU driver setting cannot change in place), deleting the old pool first (docs/gpu.md)"
        )
    if pool.managed:
        _check_managed_gpu(pool, key)
        warnings += managed_gpu_warnings(pool, key)
    return warnings


def _check_modes(pools: tuple[GpuPoolConfig, ...], keys: Mapping[str, str]) -> None:
    """The GPU Operator cannot share a cluster with pools whose GPU stack something else
    installs: "By default, the GPU Operator operands are deployed on all GPU worker nodes in
    the cluster", those labelled feature.node.kubernetes.io/pci-10de.present=true
    (NVIDIA/cloud-native-docs gpu-operator/getting-started.rst, docs 26.7; in the operator,
    controllers/state_manager.go at v26.7.0 labels every such node for the driver, toolkit
    and device plugin). A pool of another mode would get a second device plugin, which the
    guide warns against ("Don't run multiple NVIDIA device plugin DaemonSets on the same
    nodes", azure-aks-docs best-practices-ml-ops.md). NVIDIA's opt-out is a node label,
    nvidia.com/gpu.deploy.operands=false, that the other pools would have to carry; this
    program refuses the mix instead (docs/gpu.md)."""
    operator = [p for p in pools if p.mode == "gpu-operator"]
    others = [p for p in pools if p.mode != "gpu-operator"]
    if operator and others:
        raise ConfigError(
            f"invalid config {keys[operator[0].name]}.management = 'gpu-operator' beside {keys[others[0].name]} "
            f"({others[0].mode}): the GPU Operator installs its driver and device plugin on every NVIDIA GPU node "
            "of the cluster, which would give that pool a second device plugin; give every pool management "
            "gpu-operator, or none of them (docs/gpu.md)"
        )


# Which settings each mode uses: a setting no pool's mode uses is refused (it would do nothing).
_SETTING_USERS = {
    "devicePlugin": ("device-plugin",),
    "gpuOperator": ("gpu-operator",),
    "monitoring": ("device-plugin", "gpu-operator"),
}


def _check_unused_settings(pools: tuple[GpuPoolConfig, ...], values: Mapping[str, Any], keys: Mapping[str, str]) -> None:
    modes = {p.mode for p in pools}
    for setting, users in _SETTING_USERS.items():
        if setting in values and not modes.intersection(users):
            raise ConfigError(_unused_setting_message(setting, pools, keys))
    if "dcgmExporterImage" in values.get("monitoring", {}) and "device-plugin" not in modes:
        raise ConfigError(
            f"invalid config {NAMESPACE}:monitoring.dcgmExporterImage with {_where_management(pools, keys)} = "
            "'gpu-operator': the GPU Operator deploys its own DCGM exporter; remove it"
        )


def _where_management(pools: tuple[GpuPoolConfig, ...], keys: Mapping[str, str]) -> str:
    """`aks-gpu:gpuPool.management`, or `aks-gpu:gpuPools.*.management` for several pools."""
    key = keys[pools[0].name]
    return f"{key}.management" if len(pools) == 1 else f"{key.rsplit('.', 1)[0]}.*.management"


def _unused_setting_message(setting: str, pools: tuple[GpuPoolConfig, ...], keys: Mapping[str, str]) -> str:
    pool, where = pools[0], _where_management(pools, keys)
    if len(pools) == 1 and pool.dedicated_vhd and setting == "devicePlugin":  # the guide's own warning, in its words
        return (
            f"invalid config {NAMESPACE}:devicePlugin is set but {keys[pool.name]}.dedicatedVhd = true: "
            "AKS installs the device plugin on managed GPU nodes and this program deploys none "
            "(the guide warns against both); remove one of them"
        )
    why = {
        "devicePlugin": "this program deploys no device plugin in that mode",
        "gpuOperator": "the GPU Operator is installed only with management gpu-operator",
        "monitoring": "AKS runs its own DCGM exporter on managed GPU nodes (port 19400)",
    }[setting]
    modes = ", ".join(sorted({p.mode for p in pools}))
    return f"invalid config {NAMESPACE}:{setting} is set but {where} is {modes}: {why}; remove it"


# Keys that configure a cluster this program creates. With existingCluster the cluster is
# read from Azure and never changed, so each is refused unless it holds its default (the
# Pulumi.yaml defaults of the scalar keys arrive with every run).
CLUSTER_ONLY_KEYS = {
    "resourceGroupName": "the cluster's resource group is existingCluster.resourceGroupName",
    "clusterName": "the cluster's name is existingCluster.name",
    "kubernetesVersion": "new pools take the existing cluster's Kubernetes version",
    "systemPool": "the existing cluster has its own System pool",
    "clusterTier": "the existing cluster's tier is its owner's",
    "network": "the existing cluster's network policy engine is read from it",
    "upgrade": "the existing cluster's upgrade channels are its owner's",
    "protect": "protect guards the resource group and cluster this program creates",
    "access": "the stack signs in the way the existing cluster allows and grants nothing on it",
}


def _check_existing_cluster(values: Mapping[str, Any]) -> None:
    defaults = {to_camel(f.name): f.default for f in fields(ProjectConfig)}
    for key, why in CLUSTER_ONLY_KEYS.items():
        if key in values and values[key] != defaults[key]:
            raise _fail(
                f"{NAMESPACE}:{key}",
                values[key],
                f"not used with {NAMESPACE}:existingCluster ({why}); remove it, or remove existingCluster to create a cluster",
            )


def _check_mig(pool: GpuPoolConfig, key: str) -> None:
    if pool.mig_profile is None:
        return
    size = gpu_sizes.CATALOG.get(pool.vm_size)
    if size is None or not size.mig:
        supported = ", ".join(s.name for s in gpu_sizes.CATALOG.values() if s.mig)
        raise ConfigError(
            f"invalid config {key}.migProfile = {pool.mig_profile!r} with vmSize {pool.vm_size}: "
            f"{'not in the catalog' if size is None else size.gpu_model + ' has no multi-instance GPU'}; "
            f"expected one of {supported}, or no migProfile"
        )


def _check_managed_gpu(pool: GpuPoolConfig, key: str) -> None:
    # "Cluster autoscaler isn't supported on managed GPU node pools during preview. Scale
    # these pools manually." (azure-aks-docs articles/aks/aks-managed-gpu-nodes.md,
    # Limitations; added in f2493a9d, 2026-04-23, still there at f63267b4, 2026-07-15).
    if pool.autoscaling:
        raise ConfigError(
            f"invalid config {key}.minCount/maxCount = {pool.min_count}/{pool.max_count} with "
            f"{managed_key(pool, key)}: AKS does not support the cluster autoscaler on managed GPU node pools during "
            "the preview (aks-managed-gpu-nodes.md, Limitations); set a fixed nodeCount and scale the pool by hand"
        )


# --------------------------------------------------------------------------- from the engine


def current_raw_config() -> dict[str, str]:
    """The flat config map the Pulumi CLI gave this process.

    `pulumi.Config` reads one key at a time and cannot list them, but refusing unknown keys
    needs the whole set. The CLI passes config as the JSON map in PULUMI_CONFIG; tests and
    the offline renderer use `pulumi.runtime.set_all_config`. Both are read here.
    """
    from pulumi.runtime import config as runtime_config

    merged: dict[str, str] = dict(runtime_config.get_config_env())
    merged.update(runtime_config.CONFIG.get())
    return merged


def load() -> StackConfig:
    """Parses the running stack's configuration. Call once, before any resource."""
    return parse(current_raw_config(), pulumi.get_project(), pulumi.get_stack())
