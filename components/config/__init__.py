"""The stack's configuration, by concept: each module holds one concept's settings (pydantic
dataclasses: type, default, allowed values, description), its rules and its messages, and
`stack.py` parses them all at once into the `StackConfig` the program runs on. This package is
the only code that knows config keys; the same definitions generate schema/stack.schema.json.
Which module holds which keys: docs/layout.md, "Every module"."""

# What the program, the tools and the tests take from here. Every settings dataclass is among
# them: tools/schema.py looks each up by its class name to carry descriptions to subclasses.
from components.config import pool_upgrades
from components.config.cluster import (
    SYSTEM_POOL_NAME,
    VERSION_UPGRADE_CHANNELS,
    AccessConfig,
    NetworkConfig,
    SystemPoolConfig,
    UpgradeConfig,
)
from components.config.cost import BudgetConfig, CostConfig
from components.config.existing import ExistingClusterConfig
from components.config.groups import GROUP_LABEL, GpuGroups
from components.config.messages import camel_case, members, snake, strip_optional
from components.config.pool_upgrades import PoolUpgradeSettings
from components.config.pools import MANAGED_MIG_API_VERSION, GpuPoolConfig, GpuPoolSettings, managed_key
from components.config.preflight import PreflightConfig
from components.config.stack import DEFAULT_LOCATION, LOCATION_KEY, ProjectConfig, StackConfig, known_keys, load, parse
from components.config.values import NAMESPACE, Location, ResourceGroupName
from components.config.workloads import (
    GUIDE_DEVICE_PLUGIN_IMAGE,
    DevicePluginConfig,
    GpuOperatorConfig,
    MnistJobConfig,
    MonitoringConfig,
)
from components.errors import ConfigError

__all__ = [
    "DEFAULT_LOCATION",
    "GROUP_LABEL",
    "GUIDE_DEVICE_PLUGIN_IMAGE",
    "LOCATION_KEY",
    "MANAGED_MIG_API_VERSION",
    "NAMESPACE",
    "SYSTEM_POOL_NAME",
    "VERSION_UPGRADE_CHANNELS",
    "AccessConfig",
    "BudgetConfig",
    "ConfigError",
    "CostConfig",
    "DevicePluginConfig",
    "ExistingClusterConfig",
    "GpuGroups",
    "GpuOperatorConfig",
    "GpuPoolConfig",
    "GpuPoolSettings",
    "Location",
    "MnistJobConfig",
    "MonitoringConfig",
    "NetworkConfig",
    "PoolUpgradeSettings",
    "PreflightConfig",
    "ProjectConfig",
    "ResourceGroupName",
    "StackConfig",
    "SystemPoolConfig",
    "UpgradeConfig",
    "camel_case",
    "known_keys",
    "load",
    "managed_key",
    "members",
    "parse",
    "pool_upgrades",
    "snake",
    "strip_optional",
]
