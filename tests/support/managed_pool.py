"""The managed GPU pool's provider, called as the engine calls it, and its inputs."""

from __future__ import annotations

from conftest import MANAGED_CLUSTER, MANAGED_GROUP

from components.pools import gpu_pool
from components.pools import managed_gpu_pool as mgp
from components.pools.settings import GpuPoolConfig

T4 = "Standard_NC4as_T4_v3"

GROUP, CLUSTER = MANAGED_GROUP, MANAGED_CLUSTER  # the conftest's `aks` fixture has this cluster


def inputs(pool: GpuPoolConfig | None = None, version=None, uid="uid-1", tags=None) -> dict:
    """The resource's inputs as the program declares them (gpu_pool.GpuPool._create_managed_pool)."""
    pool = pool or GpuPoolConfig(vm_size=T4, management="aks-managed")
    return {
        "subscriptionId": "33333333-3333-3333-3333-333333333333",
        "resourceGroupName": GROUP,
        "clusterName": CLUSTER,
        "agentPoolName": pool.name,
        "apiVersion": mgp.MIG_API_VERSION if pool.mig_profile else mgp.STABLE_API_VERSION,
        "properties": gpu_pool.managed_gpu_pool_properties(pool, version, tags),
        mgp.CLUSTER_UID: uid,
        mgp.TIMEOUTS: dict(gpu_pool.POOL_TIMEOUT_MINUTES),
        mgp.ENDPOINT: mgp.ARM_ENDPOINT,
    }


PROVIDER = mgp.ManagedGpuPoolProvider()


def up(olds: dict | None, news: dict) -> dict:
    """What the engine does on `pulumi up`: diff, then create, update, or delete-then-create."""
    if olds is None:
        return PROVIDER.create(news).outs
    diff = PROVIDER.diff(mgp.pool_id(olds), olds, news)
    if diff.replaces:
        assert diff.delete_before_replace, "a fixed-name pool must be deleted first"
        PROVIDER.delete(mgp.pool_id(olds), olds)
        return PROVIDER.create(news).outs
    if diff.changes:
        return PROVIDER.update(mgp.pool_id(olds), olds, news).outs
    return olds
