"""Every `aks-gpu:` key (`ProjectConfig`) parsed once from the CLI's flat `namespace:key -> string`
map, validated, checked across concerns and resolved into `StackConfig`; a refusal is one ConfigError line."""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Mapping
from dataclasses import field, fields
from pathlib import Path
from typing import Any

import pulumi
from pydantic import TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass

from components.cluster import existing_settings as existing
from components.cluster import settings as cluster
from components.cluster.existing_settings import ExistingClusterConfig
from components.cluster.settings import CLUSTER_TIERS, AccessConfig, NetworkConfig, SystemPoolConfig, UpgradeConfig
from components.config import providers
from components.config.messages import did_you_mean, json_object, one_line, printable, strip_optional, structured, validated
from components.config.values import MODEL, NAMESPACE, Bool, ClusterName, KubernetesVersion, Location, ResourceGroupName, one_of
from components.cost import settings as cost
from components.cost.settings import CostConfig
from components.errors import ConfigError
from components.gpu_stack import settings as workloads
from components.gpu_stack.settings import DevicePluginConfig, GpuOperatorConfig, MnistJobConfig, MonitoringConfig
from components.pools import groups
from components.pools import settings as pools
from components.pools.groups import GpuGroupMap, GpuGroups
from components.pools.settings import GpuPoolConfig, GpuPoolMap, Pools
from components.preflight.settings import PreflightConfig, check_preflight

LOCATION_KEY = "azure-native:location"
SUBSCRIPTION_KEY = "azure-native:subscriptionId"
# The guide creates everything in eastus (`az group create ... --location eastus`).
DEFAULT_LOCATION = "eastus"


@dataclass(frozen=True, config=MODEL)
class ProjectConfig:
    """Every `aks-gpu:` key of a stack file."""

    resource_group_name: ResourceGroupName | None = None
    """The resource group's name. Unset or empty: <project>-<stack>-rg."""
    cluster_name: ClusterName | None = None
    """The AKS cluster's name. Unset or empty: <project>-<stack> (a `.` in the stack name becomes `-`)."""
    kubernetes_version: KubernetesVersion | None = None
    """'1.NN' or '1.NN.P' (quote it in YAML). Unset or empty: the AKS default."""
    system_pool: SystemPoolConfig = SystemPoolConfig()
    gpu_pool: GpuPoolConfig = GpuPoolConfig()
    gpu_pools: GpuPoolMap | None = None
    """Several GPU pools, keyed by AKS pool name (not system), each with gpuPool's members but name; not with gpuPool. Each pool gets its own MNIST Job (docs/existing-cluster.md#several-gpu-pools)."""
    gpu_groups: GpuGroupMap | None = None
    """Capacity groups: group name -> gpuPools names in the order the team prefers them, such as {inference: [t4, t4b, a10]}. Each pool of a group gets the node label aks-gpu.io/gpu-group=<group>, and the group one proof Job that lands on whichever pool the cluster autoscaler can fill; each pool scales from zero, and all have one GPU management and CPU architecture; at most 3 pools, as many as the autoscaler ever tries when Azure fills none (docs/gpu.md#capacity-groups)."""
    existing_cluster: ExistingClusterConfig | None = None
    """Add the GPU pools to this AKS cluster instead of creating one: both members, or neither. The cluster is read and never changed, the stack owns only what it adds, and the cluster's own keys (systemPool, access, ...) are refused (docs/existing-cluster.md)."""
    device_plugin: DevicePluginConfig = DevicePluginConfig()
    mnist_job: MnistJobConfig = MnistJobConfig()
    access: AccessConfig = AccessConfig()
    network: NetworkConfig = NetworkConfig()
    upgrade: UpgradeConfig = UpgradeConfig()
    monitoring: MonitoringConfig = MonitoringConfig()
    gpu_operator: GpuOperatorConfig = GpuOperatorConfig()
    preflight: PreflightConfig = PreflightConfig()
    cost: CostConfig = CostConfig()
    cluster_tier: one_of(*CLUSTER_TIERS) = "Free"
    """The AKS pricing tier: Free, Standard (uptime SLA) or Premium."""
    protect: Bool = False
    """Protect the resource group and the cluster from pulumi destroy and replacement."""


