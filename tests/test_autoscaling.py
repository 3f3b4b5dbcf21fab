"""An autoscaled GPU pool (gpuPool.minCount/maxCount): the bounds' rules, the autoscaler on in the
pool and left alone by `pulumi up`, and a Job that waits longer for a pool that may start from
zero. (On a channel: test_lifecycle.py; the managed pool refuses it: test_managed_pool_program.py.)"""

from __future__ import annotations

from support.config import parsed, refused

from components.pools import pool_fields as pool_mutability


def outside_fixed(ignored: list[str]) -> list[str]:
    """The ignored properties other than the fixed ones a refresh may fill in
    (test_refresh_drift.py pins those)."""
    return [name for name in ignored if name not in pool_mutability.fixed()]


POOL = "azure-native:containerservice:AgentPool"
JOB = "kubernetes:batch/v1:Job"


# --------------------------------------------------------------------------- the bounds


def test_autoscaling_needs_both_bounds():
    refused(r"aks-gpu:gpuPool: minCount is set without maxCount", gpuPool={"minCount": 0})
    refused(r"aks-gpu:gpuPool: maxCount is set without minCount", gpuPool={"maxCount": 3})


def test_autoscaling_bounds_must_be_ordered():
    refused(r"minCount 3 is greater than maxCount 1", gpuPool={"minCount": 3, "maxCount": 1})


def test_an_autoscaled_pool_starts_at_its_minimum_unless_told_otherwise():
    pool = parsed(gpuPool={"minCount": 0, "maxCount": 3}).gpu_pools[0]
    assert (pool.autoscaling, pool.node_count, pool.min_count, pool.max_count) == (True, 0, 0, 3)


def test_an_autoscaled_pool_node_count_must_be_inside_its_range():
    refused(r"aks-gpu:gpuPool.nodeCount = 5: .*expected 1 <= nodeCount <= 3", gpuPool={"minCount": 1, "maxCount": 3, "nodeCount": 5})


def test_max_count_must_allow_a_node():
    refused(r"aks-gpu:gpuPool.maxCount = 0", gpuPool={"minCount": 0, "maxCount": 0})


# --------------------------------------------------------------------------- the pool and its Job


def test_min_and_max_turn_the_autoscaler_on(program):
    run = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 3})
    pool = run.one(POOL)
    assert (pool.inputs["enableAutoScaling"], pool.inputs["minCount"], pool.inputs["maxCount"], pool.inputs["count"]) == (True, 0, 3, 0)
    assert outside_fixed(pool.options["ignoreChanges"]) == ["count"], "pulumi up must not fight the autoscaler"


def test_a_fixed_pool_keeps_its_count_managed(dev):
    pool = dev.one(POOL)
    assert "enableAutoScaling" not in pool.inputs
    assert outside_fixed(pool.options["ignoreChanges"]) == []


def test_the_job_waits_longer_when_the_pool_may_start_from_zero(program):
    from_zero = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2})
    warm = program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "minCount": 1, "maxCount": 2})
    assert from_zero.one(JOB).options["customTimeouts"]["create"] == "81m"
    assert warm.one(JOB).options["customTimeouts"]["create"] == "51m"
