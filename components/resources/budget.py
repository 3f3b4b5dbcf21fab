"""A monthly Azure consumption budget over what the stack runs (aks-gpu:cost.budget),
e-mailing its contacts at 80% and 100% of the month's actual cost and at 100% of its
forecast cost (docs/cost.md).

What it watches. A cluster's "node resource group ... contains all of the infrastructure
resources associated with the cluster. These resources include the Kubernetes node VMs,
virtual networking, and storage", named like MC_<group>_<cluster>_<region>, and "AKS agent
nodes are billed as standard Azure virtual machines" (azure-aks-docs articles/aks/faq.yml,
ms.date 11/06/2023): the GPU nodes are billed in that group, not in the cluster's own, so a
budget on the stack's resource group alone would see the control plane and hardly any GPU
spend.
The budget sits at the subscription's scope with a Cost Management filter (budgets take a
subscription or a resource group as scope; filter `dimensions` and `tags`, operator In:
Microsoft.Consumption/budgets' template reference, and Azure's quickstart
quickstarts/microsoft.consumption/create-budget, whose filter is ResourceGroupName In ...):
  - a cluster this program creates: ResourceGroupName In [its group, its node resource
    group], everything the stack runs;
  - an existing cluster: the tag aks-gpu-stack = <project>/<stack>, which the stack's GPU
    pools carry and AKS copies to "The virtual machine scale set and each virtual machine
    scale set instance associated with the node pool" (azure-aks-docs use-tags.md, ms.date
    06/16/2023). It sees
    the stack's GPU nodes, and not what carries no such tag: their OS disks, the cluster's
    load balancer and egress, the rest of the cluster.

Rules from the API (azure-native consumption.Budget, REST API 2024-08-01, its argument docs):
  - timePeriod: "The start date must be first of the month ... Future start date should not be
    more than twelve months. Past start date should be selected within the timegrain period";
    with a Monthly grain, the first of the current month (UTC). Without an end date, "we default
    this to 10 years from the start date".
  - notifications: "Budget can have up to five notifications"; a threshold "is always percent and
    has to be between 0 and 1000"; thresholdType Actual or Forecasted.
  - contactEmails: "Must have at least one contact email or contact group specified at the
    Subscription or Resource Group scopes."

The start date is the first of the month in which the budget is created, read off the clock
only once what the budget waits for is known (its scope, and a created cluster's node resource
group), which is when the engine is handed the budget to create: a run that began on the last
day of a month and reaches the budget after midnight on the 1st would otherwise send the
month before, which the rule above refuses ("Past start date should be selected within the
timegrain period"; a start in a later month is allowed but would leave the current month
unwatched). What is left is the engine's own seconds between that reading and its PUT. A
preview shows the start unknown until the cluster exists.

It is then left alone (`ignoreChanges:
[timePeriod]`): the first of the current month changes every month, and the service refuses
to move a budget's start ("Start date of budgets cannot be updated. Please delete and create
a new budget.", its 400 answer, quoted in Azure/CanadaPubSecALZ#317 and
Azure/azure-quickstart-templates#7095), so without it every `up` in a later month would fail.
With it, an update (a new amount, another address) sends the start the budget has.

A replacement would send it too: the engine puts an ignored property's old value into the
new inputs before it diffs (pulumi/pulumi pkg/resource/deploy/step_generator.go,
`processIgnoreChanges`), and the replacement is created with them, a start months past, which
Azure refuses ("Past start date should be selected within the timegrain period"). What would
replace a budget (its `scope` and `budgetName`, both in its resource ID) therefore never
changes under one Pulumi name: the name carries the budget's name and its scope's kind, so a
change makes a new resource, created with this month's start, and deletes the old one. So
did the move from the resource group's scope (releases before the subscription scope, where
the child was `cost-budget`): the next `up` creates the new budget, then deletes the old one.

The comparison is GreaterThan, "the recommended OperatorType" (the SDK's OperatorType enum;
EqualTo "will be deprecated"). tests/test_budget.py pins the alerts and the option.

When: before the GPU pools (each pool waits for the budget, and the budget for no pool and no
Job: tests/test_budget_first.py), so no GPU node bills without it. Creating it needs
Microsoft.Consumption/budgets/write at the subscription's scope, which a team with rights on
its own resource group lacks; preflight checks that first (components/azure/permissions.py), and
a deployment without it stops before anything is created. A refusal preflight could not see
(a 403 at the create) stops the engine from starting any new step (pulumi/pulumi
pkg/resource/deploy/step_executor.go cancelDueToError), after the cluster and before any pool.
"""

from __future__ import annotations

import datetime
import re
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


def resource_groups_says(named: Sequence[str]) -> str:
    """What a budget over a created cluster's resource groups watches, in words (components/plan.py says it first)."""
    return (
        f"resource groups {' and '.join(named)} (filter ResourceGroupName In, at the subscription's scope): the "
        "cluster, and what its node resource group holds: the node VMs, their networking and storage"
    )


def tagged_says(tag: str, value: str) -> str:
    """What a budget over the scale sets with the stack's tag watches, in words."""
    return (
        f"tag {tag} = {value} (filter at the subscription's scope): this stack's GPU pools' scale sets and their VMs; "
        "not their OS disks, the cluster's load balancer or egress, which AKS does not tag with it"
    )


def budget_name(project: str, stack: str, cluster: str) -> str:
    """Unique within the subscription, which is the budget's scope: "1-63 ... Alphanumerics,
    hyphens, and underscores" (Microsoft.Consumption/budgets' template reference). The
    cluster's name once: a cluster named by default is already <project>-<stack>."""
    base = f"{project}-{stack}"
    named = cluster if cluster.startswith(base) else f"{base}-{cluster}"
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{named}-gpu")[:63]


# The kind of scope every budget here sits at (`subscription_scope`); part of its Pulumi name.
SCOPE_KIND = "subscription"


def logical_name(component: str, budget: str) -> str:
    """The budget's Pulumi name: what would replace it is in the name (the module says why)."""
    return f"{component}-{SCOPE_KIND}-{budget}"


@dataclass(frozen=True)
class CostBudgetArgs:
    #: Its scope (the subscription's) and what within it the budget counts.
    watched: Watched
    #: The budget's name (unique within its scope).
    name: str
    amount: float
    contact_emails: Sequence[str]


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

    def __init__(self, name: str, args: CostBudgetArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-gpu:azure:CostBudget", name, None, opts)
        self.budget = consumption.Budget(
            logical_name(name, args.name),
            budget_name=args.name,
            scope=args.watched.scope,
            amount=args.amount,
            filter=args.watched.filter,
            category=consumption.CategoryType.COST,
            time_grain=consumption.TimeGrainType.MONTHLY,
            time_period=consumption.BudgetTimePeriodArgs(start_date=start_once_known(args.watched)),
            notifications=notifications(args.contact_emails),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["timePeriod"]),
        )
        self.register_outputs({"budgetName": self.budget.name})
