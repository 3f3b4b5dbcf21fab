"""A destroy that stops part-way never leaves a GPU pool running outside the state, nor billing in
it: each delete Azure may refuse (the budget's without Microsoft.Consumption/budgets/delete, the
deployer's grant's without Microsoft.Authorization/roleAssignments/delete, the cluster's, a pool's
own), refused alone, on the graph the program records, in every configuration (docs/lifecycle.md,
"A destroy that stops part-way"). The engine's schedule and what a refusal stops are modelled in
tests/destroy_model.py, which cites the engine's source for each rule."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import run_cached
from destroy_model import (
    CLUSTER,
    POOLS,
    azure_deletes_after_the_pools,
    billing_pools,
    nodes,
    refused_destroy,
    schedule,
    sends_delete,
    stranded_pools,
)
from support.existing_pools import GPUNP, cluster
from support.plan import plan_warnings, planned_by

from components.plan import Plan
from tools.azure_mocks import OfflineReader

T4 = "Standard_NC4as_T4_v3"
BUDGET = {"budget": {"amount": 500, "contactEmails": ["gpu-team@example.com"]}}
ENTRA = {"mode": "entra", "deployerObjectId": "00000000-0000-0000-0000-000000000001"}
GRANT = "azure-native:authorization:RoleAssignment"
BUDGET_TYPE = "azure-native:consumption:Budget"
PLUGIN_AND_MANAGED = {"a": {"vmSize": T4}, "b": {"vmSize": T4, "management": "aks-managed"}}


def created(preview: bool = False, **overrides):
    """A deployment's graph (what a destroy reads from the state) of a cluster this stack creates."""
    settings = {"gpuPool": None, "gpuPools": PLUGIN_AND_MANAGED, "cost": BUDGET, "access": ENTRA, **overrides}
    return run_cached("dev", preview=preview, **settings)[0]


GRAPHS = {
    "created, device plugin and aks-managed, budget and grant": lambda: created(),
    "created, gpu operator, budget": lambda: created(gpuPools={"op": {"vmSize": T4, "management": "gpu-operator"}}, access={}),
    "created, no budget, grant": lambda: created(cost={}),
    "protected": lambda: run_cached("prod", preview=False, cost=BUDGET)[0],
    "existing cluster, one pool adopted and one added": lambda: run_cached(
        "team", preview=False, cluster=cluster(GPUNP), gpuPools={"gpunp": {"existing": "adopt"}, "extra": {"vmSize": T4}}, cost=BUDGET
    )[0],
}


def refusable(graph) -> list[str]:
    condemned = {n.urn for n in graph}
    return [n.urn for n in graph if sends_delete(n, condemned)]


@pytest.mark.parametrize("continue_on_error", [False, True], ids=["stops", "--continue-on-error"])
@pytest.mark.parametrize("stack", GRAPHS)
def test_no_single_refused_delete_leaves_a_gpu_pool_running_outside_the_state(stack, continue_on_error):
    graph = nodes(GRAPHS[stack]())
    assert any(n.type in POOLS for n in graph)
    for refused in refusable(graph):
        outcome = refused_destroy(graph, refused, continue_on_error)
        assert stranded_pools(graph, outcome) == [], f"{refused} refused"


@pytest.mark.parametrize("kind", [BUDGET_TYPE, GRANT, CLUSTER], ids=["budget", "grant", "cluster"])
def test_a_refused_budget_grant_or_cluster_delete_finds_the_gpu_pools_already_deleted(kind):
    """The pools send their own Delete (no `deletedWith`): the next `pulumi destroy` has the
    refused resource and what it stands in left to delete, all of it still in the state."""
    graph = nodes(created())
    refused = next(n.urn for n in graph if n.type == kind)
    outcome = refused_destroy(graph, refused)
    pools = {n.urn for n in graph if n.type in POOLS}
    assert pools <= outcome.deleted
    assert refused in outcome.in_state


