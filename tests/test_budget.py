"""The monthly budget (aks-gpu:cost.budget, docs/design/cost.md): where it looks (the GPU nodes'
resource groups, or an existing cluster's pools by their tag), its alerts, its start date,
and why what would replace it makes a new budget instead."""

from __future__ import annotations

import datetime

import pytest
from azure.core.exceptions import HttpResponseError
from conftest import run_cached
from fake_arm import FakeArm, FakeCredential
from support.plan import lines

from components.cost import budget, cost

T4 = "Standard_NC4as_T4_v3"
BUDGET = "azure-native:consumption:Budget"


BUDGET_CONFIG = {"budget": {"amount": 500, "contactEmails": ["gpu-team@example.com"]}}
# Another cluster, whose name is long: one run for a budget name cut to 63 and for a new budget's name.
LONG_CLUSTER = "gpu-lab-" + "x" * 55


def test_a_budget_watches_the_clusters_group_and_its_node_resource_group_where_the_gpu_nodes_are_billed():
    """AKS bills the nodes to MC_<group>_<cluster>_<region>: a budget on the stack's group alone
    would see the control plane and hardly any GPU spend."""
    run, _ = run_cached("prod", preview=False, cost=BUDGET_CONFIG)
    inputs = run.one(BUDGET).inputs
    assert inputs["scope"] == "/subscriptions/33333333-3333-3333-3333-333333333333", "the subscription's scope"
    assert inputs["filter"] == {
        "dimensions": {
            "name": "ResourceGroupName",
            "operator": "In",
            "values": ["aks-gpu-prod-rg", "MC_aks-gpu-prod-rg_aks-gpu-prod_eastus"],
        }
    }
    assert inputs["budgetName"] == "aks-gpu-prod-gpu"
    assert (
        "cost: budget aks-gpu-prod-gpu: 500.00 USD a month over resource groups aks-gpu-prod-rg and "
        "MC_aks-gpu-prod-rg_aks-gpu-prod_eastus (filter ResourceGroupName In, at the subscription's scope): the cluster, "
        "and what its node resource group holds: the node VMs, their networking and storage; below the stack's most per "
        "month, 1,572.42 USD: it cannot cover the worst case"
    ) in lines("prod", cost=BUDGET_CONFIG).infos, "the preview says which scope and filter, and the amount's currency"


def test_on_an_existing_cluster_the_budget_watches_this_stacks_pools_by_their_tag():
    team = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}, "gpuPool": {"vmSize": T4}, "cost": BUDGET_CONFIG}
    run, _ = run_cached("dev", preview=False, **team)
    inputs = run.one(BUDGET).inputs
    assert inputs["filter"] == {"tags": {"name": "aks-gpu-stack", "operator": "In", "values": ["aks-gpu/dev"]}}
    assert run.one("azure-native:containerservice:AgentPool").inputs["tags"] == {"aks-gpu-stack": "aks-gpu/dev"}, "what it filters on"
    [line] = [i for i in lines("dev", **team).infos if i.startswith("cost: budget")]
    assert "tag aks-gpu-stack = aks-gpu/dev" in line and "not their OS disks, the cluster's load balancer or egress" in line


# The budget's graph by a deployment's run: a preview's differs only where the node resource
# group is not known yet, its filter's second group and so its start (a budget in a preview:
# test_arm_schemas.py).


