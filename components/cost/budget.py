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

from components.cost.cost import resource_groups_says, tagged_says

# (key, threshold in percent, what it compares). Keys name the alert; they are the
# notifications map's keys, which the API leaves to the caller.
ALERTS = (
    ("actual80", 80, consumption.ThresholdType.ACTUAL),
    ("actual100", 100, consumption.ThresholdType.ACTUAL),
    ("forecast100", 100, consumption.ThresholdType.FORECASTED),
)


def utc_today() -> datetime.date:
    """The clock the start date is read from (a test replaces it)."""
    return datetime.datetime.now(datetime.timezone.utc).date()


def first_of_month(today: datetime.date | None = None) -> str:
    """The budget's start: the first of this month, UTC, as the API writes dates."""
    today = today or utc_today()
    return f"{today.replace(day=1).isoformat()}T00:00:00Z"


@dataclass(frozen=True)
class Watched:
    """What a budget watches: its scope, its Cost Management filter, and how to say so."""

    scope: pulumi.Input[str]
    filter: consumption.BudgetFilterArgs
    says: str
    #: The filter's values that are known only once something exists (a created cluster's node
    #: resource group): the start date is read when they are (the module docstring says why).
    waits_for: Sequence[pulumi.Input[str]] = ()


def subscription_scope(subscription_id: pulumi.Input[str]) -> pulumi.Output[str]:
    return pulumi.Output.concat("/subscriptions/", subscription_id)


def resource_groups(subscription_id: pulumi.Input[str], groups: Sequence[pulumi.Input[str]], named: Sequence[str]) -> Watched:
    """A cluster this program creates: its resource group and its node resource group."""
    return Watched(
        scope=subscription_scope(subscription_id),
        filter=consumption.BudgetFilterArgs(
            dimensions=consumption.BudgetComparisonExpressionArgs(name="ResourceGroupName", operator="In", values=list(groups))
        ),
        waits_for=list(groups),
        says=resource_groups_says(named),
    )


def tagged(subscription_id: pulumi.Input[str], tag: str, value: str) -> Watched:
    """Pools this stack adds to an existing cluster: the scale sets that carry its tag."""
    return Watched(
        scope=subscription_scope(subscription_id),
        filter=consumption.BudgetFilterArgs(tags=consumption.BudgetComparisonExpressionArgs(name=tag, operator="In", values=[value])),
        says=tagged_says(tag, value),
    )


# The kind of scope every budget here sits at (`subscription_scope`); part of its Pulumi name.
SCOPE_KIND = "subscription"


def logical_name(component: str, budget: str) -> str:
    """The budget's Pulumi name: what would replace it is in the name (the module says why)."""
    return f"{component}-{SCOPE_KIND}-{budget}"


@dataclass(frozen=True)
class CostBudgetArgs:
    """The monthly budget (cost.budget); on a created cluster, CostBudget's `cluster` names the
    resource groups it watches, so it comes after the cluster."""

    #: The budget's name (unique within its scope).
    name: str
    #: The month's amount (cost.budget.amount), in the billing currency.
    amount: float
    #: Who is e-mailed at each alert (cost.budget.contactEmails).
    contact_emails: Sequence[str]
    #: Its scope: the run's subscription.
    subscription_id: str
    #: A created cluster's resource group and node resource group, by name, as the budget says
    #: what it watches; empty: an existing cluster, whose pools it finds by `owner_tag`.
    groups: tuple[str, ...] = ()
    #: The owner tag (name, value) of the scale sets it watches on an existing cluster.
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


def start_once_known(watched: Watched) -> pulumi.Output[str]:
    """The first of the month, read off the clock once the budget's scope and filter are known,
    just before the engine creates it (the module docstring says why)."""
    return pulumi.Output.all(watched.scope, *watched.waits_for).apply(lambda _: first_of_month())


class CostBudget(pulumi.ComponentResource):
    budget: consumption.Budget

    def __init__(
        self, name: str, args: CostBudgetArgs, *, groups: Sequence[pulumi.Input[str]] = (), opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """`groups`: the created cluster's resource groups as it names them (GpuCluster.billing_groups)."""
        super().__init__("aks-gpu:azure:CostBudget", name, None, opts)
        scope = (
            tagged(args.subscription_id, *args.owner_tag) if args.owner_tag else resource_groups(args.subscription_id, groups, args.groups)
        )
        self.budget = consumption.Budget(
            logical_name(name, args.name),
            budget_name=args.name,
            scope=scope.scope,
            amount=args.amount,
            filter=scope.filter,
            category=consumption.CategoryType.COST,
            time_grain=consumption.TimeGrainType.MONTHLY,
            time_period=consumption.BudgetTimePeriodArgs(start_date=start_once_known(scope)),
            notifications=notifications(args.contact_emails),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["timePeriod"]),
        )
        self.register_outputs({"budgetName": self.budget.name})