@dataclass(frozen=True)
class StackConfig:
    """What the program runs on: every key resolved, every default applied."""

    location: str
    resource_group_name: str
    cluster_name: str
    kubernetes_version: str | None
    system_pool: SystemPoolConfig
    #: The GPU pools: gpuPool's one pool, or gpuPools' entries in name order.
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
    subscription_id: str | None = None
    #: Set: the pools go into this cluster, which the stack reads but does not own; its
    #: names are resource_group_name and cluster_name.
    existing_cluster: ExistingClusterConfig | None = None
    #: The pools came from the gpuPools map (keys `aks-gpu:gpuPools.<name>`), not gpuPool.
    pool_map: bool = False
    #: The members each pool's entry sets, as given (an `existing: adopt` pool is held to them).
    given_pools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: The capacity groups (gpuGroups): each group's pool names, first choice first; none by default.
    gpu_groups: GpuGroups = GpuGroups()
    # Things the user should know at preview time (preview features, unknown sizes, ...).
    warnings: tuple[str, ...] = field(default=())

    @property
    def pools(self) -> Pools:
        """The GPU pools with the config key that names each and the members each entry sets."""
        key = f"{NAMESPACE}:gpuPools.{{}}" if self.pool_map else f"{NAMESPACE}:gpuPool"
        return Pools(self.gpu_pools, {p.name: key.format(p.name) for p in self.gpu_pools}, self.given_pools)

    def owned_namespaces(self, modes: frozenset[str], proof: bool) -> tuple[str, ...]:
        """The namespaces the stack creates, and deletes on destroy, for pools of these `modes`,
        and the proof's where it declares it (`proof`: its part of the run)."""
        names = [self.device_plugin.namespace] if "device-plugin" in modes else []
        names += [self.gpu_operator.namespace] if "gpu-operator" in modes else []
        names += [self.mnist_job.namespace] if self.mnist_job.enabled and proof else []
        return tuple(names)

    @property
    def select_pools(self) -> bool:
        """The cluster may hold GPU pools this program does not manage the GPU stack of (an
        existing cluster, or several pools of different modes), so the DaemonSets and Jobs
        select this program's pools by their agentpool label. The guide's single pool in its
        own new cluster keeps the guide's manifests as they are."""
        return self.existing_cluster is not None or self.pool_map


# The structured keys, each the dataclass of its members (checked before validation).
_HINTS = {to_camel(name): strip_optional(hint) for name, hint in typing.get_type_hints(ProjectConfig).items()}
_OBJECT_KEYS = {key: hint for key, hint in _HINTS.items() if hasattr(hint, "__dataclass_fields__")}
_KEYS = [to_camel(f.name) for f in fields(ProjectConfig)]
# The keys StackConfig holds as the stack file gives them; the others are resolved in `parse`.
_RESOLVED = {"resource_group_name", "cluster_name", "gpu_pools", "gpu_groups"}
_AS_GIVEN = [f.name for f in fields(ProjectConfig) if f.name in StackConfig.__dataclass_fields__ and f.name not in _RESOLVED]


def known_keys() -> list[str]:
    """Every `aks-gpu:` key, in the order the README documents them."""
    return [f"{NAMESPACE}:{k}" for k in _KEYS]


