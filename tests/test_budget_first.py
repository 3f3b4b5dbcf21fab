"""The budget before the GPU pools (aks-gpu:cost.budget, docs/design/lifecycle.md "The budget before
the GPU pools"): every GPU pool waits for it and it waits for no pool and no Job, so no GPU
node bills without it, and a refusal at its create leaves the cluster and no pool. Its start
is read off the clock when it is created, not when the run began."""

from __future__ import annotations

import datetime

import pytest
from conftest import run_cached

from components.cost import budget
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
BUDGET = "azure-native:consumption:Budget"
CLUSTER = "azure-native:containerservice:ManagedCluster"
POOLS = ("azure-native:containerservice:AgentPool", "pulumi-python:dynamic/aksgpu:ManagedGpuPool")
COST = {"budget": {"amount": 500, "contactEmails": ["gpu-team@example.com"]}}
TWO = {"a": {"vmSize": T4}, "b": {"vmSize": T4, "management": "aks-managed"}}
EXISTING = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}}


def everything_before(run, urn: str) -> set[str]:
    """The types of what a resource waits for, directly or through what it waits for."""
    by_urn = {r.urn: r for r in run.resources}
    seen: set[str] = set()
    todo = list(by_urn[urn].dependencies)
    while todo:
        dep = todo.pop()
        if dep not in seen and dep in by_urn:
            seen.add(dep)
            todo.extend(by_urn[dep].dependencies)
    return {by_urn[u].type for u in seen}


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize("where", [{}, EXISTING], ids=["created cluster", "existing cluster"])
def test_every_gpu_pool_waits_for_the_budget_and_the_budget_for_no_pool_and_no_job(where, preview):
    run = run_cached("dev", preview=preview, gpuPool=None, gpuPools=TWO, cost=COST, **where)[0]
    found = run.one(BUDGET)
    pools = [r for r in run.resources if r.type in POOLS]
    assert len(pools) == 2 and all(found.urn in p.dependencies for p in pools)
    before = everything_before(run, found.urn)
    assert not before & {*POOLS, "kubernetes:batch/v1:Job", "kubernetes:apps/v1:DaemonSet"}
    if where:
        assert before == set(), "an existing cluster's budget waits for nothing"
    else:
        assert before == {CLUSTER, "azure-native:resources:ResourceGroup"}, "a created cluster's node resource group"


class Refusing(AzureMocks):
    """Azure refuses the budget's create (a 403 preflight could not see)."""

    def new_resource(self, args):
        if args.typ == BUDGET:
            raise RuntimeError("(AuthorizationFailed) does not have authorization to perform action 'Microsoft.Consumption/budgets/write'")
        return super().new_resource(args)


@pytest.mark.parametrize("where", [{}, EXISTING], ids=["created cluster", "existing cluster"])
def test_a_budget_refused_at_create_leaves_the_cluster_and_no_gpu_pool(where):
    """The SDK registers a resource only once each one it depends on is (pulumi
    runtime/resource.py, depends_on URNs awaited), and the engine starts no new step after a
    failed one (pulumi/pulumi step_executor.go cancelDueToError)."""
    monitor = RecordingMonitor(Refusing())
    with pytest.raises(RuntimeError, match="AuthorizationFailed"):
        run_program("dev", overrides={"gpuPool": None, "gpuPools": TWO, "cost": COST, **where}, monitor=monitor, preview=False)
    types = [r.type for r in monitor.registrations]
    assert not set(types) & {*POOLS, "kubernetes:batch/v1:Job"}
    assert (CLUSTER in types) == (not where), "the cluster it created stays"


class Clock:
    """A fake UTC clock: the last day of August until the cluster is created, then September."""

    def __init__(self) -> None:
        self.today = datetime.date(2026, 8, 31)

    def __call__(self) -> datetime.date:
        return self.today


def test_the_start_is_the_month_the_budget_is_created_in_even_across_midnight_on_the_first(monkeypatch):
    """The Consumption API: "Past start date should be selected within the timegrain period"
    (azure-native consumption.Budget, time_period): August's first, read when the run began,
    would be refused in September."""
    clock = Clock()
    monkeypatch.setattr(budget, "utc_today", clock)

    class MidnightDuringTheCluster(AzureMocks):
        def new_resource(self, args):
            if args.typ == CLUSTER:
                clock.today = datetime.date(2026, 9, 1)
            return super().new_resource(args)

    monitor = RecordingMonitor(MidnightDuringTheCluster())
    run = run_program("dev", overrides={"gpuPool": None, "gpuPools": TWO, "cost": COST}, monitor=monitor, preview=False)
    assert run.one(BUDGET).inputs["timePeriod"] == {"startDate": "2026-09-01T00:00:00Z"}
    assert run.one(BUDGET).options["ignoreChanges"] == ["timePeriod"], "and kept from then on"


def test_a_preview_of_a_new_cluster_shows_the_start_unknown():
    run = run_cached("dev", gpuPool=None, gpuPools=TWO, cost=COST)[0]
    assert type(run.one(BUDGET).inputs["timePeriod"]["startDate"]).__name__ == "Unknown"
