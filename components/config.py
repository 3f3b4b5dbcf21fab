"""Stack configuration: parsed and validated once, into frozen dataclasses.

This is the only module that knows configuration keys. Components receive the typed
objects below and never call `pulumi.Config()`.

Every rule raises `ConfigError`, a `pulumi.RunError`: the CLI prints its one-line message
without a stack trace, and since `load()` runs before any resource is registered, a bad
value never leaves a half-created stack behind.

Values arrive the way the Pulumi CLI hands them to a program: a flat map from
`namespace:key` to a string (objects JSON-encoded, booleans as "true"/"false").
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import pulumi

from components import gpu_sizes
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


# --------------------------------------------------------------------------- typed config


@dataclass(frozen=True)
class SystemPoolConfig:
    """The small Linux System pool that runs kube-system pods (GPU nodes are tainted)."""

    vm_size: str = "Standard_D2s_v5"
    node_count: int = 1


@dataclass(frozen=True)
class GpuPoolConfig:
    """The separate User pool of GPU nodes."""

    name: str = "gpu"  # `az aks nodepool add --name gpu` in the guide
    vm_size: str = gpu_sizes.GUIDE_SIZE  # the guide's size; retired, see gpu_sizes
    node_count: int = 1
    min_count: Optional[int] = None
    max_count: Optional[int] = None
    gen2: bool = False
    dedicated_vhd: bool = False
    spot: bool = False

    @property
    def autoscaling(self) -> bool:
        return self.min_count is not None

    @property
    def can_scale_to_zero(self) -> bool:
        # A fixed pool of 0 nodes is refused while the Job is enabled, so only the
        # autoscaler's floor matters to anything that waits for a node.
        return self.min_count == 0


@dataclass(frozen=True)
class DevicePluginConfig:
    namespace: str = "gpu-resources"
    image: str = DEFAULT_DEVICE_PLUGIN_IMAGE


@dataclass(frozen=True)
class MnistJobConfig:
    enabled: bool = True
    image: str = DEFAULT_MNIST_IMAGE
    max_steps: int = 500
    wait_for_completion: bool = True
    # The guide's `kubectl apply` lands the Job in `default`; a namespace of its own lets
    # it have its own NetworkPolicy and keeps workloads out of `default` (Checkov CKV_K8S_21).
    namespace: str = "gpu-workloads"


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


@dataclass(frozen=True)
class AccessConfig:
    """Who may reach the cluster's API server, and how they sign in."""

    mode: str = "local"
    #: Entra ID groups whose members are cluster admins (aadProfile.adminGroupObjectIDs).
    admin_group_object_ids: tuple[str, ...] = ()
    #: IPv4 ranges allowed to reach the API server; empty allows any address.
    authorized_ip_ranges: tuple[str, ...] = ()
    #: With Entra ID: what kind of identity runs `pulumi up` ("ServicePrincipal" in CI,
    #: "User" at a desk), so it can be granted cluster-admin; "none" grants nothing (it is
    #: in one of the admin groups already).
    deployer_type: str = "ServicePrincipal"
    #: With Entra ID: the object ID granted cluster-admin. None: whoever runs the program
    #: (`getClientConfig`), so a preview run by another identity shows the grant changing.
    deployer_object_id: Optional[str] = None

    @property
    def entra(self) -> bool:
        return self.mode == "entra"

    @property
    def grants_deployer(self) -> bool:
        return self.entra and self.deployer_type != "none"


@dataclass(frozen=True)
class NetworkConfig:
    policy: str = "cilium"


@dataclass(frozen=True)
class UpgradeConfig:
    # The AKS API's defaults for a new cluster: no automatic Kubernetes upgrades, weekly
    # node images. Stated here so the stack says what the cluster does.
    channel: str = "none"
    node_os_channel: str = "NodeImage"


@dataclass(frozen=True)
class StackConfig:
    location: str
    resource_group_name: str
    cluster_name: str
    kubernetes_version: Optional[str]
    system_pool: SystemPoolConfig
    gpu_pool: GpuPoolConfig
    device_plugin: DevicePluginConfig
    mnist_job: MnistJobConfig
    access: AccessConfig = AccessConfig()
    network: NetworkConfig = NetworkConfig()
    upgrade: UpgradeConfig = UpgradeConfig()
    cluster_tier: str = "Free"
    protect: bool = False
    # Things the user should know at preview time (retired sizes, preview features, ...).
    warnings: tuple[str, ...] = field(default=())


