"""What the adopting `up` does to the guide's namespace and DaemonSet (devicePlugin.adopt), from
the DaemonSet's spec as NvidiaDevicePlugin declares it: components/deciding/workloads/device_plugin.py
works it out from the component's arguments (the spec's inputs). Pure: it declares nothing;
__main__.py says them before the plugin is registered."""

from __future__ import annotations

from components.deciding.existing import adoption
from components.deciding.existing.cluster_object_checks import Adoption
from components.deciding.workloads.device_plugin import adoption_plans
from components.resources.device_plugin import NvidiaDevicePluginArgs


def device_plugin_plans(args: NvidiaDevicePluginArgs, taken: Adoption) -> list[adoption.Plan]:
    """The adopting `up` of the guide's namespace and DaemonSet, from the component's arguments."""
    return adoption_plans(args, taken)