def test_the_pools_are_deleted_before_the_budget_and_the_grant_and_those_before_the_cluster():
    """The engine's schedule on today's graph: the budget and the grant take the cluster's ID
    and node resource group, so the cluster's delete waits for theirs; the pools wait for the
    budget and the grant, so theirs come first."""
    graph = nodes(created())
    chains = schedule(graph)
    at = {urn: i for i, chain in enumerate(chains) for urn in chain}
    of = {n.type: n.urn for n in graph}
    pools = [n.urn for n in graph if n.type in POOLS]
    assert max(at[p] for p in pools) < min(at[of[BUDGET_TYPE]], at[of[GRANT]]) < at[of[CLUSTER]]


def test_the_model_finds_the_stranded_pools_of_a_graph_whose_pools_are_deleted_with_the_cluster():
    """The graph before this release: each pool `deletedWith` the cluster. A refused budget
    delete stopped the destroy after the pools' skipped deletes had dropped them from the state."""
    graph = nodes(created())
    cluster_urn = next(n.urn for n in graph if n.type == CLUSTER)
    before = [dataclasses.replace(n, deleted_with=cluster_urn, edges=n.edges | {cluster_urn}) if n.type in POOLS else n for n in graph]
    budget = next(n.urn for n in graph if n.type == BUDGET_TYPE)
    outcome = refused_destroy(before, budget)
    assert stranded_pools(before, outcome) == sorted(n.urn for n in graph if n.type in POOLS)


def test_no_gpu_pool_is_deleted_with_the_cluster_and_a_preview_shows_the_graph_a_deployment_writes():
    """The graph is the same in both runs (nothing the components declare asks whether it is a
    preview; the plan's mode only says or stops: components/plan.py), so the tests below read
    the deployment's, which a destroy reads from the state. Sorted: the Jobs register in an
    apply, in either order."""
    preview, deployment = created(preview=True), created()
    for run in (preview, deployment):
        pools = [r for r in run.resources if r.type in POOLS]
        assert pools and not [r.urn for r in pools if "deletedWith" in r.options]
    assert sorted(nodes(preview), key=lambda n: n.urn) == sorted(nodes(deployment), key=lambda n: n.urn)


# --------------------------------------------------------------------------- nothing left billing, in every configuration

MANAGED = {"management": "aks-managed"}


def configurations() -> dict[str, dict]:
    """Every shape a destroy meets: a created cluster with a budget or not and the deployer's
    grant or not, or an existing cluster with a budget (without one, nothing but the pools is
    Azure's to delete there); one pool or several; typed or AKS-managed; and prod's protected
    cluster, whose Kubernetes objects carry no `deletedWith`."""
    found = {}
    for where, budget, grant in [("created", b, g) for b in (True, False) for g in (True, False)] + [("existing", True, False)]:
        for count in (1, 2):
            for kind, extra in (("typed", {}), ("aks-managed", MANAGED)):
                pools = {name: {"vmSize": T4, **extra} for name in "ab"[:count]}
                settings = {"gpuPools": pools, "cost": BUDGET if budget else {}}
                if where == "created":
                    settings |= {"gpuPool": None, "access": ENTRA if grant else {}}
                name = f"{where}, {'budget' if budget else 'no budget'}, {'grant' if grant else 'no grant'}, {count} {kind}"
                found[name] = {"stack": "dev" if where == "created" else "team", **settings}
    found["created and protected (prod), no budget, grant, 1 typed"] = {"stack": "prod"}
    return found


CONFIGURATIONS = configurations()


def configured(name: str):
    """The deployment's graph: a preview's is the same (test_no_gpu_pool_is_deleted_with_the_cluster_...)."""
    settings = dict(CONFIGURATIONS[name])
    return run_cached(settings.pop("stack"), preview=False, **settings)[0]


@pytest.mark.parametrize("name", CONFIGURATIONS)
def test_each_gpu_pools_delete_comes_before_anything_else_azure_may_refuse(name):
    """The engine's schedule on the graph a deployment writes (and a preview shows): every pool's
    delete in an earlier round than the budget's, the grant's, the cluster's and the group's."""
    graph = nodes(configured(name))
    chains = schedule(graph)
    at = {urn: i for i, chain in enumerate(chains) for urn in chain}
    pools, after = [n.urn for n in graph if n.type in POOLS], azure_deletes_after_the_pools(graph)
    assert pools and after
    late = {p.split("::")[-1]: sorted(a.split("::")[-1] for a in after if at[a] <= at[p]) for p in pools}
    assert late == {p.split("::")[-1]: [] for p in pools}


