"""Checks against the Azure subscription that run before any resource is registered: a preview
warns of every problem; a deployment stops with one `PreflightError` listing every blocking one
(`preflight.mode: warn` goes on, `off` skips). The checks live in capacity.py, managed_pool_checks.py,
existing_cluster_checks.py and cluster_object_checks.py; the facts come from Azure or saved az CLI
output (azure_facts.py). Why, and what each checks: docs/preflight.md."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from components.cluster.cluster_facts import ClusterFacts
from components.cluster.existing_cluster_checks import check_existing_cluster, pools_of_stack
from components.cluster.settings import AccessConfig
from components.config.values import NAMESPACE
from components.cost.settings import BudgetConfig
from components.errors import PreflightError, error_line, escaped
from components.ownership.stack_state import NOT_READ, StackState
from components.pools import group_capacity, node_provisioning, pool_modes, pool_network
from components.pools.groups import GpuGroups
from components.pools.managed_pool_checks import feature_registration, host_problem, managed_pool_sign_in
from components.pools.pool_network import PoolNetwork
from components.pools.settings import Pools
from components.preflight import capacity, permissions
from components.preflight.settings import PreflightConfig
from components.problem import STOPS, Problem
from components.seam import azure_facts
from components.seam.reader import AzureReader, NotRead, RunningPool, read_errors
from components.stack import StackConfig

# Where the subscription comes from when the stack does not set azure-native:subscriptionId:
# the variables azure-native and the Azure SDK read.
SUBSCRIPTION_VARIABLES = ("ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID")
T = TypeVar("T")


@dataclass(frozen=True)
class Checked:
    #: What a run shows.
    warnings: list[str]
    #: The cluster's region: the config's, or an existing cluster's as read.
    region: str | None
    #: Each capacity group as Azure's facts stand for it: the pools it drops (group_capacity).
    groups: tuple[group_capacity.GroupDecision, ...] = ()

    @property
    def dropped(self) -> frozenset[str]:
        """The pools of capacity groups that cannot run at all: not declared."""
        return frozenset(f.pool for g in self.groups for f in g.dropped)


def run(
    cfg: StackConfig,
    stack: str,
    reader: AzureReader,
    found: ClusterFacts | None = None,
    networks: Iterable[PoolNetwork] = (),
    *,
    dry_run: bool,
    in_cluster: Iterable[Problem] = (),
    state: StackState = NOT_READ,
    subscription: Subscription | None = None,
    running: frozenset[str] = frozenset(),
    pools: Pools | None = None,
    proves: bool,
    budget: BudgetConfig | None,
) -> Checked:
    """Every check this stack needs, reading Azure through `reader`: `found` is the existing
    cluster as read, `networks` how each pool joins its network, `in_cluster` what the cluster
    runs means for it, `running` the GPU pools that run already (never dropped from a capacity
    group), `pools` the pools as the plan resolved them (None: the config's), `proves` whether the
    run declares the proof, `budget` the budget it declares (the plan's parts decide both). Raises
    PreflightError when a deployment in `enforce` mode would hit a blocking problem."""
    mode, given = cfg.preflight.mode, pools or cfg.pools
    job = cfg.mnist_job.enabled and proves
    subscription = subscription or subscription_reader(cfg.subscription_id, reader)
    region = found.location if found is not None else cfg.location
    in_cluster = list(in_cluster)
    certain = never_two_plugins([p for p in in_cluster if p.always], dry_run)
    if mode == "off":
        return Checked(certain, region)
    problems: list[Problem] = []
    if found is not None and cfg.existing_cluster is not None:  # always, where a cluster was read (components/plan.py)
        problems += check_existing_cluster(cfg.existing_cluster, given, cfg.gpu_operator, found, stack, state)
        problems += node_provisioning.check(given, cfg.gpu_groups, found, reader)
    default_group = azure_facts.node_resource_group(cfg.resource_group_name, cfg.cluster_name, region)
    facts, notes = load_facts(cfg.preflight, reader, region, (found and found.node_resource_group) or default_group, subscription)
    if facts is not None and found is not None:  # the pools this stack runs in the cluster already
        facts = dataclasses.replace(facts, existing_pools={**facts.existing_pools, **pools_of_stack(found, stack, state.pools())})
    access = None if cfg.existing_cluster else cfg.access
    permission_problems, permission_notes = _permissions(budget, access, cfg.resource_group_name, reader, subscription)
    system_pool = cfg.system_pool if cfg.existing_cluster is None else None
    grouped = frozenset(name for names in cfg.gpu_groups.groups.values() for name in names)
    runs = running | frozenset(facts.existing_pools if facts else ())
    groups = capacity_groups(cfg.gpu_groups, capacity.Demand(given, job, system_pool), facts, region, runs)
    kept = given.without(frozenset(f.pool for g in groups for f in g.dropped))
    problems += [
        *(Problem(p) for p in pool_network.problems(list(networks))),
        *(p for p in in_cluster if not p.always),
        *(p for g in groups for p in g.problems()),
        *capacity.retired_sizes(kept, stack, grouped),
        *feature_registration(given, reader),
        *managed_pool_sign_in(given, reader),
        *(capacity.capacity(capacity.Demand(kept, job, system_pool, grouped), facts, stack, region) if facts else []),
        *permission_problems,
    ]
    _stop_if_enforced([p.message for p in problems if p.blocking], dry_run, mode)
    stops = f" ({STOPS})" if mode == "enforce" else ""
    said = [p.message + (stops if p.blocking else "") for p in problems]
    return Checked([*certain, *notes, *permission_notes, *said], region, tuple(groups))


def _stop_if_enforced(blocking: list[str], dry_run: bool, mode: str) -> None:
    if blocking and not dry_run and mode == "enforce":
        raise PreflightError(
            f"preflight: Azure would refuse this deployment ({len(blocking)} problem(s); nothing was created; "
            f"set {NAMESPACE}:preflight.mode to warn to deploy anyway):\n" + "\n".join(f"- {escaped(m)}" for m in blocking)
        )


def capacity_groups(
    groups: GpuGroups, demand: capacity.Demand, facts: azure_facts.Facts | None, region: str, running: frozenset[str]
) -> list[group_capacity.GroupDecision]:
    """Each capacity group's sizes held to one node beside what the rest of the run (`demand`)
    starts: its pools outside any group, a created cluster's System pool
    (components/pools/group_capacity.py). `running`: the pools that run already."""
    grouped = {name for names in groups.groups.values() for name in names}
    if not grouped:
        return []
    rest = dataclasses.replace(demand, pools=demand.pools.without(frozenset(grouped)))
    drawn = capacity.drawn(capacity.pool_needs(rest, facts), facts) if facts else {}
    by_name = {p.name: p for p in demand.pools.pools}
    return [
        group_capacity.decide(
            group,
            groups.key(group),
            [group_capacity.GroupPool(name, by_name[name].vm_size, by_name[name].spot) for name in names if name in by_name],
            running,
            facts,
            region,
            drawn,
        )
        for group, names in groups.groups.items()
    ]


def never_two_plugins(problems: list[Problem], dry_run: bool) -> list[str]:
    """Two device plugins on one node ("Don't run multiple NVIDIA device plugin DaemonSets on
    the same nodes", best-practices-ml-ops.md) are never deployed, whatever preflight.mode
    says: not a check of Azure's answers to switch off, but what this stack would declare.
    A deployment stops; a preview says each."""
    whatever = f"whatever {NAMESPACE}:preflight.mode says"
    if problems and not dry_run:
        listed = problems[0].message if len(problems) == 1 else "\n" + "\n".join(f"- {escaped(p.message)}" for p in problems)
        raise PreflightError(f"preflight: never two device plugins on one node, {whatever} (nothing was created): {listed}")
    return [f"{p.message} ({STOPS}, {whatever})" for p in problems]


def provider_host(pools: Pools, environ: Mapping[str, str]) -> None:
    """An AKS-managed pool's provider host must import components/ from the project directory,
    or every operation on the pool fails after the rest of the stack is built: a preview stops too."""
    problem = host_problem(environ) if any(p.managed for p in pools.owned) else None
    if problem:
        raise PreflightError(f"preflight: {problem}")


def pool_switches(
    pools: Pools, cluster: tuple[str, str], reader: AzureReader, dry_run: bool, subscription: Subscription
) -> tuple[list[str], dict[str, RunningPool]]:
    """A pool that runs under the other kind of GPU management than the config asks for cannot be
    switched by any `up` (pool_modes.py): a preview stops too, whatever preflight.mode says. A
    read that could not be made leaves every declared pool's plan unknown: a preview says so, a
    deployment stops. Returns the warnings and the pools that run. `cluster`: its group and name."""
    reading = pool_modes.check(pools, *cluster, subscription, reader)
    refused = reading.refusals
    if refused:
        raise PreflightError("preflight: " + refused[0] + (f" (and {len(refused) - 1} more pool(s) likewise)" if len(refused) > 1 else ""))
    if reading.failed is None or not pools.owned:  # read, or nothing the stack declares rests on it
        return [], reading.running
    if not dry_run:
        raise PreflightError(reading.stop(pools))
    return [reading.unknown(pools)], reading.running


def load_facts(
    pf: PreflightConfig, reader: AzureReader, location: str, node_group: str, subscription: Subscription
) -> tuple[azure_facts.Facts | None, list[str]]:
    """Files when given (preflight.skusFile, usageFile); otherwise what the reader reads."""
    if pf.skus_file and pf.usage_file:
        return azure_facts.from_files(Path(pf.skus_file), Path(pf.usage_file), location), []
    hint = f"; set {NAMESPACE}:preflight.skusFile and usageFile to check saved az CLI output (docs/preflight.md)"
    return _unless_unread(
        "VM size offers and vCPU quota were not checked", lambda: reader.facts(subscription(), location, node_group), hint
    )


def _unless_unread(unchecked: str, read: Callable[[], T], hint: str = "") -> tuple[T | None, list[str]]:
    """`read()`, or None and the note that says what was not checked, where Azure was not read."""
    try:
        return read(), []
    except NotRead as why:
        return None, [f"preflight: {unchecked}: {why}{hint}"]
    except read_errors() as error:  # Azure not read, or an answer of another shape (BadAnswer): not checked
        return None, [f"preflight: {unchecked}: {error_line(error)}"]


def _permissions(
    budget: BudgetConfig | None, created: AccessConfig | None, resource_group: str, reader: AzureReader, subscription: Subscription
) -> tuple[list[Problem], list[str]]:
    """The budget's permission and the destroy's, read once at the subscription's scope."""
    at_subscription = functools.cache(lambda: reader.permissions(subscription()))
    budget_said = budget_permission(budget, subscription, at_subscription)
    needs = destroy_needs(budget is not None, created)
    destroy_said = destroy_permission(needs, resource_group, reader, at_subscription, subscription)
    return budget_said[0] + destroy_said[0], budget_said[1] + destroy_said[1]


Permissions = Callable[[], list[dict[str, Any]]]


def budget_permission(
    budget: BudgetConfig | None, subscription: Subscription, at_subscription: Permissions
) -> tuple[list[Problem], list[str]]:
    """Whether the signed-in identity may create cost.budget at the subscription's scope: a
    blocking problem when Azure lists its permissions there without it."""
    if budget is None:
        return [], []
    unchecked = "the permission to create aks-gpu:cost.budget was not checked"
    problem, notes = _unless_unread(unchecked, lambda: permissions.budget_problem(at_subscription(), subscription()))
    return ([Problem(problem)] if problem else []), notes


Needs = tuple[list[permissions.Need], list[permissions.Need]]


def destroy_needs(budget: bool, created: AccessConfig | None) -> Needs:
    """What a `pulumi destroy` deletes that Azure may refuse: at the subscription's scope (the
    budget), and in the stack's resource group (a created cluster's; `created`: its access
    settings, None in an existing cluster). Pools added to an existing cluster are left out:
    their owner's rights may sit on the cluster alone, where a list at a wider scope cannot see them."""
    at_subscription = [permissions.Need(permissions.BUDGET_DELETE, "the budget", "Cost Management Contributor")] if budget else []
    if created is None:
        return at_subscription, []
    grant = [permissions.Need(permissions.GRANT_DELETE, "the deployer's cluster-admin grant", permissions.GRANT_ROLES)]
    in_group = [
        *(grant if created.grants_deployer else []),
        permissions.Need(permissions.POOL_DELETE, "the GPU pools", "Contributor"),
        permissions.Need(permissions.CLUSTER_DELETE, "the cluster", "Contributor"),
        permissions.Need(permissions.GROUP_DELETE, "the resource group", "Contributor"),
    ]
    return at_subscription, in_group


def destroy_permission(
    needs: Needs, resource_group: str, reader: AzureReader, at_subscription: Permissions, subscription: Subscription
) -> tuple[list[Problem], list[str]]:
    """Whether the signed-in identity could destroy what this stack creates (`needs`): a warning
    for each scope whose list lacks an action (permissions.py says why it blocks nothing)."""
    if not (needs[0] or needs[1]):
        return [], []

    def said() -> list[str | None]:
        sub_needs, group_needs = needs
        named, group = subscription(), None
        if group_needs:
            try:
                group = reader.group_permissions(named, resource_group)
            except read_errors():  # not there yet (404): whoever creates it needs the subscription's rights
                sub_needs, group_needs = sub_needs + group_needs, []
        found = [(f"subscription {named}", at_subscription(), sub_needs)] if sub_needs else []
        found += [(f"resource group {resource_group}", group, group_needs)] if group is not None and group_needs else []
        return [permissions.destroy_problem(listed, scope, wanted) for scope, listed, wanted in found]

    lines, notes = _unless_unread("the permissions a `pulumi destroy` of this stack needs were not checked", said)
    return [Problem(line, blocking=False) for line in lines or [] if line], notes


# The run's subscription, asked for where a check or a declaration needs it.
Subscription = Callable[[], str]


def subscription_reader(configured: str | None, reader: AzureReader) -> Subscription:
    """The run's subscription, read once (components/plan.py hands it to every check and to
    the declarations); a read that fails is asked again by the next that needs it."""
    return functools.cache(lambda: subscription_id(configured, reader))


def subscription_id(configured: str | None, reader: AzureReader) -> str:
    """azure-native:subscriptionId, the variables azure-native reads, or the subscription
    azure-native itself resolved (its getClientConfig)."""
    given = (configured, *(os.environ.get(v) for v in SUBSCRIPTION_VARIABLES))
    return next((v for v in given if v), None) or reader.client_subscription()