# --------------------------------------------------------------------------- rules

# Azure naming rules: learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules
#   Microsoft.Resources/resourcegroups: 1-90; alphanumerics, underscores, parentheses,
#   hyphens, periods; cannot end in a period. (Unicode letters are allowed too; we keep ASCII.)
#   Microsoft.ContainerService/managedClusters: 1-63; alphanumerics, underscores, hyphens;
#   start and end with an alphanumeric.
_RG_NAME = re.compile(r"^[A-Za-z0-9_().-]{0,89}[A-Za-z0-9_()-]$")
_CLUSTER_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$")
# AKS agent pool names (Linux): lowercase letters and digits, start with a letter, at most
# 12 characters (azure-aks-docs create-node-pools.md "Limitations"; the agentPools REST
# spec pattern ^[a-z][a-z0-9]{0,11}$).
_POOL_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
# Region names as ARM spells them (`az account list-locations -o table`, Name column).
_LOCATION = re.compile(r"^[a-z][a-z0-9]*$")
# "1.NN" (AKS picks the latest patch) or "1.NN.P".
_K8S_VERSION = re.compile(r"^1\.\d{2}(\.\d+)?$")
# Azure VM size names (learn.microsoft.com/azure/virtual-machines/vm-naming-conventions).
_VM_SIZE = re.compile(r"^Standard_[A-Za-z0-9_]+$")
# RFC 1123 DNS label: what Kubernetes requires of a namespace name.
_DNS_LABEL = re.compile(r"^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$")
# A container image reference, after the grammar of distribution/reference (reference.go):
# [host[:port]/]path-component[/path-component...][:tag][@sha256:digest].
_IMAGE = re.compile(
    r"^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]+)?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$"
)

# Entra ID object IDs are GUIDs.
_GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# "You can specify up to 200 authorized IP address ranges" (azure-aks-docs
# articles/aks/api-server-authorized-ip-ranges.md).
MAX_AUTHORIZED_IP_RANGES = 200

# Namespaces that exist in every cluster: this program creates and deletes its namespace,
# so it must be one the program can own.
_RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

SYSTEM_POOL_NAME = "system"
MAX_POOL_NODES = 1000  # AKS: at most 1000 nodes per VMSS node pool (quotas-skus-regions.md)


def _fail(key: str, value: Any, allowed: str) -> ConfigError:
    return ConfigError(f"invalid config {key} = {_show(value)}: {allowed}")


