"""What the adopting `up` does to each object of the owner's the stack takes over, from what
the stack declares for it: the plans components/azure/adoption.py works out, handed the
declared inputs as the engine is sent them. Pure: it declares nothing; __main__.py logs the
plans before any resource is registered."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.azure import adoption
from components.azure.agent_pool_members import AGENT_POOL_INPUTS
from components.azure.cluster_object_checks import Adoption
from components.azure.existing_pools import LivePool
from components.azure.pool_network import PoolNetwork
from components.azure.reader import RunningPool
from components.config import NAMESPACE, GpuPoolConfig
from components.resources.device_plugin import NvidiaDevicePluginArgs, daemon_set_annotations, plugin_spec
from components.resources.existing_pool import plain
from components.resources.gpu_pool import agent_pool_settings, typed_pool_ignores


def rest_properties(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The typed pool's arguments as the agentPools API names and spells them, unset ones left out."""
    rest_name = {sdk: rest for rest, sdk in AGENT_POOL_INPUTS.items()}
    return {rest_name[k]: plain(v) for k, v in settings.items() if v is not None}


def pool_plan(
    pool: GpuPoolConfig, key: str, network: PoolNetwork | None, tags: Mapping[str, str], live: LivePool, running: RunningPool | None
) -> adoption.Plan:
    """The adopting `up` of the owner's pool: the import, then the update field by field; a
    replacement refused. The version is the owner's on an existing cluster (ignoreChanges)."""
    assert live.import_id is not None, "only the adopting run imports"
    settings = agent_pool_settings(pool, network, tags, live)
    ignored = typed_pool_ignores(pool, True, settings, running)
    return adoption.pool_plan(key, live.facts, live.import_id, rest_properties(settings), ignored)


def device_plugin_plans(args: NvidiaDevicePluginArgs, taken: Adoption) -> list[adoption.Plan]:
    """The adopting `up` of the guide's namespace and DaemonSet (devicePlugin.adopt): each
    imported, then updated to the stack's spec, field by field. The stack owns the plugin's spec
    from then on (the image and tolerations its config says, the hardening), so every field it
    declares otherwise is named; the selector is the guide's, or the run was refused."""
    key = f"{NAMESPACE}:devicePlugin"
    if not taken.live_daemon_set:
        return []  # not read: the line that says so is the check's (cluster_object_checks)
    namespace = {"metadata": {"annotations": dict(args.marks)}}
    daemon_set = {"metadata": {"annotations": daemon_set_annotations(args)}, "spec": plain(plugin_spec(args))}
    plans = [adoption.object_plan(key, f"Namespace {taken.namespace}", taken.namespace, taken.live_namespace, namespace)]
    plans = plans if taken.import_namespace else []
    if taken.import_daemon_set:
        plans.append(adoption.object_plan(key, f"DaemonSet {taken.daemon_set}", taken.daemon_set, taken.live_daemon_set, daemon_set))
    return plans
