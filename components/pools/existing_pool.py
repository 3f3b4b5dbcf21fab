"""A GPU pool the cluster already had (components/pools/existing_pools.py): the pool used as it
is, which the stack never registers (`UsedPool`). What an adopted pool declares beyond this
program's own settings is components/pools/pool_settings.py's."""

from __future__ import annotations

from components.catalog import gpu_sizes
from components.pools.existing_pools import LivePool
from components.pools.settings import GpuPoolConfig

# The `management` output (gpuPools) of a pool the stack uses (its GPU stack is as Azure has it).
USED_MANAGEMENT = {
    "device-plugin": "device-plugin-daemonset (existing pool)",
    "aks-managed": "aks-managed (existing pool)",
    "gpu-operator": "gpu-operator (existing pool)",
}


class UsedPool:
    """A pool of the cluster used as it is (`existing: use`): what the device plugin, the
    proof Job and the outputs need of it. Not a resource: nothing of this stack holds it."""

    node_pool = None

    def __init__(self, pool: GpuPoolConfig, live: LivePool) -> None:
        self.pool = pool
        self.live = live
        self.name = pool.name
        self.vm_size = pool.vm_size
        self.generation = gpu_sizes.generation(pool.vm_size)
        self.management = USED_MANAGEMENT[pool.mode]
        self.gpus_per_node = gpu_sizes.gpus_per_node(pool.vm_size, pool.mig_profile)
