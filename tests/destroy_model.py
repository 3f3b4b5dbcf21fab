"""`pulumi destroy`, played on the graph a run recorded: the engine's delete schedule, which
deletes reach a provider, and what a refused delete leaves in the state and in Azure.

Modelled on pulumi/pulumi at 1b594989 (the functions named beside each rule):
  - pkg/resource/deploy/step_generator.go ScheduleDeletes: again and again, every condemned
    resource none of whose dependencies is still condemned forms a round; the rounds,
    reversed, are the antichains, each run in parallel, one after another
    (deployment_executor.go performPostSteps: `ExecuteParallel(antichain)`, `tok.Wait`).
  - pkg/resource/graph/dependency_graph.go DependenciesOf: a resource's dependencies are its
    parent, its provider, and what pkg/resource/state.go GetAllDependencies lists
    (`dependencies`, property dependencies, `deletedWith`); a component among them brings
    its children registered before the resource.
  - pkg/resource/deploy/step.go DeleteStep.Apply: no Delete is sent for a `retainOnDelete`
    resource, nor for one whose `deletedWith` is condemned too (`isDeletedWith`), nor for a
    component; each such step succeeds at once. pkg/backend/snapshot.go
    deleteSnapshotMutation.End: a step that succeeded drops its resource from the state
    (`markDone`), whether or not a Delete was sent.
  - pkg/resource/deploy/step_executor.go cancelDueToError: a refused delete cancels the run
    (`se.cancel()`); no later antichain starts (ExecuteSerial selects `se.ctx.Done()`), and a
    step of the same antichain that a worker has not begun is not begun (executeChain checks
    the context before each step). Which of those began is a race, so the model takes the
    outcome a GPU pool must survive: every step that sends no Delete (done at once) ran, and
    none that waits for Azure did. With `--continue-on-error` the run goes on, and each later
    antichain leaves out what the refused resource depends on (deployment_executor.go
    performPostSteps: `TransitiveDependenciesOf`, `erroredDeps`).

Azure's side: a GPU pool is gone once its own Delete was sent, or its cluster's, or the
resource group's (AKS deletes a cluster's pools with it, ARM a group's resources).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CLUSTER = "azure-native:containerservice:ManagedCluster"
GROUP = "azure-native:resources:ResourceGroup"
POOLS = ("azure-native:containerservice:AgentPool", "pulumi-python:dynamic/aksgpu:ManagedGpuPool")


@dataclass(frozen=True)
class Node:
    urn: str
    type: str
    custom: bool
    parent: str
    edges: frozenset[str]  # what GetAllDependencies lists, the parent aside, and the provider
    deleted_with: str
    retain: bool


def nodes(run: Any) -> list[Node]:
    """The resources of `run` in the order they were registered (the state's order), and the
    Stack that parents the top-level ones (the mock engine does not record it)."""
    stacks = {r.parent for r in run.resources if "pulumi:pulumi:Stack::" in r.parent}
    found = [Node(s, "pulumi:pulumi:Stack", False, "", frozenset(), "", False) for s in sorted(stacks)]
    for r in run.resources:
        edges = {*r.dependencies, *(u for deps in r.property_dependencies.values() for u in deps)}
        deleted_with = r.options.get("deletedWith", "")
        edges |= {deleted_with, r.provider} - {""}
        found.append(Node(r.urn, r.type, r.custom, r.parent, frozenset(edges), deleted_with, r.options["retainOnDelete"]))
    return found


def dependencies_of(graph: Sequence[Node]) -> dict[str, set[str]]:
    """DependenciesOf for each resource: its edges and its parent, and the children registered
    before it of a component among its edges (not of its parent: dependency_graph.go adds the
    parent alone)."""
    index = {n.urn: i for i, n in enumerate(graph)}
    children: dict[str, list[str]] = {}
    for n in graph:
        children.setdefault(n.parent, []).append(n.urn)

    def descendants(urn: str) -> set[str]:
        found = set(children.get(urn, []))
        for child in children.get(urn, []):
            found |= descendants(child)
        return found

    depends: dict[str, set[str]] = {}
    for n in graph:
        deps = {u for u in n.edges if u in index}
        for u in [u for u in deps if not graph[index[u]].custom]:
            deps |= {c for c in descendants(u) if index[c] < index[n.urn]}
        deps |= {n.parent} if n.parent in index else set()
        depends[n.urn] = deps
    return depends


def schedule(graph: Sequence[Node]) -> list[set[str]]:
    """ScheduleDeletes for a destroy: every resource is condemned."""
    depends = dependencies_of(graph)
    left, rounds = {n.urn for n in graph}, []
    while left:
        free = {urn for urn in left if not depends[urn] & left}
        rounds.append(free)
        left -= free
    return rounds[::-1]


def sends_delete(node: Node, condemned: set[str]) -> bool:
    """DeleteStep.Apply: does this step ask a provider that may refuse? A provider resource's
    Delete is the engine's own, which only forgets it (pkg/resource/deploy/providers/registry.go
    Delete), so it is done at once too."""
    provider = node.type.startswith("pulumi:providers:")
    return node.custom and not provider and not node.retain and node.deleted_with not in condemned


def transitive_dependencies(urn: str, depends: dict[str, set[str]]) -> set[str]:
    found: set[str] = set()
    todo = [urn]
    while todo:
        for dep in depends[todo.pop()] - found:
            found.add(dep)
            todo.append(dep)
    return found


@dataclass(frozen=True)
class Outcome:
    #: What the state still holds once the destroy stops.
    in_state: set[str]
    #: Which Delete calls were sent, and succeeded (the refused one aside).
    deleted: set[str]


def refused_destroy(graph: Sequence[Node], refused: str, continue_on_error: bool = False) -> Outcome:
    """A destroy whose one refusal is `refused`'s Delete (module docstring: what runs)."""
    by_urn = {n.urn: n for n in graph}
    condemned = set(by_urn)
    depends = dependencies_of(graph)
    chains = schedule(graph)
    at = next(i for i, chain in enumerate(chains) if refused in chain)
    ran: set[str] = set().union(*chains[:at])
    if continue_on_error:
        spared = transitive_dependencies(refused, depends)
        ran |= (chains[at] - {refused}) | {u for chain in chains[at + 1 :] for u in chain if u not in spared}
    else:
        ran |= {u for u in chains[at] - {refused} if not sends_delete(by_urn[u], condemned)}
    deleted = {u for u in ran if sends_delete(by_urn[u], condemned)}
    return Outcome(in_state=condemned - ran, deleted=deleted)


