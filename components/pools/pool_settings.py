"""A GPU pool's agent-pool settings as both kinds of pool declare them (REST names, pool_fields),
and what `pulumi up` leaves to Azure among them: below the plan and the components, so the plan
says what an adopting `up` changes (`adopted_pool_plan`) from the settings gpu_pool.py declares."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from pulumi import _types

from components.cluster.settings import VERSION_UPGRADE_CHANNELS, UpgradeConfig
from components.ownership import adoption, ownership
from components.pools import pool_fields, pool_network
from components.pools.existing_pools import LivePool
from components.pools.pool_network import PoolNetwork
from components.pools.settings import GpuPoolConfig
from components.seam.reader import RunningPool


def gpu_pool_settings(pool: GpuPoolConfig, network: PoolNetwork | None = None) -> dict[str, Any]:
    """The GPU pool's agent-pool fields as it declares them, by their REST names; its network
    unset, a created cluster's."""
    return pool_fields.declared(pool, network or pool_network.of_created(pool))


def pool_ignore_changes(pool: GpuPoolConfig, version_moves: bool) -> list[str]:
    """What `pulumi up` must leave to Azure on the GPU pool: the count, when the cluster
    autoscaler owns it; the version, when something else moves it: an upgrade channel (AKS
    upgrades node pools with the control plane: auto-upgrade-cluster.md), or an existing
    cluster's owner. Unset is not enough: azure-native's Read writes a property that changed
    outside Pulumi into the stored inputs, and its Diff then reports the program's missing
    value as a deletion, an update on every `up` (pulumi-azure-native provider.go `Read`,
    applyDiff of the outputs' change; `Diff`/objectDiff: `deletes[k] = old`)."""
    return [name for name, ignored in (("count", pool.autoscaling), ("orchestratorVersion", version_moves)) if ignored]


def typed_pool_ignores(pool: GpuPoolConfig, version_moves: bool, settings: Mapping[str, Any], running: RunningPool | None) -> list[str]:
    """The typed pool's ignoreChanges: `pool_ignore_changes`, and the fixed fields left to
    Azure (pool_fields.left_to_azure)."""
    switched_on = running.switched_on if running is not None else frozenset()
    return pool_ignore_changes(pool, version_moves) + pool_fields.left_to_azure(settings, switched_on)


def agent_pool_settings(
    pool: GpuPoolConfig,
    network: PoolNetwork | None,
    tags: Mapping[str, str] | None,
    live: LivePool | None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The typed pool's arguments but its names and version; an adopted pool's as Azure has them.
    `labels`: its capacity group's, added to an adopted pool's own, which an update would
    otherwise overwrite (use-labels.md: "updating labels will overwrite the old labels")."""
    settings = {"tags": dict(tags) if tags else None, **gpu_pool_settings(pool, network)}
    if live is not None:
        settings.update(adopted_settings(live, pool, tags or {}))
    if labels:
        settings["nodeLabels"] = {**(settings.get("nodeLabels") or {}), **labels}
    return settings


def version_moves(upgrade: UpgradeConfig) -> bool:
    return upgrade.channel in VERSION_UPGRADE_CHANNELS


def adopted_settings(live: LivePool, pool: GpuPoolConfig, owner_tags: Mapping[str, str]) -> dict[str, Any]:
    """What an adopted pool declares beside the fields the stack sets itself: every other input
    as the live pool has it, or unset where it has none (so a fixed one is left to Azure, not
    set to this program's choice), and its tags with this stack's added. By REST names; a
    nested object keeps its REST spelling, which azure-native's SDK sends as it is."""
    members = pool_fields.live_inputs(live.facts)
    declared: dict[str, Any] = {rest: members.get(rest) for rest in pool_fields.passed_through()}
    declared["tags"] = {**ownership.without(live.facts.tags, owner_tags), **owner_tags}
    if live.facts.member("enableAutoScaling") is False and not pool.autoscaling:
        declared["enableAutoScaling"] = False  # as Azure says it, not left out (which the update would send as a deletion)
    return declared


def plain(value: Any) -> Any:
    """A declared value as the engine is sent it: an SDK `...Args` object by its wire names, an
    enum as its value, None members left out (pulumi/_types.py `input_type_to_dict`)."""
    if isinstance(value, Enum):
        return value.value
    if _types.is_input_type(type(value)):
        return {k: plain(v) for k, v in _types.input_type_to_dict(value).items()}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def sdk_arguments(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings as azure-native's AgentPool keyword arguments."""
    return {pool_fields.inputs()[k]: v for k, v in settings.items()}


def adopted_pool_plan(
    pool: GpuPoolConfig,
    key: str,
    network: PoolNetwork | None,
    tags: Mapping[str, str],
    live: LivePool,
    running: RunningPool | None,
    labels: Mapping[str, str] | None = None,
) -> adoption.Plan:
    """The adopting `up` of the owner's pool: the import, then the update field by field; a
    replacement refused. The version is the owner's (ignoreChanges)."""
    assert live.import_id is not None, "only the adopting run imports"
    settings = agent_pool_settings(pool, network, tags, live, labels)
    ignored = typed_pool_ignores(pool, True, settings, running)
    return adoption.pool_plan(key, live.facts, live.import_id, {k: plain(v) for k, v in settings.items() if v is not None}, ignored)
