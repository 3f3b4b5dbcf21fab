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
from typing import Any

from components.cluster.cluster_facts import ClusterFacts
from components.cluster.existing_cluster_checks import check_existing_cluster, pools_of_stack
from components.cluster.settings import AccessConfig
from components.config.values import NAMESPACE
from components.cost.settings import BudgetConfig
from components.errors import PreflightError, error_line, escaped
from components.ownership.stack_state import NOT_READ, StackState
from components.pools import group_capacity, node_provisioning, pool_modes, pool_network
from components.pools.group_capacity import GroupDecision, GroupPool
from components.pools.groups import GpuGroups
from components.pools.managed_pool_checks import feature_registration, host_problem, managed_pool_sign_in
from components.pools.pool_network import PoolNetwork
from components.pools.settings import Pools
from components.preflight import capacity, permissions
from components.preflight.capacity import Demand, retired_sizes
from components.preflight.settings import PreflightConfig
from components.problem import Problem
from components.seam import azure_facts
from components.seam.azure_facts import Facts
from components.seam.reader import AzureReader, NotRead, RunningPool, read_errors
from components.stack import StackConfig

# Where the subscription comes from when the stack does not set azure-native:subscriptionId:
# the variables azure-native and the Azure SDK read.
SUBSCRIPTION_VARIABLES = ("ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID")


# --------------------------------------------------------------------------- entry point


@dataclass(frozen=True)
class Checked:
    #: What a run shows.
    warnings: list[str]
    #: The cluster's region: the config's, or an existing cluster's as read (None when it
    #: could not be read, or preflight is off).
    region: str | None
    #: Each capacity group as Azure's facts stand for it: the pools it drops (group_capacity).
    groups: tuple[GroupDecision, ...] = ()

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
) -> Checked:
    """Every check this stack needs, reading Azure through `reader`; `found` is the existing
    cluster, as read (cluster_facts), `networks` how each pool joins its network (pool_network),
    `in_cluster` what the cluster runs in Kubernetes means for it (cluster_object_checks), and
    `state` what the stack's state holds (stack_state), `subscription` the run's (subscription_reader),
    `running` the GPU pools that run already (never dropped from a capacity group), `pools` the
    pools as the plan resolved them (existing_pools.resolve; None: the config's).
    Returns the warnings to show, the cluster's region and the capacity groups' drops; raises
    PreflightError when a deployment in `enforce` mode would hit a blocking problem."""
    mode, given = cfg.preflight.mode, pools or cfg.pools
    subscription = subscription or subscription_reader(cfg.subscription_id, reader)
    region = found.location if found is not None else cfg.location
    in_cluster = list(in_cluster)
    certain = never_two_plugins([p for p in in_cluster if p.always], dry_run)
    in_cluster = [p for p in in_cluster if not p.always]
    if mode == "off":
        return Checked(certain, region)
    problems: list[Problem] = []
    node_group, own_pools = azure_facts.node_resource_group(cfg.resource_group_name, cfg.cluster_name, region), {}
    if found is not None:
        if cfg.existing_cluster is not None:  # always, where a cluster was read (components/plan.py)
            problems += check_existing_cluster(cfg.existing_cluster, given, cfg.gpu_operator, found, stack, state)
            problems += node_provisioning.check(given, cfg.gpu_groups, found, reader)
        node_group, own_pools = found.node_resource_group or node_group, pools_of_stack(found, stack, state.pools())
    facts, notes = load_facts(cfg.preflight, reader, region, node_group, subscription)
    at_subscription = functools.cache(lambda: reader.permissions(subscription()))
    budget_problems, budget_notes = budget_permission(cfg.cost.budget, subscription, at_subscription)
    destroy_problems, destroy_notes = destroy_permission(
        destroy_needs(cfg.cost.budget is not None, None if cfg.existing_cluster else cfg.access),
        cfg.resource_group_name,
        reader,
        at_subscription,
        subscription,
    )
    notes += budget_notes + destroy_notes
    if facts is not None and own_pools:
        facts = dataclasses.replace(facts, existing_pools={**facts.existing_pools, **own_pools})
    system_pool = cfg.system_pool if cfg.existing_cluster is None else None
    grouped = frozenset(name for names in cfg.gpu_groups.groups.values() for name in names)
    runs = running | frozenset(facts.existing_pools if facts else ())
    groups = capacity_groups(cfg.gpu_groups, Demand(given, cfg.mnist_job.enabled, system_pool), facts, region, runs)
    kept = given.without(frozenset(f.pool for g in groups for f in g.dropped))
    demand = Demand(kept, cfg.mnist_job.enabled, system_pool, grouped)
    problems += [
        *(Problem(p) for p in pool_network.problems(list(networks))),
        *in_cluster,
        *(p for g in groups for p in g.problems()),
        *retired_sizes(kept, stack, grouped),
        *feature_registration(given, reader),
        *managed_pool_sign_in(given, reader),
        *(capacity.capacity(demand, facts, stack, region) if facts else []),
        *budget_problems,
        *destroy_problems,
    ]
    blocking = [p.message for p in problems if p.blocking]
    if blocking and not dry_run and mode == "enforce":
        raise PreflightError(
            f"preflight: Azure would refuse this deployment ({len(blocking)} problem(s); nothing was created; "
            f"set {NAMESPACE}:preflight.mode to warn to deploy anyway):\n" + "\n".join(f"- {escaped(m)}" for m in blocking)
        )
    stops = " (a deployment stops here)" if mode == "enforce" else ""
    return Checked([*certain, *notes, *(p.message + (stops if p.blocking else "") for p in problems)], region, tuple(groups))