@pytest.mark.parametrize("continue_on_error", [False, True], ids=["stops", "--continue-on-error"])
@pytest.mark.parametrize("name", CONFIGURATIONS)
def test_no_refused_azure_delete_leaves_a_gpu_pool_billing(name, continue_on_error):
    """Each of those deletes refused alone (a 403 on the grant or the budget, a lock on the
    cluster): every pool is gone from Azure by then, not only from the state."""
    graph = nodes(configured(name))
    for refused in azure_deletes_after_the_pools(graph):
        outcome = refused_destroy(graph, refused, continue_on_error)
        assert billing_pools(graph, outcome) == [], f"{refused} refused"


@pytest.mark.parametrize("name", [n for n in CONFIGURATIONS if ", grant," in n])
def test_each_gpu_pool_waits_for_the_deployers_grant_by_an_edge_of_its_own(name):
    """A direct edge: the engine orders deletes by direct dependencies alone, so the pools
    after the first would not carry it through the first."""
    run = configured(name)
    grant = run.one(GRANT).urn
    pools = [r for r in run.resources if r.type in POOLS]
    assert pools and [r.urn for r in pools if grant not in r.dependencies] == []


def test_the_model_finds_the_first_pool_billing_beside_a_refused_grant_without_a_budget():
    """The graph before this release: no pool waited for the grant, so the first pool's delete
    and the grant's shared a round, and a 403 on the grant cancelled the pool's before it began."""
    graph = nodes(configured("created, no budget, grant, 2 typed"))
    grant = next(n.urn for n in graph if n.type == GRANT)
    before = [dataclasses.replace(n, edges=n.edges - {grant}) if n.type in POOLS else n for n in graph]
    first = next(n.urn for n in graph if n.type in POOLS)
    assert billing_pools(before, refused_destroy(before, grant)) == [first]
    assert stranded_pools(before, refused_destroy(before, grant)) == [], "in the state, billing until the next destroy"


# --------------------------------------------------------------------------- said before anything is created

OWNER = [{"actions": ["*"], "notActions": []}]
CONTRIBUTOR = [{"actions": ["*"], "notActions": ["Microsoft.Authorization/*/Delete", "Microsoft.Authorization/*/Write"]}]
# Reads everything and may create the budget (which preflight requires of a deployment), nothing more.
READER = [{"actions": ["*/read", "Microsoft.Consumption/budgets/write"], "notActions": []}]
NO_BUDGET_DELETE = [{"actions": ["*"], "notActions": ["Microsoft.Consumption/budgets/delete"]}]


def permission_reader(permissions=None, group_permissions=None, refuse=None) -> OfflineReader:
    """Azure's answers to the permission reads: the subscription's, and the stack's resource
    group's (refused: the group does not exist yet)."""
    return OfflineReader(permissions=permissions, group_permissions=group_permissions, refuse={"facts": "no facts here", **(refuse or {})})


def permission_settings(**overrides) -> dict:
    return {"gpuPool": {"vmSize": T4}, "cost": BUDGET, "access": ENTRA, **overrides}


def permission_plan(preview: bool, permissions=None, group_permissions=None, refuse=None, **overrides) -> Plan:
    """The plan a run handed those answers declares from, by a plain call (support/plan.py): the
    lines below are all the plan's, and a plan that is returned is one the run goes on to
    declare (__main__.py: a stop is raised by build_plan, before any constructor)."""
    reader = permission_reader(permissions, group_permissions, refuse)
    return planned_by(reader, "dev", preview, **permission_settings(**overrides))


def permission_lines(preview: bool, permissions=None, group_permissions=None, refuse=None, **overrides) -> list[str]:
    """What a run handed those answers warns before it declares anything: its plan's warnings."""
    return plan_warnings(permission_plan(preview, permissions, group_permissions, refuse, **overrides))


def destroy_lines(warnings: list[str]) -> list[str]:
    return [w for w in warnings if w.startswith("destroy:")]