def test_a_budget_is_monthly_with_three_alerts():
    run, _ = run_cached("prod", preview=False, cost=BUDGET_CONFIG)
    found = run.one(BUDGET)
    inputs = found.inputs
    assert (inputs["amount"], inputs["category"], inputs["timeGrain"]) == (500, "Cost", "Monthly")
    assert inputs["timePeriod"] == {"startDate": budget.first_of_month()}, "read when the budget is created (test_budget_first.py)"
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
    name carries the budget's name and scope kind: a new budget, with this month's start, then
    the old one deleted."""
    found = run_cached("prod", preview=False, cost=BUDGET_CONFIG)[0].one(BUDGET)
    assert found.name == "cost-subscription-aks-gpu-prod-gpu"
    assert found.name.endswith(found.inputs["budgetName"])
    assert found.options.get("aliases", []) == []
    assert cost.budget_name("aks-gpu", "prod", "aks-gpu-prod") == "aks-gpu-prod-gpu", "a default cluster name once"
    assert cost.budget_name("aks-gpu", "team", "team-aks") == "aks-gpu-team-team-aks-gpu"
    other_cluster = run_cached("prod", preview=False, cost=BUDGET_CONFIG, clusterName=LONG_CLUSTER)[0].one(BUDGET)
    assert other_cluster.name != found.name, "a new budget name is a new resource, not a replacement"


def test_a_long_cluster_name_makes_a_budget_name_cut_to_azures_63_characters():
    """Microsoft.Consumption/budgets takes a name of 1-63 characters: the name keeps as much
    of project, stack and cluster as fits, and no more."""
    found = run_cached("prod", preview=False, cost=BUDGET_CONFIG, clusterName=LONG_CLUSTER)[0].one(BUDGET)
    assert found.inputs["budgetName"] == f"aks-gpu-prod-{LONG_CLUSTER}-gpu"[:63]
    assert len(found.inputs["budgetName"]) == 63


@pytest.mark.parametrize("today, start", [(datetime.date(2026, 11, 23), "2026-11-01"), (datetime.date(2027, 1, 1), "2027-01-01")])
def test_the_budget_starts_on_the_first_of_the_current_month(today, start):
    assert budget.first_of_month(today) == f"{start}T00:00:00Z"


def test_no_budget_unless_asked():
    assert run_cached("prod")[0].of_type(BUDGET) == []


# --------------------------------------------------------------------------- checked first (the order: test_budget_first.py)


PERMISSIONS = {
    "Owner": [{"actions": ["*"], "notActions": []}],
    "Contributor": [{"actions": ["*"], "notActions": ["Microsoft.Authorization/*/Delete", "Microsoft.Authorization/*/Write"]}],
    "Cost Management Contributor": [{"actions": ["Microsoft.Consumption/*", "Microsoft.CostManagement/*", "*/read"], "notActions": []}],
    "Reader": [{"actions": ["*/read"], "notActions": []}],
    "nothing at the subscription": [],
    "Contributor without budgets": [{"actions": ["*"], "notActions": ["Microsoft.Consumption/budgets/*"]}],
    "two roles, one grants": [
        {"actions": ["*/read"], "notActions": []},
        {"actions": ["microsoft.consumption/BUDGETS/write"], "notActions": []},
    ],
}


@pytest.mark.parametrize(
    "role, allowed",
    [
        ("Owner", True),
        ("Contributor", True),
        ("Cost Management Contributor", True),
        ("Reader", False),
        ("nothing at the subscription", False),
        ("Contributor without budgets", False),
        ("two roles, one grants", True),
    ],
)
def test_who_may_create_the_budget_by_the_permissions_azure_lists(role, allowed):
    from components.preflight import permissions

    assert permissions.allows(PERMISSIONS[role], permissions.BUDGET_WRITE) is allowed
    said = permissions.budget_problem(PERMISSIONS[role], "sub-1")
    assert (said is None) is allowed
    if not allowed:
        assert said.startswith("cost.budget: the signed-in identity lacks Microsoft.Consumption/budgets/write at subscription sub-1")


def budget_plan(preview: bool, permissions: list | None = None, refuse: dict | None = None):
    """The plan the program with a budget declares from, handed Azure's answer to the
    permissions read (and no SKU or quota answer: those are refused, which only warns); a
    run that does not stop declares the budget from its Args. (plan, its warnings, the reader)."""
    from support.plan import plan_warnings, planned_by

    from tools.azure_mocks import OfflineReader

    azure = OfflineReader(permissions=permissions, refuse={"facts": "no facts here", **(refuse or {})})
    plan = planned_by(azure, "dev", preview, gpuPool={"vmSize": T4}, cost=BUDGET_CONFIG)
    return plan, plan_warnings(plan), azure


def test_a_deployment_without_the_budget_permission_stops_before_anything_is_created():
    from components.errors import PreflightError
    from tools.azure_mocks import AzureMocks, OfflineReader
    from tools.mock_engine import RecordingMonitor, run_program

    monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(permissions=PERMISSIONS["Reader"], refuse={"facts": "no facts here"})))
    with pytest.raises(PreflightError, match="cost.budget: the signed-in identity lacks Microsoft.Consumption/budgets/write"):
        run_program("dev", overrides={"gpuPool": {"vmSize": T4}, "cost": BUDGET_CONFIG}, monitor=monitor, preview=False)
    assert monitor.registrations == [], "nothing was created"


def test_a_preview_warns_and_permissions_that_cannot_be_read_block_nothing():
    # Said and decided before anything is declared: by the plan (the stop itself, by a run, above).
    _, warnings, _ = budget_plan(preview=True, permissions=PERMISSIONS["Reader"])
    assert any(w.startswith("cost.budget: the signed-in identity lacks") and w.endswith("(a deployment stops here)") for w in warnings)
    plan, warnings, reader = budget_plan(preview=False, refuse={"permissions": "(AuthorizationFailed) no"})
    assert plan.budget is not None, "not blocked: the budget is declared"
    assert "permissions" in reader.reads
    assert (
        "preflight: the permission to create aks-gpu:cost.budget was not checked: HttpResponseError: (AuthorizationFailed) no" in warnings
    )
    _, allowed, _ = budget_plan(preview=False, permissions=PERMISSIONS["Contributor"])
    assert not [w for w in allowed if "cost.budget" in w]


def test_the_budget_permission_is_read_at_the_subscriptions_scope_every_page(arm):
    from components.preflight import permissions
    from components.preflight import permissions_live as live_permissions

    FakeArm.routes = {
        "/subscriptions/sub-1/providers/microsoft.authorization/permissions": (
            200,
            {"value": [{"actions": ["*/read"], "notActions": []}], "nextLink": f"{arm}/fake-next/permissions-page-2"},
        ),
        "/fake-next/permissions-page-2": (200, {"value": [{"actions": ["Microsoft.Consumption/*"], "notActions": []}]}),
    }
    found = live_permissions.read("sub-1", credential=FakeCredential(), base_url=arm, timeout=10)
    assert found == [{"actions": ["*/read"], "notActions": []}, {"actions": ["Microsoft.Consumption/*"], "notActions": []}]
    assert any("api-version=2022-04-01" in p for p in FakeArm.seen)
    assert permissions.budget_problem(found, "sub-1") is None


@pytest.mark.parametrize(
    "answer", [(403, {"error": {"code": "AuthorizationFailed", "message": "no"}}), (200, {"value": "all"}), (200, [1])]
)
def test_an_answer_that_is_not_a_list_of_permissions_raises_for_preflight_to_report(arm, answer):
    from components.preflight import permissions_live as live_permissions
    from components.seam.reader import BadAnswer

    FakeArm.routes = {"/subscriptions/sub-1/providers/microsoft.authorization/permissions": answer}
    with pytest.raises((HttpResponseError, BadAnswer)):
        live_permissions.read("sub-1", credential=FakeCredential(), base_url=arm, timeout=10)


# Permissions whose actions or notActions are not lists of strings: a string was read letter by
# letter (`"*"` granting everything), a number raised a TypeError.
MISSHAPEN = [
    ([{"actions": "*", "notActions": []}], 'value[0].actions is "*", not a list of strings'),
    (
        [{"actions": ["*"], "notActions": "Microsoft.Consumption/*"}],
        'value[0].notActions is "Microsoft.Consumption/*", not a list of strings',
    ),
    ([{"actions": 5}], "value[0].actions is 5, not a list of strings"),
    ([{"actions": ["*"], "notActions": [None]}], "value[0].notActions is [null], not a list of strings"),
    (["Owner"], "value[0] is str, not a permission (an object)"),
]


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize("listed, says", MISSHAPEN, ids=["actions a string", "notActions a string", "a number", "a null", "a string"])
def test_permissions_whose_actions_are_not_lists_are_not_checked_in_one_line_not_a_traceback(preview, listed, says):
    plan, warnings, _ = budget_plan(preview=preview, permissions=listed)
    assert plan.budget is not None
    lines = [w for w in warnings if "not checked" in w]
    budget_line = next(w for w in lines if "aks-gpu:cost.budget" in w)
    assert budget_line.endswith(f"BadAnswer: Azure's list of permissions: {says}") and "\n" not in budget_line
    assert any("a `pulumi destroy` of this stack needs were not checked" in w and says in w for w in lines)
    assert not [w for w in warnings if "lacks" in w], "neither granted nor refused on an answer it cannot read"


def test_the_live_read_refuses_permissions_whose_actions_are_not_lists(arm):
    from components.preflight import permissions_live as live_permissions
    from components.seam.reader import BadAnswer

    FakeArm.routes = {"/subscriptions/sub-1/providers/microsoft.authorization/permissions": (200, {"value": [{"actions": "*"}]})}
    with pytest.raises(BadAnswer, match=r'value\[0\]\.actions is "\*", not a list of strings'):
        live_permissions.read("sub-1", credential=FakeCredential(), base_url=arm, timeout=10)


def test_a_not_actions_pattern_of_many_stars_is_matched_at_once_and_right():
    """The stars' pieces are found in order, each at its leftmost place: no backtracking."""
    from components.preflight import permissions

    many = "*" + "a*" * 2000 + "c"
    listed = [{"actions": ["*"], "notActions": [many, "M*i*c*r*o*s*o*f*t*.*C*o*n*s*u*m*p*t*i*o*n*/*b*u*d*g*e*t*s*/*x"]}]
    assert permissions.allows(listed, "a" * 3000 + "b") is True, "no c at the end: not taken away"
    assert permissions.allows(listed, "a" * 3000 + "c") is False, "2000 a's and a c: taken away"
    assert permissions.allows([{"actions": ["*"], "notActions": ["a*" * 30 + "b"]}], "a" * 40) is True
    assert permissions.allows([{"actions": ["MICROSOFT.consumption/*/WRITE"]}], permissions.BUDGET_WRITE) is True
    assert permissions.allows([{"actions": ["Microsoft.Consumption/budgets/write*x"]}], permissions.BUDGET_WRITE) is False


