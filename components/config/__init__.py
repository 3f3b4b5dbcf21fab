"""The stack's configuration, by concept: each module holds one concept's settings (pydantic
dataclasses: type, default, allowed values, description), its rules and its messages, and
`stack.py` parses them all at once into the `StackConfig` the program runs on.

  values.py     the value types every concept uses (names, sizes, images, subnets)
  messages.py   the one-line errors
  cluster.py    systemPool, access, network, upgrade: the cluster this program creates
  pools.py      gpuPool / gpuPools: each GPU pool
  workloads.py  devicePlugin, gpuOperator, monitoring, mnistJob: what runs on the pools
  existing.py   existingCluster
  preflight.py  preflight
  cost.py       cost
  stack.py      every key, parsed (parse, load)

This package is the only code that knows config keys: components receive the typed objects
and never call `pulumi.Config()`. The same definitions generate schema/stack.schema.json.
"""

from components.config.cluster import (
    ACCESS_MODES, CLUSTER_TIERS, DEPLOYER_TYPES, NETWORK_POLICIES, NODE_OS_CHANNELS, NO_NETWORK_POLICY_WARNING,
    SYSTEM_POOL_NAME, UNPINNED_DEPLOYER_WARNING, UPGRADE_CHANNELS, VERSION_UPGRADE_CHANNELS, AccessConfig,
    NetworkConfig, SystemPoolConfig, UpgradeConfig,
)
from components.config.cost import BudgetConfig, CostConfig
from components.config.existing import CLUSTER_ONLY_KEYS, ExistingClusterConfig
from components.config.messages import camel_case, members, strip_optional
from components.config.pools import (
    GPU_MANAGEMENT_MODES, MANAGED_MIG_API_VERSION, MAX_GPU_POOLS, MIG_PROFILES, GpuPoolConfig, GpuPoolSettings,
    managed_gpu_warnings, managed_key,
)
from components.config.preflight import PREFLIGHT_MODES, PreflightConfig
from components.config.stack import (
    DEFAULT_LOCATION, LOCATION_KEY, SUBSCRIPTION_KEY, ProjectConfig, StackConfig, current_raw_config, known_keys, load, parse,
)
from components.config.values import NAMESPACE, Location, ResourceGroupName
from components.config.workloads import (
    DEFAULT_DCGM_EXPORTER_IMAGE, DEFAULT_DEVICE_PLUGIN_IMAGE, DEFAULT_GPU_OPERATOR_VERSION, DEFAULT_MNIST_IMAGE,
    GUIDE_DEVICE_PLUGIN_IMAGE, DevicePluginConfig, GpuOperatorConfig, MnistJobConfig, MonitoringConfig,
)
from components.errors import ConfigError

__all__ = [
    "ACCESS_MODES", "CLUSTER_ONLY_KEYS", "CLUSTER_TIERS", "DEFAULT_DCGM_EXPORTER_IMAGE", "DEFAULT_DEVICE_PLUGIN_IMAGE",
    "DEFAULT_GPU_OPERATOR_VERSION", "DEFAULT_LOCATION", "DEFAULT_MNIST_IMAGE", "DEPLOYER_TYPES", "GPU_MANAGEMENT_MODES",
    "GUIDE_DEVICE_PLUGIN_IMAGE", "LOCATION_KEY", "MANAGED_MIG_API_VERSION", "MAX_GPU_POOLS", "MIG_PROFILES", "NAMESPACE",
    "NETWORK_POLICIES", "NODE_OS_CHANNELS", "NO_NETWORK_POLICY_WARNING", "PREFLIGHT_MODES", "SUBSCRIPTION_KEY",
    "SYSTEM_POOL_NAME", "UNPINNED_DEPLOYER_WARNING", "UPGRADE_CHANNELS", "VERSION_UPGRADE_CHANNELS", "AccessConfig",
    "BudgetConfig", "ConfigError", "CostConfig", "DevicePluginConfig", "ExistingClusterConfig", "GpuOperatorConfig",
    "GpuPoolConfig", "GpuPoolSettings", "Location", "MnistJobConfig", "MonitoringConfig", "NetworkConfig",
    "PreflightConfig", "ProjectConfig", "ResourceGroupName", "StackConfig", "SystemPoolConfig", "UpgradeConfig",
    "camel_case", "current_raw_config", "known_keys", "load", "managed_gpu_warnings", "managed_key", "members", "parse",
    "strip_optional",
]
