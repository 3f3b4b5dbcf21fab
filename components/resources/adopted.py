"""What the adopting `up` does to the guide's namespace and DaemonSet (devicePlugin.adopt), from
the DaemonSet's spec as NvidiaDevicePlugin declares it: the plans components/deciding/existing/adoption.py
works out, handed the declared inputs as the engine is sent them. Pure: it declares nothing;
__main__.py says them before the plugin is registered. An adopted pool's plan needs no
component's arguments, and is the plan's (components/deciding/existing/pool_settings.py)."""

from __future__ import annotations

from components.config import NAMESPACE
from components.deciding.existing import adoption
from components.deciding.existing.cluster_object_checks import Adoption
from components.deciding.existing.pool_settings import plain
from components.resources.device_plugin import NvidiaDevicePluginArgs, daemon_set_annotations, plugin_spec


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