def parse(raw: Mapping[str, str], project: str, stack: str, root: Path | None = None) -> StackConfig:
    """The typed configuration; an `azure-native:` key the provider does not have is refused
    (components/config/providers.py). Relative paths are taken from `root`, the project
    directory (the Pulumi CLI runs the program there)."""
    providers.check(raw)
    values = _decode(raw)
    try:
        given = _ADAPTER.validate_json(json.dumps(values))
    except ValidationError as error:
        raise one_line(error, ProjectConfig) from None
    resource_group_name, cluster_name = _names(given, values, project, stack)
    found = pools.gpu_pools(given.gpu_pool, given.gpu_pools, values)
    warnings = pools.check(found, job_enabled=given.mnist_job.enabled, existing_cluster=given.existing_cluster is not None)
    gpu_groups = groups.parse(given.gpu_groups, found, pool_map=given.gpu_pools is not None)
    workloads.check(found.pools, found.keys, values, given.device_plugin, given.mnist_job, given.gpu_operator)
    workloads.check_object_names(given.mnist_job, found, gpu_groups, pool_map=given.gpu_pools is not None)
    warnings += cluster.check(given.access, given.network, given.upgrade, given.kubernetes_version)
    warnings += check_preflight(given.preflight, root or Path.cwd())
    cost.check(given.cost, values)
    if given.existing_cluster is None:
        existing.check_without_existing(
            found.pools,
            found.keys,
            given.preflight.cluster_file,
            given.preflight.kubernetes_file,
            given.device_plugin.adopt,
            given.preflight.state_file,
            groups=bool(gpu_groups.groups),
        )
    return StackConfig(
        **{name: getattr(given, name) for name in _AS_GIVEN},
        location=validated(Location, LOCATION_KEY, raw.get(LOCATION_KEY) or DEFAULT_LOCATION),
        resource_group_name=resource_group_name,
        cluster_name=cluster_name,
        gpu_pools=found.pools,
        subscription_id=raw.get(SUBSCRIPTION_KEY) or None,
        pool_map=given.gpu_pools is not None,
        given_pools=found.given,
        gpu_groups=gpu_groups,
        warnings=tuple(warnings),
    )


def _names(given: ProjectConfig, values: Mapping[str, Any], project: str, stack: str) -> tuple[str, str]:
    """The resource group's and the cluster's names: the existing cluster's, the keys', or the defaults."""
    if given.existing_cluster is not None:
        existing.check_existing_cluster(
            values,
            {to_camel(f.name): getattr(given, f.name) for f in fields(ProjectConfig)},
            {to_camel(f.name): f.default for f in fields(ProjectConfig)},
        )
        return given.existing_cluster.resource_group_name, given.existing_cluster.name
    base = _default_base_name(project, stack)
    group = given.resource_group_name or validated(ResourceGroupName, f"{NAMESPACE}:resourceGroupName", f"{base}-rg")
    name = given.cluster_name or validated(
        ClusterName, f"{NAMESPACE}:clusterName", base, hint=" (the default comes from project and stack names: set it explicitly)"
    )
    return group, name


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
            shown = full_key if full_key.isprintable() else repr(full_key)  # one line, whatever the key holds
            raise ConfigError(f"unknown config {shown}{did_you_mean(key, _KEYS)}; allowed: {', '.join(known_keys())}")
        printable(full_key, json_object(full_key, value) if key in _OBJECT_KEYS or key in ("gpuPools", "gpuGroups") else value)
        if key in _OBJECT_KEYS:
            values[key] = structured(full_key, value, _OBJECT_KEYS[key])
            if key == "gpuPool":
                values[key] = pools.gpu_pool_defaults(values[key], full_key)
        elif key == "gpuPools":
            values[key] = pools.pool_map(full_key, value)
        elif key == "gpuGroups":
            values[key] = groups.group_map(value)
        elif value == "":
            continue
        elif key in _BOOLEAN_SCALARS and value in ("true", "false"):
            values[key] = value == "true"
        else:
            values[key] = value
    return values


def _default_base_name(project: str, stack: str) -> str:
    """`<project>-<stack>`, so two stacks never share a name; a '.' (no AKS name has one) becomes '-'."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{project}-{stack}")


def current_raw_config() -> dict[str, str]:
    """The flat config map: `pulumi.Config` cannot list keys, and refusing unknown ones needs them
    all. The CLI passes PULUMI_CONFIG; tests and the offline render `set_all_config`."""
    from pulumi.runtime import config as runtime_config

    merged: dict[str, str] = dict(runtime_config.get_config_env())
    merged.update(runtime_config.CONFIG.get())
    return merged


def load() -> StackConfig:
    """The running stack's configuration. Call once, before any resource."""
    return parse(current_raw_config(), pulumi.get_project(), pulumi.get_stack())
