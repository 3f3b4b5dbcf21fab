"""The monthly budget (aks-gpu:cost.budget, docs/cost.md): where it looks (the GPU nodes'
resource groups, or an existing cluster's pools by their tag), its alerts, its start date,
and why what would replace it makes a new budget instead."""

from __future__ import annotations

import datetime

import pytest

from components.resources import budget
from conftest import run_cached

T4 = "Standard_NC4as_T4_v3"
BUDGET = "azure-native:consumption:Budget"


BUDGET_CONFIG = {"budget": {"amount": 500, "contactEmails": ["gpu-team@example.com"]}}


def test_a_budget_watches_the_clusters_group_and_its_node_resource_group_where_the_gpu_nodes_are_billed():
    """AKS bills the nodes to MC_<group>_<cluster>_<region>: a budget on the stack's group alone
    would see the control plane and hardly any GPU spend."""
    run, _ = run_cached("prod", preview=False, cost=BUDGET_CONFIG)
    inputs = run.one(BUDGET).inputs
    assert inputs["scope"] == "/subscriptions/33333333-3333-3333-3333-333333333333", "the subscription's scope"
    assert inputs["filter"] == {
        "dimensions": {"name": "ResourceGroupName", "operator": "In", "values": ["aks-gpu-prod-rg", "MC_aks-gpu-prod-rg_aks-gpu-prod_eastus"]}
    }
    assert inputs["budgetName"] == "aks-gpu-prod-gpu"
    preview, _ = run_cached("prod", cost=BUDGET_CONFIG)
    assert (
        "cost: budget aks-gpu-prod-gpu: 500 a month over resource groups aks-gpu-prod-rg and "
        "MC_aks-gpu-prod-rg_aks-gpu-prod_eastus (filter ResourceGroupName In, at the subscription's scope): the cluster, "
        "and what its node resource group holds: the node VMs, their networking and storage"
    ) in preview.infos, "the preview says which scope and filter"


def test_on_an_existing_cluster_the_budget_watches_this_stacks_pools_by_their_tag():
    team = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}, "gpuPool": {"vmSize": T4}, "cost": BUDGET_CONFIG}
    run, _ = run_cached("dev", preview=False, **team)
    inputs = run.one(BUDGET).inputs
    assert inputs["filter"] == {"tags": {"name": "aks-gpu-stack", "operator": "In", "values": ["aks-gpu/dev"]}}
    assert run.one("azure-native:containerservice:AgentPool").inputs["tags"] == {"aks-gpu-stack": "aks-gpu/dev"}, "what it filters on"
    [line] = [i for i in run_cached("dev", **team)[0].infos if i.startswith("cost: budget")]
    assert "tag aks-gpu-stack = aks-gpu/dev" in line and "not their OS disks, the cluster's load balancer or egress" in line


def test_a_budget_is_monthly_with_three_alerts():
    run, _ = run_cached("prod", cost=BUDGET_CONFIG)
    found = run.one(BUDGET)
    inputs = found.inputs
    assert (inputs["amount"], inputs["category"], inputs["timeGrain"]) == (500, "Cost", "Monthly")
    assert inputs["timePeriod"] == {"startDate": budget.first_of_month()}
    alerts = {k: (v["threshold"], v["thresholdType"], v["operator"], v["contactEmails"]) for k, v in inputs["notifications"].items()}
    assert alerts == {
        "actual80": (80, "Actual", "GreaterThan", ["gpu-team@example.com"]),
        "actual100": (100, "Actual", "GreaterThan", ["gpu-team@example.com"]),
        "forecast100": (100, "Forecasted", "GreaterThan", ["gpu-team@example.com"]),
    }
    assert found.options["ignoreChanges"] == ["timePeriod"], "the start stays where the first up put it"


def test_what_would_replace_the_budget_makes_a_new_resource_instead_with_this_months_start():
    """A replacement would be created with the start in state (the engine applies
    ignoreChanges before it diffs), which Azure refuses once that month is past. The Pulumi
    name carries the budget's name and scope kind, with no alias to the releases that scoped it
    to the resource group (`cost-budget`): a new budget, with this month's start, then the old
    one deleted."""
    found = run_cached("prod", cost=BUDGET_CONFIG)[0].one(BUDGET)
    assert found.name == "cost-subscription-aks-gpu-prod-gpu"
    assert found.name.endswith(found.inputs["budgetName"])
    assert found.options.get("aliases", []) == []
    assert budget.budget_name("aks-gpu", "prod", "aks-gpu-prod") == "aks-gpu-prod-gpu", "a default cluster name once"
    assert budget.budget_name("aks-gpu", "team", "team-aks") == "aks-gpu-team-team-aks-gpu"
    other_cluster = run_cached("prod", cost=BUDGET_CONFIG, clusterName="gpu-lab")[0].one(BUDGET)
    assert other_cluster.name != found.name, "a new budget name is a new resource, not a replacement"


@pytest.mark.parametrize("today, start", [(datetime.date(2026, 11, 23), "2026-11-01"), (datetime.date(2027, 1, 1), "2027-01-01")])
def test_the_budget_starts_on_the_first_of_the_current_month(today, start):
    assert budget.first_of_month(today) == f"{start}T00:00:00Z"


def test_no_budget_unless_asked():
    assert run_cached("prod")[0].of_type(BUDGET) == []
