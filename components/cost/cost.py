"""What the stack will cost per hour, before anything is created, and the limit a deployment
cannot pass (aks-gpu:cost.maxHourly): each pool's nodes priced from the Retail Prices API, least
at minCount, most at maxCount, a month at 730 hours. A preview warns; a deployment above the
limit, or without all its prices (unless `cost.withoutPrices: deploy`), stops with one line.
The figures, what they leave out and the limit: docs/preflight.md."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.cluster.settings import SystemPoolConfig
from components.config.values import NAMESPACE
from components.cost import prices
from components.cost.settings import CostConfig
from components.errors import CostError, error_line
from components.pools.settings import Pools
from components.problem import STOPS
from components.seam.reader import AzureReader, NotRead, read_errors

# "730 hours" a month: the Azure pricing calculator's month.
HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class Billed:
    """What the cost reads, as the plan builds it from the config (as capacity.Demand): the GPU
    pools, the System pool of the cluster the program creates (None in an existing cluster's:
    its owner's), whether the proof Job runs (mnistJob.enabled), the cost settings, and a saved
    price list (preflight.pricesFile; None: the reader's)."""

    pools: Pools
    system_pool: SystemPoolConfig | None
    job_enabled: bool
    cost: CostConfig
    prices_file: str | None = None
    #: A pool the stack uses as it is and the proof scales from zero -> the Job's deadline in
    #: seconds (components/proof/job_deadline.py): the most the Job holds the node it adds.
    proof_seconds: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Node:
    """One pool as the price list sees it."""

    key: str
    name: str
    vm_size: str
    spot: bool
    least_nodes: int
    most_nodes: int
    #: A Spot pool's cap per node-hour in US dollars (spotMaxPrice); None or -1: no cap.
    spot_max_price: float | None = None


@dataclass(frozen=True)
class PoolCost:
    node: Node
    #: What a node is billed per hour today: the pay-as-you-go price, or a Spot pool's
    #: current Spot price.
    price: prices.Price
    #: The most Azure may bill a node per hour (`ceiling_source` says why); None when it
    #: cannot be known (a Spot pool with no cap whose pay-as-you-go price the list lacks).
    ceiling: float | None
    ceiling_source: str
    #: The pool's spotMaxPrice, when that is its ceiling.
    cap: float | None

    @property
    def least_hourly(self) -> float:
        return self.node.least_nodes * self.price.hourly

    @property
    def expected_most_hourly(self) -> float:
        """At its most nodes, at today's price (a Spot pool's current Spot price), never above
        the ceiling: a node whose Spot price passes its cap is evicted, not billed more
        (spot-vms.md, below)."""
        return self.node.most_nodes * min(self.price.hourly, _node_ceiling(self))

    @property
    def capped_below_today(self) -> bool:
        """A Spot cap under today's Spot price: "Max price is set to < the current price. | The
        VM isn't deployed. You'll get an error message that the max price needs to be >=
        current price", and a running one "gets evicted" when the price passes it
        (azure-compute-docs virtual-machines/spot-vms.md, ms.date 08/05/2024, "Eviction
        policy"): the pool gets no node until the price falls."""
        return self.cap is not None and self.cap < self.price.hourly

    @property
    def most_hourly(self) -> float:
        """At its most nodes, at the most Azure may charge (today's price if the ceiling is unknown)."""
        return self.node.most_nodes * _node_ceiling(self)


@dataclass(frozen=True)
class ProofRun:
    """One node of a pool the stack uses as it is, which the proof Job makes the pool's
    autoscaler add from zero, asked for at most the Job's deadline: past activeDeadlineSeconds
    the Job controller fails the Job and deletes its active pods (kubernetes pkg/controller/job/
    job_controller.go `pastActiveDeadline`, `syncJob`: docs/design/proof-watch.md). The idle
    time before the autoscaler removes the node is not counted. `price` None: the list has none."""

    node: Node
    seconds: int
    price: prices.Price | None

    @property
    def most(self) -> float | None:
        return None if self.price is None else self.price.hourly * self.seconds / 3600


@dataclass(frozen=True)
class Estimate:
    currency: str
    source: str
    pools: tuple[PoolCost, ...]
    #: Pools the price list has no price for.
    unpriced: tuple[Node, ...] = ()
    #: The shipped snapshot's date, when the prices are the snapshot's (prices.snapshot).
    snapshot_date: str | None = None
    #: The owner's pools the proof scales from zero: one node each for the Job's deadline.
    proof: tuple[ProofRun, ...] = ()

    @property
    def least_hourly(self) -> float:
        return sum(p.least_hourly for p in self.pools)

    @property
    def most_hourly(self) -> float:
        return sum(p.most_hourly for p in self.pools)

    @property
    def expected_most_hourly(self) -> float:
        return sum(p.expected_most_hourly for p in self.pools)

    @property
    def most_monthly(self) -> float:
        return self.most_hourly * HOURS_PER_MONTH

    @property
    def missing(self) -> list[str]:
        """What the totals leave out: unpriced pools, and Spot pools whose ceiling is unknown."""
        return [f"{n.key} {n.vm_size} (no price)" for n in self.unpriced] + [
            f"{p.node.key} {p.node.vm_size} (no pay-as-you-go price: its Spot ceiling)" for p in self.pools if p.ceiling is None
        ]

    @property
    def complete(self) -> bool:
        return not self.missing


def nodes(billed: Billed) -> list[Node]:
    """The pools that cost money in this stack: the GPU pools it declares, and the System pool
    of a cluster this program creates (an existing cluster's, and a pool it uses, are their
    owner's: used_pool_lines)."""
    found = [
        Node(
            billed.pools.key(p),
            p.name,
            p.vm_size,
            p.spot,
            p.min_count if p.min_count is not None else p.node_count,  # the autoscaler's floor, or the fixed count
            p.max_count or p.node_count,
            p.spot_max_price,
        )
        for p in billed.pools.owned
    ]
    if (system := billed.system_pool) is not None:
        found.append(Node(f"{NAMESPACE}:systemPool", "system", system.vm_size, False, system.node_count, system.node_count))
    return found


def proof_nodes(billed: Billed) -> list[tuple[Node, int]]:
    """The owner's pools the proof scales from zero, each one node for the Job's deadline."""
    return [
        (Node(billed.pools.key(p), p.name, p.vm_size, p.spot, 1, 1, p.spot_max_price), billed.proof_seconds[p.name])
        for p in billed.pools.pools
        if not p.owned and p.name in billed.proof_seconds
    ]


def spot_ceiling(node: Node, pay_as_you_go: prices.Price | None, currency: str) -> tuple[float | None, str, float | None]:
    """The most a Spot node may be billed per hour (azure-compute-docs
    virtual-machines/spot-vms.md, ms.date 08/05/2024, "Eviction policy"):
      - no cap (-1): "The max price will be the current price, up to the price for standard
        VMs. You'll never be charged above the standard price": the pay-as-you-go price;
      - a cap, in US dollars: the node "gets evicted" once the price passes it, so the cap.
        The page bounds the charge by the standard price only for -1, so a cap above the
        pay-as-you-go price still counts as the cap: the limit counts what the config allows.
    A cap and a list in another currency cannot be compared: pay-as-you-go is the ceiling.
    Returns the ceiling, where it comes from, and the cap when it is the ceiling."""
    cap = node.spot_max_price if node.spot_max_price not in (None, -1) else None
    payg = pay_as_you_go.hourly if pay_as_you_go is not None else None
    if cap is not None and currency == "USD":
        return cap, "spotMaxPrice", cap
    if payg is not None:
        return payg, "pay-as-you-go: Spot with no cap" if cap is None else f"pay-as-you-go: spotMaxPrice is USD, the list {currency}", None
    return None, "unknown: no pay-as-you-go price in the list", None


def estimate(billed: Billed, items: list[dict[str, Any]], region: str, source: str, snapshot_date: str | None = None) -> Estimate:
    priced, unpriced = [], []
    currency = billed.cost.currency
    for node in nodes(billed):
        price = prices.pick(items, node.vm_size, region, node.spot, currency)
        if price is None:
            unpriced.append(node)
            continue
        payg = prices.pick(items, node.vm_size, region, False, currency)
        ceiling, why, cap = spot_ceiling(node, payg, currency) if node.spot else (price.hourly, "", None)
        priced.append(PoolCost(node, price, ceiling, why, cap))
    proof = tuple(ProofRun(n, seconds, prices.pick(items, n.vm_size, region, n.spot, currency)) for n, seconds in proof_nodes(billed))
    return Estimate(currency, source, tuple(priced), tuple(unpriced), snapshot_date, proof)


def money(amount: float, currency: str) -> str:
    return f"{amount:,.2f} {currency}"


def _pool_line(p: PoolCost, currency: str) -> str:
    n = p.node
    nodes_text = f"{n.least_nodes}" if n.least_nodes == n.most_nodes else f"{n.least_nodes}-{n.most_nodes}"
    count = f"{nodes_text} node{'' if n.least_nodes == n.most_nodes == 1 else 's'}"  # 1 node, 0-1 nodes
    if not n.spot:
        rate = f"{money(p.price.hourly, currency)} per node-hour"
    elif p.ceiling is None:
        rate = f"{money(p.price.hourly, currency)} per node-hour at today's Spot price, its ceiling unknown (no pay-as-you-go price)"
    else:
        rate = f"{money(p.price.hourly, currency)} per node-hour at today's Spot price, up to {money(p.ceiling, currency)} ({p.ceiling_source})"
    expected = f" ({money(p.expected_most_hourly, currency)} per hour at today's Spot price)" if n.spot else ""
    return (
        f"cost: {n.key} {n.vm_size}{' Spot' if n.spot else ''}: {rate} x {count} = {money(p.least_hourly, currency)} to "
        f"{money(p.most_hourly, currency)} per hour{expected}, at most {money(p.most_hourly * HOURS_PER_MONTH, currency)} per month"
    )


def _proof_line(run: ProofRun, currency: str, source: str) -> str:
    n = run.node
    cost = f"about {money(run.most, currency)}" if run.most is not None else f"not priced ({source} has no {currency} price for it)"
    return (
        f"cost: the proof: up to {math.ceil(run.seconds / 60)} min of one {n.vm_size}{' Spot' if n.spot else ''} (the Job's deadline), "
        f"{cost}: the owner's pool {n.key} scales from zero for it and bills them, with the node's idle time before its "
        "autoscaler removes it"
    )


def lines(est: Estimate) -> list[str]:
    """One line per pool and one for the stack, as `pulumi preview` prints them, then one per
    pool the proof scales from zero."""
    proof = [_proof_line(r, est.currency, est.source) for r in est.proof]
    if not est.pools and est.unpriced:  # nothing priced: no total of 0.00 that would read as free
        lacking = ", ".join(f"{n.key} {n.vm_size}" for n in est.unpriced)
        return [f"cost: the stack: not estimated: {est.source} has no {est.currency} price for {lacking}", *proof]
    if not est.pools:
        return ["cost: the stack: no pool of its own, nothing it bills per hour (the owner's pools are billed to them)", *proof]
    out = [_pool_line(p, est.currency) for p in est.pools]
    incomplete = f" INCOMPLETE, without {'; '.join(est.missing)}:" if not est.complete else ""
    out.append(
        f"cost: the stack:{incomplete} {money(est.least_hourly, est.currency)} to {money(est.most_hourly, est.currency)} per hour, "
        f"at most {money(est.most_monthly, est.currency)} per month ({HOURS_PER_MONTH} h; VMs only: no disks, egress, "
        f"tier fee or taxes; prices from {est.source})"
    )
    return out + proof


def output(est: Estimate) -> dict[str, Any]:
    """The estimatedCost stack output: the figures as numbers."""
    return {
        "currency": est.currency,
        "source": est.source,
        "complete": est.complete,
        "leastHourly": round(est.least_hourly, 4),
        "mostHourly": round(est.most_hourly, 4),
        "expectedMostHourly": round(est.expected_most_hourly, 4),
        "mostMonthly": round(est.most_monthly, 2),
        "pools": {
            p.node.name: {
                "vmSize": p.node.vm_size,
                "spot": p.node.spot,
                "hourlyPerNode": p.price.hourly,
                "ceilingPerNode": p.ceiling,
                "leastNodes": p.node.least_nodes,
                "mostNodes": p.node.most_nodes,
                "leastHourly": round(p.least_hourly, 4),
                "mostHourly": round(p.most_hourly, 4),
                "mostMonthly": round(p.most_hourly * HOURS_PER_MONTH, 2),
            }
            for p in est.pools
        },
        "unpriced": [f"{n.key} {n.vm_size}" for n in est.unpriced],
        "missing": est.missing,
    }


def load(billed: Billed, region: str, reader: AzureReader) -> tuple[Estimate, str | None]:
    """The estimate, and a warning when its prices are the shipped snapshot's because the API
    could not be read. A saved list when given; otherwise what the reader reads; where it reads
    nothing (the offline render) or cannot be read, the shipped snapshot (prices.snapshot), its
    date in the source every line says."""
    sizes = [n.vm_size for n in nodes(billed)] + [n.vm_size for n, _ in proof_nodes(billed)]
    if not sizes:  # only pools the stack uses as they are, and no proof that scales one: nothing to price
        return estimate(billed, [], region, "no price list (the stack declares no pool of its own)"), None
    if billed.prices_file:
        path = Path(billed.prices_file)
        saved = prices.from_file(path)
        when = f", saved {saved.saved_at}" if saved.saved_at else ""
        return estimate(billed, saved.items, region, f"file {path.name}{when}"), None
    try:
        return estimate(billed, reader.prices(region, sizes, billed.cost.currency), region, "the Azure Retail Prices API"), None
    except NotRead:  # the offline render: the shipped snapshot, as `make render`'s note says
        return from_snapshot(billed, region), None
    except read_errors() as error:  # a preview or deployment that cannot reach the API: said, never silent
        est = from_snapshot(billed, region)
        return est, f"cost: the Retail Prices API could not be read ({error_line(error)}); priced from {est.source}"


def from_snapshot(billed: Billed, region: str) -> Estimate:
    snap = prices.snapshot()
    source = f"the shipped snapshot {prices.SNAPSHOT_SHOWN}, prices of {snap.date}, which `make prices` refreshes"
    return estimate(billed, snap.listed.items, region, source, snap.date)


def _unpriced(est: Estimate, node: Node, region: str) -> str:
    if est.snapshot_date is None:
        return f"cost: no {est.source} price in {est.currency} for {node.key}.vmSize {node.vm_size} in {region}; it is not counted"
    return (
        f"cost: the shipped price snapshot (prices of {est.snapshot_date}) has no {est.currency} price for {node.key}.vmSize "
        f"{node.vm_size} in {region}; it is not counted (what it lacks: docs/design/cost.md; set {NAMESPACE}:preflight.pricesFile "
        "to a saved list, or run `make prices` where prices.azure.com is reachable)"
    )


def resource_groups_says(named: Sequence[str]) -> str:
    """What a budget over a created cluster's resource groups watches, in words (the plan says it; components/cost/budget.py declares it)."""
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


def budget_lines(settings: CostConfig, est: Estimate | None, name: str, watched: str) -> tuple[str, list[str]]:
    """cost.budget, as the preview says it: its amount in cost.currency (Azure counts a budget
    in the billing account's currency, which cost.currency should be), what it watches, and
    how it stands against the stack's least and most per month. The budget's forecast alert
    (100% of forecast cost, components/cost/budget.py) goes off once the month's
    forecast passes it: at once, if even the stack's least does. Returns the line and the
    warnings."""
    budget = settings.budget
    assert budget is not None
    amount, currency = budget.amount, settings.currency
    line = f"cost: budget {name}: {money(amount, currency)} a month over {watched}"
    if est is None:
        return line + " (not compared with the stack's cost: no prices)", []
    least, most = est.least_hourly * HOURS_PER_MONTH, est.most_monthly
    short = "" if est.complete else " (an INCOMPLETE estimate)"
    if amount < least:
        warning = (
            f"{NAMESPACE}:cost.budget.amount = {money(amount, currency)} is below the stack's least cost per month{short}, "
            f"{money(least, currency)} (every pool at its fewest nodes for {HOURS_PER_MONTH} h): its forecast alert goes off "
            "at once, and its actual-cost alerts every month; raise it, or lower the pools' nodeCount or minCount"
        )
        return line + f"; below the stack's least per month, {money(least, currency)}", [warning]
    if amount < most:
        return line + f"; below the stack's most per month{short}, {money(most, currency)}: it cannot cover the worst case", []
    return line + f"; covers the stack's most per month{short}, {money(most, currency)}", []


def unchecked(settings: CostConfig, why: str, dry_run: bool) -> str:
    """cost.maxHourly that could not be checked: a deployment stops (the limit fails closed)
    unless cost.withoutPrices says deploy. Raises CostError in a deployment that stops;
    returns the warning a preview (or a deployment that goes on) prints."""
    limit = f"{NAMESPACE}:cost.maxHourly = {money(settings.max_hourly or 0, settings.currency)}"
    if settings.without_prices == "deploy":
        return f"{limit} could not be checked ({why}): a deployment goes on without it ({NAMESPACE}:cost.withoutPrices = deploy)"
    message = (
        f"{limit} could not be checked ({why}): a limit that cannot be checked stops a deployment; give the runner a route "
        f"to prices.azure.com or set {NAMESPACE}:preflight.pricesFile, or set {NAMESPACE}:cost.withoutPrices to deploy to go on without it"
    )
    if not dry_run:
        raise CostError(message + " (nothing was created)")
    return f"{message} ({STOPS})"


def group_lines(groups: Sequence[tuple[str, Sequence[str]]], est: Estimate | None) -> list[str]:
    """One line per capacity group (its key, its kept pools first choice first): each size at
    the most Azure may bill a node per hour, and the priciest, which the cost ceiling counts at
    its maxCount with every other size (each pool is counted at its own: `nodes`)."""
    priced = {p.node.name: p for p in est.pools} if est is not None else {}
    out = []
    for key, names in groups:
        each = {name: priced[name] for name in names if name in priced}
        sizes = ", then ".join(
            f"{name} ({p.node.vm_size}{' Spot' if p.node.spot else ''}, {money(_node_ceiling(p), p.price.currency)} per node-hour)"
            if (p := each.get(name))
            else f"{name} (no price)"
            for name in names
        )
        priciest = max(each.values(), key=_node_ceiling, default=None)
        most = f"the priciest {priciest.node.vm_size} ({priciest.node.name})" if priciest else "the priciest not known (no prices)"
        out.append(f"{key}: serves from {sizes}; the cost ceiling counts every size at its maxCount, {most}")
    return out


def _node_ceiling(p: PoolCost) -> float:
    """The most a node of the pool is counted per hour: its ceiling, or today's price where that is unknown."""
    return p.ceiling if p.ceiling is not None else p.price.hourly


def used_pool_lines(pools: Pools, job_enabled: bool) -> list[str]:
    """A pool the stack uses as it is (`existing: use`) is its owner's to pay for; the proof
    Job still asks it for a GPU node, which its autoscaler may add from zero."""
    out = []
    for p in pools.pools:
        if p.owned:
            continue
        if not job_enabled:
            job = "this stack runs nothing that asks it for a node"
        elif p.can_scale_to_zero:
            job = f"the proof Job asks it for one GPU node, which its autoscaler adds from zero (0-{p.max_count}) and removes once idle"
        else:
            job = "the proof Job runs on one of its nodes"
        out.append(f"cost: {pools.key(p)} {p.vm_size}: the owner's pool (existing: use), billed to them and not counted here; {job}")
    return out


def run(billed: Billed, region: str | None, reader: AzureReader, *, dry_run: bool) -> tuple[Estimate | None, list[str], list[str]]:
    """The estimate, the lines to print, and the warnings. Raises CostError when a deployment
    would cost more per hour than cost.maxHourly, or when the limit cannot be checked and
    cost.withoutPrices is stop. `region` is the cluster's (preflight's Checked.region): None
    when an existing cluster's could not be read."""
    limit = billed.cost.max_hourly
    used = used_pool_lines(billed.pools, billed.job_enabled)
    if region is None:
        note = "cost: not estimated: the existing cluster's region is not known (it was not read: see preflight)"
        return None, used, [note] + ([unchecked(billed.cost, "no prices; docs/preflight.md", dry_run)] if limit is not None else [])
    est, fell_back = load(billed, region, reader)
    warnings = [fell_back] if fell_back else []
    lacking = [_unpriced(est, n, region) for n in est.unpriced]
    # Offline, what the snapshot lacks is the snapshot's gap, not the stack's: the preview reads
    # the API. Said beside the figures, as a preview's own gaps are warned.
    offline_gaps = est.snapshot_date is not None and not fell_back
    warnings += [] if offline_gaps else lacking
    warnings += [
        f"cost: {p.node.key}.spotMaxPrice = {p.node.spot_max_price:g} USD is below today's Spot price of {p.node.vm_size} in "
        f"{region} ({money(p.price.hourly, p.price.currency)}): Azure deploys no Spot VM whose max price is below the current "
        "price and evicts running ones, so the pool gets no node (and its Job none) until the price falls; raise it, or set -1 "
        "to pay up to the pay-as-you-go price"
        for p in est.pools
        if p.capped_below_today
    ]
    if limit is not None and est.snapshot_date and (fell_back or not dry_run):
        # The snapshot is not today's price list: where the API could not be read, and in any
        # deployment, the limit fails closed as without prices. The offline render (a preview
        # that reads nothing) holds it against the snapshot: the deployment reads the API.
        why = f"the Retail Prices API was not read, and the shipped snapshot of {est.snapshot_date} is not today's list; docs/preflight.md"
        warnings.append(unchecked(billed.cost, why, dry_run))
    elif limit is not None and est.most_hourly > limit:
        message = (
            f"{NAMESPACE}:cost.maxHourly = {money(limit, est.currency)}: the stack may cost up to {money(est.most_hourly, est.currency)} "
            f"per hour at its pools' largest sizes, above the limit; lower a pool's maxCount or nodeCount, pick a smaller size, or raise the limit"
        )
        if not dry_run:
            raise CostError(message + " (nothing was created)")
        warnings.append(f"{message} ({STOPS})")
    elif limit is not None and not est.complete:
        warnings.append(unchecked(billed.cost, f"the total leaves out {'; '.join(est.missing)}", dry_run))
    return est, used + lines(est) + (lacking if offline_gaps else []), warnings
