"""A destroy that needs no API server: what lives inside a cluster this stack creates (every
Kubernetes object, the Helm release) carries `deletedWith` the cluster, so the engine deletes
none of it by itself when the cluster goes too; the GPU pools, which bill, are deleted each by
its own Delete, before the cluster (tests/test_failed_destroy.py says why); an existing
cluster's contents, and a protected cluster's, are deleted one by one as before
(docs/lifecycle.md, "pulumi destroy").

The engine's rule, played on the recorded graph (pulumi/pulumi at 1b594989):
  - pkg/resource/deploy/step.go DeleteStep.Apply: the provider's Delete is skipped when
    `isDeletedWith(s.old.DeletedWith, s.otherDeletions)`, the URNs condemned in the same
    operation (step_generator.go GenerateDeletes: `sg.deletes[res.URN] = true` for each, before
    any step runs; the delete-first replacement of the target too: `sg.deletes[old.URN] = true`);
  - step_generator.go `diff`: a resource whose deletedWith target is replaced is replaced too
    (`sg.replaces[new.DeletedWith]`, PR #23818; after v3.259.0, and the installed SDK's
    ResourceOptions docs say so: "If the named resource is being replaced, this resource will
    be replaced as well")."""

from __future__ import annotations

import pytest
from conftest import run_cached

T4 = "Standard_NC4as_T4_v3"
CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
MANAGED = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"
RELEASE = "kubernetes:helm.sh/v3:Release"
K8S_PROVIDER = "pulumi:providers:kubernetes"
WATCH = "pulumi-python:dynamic/aksgpu:ProofWatch"
PLUGIN_AND_MANAGED = {"a": {"vmSize": T4}, "b": {"vmSize": T4, "management": "aks-managed"}}
OPERATOR = {"op": {"vmSize": T4, "management": "gpu-operator"}}
BUDGET = {"budget": {"amount": 500, "contactEmails": ["gpu-team@example.com"]}}
ENTRA = {"mode": "entra", "deployerObjectId": "00000000-0000-0000-0000-000000000001"}


# A destroy reads the graph a deployment wrote; one test here runs the preview too, whose graph
# is the same (tests/test_failed_destroy.py compares the two). The settings are the ones
# test_failed_destroy.py runs, so a session runs each once.
def created(pools, preview: bool = False, access=ENTRA, **overrides):
    return run_cached("dev", preview=preview, gpuPool=None, gpuPools=pools, cost=BUDGET, access=access, **overrides)[0]


def inside_the_cluster(run) -> set[str]:
    """What the cluster holds and its API server serves: every Kubernetes object (the provider
    itself is the engine's and talks to no cluster on delete:
    pkg/resource/deploy/providers/registry.go Delete) and the Helm release; and each proof
    Job's watch, which goes as its Job goes (its Delete does nothing either way:
    components/proof/proof_watch.py)."""
    return {r.urn for r in run.resources if r.custom and (r.type.startswith("kubernetes:") and r.type != K8S_PROVIDER or r.type == WATCH)}


def gpu_pools(run) -> set[str]:
    return {r.urn for r in run.resources if r.type in (POOL, MANAGED)}


def provider_deletes(run, condemned: set[str]) -> set[str]:
    """Which of `condemned` the engine sends to their provider's Delete: all but those whose
    deletedWith is condemned in the same operation (the module docstring cites the rule)."""
    return {urn for urn in condemned if run.by_urn(urn).options.get("deletedWith") not in condemned}


@pytest.mark.parametrize(
    "pools, preview, access",
    [(PLUGIN_AND_MANAGED, True, ENTRA), (PLUGIN_AND_MANAGED, False, ENTRA), (OPERATOR, False, {})],
    ids=["device plugin and aks-managed, preview", "device plugin and aks-managed, deployment", "gpu operator"],
)
def test_every_kubernetes_object_of_a_created_cluster_and_nothing_else_is_deleted_with_it(pools, preview, access):
    run = created(pools, preview, access)
    cluster = run.one(CLUSTER).urn
    inside = inside_the_cluster(run)
    marked = {r.urn: r.options["deletedWith"] for r in run.resources if "deletedWith" in r.options}
    assert set(marked) == inside and set(marked.values()) == {cluster}
    kinds = {run.by_urn(urn).type for urn in inside}
    assert {"kubernetes:core/v1:Namespace", "kubernetes:batch/v1:Job"} <= kinds
    if pools is OPERATOR:
        assert RELEASE in kinds
    assert gpu_pools(run) and not gpu_pools(run) & set(marked), "the GPU pools are deleted by themselves"
    assert not any(r.type.startswith("aks-gpu:") for r in run.resources if r.urn in marked), "custom resources only"