def container(node: Node, graph: Sequence[Node], types: Sequence[str]) -> str | None:
    """The resource of one of `types` that `node` depends on directly: where it lives in Azure."""
    of_type = {n.urn for n in graph if n.type in types}
    found = sorted(node.edges & of_type)
    return found[0] if found else None


def alive_in_azure(node: Node, graph: Sequence[Node], outcome: Outcome) -> bool:
    """Is `node` still there: not deleted, nor its cluster, nor the cluster's group?"""
    by_urn = {n.urn: n for n in graph}
    cluster = container(node, graph, [CLUSTER])
    group = container(by_urn[cluster], graph, [GROUP]) if cluster else None
    return not outcome.deleted & ({node.urn, cluster, group} - {None})


def azure_deletes_after_the_pools(graph: Sequence[Node]) -> list[str]:
    """The deletes Azure may refuse that no GPU pool depends on: every ARM resource's but a
    pool's (the budget, the deployer's grant, the cluster, its group). A Kubernetes object's
    delete is the API server's, and a Job's must come before its pool's."""
    condemned = {n.urn for n in graph}
    return [n.urn for n in graph if n.type.startswith("azure-native:") and n.type not in POOLS and sends_delete(n, condemned)]


def billing_pools(graph: Sequence[Node], outcome: Outcome) -> list[str]:
    """The stack's GPU pools Azure still runs once the destroy stops, in the state or not; one
    the stack gives back (`retainOnDelete`: adopted) is the owner's, and left out."""
    return sorted(n.urn for n in graph if n.type in POOLS and not n.retain and alive_in_azure(n, graph, outcome))


def stranded_pools(graph: Sequence[Node], outcome: Outcome) -> list[str]:
    """The stack's GPU pools that Azure still runs and the state no longer holds. A pool the
    stack gives back (`retainOnDelete`: adopted) is the owner's, and left out on purpose."""
    return sorted(
        n.urn for n in graph if n.type in POOLS and not n.retain and n.urn not in outcome.in_state and alive_in_azure(n, graph, outcome)
    )