# --------------------------------------------------------------------------- against the stack's cost


@pytest.mark.parametrize(
    "amount, says, warned",
    [
        (100, "; below the stack's least per month, 420.48 USD", True),
        (500, "; below the stack's most per month, 1,572.42 USD: it cannot cover the worst case", False),
        (2000, "; covers the stack's most per month, 1,572.42 USD", False),
    ],
    ids=["below the least", "below the most", "above the most"],
)
def test_the_preview_says_how_the_budget_stands_against_the_stacks_least_and_most_per_month(tmp_path_factory, amount, says, warned):
    """prod with the fake list: 0.58 to 2.15 USD an hour, so 420.48 to 1,572.42 a month. A
    budget below the least alerts at once (a warning); below the most it cannot cover the
    worst case (said on its line)."""
    import fake_prices

    path = tmp_path_factory.mktemp("prices") / "prices.json"
    path.write_text(fake_prices.saved())
    cost = {"budget": {"amount": amount, "contactEmails": ["gpu-team@example.com"]}}
    said = lines("prod", preflight={"pricesFile": str(path)}, cost=cost)
    [line] = [i for i in said.infos if i.startswith("cost: budget ")]
    assert line.startswith(f"cost: budget aks-gpu-prod-gpu: {amount:,.2f} USD a month over ") and line.endswith(says)
    warnings = [w for w in said.warnings if w.startswith("aks-gpu:cost.budget.amount")]
    assert bool(warnings) is warned
    if warned:
        assert warnings[0].startswith(
            f"aks-gpu:cost.budget.amount = {amount:,.2f} USD is below the stack's least cost per month, 420.48 USD"
        )