def test_a_destroy_sends_no_delete_to_the_api_server_and_one_to_each_gpu_pool():
    """The Kubernetes provider is configured from the state even so, and an unreachable
    cluster only marks it so (pulumi-kubernetes@010f5d8e provider/pkg/provider/provider.go
    Configure: "Rather than erroring out on an invalid k8s config, mark the cluster as
    unreachable"); only its Delete would fail, and none is sent."""
    run = created(PLUGIN_AND_MANAGED)
    everything = {r.urn for r in run.resources if r.custom}
    sent = provider_deletes(run, everything)
    assert not sent & inside_the_cluster(run)
    assert gpu_pools(run) <= sent, "each through ARM, which needs no API server"
    assert {r.type for r in run.resources if r.urn in sent} >= {CLUSTER, "azure-native:resources:ResourceGroup", K8S_PROVIDER}


def test_a_pool_removed_from_the_config_is_deleted_by_itself_with_its_job():
    """The cluster stays, so nothing is deleted with it: the pool's own DELETE (one at a time,
    tests/test_gpu_pools.py), and its Job through the API server."""
    run = created(PLUGIN_AND_MANAGED)
    smaller = created({"a": PLUGIN_AND_MANAGED["a"]})
    condemned = {r.urn for r in run.resources if r.custom} - {r.urn for r in smaller.resources}
    assert {run.by_urn(u).type for u in condemned} == {MANAGED, "kubernetes:batch/v1:Job", WATCH}
    assert provider_deletes(run, condemned) == condemned


def test_a_replaced_cluster_replaces_what_it_holds_and_deletes_no_kubernetes_object_by_itself():
    """A new clusterName replaces the cluster, delete-first (azure-native: a named resource).
    Every resource deletedWith it is replaced with it, and deleted with the old one. The typed
    pool takes its cluster's names from the cluster's outputs: a delete-first replacement makes
    those unknown (step_generator.go calculateDependentReplacements, MakeComputed for each
    property dependency on it), and azure-native replaces on any change of a path parameter
    (pulumi-azure-native@03707ff7 provider/pkg/provider/diff.go calculateDetailedDiff: "All the
    parameters that are part of the resource path cause a replacement"), so it is replaced too,
    by its own Delete on the old cluster first. The managed pool is added to the new cluster
    by its update (a new clusterResourceUid: components/pools/managed_gpu_pool.py diff_pool)."""
    run = created(PLUGIN_AND_MANAGED)
    cluster = run.one(CLUSTER).urn
    cascaded = {r.urn for r in run.resources if r.options.get("deletedWith") == cluster}
    assert cascaded == inside_the_cluster(run)
    assert provider_deletes(run, {cluster} | cascaded) == {cluster}
    typed = run.one(POOL)
    assert cluster in typed.property_dependencies["resourceName"]


def test_an_existing_cluster_is_not_the_stacks_and_nothing_is_deleted_with_it():
    run, _ = run_cached("team", preview=False, gpuPools={"a": {"vmSize": T4}}, cost=BUDGET)
    assert "aks-gpu:existingCluster" in run.config
    assert run.of_type(POOL) and run.of_type("kubernetes:batch/v1:Job")
    assert [r.urn for r in run.resources if "deletedWith" in r.options] == []


def test_a_protected_cluster_deletes_what_it_holds_one_by_one():
    """The engine refuses a protected delete when it comes to it, after the deletes before it
    ran (step.go DeleteStep.Apply: deleteProtectedError; step_executor.go cancelDueToError goes
    on past it): with deletedWith, a destroy would drop the pools and the objects from the state
    and leave them running. So a protected cluster gets none; `protect: false` and an `up` write
    it into the state before a destroy (pkg/engine/journal_snapshot.go: a changed DeletedWith is
    written on a same step)."""
    run, _ = run_cached("prod", preview=False, cost=BUDGET)
    assert run.one(CLUSTER).options["protect"] is True
    assert run.one("azure-native:resources:ResourceGroup").options["protect"] is True
    assert [r.urn for r in run.resources if "deletedWith" in r.options] == []
    unprotected, _ = run_cached("prod", preview=False, cost=BUDGET, protect=False)
    assert {r.urn for r in unprotected.resources if "deletedWith" in r.options} == inside_the_cluster(unprotected)
