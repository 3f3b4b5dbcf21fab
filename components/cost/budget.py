"""A monthly Azure consumption budget over what the stack runs (aks-gpu:cost.budget),
e-mailing its contacts at 80% and 100% of the month's actual cost and 100% of its forecast.
Where it looks, its start date and `ignoreChanges`, why its Pulumi name carries its scope, and
the API's rules with their sources: docs/design/cost.md, "The budget" and "The budget's rules, and
their sources"; its order before the GPU pools: docs/design/lifecycle.md, "The budget before the GPU pools"."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import consumption

# (key, threshold in percent, what it compares). Keys name the alert; they are the
# notifications map's keys, which the API leaves to the caller.
ALERTS = (
    ("actual80", 80, consumption.ThresholdType.ACTUAL),
    ("actual100", 100, consumption.ThresholdType.ACTUAL),
    ("forecast100", 100, consumption.ThresholdType.FORECASTED),
)
# The kind of scope every budget here sits at (the subscription); part of its Pulumi name.
SCOPE_KIND = "subscription"


def utc_today() -> datetime.date:
    """The clock the start date is read from (a test replaces it)."""
    return datetime.datetime.now(datetime.timezone.utc).date()


def first_of_month(today: datetime.date | None = None) -> str:
    """The budget's start: the first of this month, UTC, as the API writes dates."""
    today = today or utc_today()
    return f"{today.replace(day=1).isoformat()}T00:00:00Z"


@dataclass(frozen=True)
class CostBudgetArgs:
    """The monthly budget (cost.budget); on a created cluster, CostBudget's `groups` names the
    resource groups it watches, so it comes after the cluster."""

    #: The budget's name (unique within its scope).
    name: str
    #: The month's amount (cost.budget.amount), in the billing currency.
    amount: float
    #: Who is e-mailed at each alert (cost.budget.contactEmails).
    contact_emails: Sequence[str]
    #: Its scope: the run's subscription.
    subscription_id: str
    #: The owner tag (name, value) of the scale sets it watches on an existing cluster; None on a
    #: created cluster, whose resource groups CostBudget is given.
    owner_tag: tuple[str, str] | None = None


def notifications(emails: Sequence[str]) -> dict[str, consumption.NotificationArgs]:
    return {
        key: consumption.NotificationArgs(
            enabled=True,
            operator=consumption.OperatorType.GREATER_THAN,
            threshold=threshold,
            threshold_type=kind,
            contact_emails=list(emails),
        )
        for key, threshold, kind in ALERTS
    }


def watched(args: CostBudgetArgs, groups: Sequence[pulumi.Input[str]]) -> consumption.BudgetFilterArgs:
    """Pools added to an existing cluster: the scale sets that carry its tag; a created cluster:
    its resource group and its node resource group."""
    if args.owner_tag:
        tag, value = args.owner_tag
        return consumption.BudgetFilterArgs(tags=consumption.BudgetComparisonExpressionArgs(name=tag, operator="In", values=[value]))
    in_groups = consumption.BudgetComparisonExpressionArgs(name="ResourceGroupName", operator="In", values=list(groups))
    return consumption.BudgetFilterArgs(dimensions=in_groups)


class CostBudget(pulumi.ComponentResource):
    budget: consumption.Budget

    def __init__(
        self, name: str, args: CostBudgetArgs, *, groups: Sequence[pulumi.Input[str]] = (), opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """`groups`: the created cluster's resource groups as it names them (GpuCluster.billing_groups)."""
        super().__init__("aks-gpu:azure:CostBudget", name, None, opts)
        scope = pulumi.Output.concat("/subscriptions/", args.subscription_id)
        # The first of the month, read off the clock once the scope and filter are known (a created
        # cluster's node resource group), just before the engine creates the budget.
        start = pulumi.Output.all(scope, *([] if args.owner_tag else groups)).apply(lambda _: first_of_month())
        self.budget = consumption.Budget(
            f"{name}-{SCOPE_KIND}-{args.name}",  # what would replace it is in the name
            budget_name=args.name,
            scope=scope,
            amount=args.amount,
            filter=watched(args, groups),
            category=consumption.CategoryType.COST,
            time_grain=consumption.TimeGrainType.MONTHLY,
            time_period=consumption.BudgetTimePeriodArgs(start_date=start),
            notifications=notifications(args.contact_emails),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["timePeriod"]),
        )
        self.register_outputs({"budgetName": self.budget.name})