def test_a_budget_in_another_currency_is_said_in_it():
    cost = {"currency": "EUR", "budget": {"amount": 450, "contactEmails": ["gpu-team@example.com"]}}
    [line] = [i for i in lines("prod", cost=cost).infos if i.startswith("cost: budget ")]
    assert line.startswith("cost: budget aks-gpu-prod-gpu: 450.00 EUR a month over ")


def budget_at(tmp_path, amount: float) -> tuple[str, list[str]]:
    """The dev stack's budget line and warnings, priced in binary-exact figures: a T4 node at
    0.50 an hour, the System node at 0.25, the GPU pool from 0 to 2 nodes. 0.25 to 1.25 an hour,
    so 182.50 to 912.50 USD a month, with nothing rounded between a budget and its comparison."""
    import fake_prices

    items = [
        *fake_prices.family(T4, "NC4as T4 v3", "NCasT4_v3", "eastus", 0.5, 0.05),
        *fake_prices.family("Standard_D2s_v5", "D2s v5", "Dsv5", "eastus", 0.25, 0.025),
    ]
    path = tmp_path / "prices.json"
    path.write_text(fake_prices.saved(items))
    cost = {"budget": {"amount": amount, "contactEmails": ["gpu-team@example.com"]}}
    said = lines("dev", preflight={"pricesFile": str(path)}, gpuPool={"vmSize": T4, "minCount": 0, "maxCount": 2}, cost=cost)
    [line] = [i for i in said.infos if i.startswith("cost: budget ")]
    assert line.startswith(f"cost: budget aks-gpu-dev-gpu: {amount:,.2f} USD a month over ")
    return line, [w for w in said.warnings if w.startswith("aks-gpu:cost.budget.amount")]


