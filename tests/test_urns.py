"""A 1.0 stack keeps its URNs and its providers' pickles: anything that moves after 1.0 gets an
alias (URN) or a re-export (module path).

A URN the program stops declaring is, on a user's next `pulumi up`, a deletion, and its
successor a creation (for a GPU pool, a new pool after the old one is deleted; for the
cluster, a new cluster). A dynamic resource's provider is pickled into the state by its
module path and class name (pulumi/dynamic/dynamic.py `serialize_provider`: dill, by
reference), and every later refresh, update and destroy imports that path in Pulumi's
provider host (pulumi/dynamic/__main__.py `get_provider`): a class no longer there fails
each of them on every stack that has one.

The stacks are the dev, prod and team samples as 1.0 shipped them, frozen in
tests/fixtures/stacks-1.0/ (a team may delete the project's own), and urns.txt there the URNs
they declared, written by `make urns` (tools/urns.py), never by a test.
"""

from __future__ import annotations

import base64
import io
import pickle

import pytest
from conftest import run_cached

from tools.urns import STACKS_1_0, engine_urns, stack_files

T4 = "Standard_NC4as_T4_v3"

# Where each dynamic resource's provider class is pickled from, in every 1.0 state: one place,
# so a move of the module (with its re-export at the old path) changes these lines alone.
PICKLED_PROVIDERS = {
    "pulumi-python:dynamic/aksgpu:ManagedGpuPool": "components.pools.managed_gpu_pool.ManagedGpuPoolProvider",
    "pulumi-python:dynamic/aksgpu:ProofWatch": "components.proof.proof_watch.ProofWatchProvider",
    "pulumi-python:dynamic/aksgpu:AccessWait": "components.cluster.access_wait.AccessWaitProvider",
}


def runs_1_0():
    """The 1.0 stacks, and dev with its pool AKS-managed: no sample has a ManagedGpuPool."""
    files = stack_files()
    runs = [run_cached(stack, stack_file=path)[0] for stack, path in files.items()]
    managed = {"gpuPool": {"name": "gpu", "vmSize": T4, "management": "aks-managed"}}
    return [*runs, run_cached("dev", stack_file=files["dev"], **managed)[0]]


def test_the_1_0_stacks_are_frozen_beside_their_urns():
    assert sorted(stack_files()) == ["dev", "prod", "team"]
    pinned = (STACKS_1_0 / "urns.txt").read_text().splitlines()
    assert pinned == sorted(set(pinned)) and len(pinned) > 60


@pytest.mark.parametrize("stack", sorted(stack_files()))
def test_a_1_0_stack_keeps_its_urns(stack: str):
    run = run_cached(stack, stack_file=stack_files()[stack])[0]
    aliased = {alias for r in run.resources for alias in r.options.get("aliases", [])}
    pinned = [urn for urn in (STACKS_1_0 / "urns.txt").read_text().splitlines() if urn.startswith(f"urn:pulumi:{stack}::")]
    lost = [urn for urn in pinned if urn not in engine_urns(run) | aliased]
    assert pinned and lost == [], f"these would be replaced on the next pulumi up: give each an alias, {lost}"


class _Named(pickle.Unpickler):
    """An unpickler that notes each `module.name` the pickle looks up."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.named: list[str] = []

    def find_class(self, module: str, name: str):
        self.named.append(f"{module}.{name}")
        return super().find_class(module, name)


def pickled_by(provider: str) -> list[str]:
    """What a registered `__provider` names, loaded as the provider host loads it."""
    unpickler = _Named(base64.b64decode(provider))
    unpickler.load()
    return unpickler.named


def test_a_1_0_stack_keeps_the_module_paths_its_providers_are_pickled_by():
    dynamic = [r for run in runs_1_0() for r in run.resources if r.type.startswith("pulumi-python:dynamic/")]
    assert {r.type for r in dynamic} == set(PICKLED_PROVIDERS), "every dynamic resource is pinned here"
    for resource in dynamic:
        # By reference: the class's path and name, nothing of the class itself.
        assert pickled_by(resource.inputs["__provider"]) == [PICKLED_PROVIDERS[resource.type]], resource.urn


def test_the_guide_pool_moved_into_gpu_pools_keeps_its_pool_and_retrains_its_job():
    single, _ = run_cached("dev", gpuPool={"name": "gpu", "vmSize": T4})
    mapped, _ = run_cached("dev", gpuPool=None, gpuPools={"gpu": {"vmSize": T4}})
    before, after = {r.urn for r in single.resources}, {r.urn for r in mapped.resources}
    # The Job's watch goes with it: a new Job is a new watch (components/proof/proof_watch.py).
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
