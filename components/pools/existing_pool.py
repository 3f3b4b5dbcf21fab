"""A GPU pool the cluster already had, used as it is (`existing: use`)."""

from __future__ import annotations

from components.catalog import gpu_sizes
from components.pools.existing_pools import LivePool
from components.pools.settings import GpuPoolConfig

# The `management` output of a pool the stack uses.
USED_MANAGEMENT = {
    "device-plugin": "device-plugin-daemonset (existing pool)",
    "aks-managed": "aks-managed (existing pool)",
    "gpu-operator": "gpu-operator (existing pool)",
}


class UsedPool:
    """What the device plugin, the proof Job and the outputs need of a used pool; no resource."""

    node_pool = None

    def __init__(self, pool: GpuPoolConfig, live: LivePool) -> None:
        self.pool = pool
        self.live = live
        self.name = pool.name
        self.vm_size = pool.vm_size
        self.generation = gpu_sizes.generation(pool.vm_size)
        self.management = USED_MANAGEMENT[pool.mode]
        self.gpus_per_node = gpu_sizes.gpus_per_node(pool.vm_size, pool.mig_profile)