BELOW_THE_MOST = "; below the stack's most per month, 912.50 USD: it cannot cover the worst case"
COVERS = "; covers the stack's most per month, 912.50 USD"


@pytest.mark.parametrize(
    "amount, says, warned",
    [
        (182.49, "; below the stack's least per month, 182.50 USD", True),
        (182.5, BELOW_THE_MOST, False),
        (182.51, BELOW_THE_MOST, False),
        (912.49, BELOW_THE_MOST, False),
        (912.5, COVERS, False),
        (912.51, COVERS, False),
    ],
    ids=[
        "a cent below the least",
        "at the least",
        "a cent above the least",
        "a cent below the most",
        "at the most",
        "a cent above the most",
    ],
)
def test_a_budget_exactly_at_the_stacks_least_or_most_per_month_reaches_it_and_a_cent_less_does_not(tmp_path, amount, says, warned):
    """A budget equal to the stack's least per month is not below it (no warning: the
    forecast alert goes off only once the month's forecast passes the budget); one equal to
    its most covers the worst case. A cent less is below each."""
    line, warnings = budget_at(tmp_path, amount)
    assert line.endswith(says)
    below_the_least = (
        f"aks-gpu:cost.budget.amount = {amount:,.2f} USD is below the stack's least cost per month, 182.50 USD (every pool "
        "at its fewest nodes for 730 h): its forecast alert goes off at once, and its actual-cost alerts every month; raise "
        "it, or lower the pools' nodeCount or minCount"
    )
    assert warnings == ([below_the_least] if warned else [])
