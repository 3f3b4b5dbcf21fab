"""A GPU pool the cluster has (`gpuPools.<name>.existing: use` or `adopt`) held to the count
rules of a new one (components/pools/settings.py, check_gpu_pool): an autoscaler's floor above
its ceiling, a start outside the autoscaler's range, and a fixed pool of 0 nodes that the
proof Job would wait on for ever; and, on adopt, an autoscaler switched off by the config at
whatever count it runs at that moment.

Where the config set the values (adopt), its key is refused as a new pool's would be; where
Azure has them, the pool is named as Azure describes it, with what to do. Pure: it runs on the
pool resolved from Azure and the config (existing_pools.resolve), before anything is registered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.cluster.cluster_facts import PoolFacts
from components.config.messages import min_above_max, no_node_for_the_job
from components.config.values import NAMESPACE
from components.errors import ConfigError, PreflightError
from components.pools.settings import GpuPoolConfig


def _autoscaled(facts: PoolFacts) -> bool:
    return bool(facts.enable_auto_scaling) and facts.min_count is not None and facts.max_count is not None


def check(pool: GpuPoolConfig, given: Mapping[str, Any], facts: PoolFacts, key: str, job_enabled: bool) -> None:
    """`pool` as resolved (existing_pools.settings_from_azure); `given`: the members its entry
    sets, of which only an adopted pool's counts reach `pool` (a used pool's come from Azure)."""
    config = given if pool.existing == "adopt" else {}
    switched_off = "minCount" in config and config["minCount"] is None and "maxCount" in config and config["maxCount"] is None
    if switched_off and _autoscaled(facts) and "nodeCount" not in config:
        raise ConfigError(
            f"invalid config {key}.minCount/maxCount = null with existing: adopt: the pool {facts.name} runs the cluster autoscaler "
            f"in Azure ({facts.min_count}-{facts.max_count}, {facts.count} node(s) now), and null switches it off, fixing the pool at "
            "the count it happens to have; set nodeCount with them for the nodes it keeps, or remove minCount and maxCount to keep "
            "its autoscaler"
        )
    if pool.autoscaling:
        assert pool.min_count is not None and pool.max_count is not None
        if pool.min_count > pool.max_count:
            if "minCount" in config:
                raise min_above_max(key, pool.min_count, pool.max_count)
            raise _live(
                pool,
                key,
                f"its autoscaler runs from minCount {pool.min_count} to maxCount {pool.max_count}, which AKS does not allow "
                "(minCount <= maxCount): check the cluster's description (az aks nodepool show)",
            )
        if "nodeCount" in config and not pool.min_count <= pool.node_count <= pool.max_count:
            range_from = "the config's range" if "minCount" in config else f"the range its autoscaler has in Azure ({facts.name})"
            raise ConfigError(
                f"invalid config {key}.nodeCount = {pool.node_count}: an autoscaled pool starts inside {range_from}; "
                f"expected {pool.min_count} <= nodeCount <= {pool.max_count}"
            )
    elif job_enabled and pool.node_count == 0:
        if "nodeCount" in config:
            raise no_node_for_the_job(key)
        set_here = ", or set nodeCount (>= 1) or minCount/maxCount here" if pool.existing == "adopt" else ""
        raise _live(
            pool,
            key,
            f"it has 0 nodes and no autoscaler, so the proof Job ({NAMESPACE}:mnistJob.enabled = true) would wait for ever for a GPU "
            f"node; set {NAMESPACE}:mnistJob.enabled to false, or scale the pool first (`az aks nodepool scale --name {facts.name} "
            f"--node-count 1`, or `az aks nodepool update --enable-cluster-autoscaler`){set_here}",
        )


def _live(pool: GpuPoolConfig, key: str, why: str) -> PreflightError:
    return PreflightError(f"{key}.existing = {pool.existing}: the pool {pool.name}, as Azure describes it: {why}")
