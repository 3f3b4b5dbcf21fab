"""A replaced role assignment replaces no Kubernetes object and no GPU pool: the Kubernetes provider's inputs hang
on the cluster's credentials alone, and the objects wait for the deployer's access by an edge of
their own (`dependsOn` the grant and the access wait, done once the cluster said yes), never through the
provider's kubeconfig (components/cluster/cluster.py, _create_provider, says why); each GPU pool
waits for the grant by `dependsOn` too, so its delete comes first (gpu_pool.py pool_dependencies).

The engine's rule, played on the recorded graph (pulumi/pulumi at 1b594989,
pkg/resource/deploy/step_generator.go calculateDependentReplacements): when the grant is replaced
delete-first (its principal changes: another identity runs `up` with access.deployerObjectId
unset), each dependent's input whose `PropertyDependencies` name a resource in the replace set is
made unknown and the dependent's provider is asked to diff; pulumi-kubernetes replaces a provider
whose kubeconfig is unknown (provider/pkg/provider/provider.go DiffConfig), and every resource of
a replaced provider is replaced, as is one `deletedWith` a replaced resource. A plain
`dependsOn` edge makes nothing unknown: requiresReplacement reads only the property
dependencies. So the replace set of a grant's replacement is the grant alone exactly when no
input of any resource property-depends on it and nothing is deleted with it, but for the access
wait (components/cluster/access_wait.py), which names the grant so that a new grant is asked about."""

from __future__ import annotations

import pytest
from conftest import run_cached

from components.cluster import access_wait

T4 = "Standard_NC4as_T4_v3"
GRANT = "azure-native:authorization:RoleAssignment"
CLUSTER = "azure-native:containerservice:ManagedCluster"
GROUP = "azure-native:resources:ResourceGroup"
K8S_PROVIDER = "pulumi:providers:kubernetes"
ACCESS_WAIT = access_wait.TYPE
ENTRA = {"mode": "entra"}
PLUGIN = {"a": {"vmSize": T4}}
OPERATOR = {"op": {"vmSize": T4, "management": "gpu-operator"}}
POOLS = pytest.mark.parametrize("pools", [PLUGIN, OPERATOR], ids=["device plugin, exporter, Job", "gpu operator, Job"])
RUNS = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])


def entra(pools, preview: bool):
    return run_cached("dev", preview=preview, gpuPool=None, gpuPools=pools, access=ENTRA)[0]


def kubernetes_objects(run):
    return [r for r in run.resources if r.type.startswith("kubernetes:") and r.type != K8S_PROVIDER]


def replaced_with(run, root: str) -> set[str]:
    """The resources the engine replaces along with `root` when `root` is replaced delete-first
    (the module docstring cites the rule), on the recorded graph: a resource whose provider is
    replaced, one deleted with a replaced one, and one with an input that property-depends on a
    replaced one (pulumi-kubernetes replaces on an unknown kubeconfig; any other provider is
    taken at its worst, replacing on any unknown input)."""
    replaced = {root}
    for r in run.resources:  # in registration order: the engine's walk of the dependents
        if not r.custom:
            continue
        provider = r.provider in replaced
        deleted_with = r.options.get("deletedWith") in replaced
        unknown = any(set(deps) & replaced for deps in r.property_dependencies.values())
        if provider or deleted_with or unknown:
            replaced.add(r.urn)
    return replaced


@RUNS
@POOLS
def test_a_replaced_grant_replaces_nothing_but_itself_and_the_access_wait_which_asks_about_the_new_one(pools, preview):
    run = entra(pools, preview)
    grant = run.one(GRANT).urn
    assert replaced_with(run, grant) == {grant, run.one(ACCESS_WAIT).urn}
    assert kubernetes_objects(run), "the run declares Kubernetes objects"


@RUNS
@POOLS
def test_a_replaced_grant_replaces_no_gpu_pool_though_each_waits_for_it(pools, preview):
    run = entra(pools, preview)
    grant = run.one(GRANT).urn
    gpu_pools = [r for r in run.resources if r.type == "azure-native:containerservice:AgentPool"]
    assert gpu_pools and all(grant in r.dependencies for r in gpu_pools)
    assert not replaced_with(run, grant) & {r.urn for r in gpu_pools}


@RUNS
def test_the_kubernetes_provider_hangs_on_the_clusters_credentials_alone(preview):
    run = entra(PLUGIN, preview)
    provider = run.one(K8S_PROVIDER)
    cluster = {run.one(CLUSTER).urn, run.one(GROUP).urn}  # what listClusterUserCredential is asked of
    assert set(provider.dependencies) <= cluster and run.one(CLUSTER).urn in provider.dependencies
    assert set(provider.property_dependencies["kubeconfig"]) <= cluster
    if not preview:  # the credential as the cluster gave it, with nothing of the grant in it
        kubeconfig = provider.inputs["kubeconfig"].value
        assert "--login" in kubeconfig and run.one(GRANT).inputs["principalId"] not in kubeconfig


@RUNS
@POOLS
def test_every_kubernetes_object_waits_for_the_deployers_access(pools, preview):
    """A direct edge to the access wait, which the engine creates once the cluster said yes (a
    failed wait creates none of them), and to the grant, so their deletes come before its own."""
    run = entra(pools, preview)
    grant, wait = run.one(GRANT).urn, run.one(ACCESS_WAIT)
    waiting = {r.urn: {grant, wait.urn} <= set(r.dependencies) for r in kubernetes_objects(run)}
    assert waiting and all(waiting.values()), [urn for urn, waits in waiting.items() if not waits]
    assert grant in wait.dependencies