@pytest.mark.parametrize("preview", [True, False])
def test_an_identity_that_could_not_delete_the_grant_is_told_and_nothing_is_blocked(preview):
    """Contributor on the subscription: it may delete everything but the role assignment. The
    line names the action, what it deletes and the roles that have it; a deployment goes on."""
    plan = permission_plan(preview, permissions=CONTRIBUTOR, group_permissions=CONTRIBUTOR)
    assert destroy_lines(plan_warnings(plan)) == [
        "destroy: the signed-in identity lacks Microsoft.Authorization/roleAssignments/delete (the deployer's cluster-admin "
        "grant: Owner, User Access Administrator or Role Based Access Control Administrator) at resource group "
        "aks-gpu-dev-rg (its permissions there, as Azure lists them); a `pulumi destroy` by it would stop there and leave "
        "that, and what waits for it, in Azure and in the state until an identity that has them runs `pulumi destroy` "
        "again: ask for the role, or destroy with an identity that has it (docs/deploying.md)"
    ]
    assert plan.gpu_pools and plan.cluster, "a warning, not a stop"


@pytest.mark.parametrize("preview", [True, False])
def test_the_budgets_delete_is_read_at_the_subscription_and_the_clusters_in_its_group(preview):
    """Owner of the group (granted there), and everything at the subscription but deleting
    budgets: one line, at the subscription, for the budget alone."""
    (line,) = destroy_lines(permission_lines(preview, permissions=NO_BUDGET_DELETE, group_permissions=OWNER))
    assert line.startswith(
        "destroy: the signed-in identity lacks Microsoft.Consumption/budgets/delete (the budget: Cost Management "
        "Contributor) at subscription "
    )


def test_before_the_group_exists_the_subscriptions_permissions_stand_for_it():
    (line,) = destroy_lines(permission_lines(False, permissions=READER, refuse={"group_permissions": "(ResourceGroupNotFound) no group"}))
    for action in ("budgets/delete", "roleAssignments/delete", "agentPools/delete", "managedClusters/delete", "resourceGroups/delete"):
        assert action in line
    assert " at subscription " in line and "\n" not in line


def test_an_owner_is_told_nothing_and_permissions_that_cannot_be_read_block_nothing():
    assert destroy_lines(permission_lines(False, permissions=OWNER, group_permissions=OWNER)) == []
    plan = permission_plan(False, refuse={"permissions": "(AuthorizationFailed) no", "group_permissions": "(AuthorizationFailed) no"})
    assert (
        "preflight: the permissions a `pulumi destroy` of this stack needs were not checked: HttpResponseError: (AuthorizationFailed) no"
        in plan_warnings(plan)
    )
    assert plan.gpu_pools and plan.cluster, "a warning, not a stop"


def test_on_an_existing_cluster_only_the_budgets_delete_is_read():
    """The pools' rights may sit on the owner's cluster alone, which a wider list cannot see."""
    existing = {"resourceGroupName": "team-rg", "name": "team-aks"}
    (line,) = destroy_lines(permission_lines(False, permissions=READER, group_permissions=READER, existingCluster=existing, access={}))
    assert line.startswith("destroy: the signed-in identity lacks Microsoft.Consumption/budgets/delete (the budget")
    assert "agentPools" not in line


def test_the_group_is_read_at_its_own_scope_and_a_group_not_there_yet_raises(arm):
    """Permissions_ListForResourceGroup (azure-rest-api-specs authorization 2022-04-01); the
    live reader's read, against a local fake of ARM."""
    from azure.core.exceptions import HttpResponseError
    from fake_arm import FakeArm, FakeCredential

    from components.preflight import permissions_live as live_permissions

    FakeArm.routes = {"/subscriptions/sub-1/resourcegroups/my-rg/providers/microsoft.authorization/permissions": (200, {"value": OWNER})}
    assert live_permissions.read("sub-1", credential=FakeCredential(), base_url=arm, timeout=10, resource_group="my-rg") == OWNER
    FakeArm.routes = {
        "/subscriptions/sub-1/resourcegroups/my-rg/providers/microsoft.authorization/permissions": (
            404,
            {"error": {"code": "ResourceGroupNotFound", "message": "Resource group 'my-rg' could not be found."}},
        )
    }
    with pytest.raises(HttpResponseError):
        live_permissions.read("sub-1", credential=FakeCredential(), base_url=arm, timeout=10, resource_group="my-rg")