def _show(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else repr(value)


def _expect_type(key: str, value: Any, kind: type, what: str) -> Any:
    # bool is a subclass of int: `nodeCount: true` must not read as 1.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise _fail(key, value, f"expected {what}")
    return value


def _int_in(key: str, value: Any, low: int, high: int) -> int:
    _expect_type(key, value, int, f"a whole number from {low} to {high}")
    if not low <= value <= high:
        raise _fail(key, value, f"expected a whole number from {low} to {high}")
    return value


def _bool(key: str, value: Any) -> bool:
    return _expect_type(key, value, bool, "true or false")


def _match(key: str, value: Any, pattern: re.Pattern[str], allowed: str) -> str:
    _expect_type(key, value, str, allowed)
    if not pattern.match(value):
        raise _fail(key, value, allowed)
    return value


def _one_of(key: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise _fail(key, value, f"expected one of {', '.join(allowed)}")
    return value


def _string_list(key: str, value: Any, item: Callable[[str, Any], str], most: int) -> tuple[str, ...]:
    _expect_type(key, value, list, "a list")
    if len(value) > most:
        raise _fail(key, value, f"expected at most {most} entries")
    items = tuple(item(f"{key}[{i}]", v) for i, v in enumerate(value))
    duplicates = sorted({v for v in items if items.count(v) > 1})
    if duplicates:
        raise _fail(key, value, f"expected each entry once; repeated: {', '.join(duplicates)}")
    return items


def _guid(key: str, value: Any) -> str:
    return _match(key, value, _GUID, "expected an Entra ID object ID (a GUID)")


def _ipv4_range(key: str, value: Any) -> str:
    """An IPv4 address or CIDR range; AKS authorized ranges are IPv4 only
    (api-server-authorized-ip-ranges.md)."""
    allowed = "expected an IPv4 address or CIDR range such as '203.0.113.0/24'"
    _expect_type(key, value, str, allowed)
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as error:
        raise _fail(key, value, f"{allowed} ({error})") from None
    if network.version != 4:
        raise _fail(key, value, allowed)
    return value


def _vm_size(key: str, value: Any) -> str:
    return _match(key, value, _VM_SIZE, "expected an Azure VM size name such as 'Standard_NC4as_T4_v3'")


def _image(key: str, value: Any) -> str:
    return _match(key, value, _IMAGE, "expected a container image reference such as 'registry/repo:tag'")


# --------------------------------------------------------------------------- raw values


def _object(key: str, raw: Optional[str], cls: type) -> dict[str, Any]:
    """Decodes a structured key and refuses members the dataclass does not have."""
    if raw is None:
        return {}
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        raise _fail(key, raw, "expected an object (a YAML mapping in Pulumi.<stack>.yaml)") from None
    if not isinstance(value, dict):
        raise _fail(key, value, "expected an object (a YAML mapping in Pulumi.<stack>.yaml)")
    allowed = [camel_case(f.name) for f in dataclasses.fields(cls)]
    for member in value:
        if member not in allowed:
            raise ConfigError(f"unknown config {key}.{member}{_did_you_mean(member, allowed)}; allowed: {', '.join(allowed)}")
    return value


def _bool_scalar(key: str, raw: Optional[str], default: bool) -> bool:
    """Decodes a boolean the CLI passed as a string ("true"/"false")."""
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        return raw
    if raw in ("true", "false"):
        return raw == "true"
    raise _fail(key, raw, "expected true or false")


def camel_case(snake: str) -> str:
    """`node_count` -> `nodeCount`: config members and ARM properties are spelled so."""
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


def _did_you_mean(word: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(word, allowed, n=1, cutoff=0.6)
    if not close:
        lowered = {a.lower(): a for a in allowed}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f" (did you mean {close[0]}?)" if close else ""


# Every key this program reads, with the dataclass that gives its members (None: scalar).
_KEYS: dict[str, Optional[type]] = {
    "resourceGroupName": None,
    "clusterName": None,
    "kubernetesVersion": None,
    "systemPool": SystemPoolConfig,
    "gpuPool": GpuPoolConfig,
    "devicePlugin": DevicePluginConfig,
    "mnistJob": MnistJobConfig,
    "access": AccessConfig,
    "network": NetworkConfig,
    "upgrade": UpgradeConfig,
    "clusterTier": None,
    "protect": None,
}


def known_keys() -> list[str]:
    """Every `aks-gpu:` key, in the order the README documents them."""
    return [f"{NAMESPACE}:{k}" for k in _KEYS]


# --------------------------------------------------------------------------- parse


def parse(raw: Mapping[str, str], project: str, stack: str) -> StackConfig:
    """Builds the typed configuration from the CLI's flat `namespace:key -> string` map.

    Keys outside the `aks-gpu:` namespace belong to providers and are ignored, except
    `azure-native:location`, which also places the resource group.
    """
    for full_key in raw:
        if full_key.startswith(NAMESPACE + ":") and full_key[len(NAMESPACE) + 1 :] not in _KEYS:
            short = full_key[len(NAMESPACE) + 1 :]
            raise ConfigError(
                f"unknown config {full_key}{_did_you_mean(short, list(_KEYS))}; allowed: {', '.join(known_keys())}"
            )

    def get(short: str) -> Optional[str]:
        return raw.get(f"{NAMESPACE}:{short}")

    location = _match(
        LOCATION_KEY,
        raw.get(LOCATION_KEY) or DEFAULT_LOCATION,
        _LOCATION,
        "expected an Azure region name in lowercase, such as 'eastus' (az account list-locations -o table)",
    )

    base = _default_base_name(project, stack)
    rg_key = f"{NAMESPACE}:resourceGroupName"
    resource_group_name = _match(
        rg_key,
        get("resourceGroupName") or f"{base}-rg",
        _RG_NAME,
        "expected 1-90 letters, digits, '_', '-', '.', '(' or ')', not ending in '.'",
    )
    cluster_key = f"{NAMESPACE}:clusterName"
    cluster_name = _match(
        cluster_key,
        get("clusterName") or base,
        _CLUSTER_NAME,
        "expected 1-63 letters, digits, '_' or '-', starting and ending with a letter or digit"
        + ("" if get("clusterName") else " (the default comes from project and stack names: set it explicitly)"),
    )

    version_key = f"{NAMESPACE}:kubernetesVersion"
    version_raw = get("kubernetesVersion")
    kubernetes_version = None
    if version_raw not in (None, ""):
        # Keep it a string: YAML `1.30` would otherwise become the float 1.3.
        kubernetes_version = _match(version_key, version_raw, _K8S_VERSION, "expected '1.NN' or '1.NN.P', such as '1.33'")

    system_pool = _parse_system_pool(_object(f"{NAMESPACE}:systemPool", get("systemPool"), SystemPoolConfig))
    gpu_pool = _parse_gpu_pool(_object(f"{NAMESPACE}:gpuPool", get("gpuPool"), GpuPoolConfig))
    device_plugin = _parse_device_plugin(_object(f"{NAMESPACE}:devicePlugin", get("devicePlugin"), DevicePluginConfig))
    mnist_job = _parse_mnist_job(_object(f"{NAMESPACE}:mnistJob", get("mnistJob"), MnistJobConfig))
    access = _parse_access(_object(f"{NAMESPACE}:access", get("access"), AccessConfig))
    network = _parse_network(_object(f"{NAMESPACE}:network", get("network"), NetworkConfig))
    upgrade = _parse_upgrade(_object(f"{NAMESPACE}:upgrade", get("upgrade"), UpgradeConfig))
    cluster_tier = _one_of(f"{NAMESPACE}:clusterTier", get("clusterTier") or "Free", CLUSTER_TIERS)

    protect = _bool_scalar(f"{NAMESPACE}:protect", get("protect"), False)

    _check_combinations(gpu_pool, mnist_job)
    _check_namespaces(gpu_pool, device_plugin, mnist_job)
    _check_upgrade(upgrade, kubernetes_version)
    warnings = gpu_sizes.check_pool(gpu_pool, f"{NAMESPACE}:gpuPool")
    if gpu_pool.dedicated_vhd:
        _check_managed_gpu(kubernetes_version, device_plugin_given=get("devicePlugin") is not None)
        warnings.append(MANAGED_GPU_WARNING)
    if network.policy == "none":
        warnings.append(NO_NETWORK_POLICY_WARNING)
    if access.grants_deployer and access.deployer_object_id is None:
        warnings.append(UNPINNED_DEPLOYER_WARNING)

    return StackConfig(
        location=location,
        resource_group_name=resource_group_name,
        cluster_name=cluster_name,
        kubernetes_version=kubernetes_version,
        system_pool=system_pool,
        gpu_pool=gpu_pool,
        device_plugin=device_plugin,
        mnist_job=mnist_job,
        access=access,
        network=network,
        upgrade=upgrade,
        cluster_tier=cluster_tier,
        protect=protect,
        warnings=tuple(warnings),
    )


def _default_base_name(project: str, stack: str) -> str:
    """`<project>-<stack>`, so two stacks in one subscription never share a name.

    Stack names may contain '.', which AKS names may not: it becomes '-'.
    """
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{project}-{stack}")


def _parse_system_pool(value: dict[str, Any]) -> SystemPoolConfig:
    key = f"{NAMESPACE}:systemPool"
    d = SystemPoolConfig()
    return SystemPoolConfig(
        vm_size=_vm_size(f"{key}.vmSize", value.get("vmSize", d.vm_size)),
        # A System pool needs at least one node for CoreDNS and metrics-server.
        node_count=_int_in(f"{key}.nodeCount", value.get("nodeCount", d.node_count), 1, MAX_POOL_NODES),
    )


def _parse_gpu_pool(value: dict[str, Any]) -> GpuPoolConfig:
    key = f"{NAMESPACE}:gpuPool"
    d = GpuPoolConfig()
    name = _match(
        f"{key}.name",
        value.get("name", d.name),
        _POOL_NAME,
        "expected 1-12 lowercase letters and digits, starting with a letter (AKS Linux node pool names)",
    )
    if name == SYSTEM_POOL_NAME:
        raise _fail(f"{key}.name", name, f"'{SYSTEM_POOL_NAME}' is the System pool's name; pick another")
    min_count = value.get("minCount")
    max_count = value.get("maxCount")
    if (min_count is None) != (max_count is None):
        given = "minCount" if min_count is not None else "maxCount"
        raise ConfigError(
            f"invalid config {key}: {given} is set without {'maxCount' if given == 'minCount' else 'minCount'}; "
            "set both to turn the cluster autoscaler on, or neither for a fixed nodeCount"
        )
    if min_count is not None:
        min_count = _int_in(f"{key}.minCount", min_count, 0, MAX_POOL_NODES)
        max_count = _int_in(f"{key}.maxCount", max_count, 1, MAX_POOL_NODES)
        if min_count > max_count:
            raise ConfigError(
                f"invalid config {key}: minCount {min_count} is greater than maxCount {max_count}; expected minCount <= maxCount"
            )
    gen2 = _bool(f"{key}.gen2", value.get("gen2", d.gen2))
    node_count_given = "nodeCount" in value
    node_count = _int_in(f"{key}.nodeCount", value.get("nodeCount", d.node_count), 0, MAX_POOL_NODES)
    if min_count is not None and max_count is not None:
        if not node_count_given:
            # The autoscaler owns the count; start at the floor so an idle pool costs nothing.
            node_count = min_count
        elif not min_count <= node_count <= max_count:
            raise ConfigError(
                f"invalid config {key}.nodeCount = {node_count}: an autoscaled pool starts inside its range; "
                f"expected {min_count} <= nodeCount <= {max_count}"
            )
    return GpuPoolConfig(
        name=name,
        # No vmSize: the guide's size for the chosen generation (Standard_NC6, or
        # Standard_NC6s_v2 for its Gen2 variant).
        vm_size=_vm_size(f"{key}.vmSize", value["vmSize"]) if "vmSize" in value else gpu_sizes.default_size(gen2),
        node_count=node_count,
        min_count=min_count,
        max_count=max_count,
        gen2=gen2,
        dedicated_vhd=_bool(f"{key}.dedicatedVhd", value.get("dedicatedVhd", d.dedicated_vhd)),
        spot=_bool(f"{key}.spot", value.get("spot", d.spot)),
    )


def _owned_namespace(key: str, value: Any) -> str:
    namespace = _match(
        key,
        value,
        _DNS_LABEL,
        "expected a DNS label: 1-63 lowercase letters, digits or '-', starting and ending with a letter or digit",
    )
    if namespace in _RESERVED_NAMESPACES:
        raise _fail(
            key,
            namespace,
            f"this program creates and deletes its namespace, so it cannot be one of {', '.join(_RESERVED_NAMESPACES)}",
        )
    return namespace


def _parse_device_plugin(value: dict[str, Any]) -> DevicePluginConfig:
    key = f"{NAMESPACE}:devicePlugin"
    d = DevicePluginConfig()
    return DevicePluginConfig(
        namespace=_owned_namespace(f"{key}.namespace", value.get("namespace", d.namespace)),
        image=_image(f"{key}.image", value.get("image", d.image)),
    )


def _parse_mnist_job(value: dict[str, Any]) -> MnistJobConfig:
    key = f"{NAMESPACE}:mnistJob"
    d = MnistJobConfig()
    return MnistJobConfig(
        enabled=_bool(f"{key}.enabled", value.get("enabled", d.enabled)),
        image=_image(f"{key}.image", value.get("image", d.image)),
        max_steps=_int_in(f"{key}.maxSteps", value.get("maxSteps", d.max_steps), 1, 1_000_000),
        wait_for_completion=_bool(f"{key}.waitForCompletion", value.get("waitForCompletion", d.wait_for_completion)),
        namespace=_owned_namespace(f"{key}.namespace", value.get("namespace", d.namespace)),
    )


def _parse_access(value: dict[str, Any]) -> AccessConfig:
    key = f"{NAMESPACE}:access"
    d = AccessConfig()
    mode = _one_of(f"{key}.mode", value.get("mode", d.mode), ACCESS_MODES)
    groups = _string_list(f"{key}.adminGroupObjectIds", value.get("adminGroupObjectIds", []), _guid, 100)
    deployer_type = _one_of(f"{key}.deployerType", value.get("deployerType", d.deployer_type), DEPLOYER_TYPES)
    deployer_object_id = _guid(f"{key}.deployerObjectId", value["deployerObjectId"]) if "deployerObjectId" in value else None
    if mode != "entra":
        for member in ("adminGroupObjectIds", "deployerType", "deployerObjectId"):
            if member in value:
                raise _fail(f"{key}.{member}", value[member], f"only applies to Entra ID; set {key}.mode to entra, or remove it")
    elif deployer_type == "none" and not groups:
        raise ConfigError(
            f"invalid config {key}.deployerType = 'none' with no {key}.adminGroupObjectIds: the identity that runs "
            "pulumi up could not create the Kubernetes objects; name its admin group, or set deployerType to "
            "ServicePrincipal or User"
        )
    elif deployer_type == "none" and deployer_object_id is not None:
        raise _fail(
            f"{key}.deployerObjectId",
            deployer_object_id,
            f"nothing is granted with {key}.deployerType = 'none'; remove it, or set deployerType to ServicePrincipal or User",
        )
    ranges = _string_list(
        f"{key}.authorizedIpRanges", value.get("authorizedIpRanges", []), _ipv4_range, MAX_AUTHORIZED_IP_RANGES
    )
    return AccessConfig(
        mode=mode,
        admin_group_object_ids=groups,
        authorized_ip_ranges=ranges,
        deployer_type=deployer_type,
        deployer_object_id=deployer_object_id,
    )


def _parse_network(value: dict[str, Any]) -> NetworkConfig:
    d = NetworkConfig()
    return NetworkConfig(policy=_one_of(f"{NAMESPACE}:network.policy", value.get("policy", d.policy), NETWORK_POLICIES))


def _parse_upgrade(value: dict[str, Any]) -> UpgradeConfig:
    key = f"{NAMESPACE}:upgrade"
    d = UpgradeConfig()
    return UpgradeConfig(
        channel=_one_of(f"{key}.channel", value.get("channel", d.channel), UPGRADE_CHANNELS),
        node_os_channel=_one_of(f"{key}.nodeOsChannel", value.get("nodeOsChannel", d.node_os_channel), NODE_OS_CHANNELS),
    )


def _check_combinations(gpu_pool: GpuPoolConfig, mnist_job: MnistJobConfig) -> None:
    """Refuses settings that are each valid but cannot work together."""
    if mnist_job.enabled and not gpu_pool.autoscaling and gpu_pool.node_count == 0:
        raise ConfigError(
            f"invalid config {NAMESPACE}:gpuPool.nodeCount = 0 with {NAMESPACE}:mnistJob.enabled = true: "
            "the Job would wait forever for a GPU node; set nodeCount >= 1, set minCount/maxCount, "
            "or set mnistJob.enabled to false"
        )


def _check_namespaces(gpu_pool: GpuPoolConfig, device_plugin: DevicePluginConfig, mnist_job: MnistJobConfig) -> None:
    # Each component creates and deletes its own namespace; two cannot own one.
    if mnist_job.enabled and not gpu_pool.dedicated_vhd and mnist_job.namespace == device_plugin.namespace:
        raise _fail(
            f"{NAMESPACE}:mnistJob.namespace",
            mnist_job.namespace,
            f"expected a namespace other than {NAMESPACE}:devicePlugin.namespace: each is created and deleted by its own component",
        )


# Channels that change the cluster's Kubernetes version by themselves: "patch" moves the
# patch release, "stable" and "rapid" the minor version too (auto-upgrade-cluster.md).
# "node-image" and "none" leave the version alone.
VERSION_UPGRADE_CHANNELS = ("patch", "stable", "rapid")


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


# AKS-managed GPU nodes "require Kubernetes version 1.34 or later" (aks-managed-gpu-nodes.md).
MANAGED_GPU_MIN_MINOR = 34
MANAGED_GPU_WARNING = (
    f"{NAMESPACE}:gpuPool.dedicatedVhd: the guide's AKS GPU image (UseGPUDedicatedVHD) was retired on "
    "2025-01-10; deploying its successor instead, AKS-managed GPU nodes, an Azure PREVIEW: the pool is "
    "added and deleted by `az aks nodepool add --enable-managed-gpu-experience`, so the machine that runs "
    "pulumi needs the az CLI, signed in, with the aks-preview extension; no device plugin DaemonSet is deployed"
)


def _check_managed_gpu(kubernetes_version: Optional[str], device_plugin_given: bool) -> None:
    if device_plugin_given:
        raise ConfigError(
            f"invalid config {NAMESPACE}:devicePlugin is set but {NAMESPACE}:gpuPool.dedicatedVhd = true: "
            "AKS installs the device plugin on managed GPU nodes and this program deploys none "
            "(the guide warns against both); remove one of them"
        )
    if kubernetes_version is not None and int(kubernetes_version.split(".")[1]) < MANAGED_GPU_MIN_MINOR:
        raise ConfigError(
            f"invalid config {NAMESPACE}:kubernetesVersion = {kubernetes_version!r} with "
            f"{NAMESPACE}:gpuPool.dedicatedVhd = true: AKS-managed GPU nodes need Kubernetes "
            f"1.{MANAGED_GPU_MIN_MINOR} or later"
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
