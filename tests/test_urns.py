"""Today's stacks keep their resources: every URN a deployed stack holds is still declared,
at that URN or as an alias of the resource that took its place.

tests/fixtures/urns/ holds the URNs of the dev and prod stacks and of the aks-managed and
gpu-operator variants as the program declared them at 518fc57, before the GPU pool became a
component of its own, and of a stack with a capacity group (gpuGroups) as it came in. A URN the program stops declaring is, on a user's next `pulumi up`,
a deletion, and its successor a creation: for the GPU pool, a new pool after the old one is
deleted; for the cluster, a new cluster. The stacks run are the tests' copies of dev and prod
(tests/fixtures/stacks/), so the pins hold whatever the project's own stack files now are.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cached

FIXTURES = Path(__file__).parent / "fixtures" / "urns"
T4 = "Standard_NC4as_T4_v3"
CASES = {
    "dev": ("dev", {}),
    "prod": ("prod", {}),
    "dev-aks-managed": ("dev", {"gpuPool": {"name": "gpu", "vmSize": T4, "management": "aks-managed"}}),
    "dev-gpu-operator": ("dev", {"gpuPool": {"name": "gpu", "vmSize": T4, "management": "gpu-operator"}}),
    # Capacity groups (gpuGroups, #55), pinned as they came in: a group's pools and its one Job.
    "dev-gpu-groups": (
        "dev",
        {
            "gpuPool": None,
            "gpuPools": {
                "t4": {"vmSize": T4, "minCount": 0, "maxCount": 2},
                "t4b": {"vmSize": "Standard_NC8as_T4_v3", "minCount": 0, "maxCount": 2},
                "a10": {"vmSize": "Standard_NV36ads_A10_v5", "minCount": 0, "maxCount": 1},
            },
            "gpuGroups": {"inference": ["t4", "t4b", "a10"]},
        },
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_urn_of_a_deployed_stack_is_still_declared_or_aliased(case: str):
    stack, overrides = CASES[case]
    run, _ = run_cached(stack, **overrides)
    declared = {r.urn: r.type for r in run.resources}
    aliased = {alias: r.type for r in run.resources for alias in r.options.get("aliases", [])}
    before = json.loads((FIXTURES / f"{case}.json").read_text())
    lost = [urn for urn in before if urn not in declared and urn not in aliased]
    assert lost == [], f"these would be replaced on the next pulumi up: {lost}"
    # An alias stands for a resource of the same type: the type is the URN's last segment.
    for urn, type_ in aliased.items():
        assert urn.split("::")[2].split("$")[-1] == type_


def test_the_guide_pool_moved_into_its_component_under_an_alias():
    run, _ = run_cached("dev")
    pool = run.one("azure-native:containerservice:AgentPool")
    assert pool.parent.endswith("aks-gpu:azure:GpuPool::gpu-pool-gpu")
    assert pool.options["aliases"] == [
        "urn:pulumi:dev::aks-gpu::aks-gpu:azure:GpuCluster$azure-native:containerservice:AgentPool::gpu-cluster-gpu-pool"
    ]


def test_pools_of_the_new_keys_carry_no_alias():
    # gpuPools and existingCluster stacks are new: nothing of theirs was ever deployed elsewhere.
    run, _ = run_cached("dev", gpuPool=None, gpuPools={"t4": {"vmSize": T4}, "t4b": {"vmSize": T4}})
    assert all("aliases" not in r.options for r in run.of_type("azure-native:containerservice:AgentPool"))


def test_the_guide_pool_moved_into_gpu_pools_keeps_its_pool_and_retrains_its_job():
    single, _ = run_cached("dev", gpuPool={"name": "gpu", "vmSize": T4})
    mapped, _ = run_cached("dev", gpuPool=None, gpuPools={"gpu": {"vmSize": T4}})
    before, after = {r.urn for r in single.resources}, {r.urn for r in mapped.resources}
    # The Job's watch goes with it: a new Job is a new watch (components/resources/proof_watch.py).
    assert sorted(u.rsplit("::", 1)[1] for u in before - after) == ["mnist-job", "mnist-watch"]
    assert sorted(u.rsplit("::", 1)[1] for u in after - before) == ["mnist-job-gpu", "mnist-watch-gpu"]


# The proof's watches (#53), URNs new with them: pinned, so a move of the watch or its component
# shows here as the replacement it would be.
WATCH = "pulumi-python:dynamic/aksgpu:ProofWatch"


def test_each_proof_watch_is_a_child_of_the_proof_component_named_after_its_job():
    guide, _ = run_cached("prod", preview=True)
    pools, _ = run_cached("dev", gpuPool=None, gpuPools={"t4": {"vmSize": T4}, "a100": {"vmSize": "Standard_NC24ads_A100_v4"}})
    assert [r.urn for r in guide.of_type(WATCH)] == [
        "urn:pulumi:prod::aks-gpu::aks-gpu:kubernetes:MnistJob$pulumi-python:dynamic/aksgpu:ProofWatch::mnist-watch"
    ]
    assert sorted(r.urn for r in pools.of_type(WATCH)) == [
        f"urn:pulumi:dev::aks-gpu::aks-gpu:kubernetes:MnistJob$pulumi-python:dynamic/aksgpu:ProofWatch::mnist-watch-{pool}"
        for pool in ("a100", "t4")
    ]
