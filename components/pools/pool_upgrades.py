"""A GPU pool's `upgradeSettings`: by default maxSurge "0" with maxUnavailable "1", which needs no
GPU quota beyond the pool's own nodes (AKS's default surges one extra GPU node); both above 0 (a
preview) is refused. Why, and the sources: docs/lifecycle.md, "Upgrades of a GPU pool"."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from pydantic.dataclasses import dataclass

from components.config.messages import camel_case, snake
from components.config.values import MODEL, one_of, pattern, whole_number
from components.errors import ConfigError

# A count of nodes (0-1000, AKS's most per pool) or a percentage of the pool (0%-100%).
NodeShare = pattern(
    r"^(?:[0-9]|[1-9][0-9]{1,2}|1000|(?:[0-9]|[1-9][0-9]|100)%)$",
    "a node count from 0 to 1000, or a percentage of the pool from 0% to 100%, as a string such as '1' or '33%'",
)
# The default for a GPU pool: no node beyond the pool's own, one node down at a time.
NO_SURGE = {"maxSurge": "0", "maxUnavailable": "1"}


@dataclass(frozen=True, config=MODEL)
class PoolUpgradeSettings:
    """How AKS upgrades the pool's nodes (AgentPoolUpgradeSettings). Unset: maxSurge '0' and maxUnavailable '1', which need no GPU quota beyond the pool's own nodes."""

    max_surge: NodeShare | None = None
    """Nodes AKS adds while it upgrades ('1', '33%'); each needs GPU quota, and preflight counts it. Not above 0 together with maxUnavailable, nor both 0. Unset: '0' (AKS's own default, '10%', is at least one extra GPU node)."""
    max_unavailable: NodeShare | None = None
    """Nodes out of service at once while AKS upgrades them in place. Unset: '1' when maxSurge is unset or 0, else AKS's 0."""
    drain_timeout_in_minutes: whole_number(1, 1440) | None = None
    """How long AKS waits for a node's pods to leave; past it, the upgrade fails. Unset: AKS's 30."""
    node_soak_duration_in_minutes: whole_number(0, 30) | None = None
    """How long AKS waits after draining a node before reimaging it. Unset: AKS's 0."""
    undrainable_node_behavior: one_of("Cordon", "Schedule") | None = None
    """A node whose pods will not leave: Cordon (quarantined, left for you) or Schedule. Unset: AKS's Schedule."""


# An adopted pool keeps the owner's settings as they are (`fill=False`): what they leave unset
# stays AKS's default, which is what that pool upgrades with today.
AKS_MAX_SURGE = "10%"


def effective(settings: PoolUpgradeSettings | None, fill: bool = True) -> dict[str, Any]:
    """The agentPools `upgradeSettings` in ARM's spelling; with `fill`, a new pool's defaults
    (NO_SURGE) where the settings leave the pair unset."""
    body = {camel_case(k): v for k, v in dataclasses.asdict(settings or PoolUpgradeSettings()).items()}
    if fill and body["maxSurge"] is None:
        body["maxSurge"] = NO_SURGE["maxSurge"]
    if fill and body["maxUnavailable"] is None and body["maxSurge"] in ("0", "0%"):
        body["maxUnavailable"] = NO_SURGE["maxUnavailable"]
    return {k: v for k, v in body.items() if v is not None}


def surge_nodes(settings: PoolUpgradeSettings | None, pool_nodes: int) -> int:
    """The nodes an upgrade adds to a pool of `pool_nodes` nodes, as preflight counts quota: a
    percentage rounds up (the agentPools spec: "fractional nodes are rounded up")."""
    surge = effective(settings)["maxSurge"]
    if surge.endswith("%"):
        return math.ceil(int(surge[:-1]) * pool_nodes / 100)
    return int(surge) if pool_nodes else 0


def adopted(live: Any, config: Any, key: str) -> PoolUpgradeSettings | None:
    """A pool's upgradeSettings as Azure has them (REST names), with what an adopting config sets
    over them, member by member: a member neither sets stays unset, never NO_SURGE, which would
    change the owner's upgrades."""
    members = PoolUpgradeSettings.__dataclass_fields__
    known = {snake(k): v for k, v in live.items() if snake(k) in members and v is not None} if isinstance(live, Mapping) else {}
    if isinstance(config, Mapping):
        known.update({snake(k): v for k, v in config.items() if v is not None})
    if not known:
        return None
    settings = PoolUpgradeSettings(**known)
    if isinstance(config, Mapping):
        check(settings, key, fill=False)
    return settings


def check(settings: PoolUpgradeSettings | None, key: str, fill: bool = True) -> None:
    """AKS's rules on the pair, in one line each."""
    body = effective(settings, fill)
    surge, unavailable = body.get("maxSurge", AKS_MAX_SURGE), body.get("maxUnavailable", "0")
    zero = {"0", "0%"}
    if (surge in zero) != (unavailable in zero):
        return
    why = (
        "AKS requires maxSurge above 0 when maxUnavailable is 0 (upgrade-aks-node-pools-rolling.md); set maxUnavailable to '1' "
        "(one node down at a time, no extra quota) or maxSurge above 0"
        if surge in zero
        else "both above 0 is AKS's MaxUnavailable fallback, a preview this program does not use; set one of them to '0'"
    )
    raise ConfigError(f"invalid config {key}.upgradeSettings: maxSurge {surge} with maxUnavailable {unavailable}: {why}")