def capacity_groups(groups: GpuGroups, demand: Demand, facts: Facts | None, region: str, running: frozenset[str]) -> list[GroupDecision]:
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
            [GroupPool(name, by_name[name].vm_size, by_name[name].spot) for name in names if name in by_name],
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
    return [f"{p.message} (a deployment stops here, {whatever})" for p in problems]


def provider_host(pools: Pools, environ: Mapping[str, str]) -> None:
    """An AKS-managed pool runs in Pulumi's dynamic provider host, which must import
    components/ from the project directory; where it could not, every operation on the pool
    fails after the rest of the stack is built. That is certain, whatever preflight.mode
    says: a preview stops too."""
    problem = host_problem(environ) if any(p.managed for p in pools.owned) else None
    if problem:
        raise PreflightError(f"preflight: {problem}")


def pool_switches(
    pools: Pools, cluster: tuple[str, str], reader: AzureReader, dry_run: bool, subscription: Subscription
) -> tuple[list[str], dict[str, RunningPool]]:
    """A pool that runs in Azure under the other kind of GPU management than the config now
    asks for cannot be switched by any `up` (components/pools/pool_modes.py): that is
    certain, whatever preflight.mode says, so a preview stops too. A read that could not be
    made leaves the plan of every pool the stack declares unknown: a preview says so, and a
    deployment stops, whatever preflight.mode says, since the `up` would follow a plan nobody
    saw. Returns the preview's warnings and the pools that run (what a typed pool's refresh
    may leave to Azure: components/pools/gpu_pool.py). `cluster`: its resource group and name."""
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
) -> tuple[Facts | None, list[str]]:
    """Files when given (preflight.skusFile, usageFile); otherwise what the reader reads.
    `location` is the cluster's region; `node_group` its node resource group."""
    if pf.skus_file and pf.usage_file:
        return azure_facts.from_files(Path(pf.skus_file), Path(pf.usage_file), location), []
    unchecked = "preflight: VM size offers and vCPU quota were not checked"
    try:
        return reader.facts(subscription(), location, node_group), []
    except NotRead as why:
        return None, [
            f"{unchecked}: {why}; set {NAMESPACE}:preflight.skusFile and usageFile to check saved az CLI output (docs/preflight.md)"
        ]
    except read_errors() as error:  # Azure not read: the facts are missing
        return None, [f"{unchecked}: {error_line(error)}"]


Permissions = Callable[[], list[dict[str, Any]]]


def budget_permission(
    budget: BudgetConfig | None, subscription: Subscription, at_subscription: Permissions
) -> tuple[list[Problem], list[str]]:
    """Whether the signed-in identity may create cost.budget at the subscription's scope
    (components/preflight/permissions.py): a blocking problem when Azure lists its permissions
    there (`at_subscription`) without it; a note when they cannot be read."""
    if budget is None:
        return [], []
    unchecked = "preflight: the permission to create aks-gpu:cost.budget was not checked"
    try:
        problem = permissions.budget_problem(at_subscription(), subscription())
    except NotRead as why:
        return [], [f"{unchecked}: {why}"]
    except read_errors() as error:  # Azure not read: not checked
        return [], [f"{unchecked}: {error_line(error)}"]
    return ([Problem(problem)] if problem else []), []


Needs = tuple[list[permissions.Need], list[permissions.Need]]


def destroy_needs(budget: bool, created: AccessConfig | None) -> Needs:
    """What a `pulumi destroy` of this stack deletes that Azure may refuse: at the
    subscription's scope (the budget, where cost.budget is set), and in the stack's resource
    group (what a created cluster holds; `created`: its access settings, None in an existing
    cluster). Pools added to an existing cluster are left out: their owner's rights may
    sit on the cluster alone, where a list at a wider scope cannot see them."""
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
    """Whether the signed-in identity could destroy what this stack creates (`needs`, in the
    subscription and in `resource_group`; components/preflight/permissions.py says where each is
    read, and why it blocks nothing): a warning for each scope whose list lacks an action; a
    note when they cannot be read."""
    sub_needs, group_needs = needs
    if not (sub_needs or group_needs):
        return [], []
    unchecked = "preflight: the permissions a `pulumi destroy` of this stack needs were not checked"
    try:
        named = subscription()
        group: tuple[str, list[dict[str, Any]]] | None = None
        if group_needs:
            try:
                group = (f"resource group {resource_group}", reader.group_permissions(named, resource_group))
            except read_errors():  # not there yet (404): whoever creates it needs the subscription's rights
                sub_needs, group_needs = sub_needs + group_needs, []
        found = [(f"subscription {named}", at_subscription(), sub_needs)] if sub_needs else []
        found += [(*group, group_needs)] if group and group_needs else []
        said = [permissions.destroy_problem(listed, scope, needs) for scope, listed, needs in found]
    except NotRead as why:
        return [], [f"{unchecked}: {why}"]
    except read_errors() as error:  # Azure not read, or an answer of another shape (BadAnswer): not checked
        return [], [f"{unchecked}: {error_line(error)}"]
    return [Problem(line, blocking=False) for line in said if line], []


# The run's subscription, asked for where a check or a declaration needs it.
Subscription = Callable[[], str]


def subscription_reader(configured: str | None, reader: AzureReader) -> Subscription:
    """The run's subscription, read once (components/plan.py hands it to every check and to
    the declarations); a read that fails is asked again by the next that needs it."""
    return functools.cache(lambda: subscription_id(configured, reader))


def subscription_id(configured: str | None, reader: AzureReader) -> str:
    """azure-native:subscriptionId, the variables azure-native reads, or the subscription
    azure-native itself resolved (its getClientConfig)."""
    for value in (configured, *(os.environ.get(v) for v in SUBSCRIPTION_VARIABLES)):
        if value:
            return value
    return reader.client_subscription()
