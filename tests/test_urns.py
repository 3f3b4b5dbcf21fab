"""The URNs the program declares: a URN it stops declaring is, on a user's next `pulumi up`, a
deletion, and its successor a creation (for a GPU pool, a new pool after the old one is
deleted; for the cluster, a new cluster)."""

from __future__ import annotations

from conftest import run_cached

T4 = "Standard_NC4as_T4_v3"


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
