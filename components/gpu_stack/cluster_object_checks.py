"""What an existing cluster already runs in Kubernetes means for this stack, read before anything
is registered (cluster_objects.py reads the list): a namespace this stack creates that is there
already, another device plugin on the stack's nodes, and the guide's objects that
`devicePlugin.adopt` takes over. Why each blocks, how the stack knows its own objects, and the
sources: docs/existing-cluster.md, "What the cluster runs in Kubernetes"."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.catalog import gpu_sizes
from components.cluster.cluster_facts import ClusterFacts
from components.config.values import NAMESPACE
from components.errors import PreflightError, cut, error_line
from components.gpu_stack.cluster_objects import (
    GUIDE_DAEMONSET,
    GUIDE_SELECTOR,
    STACK_ANNOTATION,
    DaemonSet,
    Landing,
    Malformed,
    PoolNodes,
    Seen,
    lands,
    parse,
    pool_labels,
)
from components.gpu_stack.settings import DevicePluginConfig
from components.gpu_stack.used_pool_gpus import UsedPoolGpus, resources, strategy_of
from components.ownership import ownership, stack_state
from components.ownership.stack_state import NOT_READ, StackState
from components.pools import pool_fields
from components.pools.settings import SPOT_TAINT, Pools, pool_taints
from components.problem import Problem
from components.seam.reader import AzureReader, NotRead, read_errors

UNCHECKED = (
    "kubernetes: nothing the cluster runs was checked (namespaces this stack would create, another device plugin or the "
    "GPU Operator on the stack's GPU pools)"
)
ADOPT = f"{NAMESPACE}:devicePlugin.adopt"


@dataclass(frozen=True)
class StackObjects:
    """What this stack puts in the cluster: the GPU pools, the device plugin's settings, the GPU
    Operator's namespace, and the proof Job's (None: mnistJob.enabled is false)."""

    pools: Pools
    device_plugin: DevicePluginConfig
    operator_namespace: str
    job_namespace: str | None
    #: Whether the run declares the GPU stack (False: a run of other parts, components/plan.py
    #: Part), which alone guards, or releases, the device plugin the stack adopted.
    gpu_stack: bool


@dataclass(frozen=True)
class Adoption:
    """What the adopting run imports, by Pulumi's import IDs (pulumi-kubernetes' resource ID is
    `<namespace>/<name>`, or `<name>` for a cluster-scoped object: provider/pkg/provider/util.go parseFqName)."""

    namespace: str
    daemon_set: str
    #: Both as read, for what the adopting `up` changes; empty when the cluster was not read.
    live_namespace: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    live_daemon_set: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: Not one the stack's state holds already: a DaemonSet whose import failed after its
    #: namespace's is imported on the next run.
    import_namespace: bool = True
    import_daemon_set: bool = True


@dataclass(frozen=True)
class Findings:
    #: The list was read (False: one warning says nothing was checked).
    read: bool
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    adoption: Adoption | None = None
    #: Pools used as they are that a device plugin of the cluster's serves already: the stack puts none there.
    served: frozenset[str] = frozenset()
    gpus: UsedPoolGpus = field(default_factory=UsedPoolGpus)


def read(reader: AzureReader, kubeconfig: str) -> tuple[Seen | None, str | None]:
    """The cluster's namespaces and DaemonSets, or why they could not be read."""
    try:
        return parse(reader.kubernetes_objects(kubeconfig)), None
    except NotRead as why:
        return None, f"{UNCHECKED}: {why}"
    except Malformed as why:
        return None, f"{UNCHECKED}: the cluster answered something else than a list ({why})"
    except read_errors() as error:  # the cluster not read: nothing was checked
        return None, f"{UNCHECKED}: {error_line(error)}"


def stack_pools(stack: Pools, found: ClusterFacts, installs: bool, on_used: bool) -> list[PoolNodes]:
    """Every pool of the cluster as a DaemonSet's scheduling sees it: this stack's, with the taints
    it gives a new pool (pools/settings.py pool_taints), and the others as Azure describes them.
    `installs`: whether the stack puts the GPU stack on its pools (False: a run without it);
    `on_used`: on the pools it uses as they are too (the GPU Operator where one has no driver)."""
    azure = {p.name: p for p in found.pools}
    pools = []
    for pool in stack.pools:
        there = azure.get(pool.name)
        # A pool Azure describes has its taints, none included (`nodeTaints` null); the stack's own only on one it will create.
        taints = tuple(there.node_taints or ()) if there else tuple(pool_taints(pool))
        managed = bool(there and pool_fields.management(there) == "aks-managed")
        # A pool used as it is gets only a device plugin from the stack, and only where none serves it.
        plugin = (
            pool.mode if installs and (pool.owned or pool.mode == "device-plugin" or (on_used and pool.mode == "gpu-operator")) else None
        )
        labels = pool_labels(pool.name, there.node_labels if there else None)
        pools.append(PoolNodes(pool.name, labels, taints, True, plugin, managed and pool.mode != "aks-managed", pool.existing == "use"))
    for other in (p for p in found.pools if p.name not in {s.name for s in stack.pools}):
        gpu, managed = gpu_sizes.is_gpu_family(other.vm_size or ""), pool_fields.management(other) == "aks-managed"
        pools.append(PoolNodes(other.name, pool_labels(other.name, other.node_labels), other.taints, gpu, None, managed))
    return pools


def check(
    objects: StackObjects,
    reader: AzureReader,
    kubeconfig: str,
    pools: Sequence[PoolNodes],
    owner: str,
    dry_run: bool,
    found: ClusterFacts | None = None,
    state: StackState = NOT_READ,
) -> Findings:
    """What the cluster runs means for this stack; `owner` is `<project>/<stack>`, `found` the
    cluster's description, `state` what the stack's state holds (the stack's whatever its
    annotations say).
    Raises PreflightError where devicePlugin.adopt cannot be done."""
    seen, unread = read(reader, kubeconfig)
    declares_plugin = any(p.stack_plugin == "device-plugin" for p in pools)
    # What this stack adopted, as the config names it now: guarded by its state even where the cluster was not read.
    warnings = ownership.check_objects(objects.device_plugin, seen, owner, declares_plugin, state) if objects.gpu_stack else []
    if seen is None:
        return _assumed(objects.device_plugin, unread or UNCHECKED, warnings, dry_run, state)
    mine = Mine(seen, owner, state)
    adoption, lines = adopt(objects.device_plugin, seen, mine)
    taken = adoption.daemon_set if adoption else None
    # What the cluster runs that this stack neither owns nor takes over.
    theirs = [d for d in seen.daemon_sets if not mine.daemon_set(d) and f"{d.namespace}/{d.name}" != taken]
    served = served_already(theirs, pools)
    lines += [
        f"kubernetes: {pool} is used as it is, and {where} serves its GPUs already: this stack adds no device plugin there"
        for pool, where in served.items()
    ]
    pools = [dataclasses.replace(p, stack_plugin=None) if p.name in served else p for p in pools]
    beside = beside_the_stacks(objects.device_plugin, theirs, pools, mine)
    problems = namespaces_there(objects, seen, mine, adoption, pools) + other_plugins(theirs, pools, beside) + list(beside.values())
    guide = next((d for d in seen.daemon_sets if f"{d.namespace}/{d.name}" == taken), None)
    # The GPU pools the guide's DaemonSet serves that the stack's, pinned to its own pools, would not.
    if guide and (lost := [p.name for p in pools if p.gpu and not p.stack_plugin and not p.aks_plugin and lands(guide, p).answer != "no"]):
        problems.append(
            Problem(
                f"{ADOPT}: the guide's DaemonSet serves GPU pool(s) {', '.join(lost)} too, and this stack's runs only on its own "
                "pools: they would lose their device plugin; add them to the stack, or leave adopt off"
            )
        )
    gpus = UsedPoolGpus()
    if found is not None:
        gpus = resources(objects.pools, objects.job_namespace is not None, found, seen, pools, mine.daemon_set, objects.gpu_stack)
    return Findings(True, problems + gpus.problems, warnings + gpus.warnings, lines + gpus.lines, adoption, frozenset(served), gpus)


def _assumed(plugin: DevicePluginConfig, unread: str, warnings: list[str], dry_run: bool, state: StackState) -> Findings:
    """The cluster not read: a preview of devicePlugin.adopt assumes the guide's DaemonSet, a deployment stops."""
    held = (state.holds(*stack_state.PLUGIN_NAMESPACE), state.holds(*stack_state.PLUGIN_DAEMON_SET))
    if not plugin.adopt or all(held):  # both held: nothing to take over
        return Findings(False, warnings=[unread, *warnings])
    if not dry_run:
        raise PreflightError(
            f"preflight: {ADOPT} = true, but what the cluster runs could not be read, so what to take over is not known "
            f"({unread.removeprefix(UNCHECKED + ': ')}); nothing was created"
        )
    name = plugin.namespace
    adoption = Adoption(name, f"{name}/{GUIDE_DAEMONSET}", import_namespace=not held[0], import_daemon_set=not held[1])
    line = (
        f"{ADOPT}: assumed the cluster runs the guide's DaemonSet {adoption.daemon_set}, to take over; what the adopting "
        "`up` changes in it is not known (save `kubectl get` as preflight.kubernetesFile to see it field by field)"
    )
    return Findings(False, warnings=[unread, *warnings], lines=[line], adoption=adoption)


@dataclass(frozen=True)
class Mine:
    """Which of what the cluster runs is this stack's: what its state holds (`<namespace>/<name>`),
    whatever the annotations say; once the state is read, a DaemonSet only if it holds it, so
    another device plugin in the stack's namespace is not taken for the stack's own."""

    seen: Seen
    owner: str
    state: StackState = NOT_READ

    def namespace(self, name: str) -> bool:
        found = self.seen.namespaces.get(name)
        held = name in self.state.kubernetes_ids(stack_state.NAMESPACE)
        return found is not None and (held or found.annotations.get(STACK_ANNOTATION) == self.owner)

    def daemon_set(self, found: DaemonSet) -> bool:
        if f"{found.namespace}/{found.name}" in self.state.kubernetes_ids(stack_state.DAEMON_SET):
            return True
        marked = found.annotations.get(STACK_ANNOTATION) == self.owner
        if found.gpu_operator:  # the operands of the stack's GPU Operator, in its namespace
            return marked or self.namespace(found.namespace)
        if found.device_plugin:
            # Not known: the stack's own carries the stack's mark and the name the stack gives it
            # (device_plugin_spec.py DAEMONSET_NAME, daemon_set_annotations); any other device plugin
            # is someone else's, in the stack's namespace too (beside_the_stacks).
            return not self.state.known and marked and found.name == GUIDE_DAEMONSET
        return not self.state.known and (marked or (found.name == GUIDE_DAEMONSET and self.namespace(found.namespace)))


def _foreign_plugins(daemon_sets: Sequence[DaemonSet], pools: Sequence[PoolNodes]) -> Iterator[tuple[PoolNodes, DaemonSet, Landing]]:
    """Each pool used as it is where the stack would put its device plugin, with each NVIDIA
    device plugin of `daemon_sets` (not the GPU Operator's), and whether it lands there."""
    for pool in (p for p in pools if p.used and p.stack_plugin == "device-plugin"):
        for found in (d for d in daemon_sets if d.device_plugin and not d.gpu_operator):
            yield pool, found, lands(found, pool)


def served_already(theirs: Sequence[DaemonSet], pools: Sequence[PoolNodes]) -> dict[str, str]:
    """The used pools (`existing: use`) where a device plugin of `theirs` lands for certain, and what
    serves each: the stack leaves them to it (issue #38). One that only may land there is a problem,
    said by other_plugins."""
    served: dict[str, str] = {}
    for pool, found, landing in _foreign_plugins(theirs, pools):
        if landing.answer == "yes":
            served.setdefault(pool.name, found.where)
    return served


def namespaces_there(objects: StackObjects, seen: Seen, mine: Mine, adoption: Adoption | None, pools: Sequence[PoolNodes]) -> list[Problem]:
    """The namespaces this run creates (a workload's only where the stack installs it) that are there already."""
    installs = {p.stack_plugin for p in pools}
    keys = {objects.job_namespace: "mnistJob.namespace"} if objects.job_namespace is not None else {}
    if "gpu-operator" in installs:
        keys[objects.operator_namespace] = "gpuOperator.namespace"
    if "device-plugin" in installs:
        keys[objects.device_plugin.namespace] = "devicePlugin.namespace"
    problems = []
    for name, key in keys.items():
        if name not in seen.namespaces or mine.namespace(name) or (adoption and adoption.namespace == name):
            continue
        inside = [d for d in seen.daemon_sets if d.namespace == name]
        holds = f" (it runs {', '.join(d.where for d in inside)})" if inside else ""
        plugin = key == "devicePlugin.namespace"
        guide = plugin and any(d.name == GUIDE_DAEMONSET and d.device_plugin for d in inside)
        problems.append(
            Problem(
                f"kubernetes: namespace {name} is in the cluster already{holds}, and this stack would create it ({NAMESPACE}:{key}): "
                "`pulumi up` would stop at it (AlreadyExists) and `pulumi destroy` would delete it; pick another name with "
                f"{NAMESPACE}:{key}, or delete it (`kubectl delete namespace {name}`) if nothing in it is needed"
                + (f", or take over the guide's device plugin there with {ADOPT}: true" if guide else "")
                + (_why_not_served(inside, pools) if plugin else "")
            )
        )
    return problems


def _why_not_served(inside: Sequence[DaemonSet], pools: Sequence[PoolNodes]) -> str:
    """Why the stack would put its own plugin beside the namespace's: a used pool whose nodes that
    plugin never lands on, and what to do."""
    for pool, found, landing in _foreign_plugins(inside, pools):
        if landing.answer != "no":
            continue
        why = f"; that is because {found.where} serves no node of {pool.name}: {cut(landing.why)}"
        untolerated = landing.why.removeprefix("it does not tolerate ")
        if untolerated == landing.why:
            return f"{why}; change it to land there, and this stack leaves {pool.name} to it"
        spot = " (AKS's taint on Spot nodes)" if untolerated == SPOT_TAINT else ""
        return (
            f"{why}{spot}; add that toleration to it, and this stack leaves {pool.name} to it, or take it over with {ADOPT}: "
            f"true, and the stack's spec tolerates {pool.name}'s taints"
        )
    return ""


def beside_the_stacks(
    plugin: DevicePluginConfig, theirs: Sequence[DaemonSet], pools: Sequence[PoolNodes], mine: Mine
) -> dict[str, Problem]:
    """NVIDIA device plugins of `theirs` in the stack's own namespace (its or taken over), where it
    declares its plugin, by where each is: the state does not hold them (or is not known, and they lack the stack's mark),
    so the stack would run its plugin beside theirs, on the same nodes where theirs lands there.
    The way out: adopt the guide's, remove it, or let it serve the pools used as they are."""
    stack_pools = [p for p in pools if p.stack_plugin == "device-plugin"]
    # A namespace of someone else's that the stack would create is refused by itself (namespaces_there).
    if not stack_pools or not (mine.namespace(plugin.namespace) or plugin.adopt):
        return {}
    beside = {}
    for found in (d for d in theirs if d.namespace == plugin.namespace and d.device_plugin and not d.gpu_operator):
        hits = [
            p.name + (" (maybe)" if landing.answer == "maybe" else "") for p in stack_pools if (landing := lands(found, p)).answer != "no"
        ]
        pools_named = ", ".join(p.name for p in stack_pools)
        if found.name == GUIDE_DAEMONSET:  # the name the stack gives its own (device_plugin_spec.py DAEMONSET_NAME)
            action = f"declare its own plugin for {pools_named} under that very name, and `pulumi up` would stop at it (AlreadyExists)"
        else:
            there = (
                f"on nodes of {', '.join(hits)} too: two device plugins on one node" if hits else "beside it (it lands on none of them now)"
            )
            action = f"put its plugin on {pools_named} {there}"
        if mine.state.known:
            whose = "the stack's state does not hold it, so it is not the stack's"
        elif found.annotations.get(STACK_ANNOTATION) == mine.owner:
            whose = (
                f"it carries the stack's mark ({STACK_ANNOTATION} = {mine.owner}) but not the name of the stack's own ({GUIDE_DAEMONSET})"
            )
        else:
            whose = (
                f"whether it is the stack's cannot be told (it lacks the stack's mark, {STACK_ANNOTATION} = {mine.owner}, and what the "
                f"stack's state holds is not known: {mine.state.why}; `{stack_state.EXPORT}` lists "
                f"{found.namespace}/{found.name} if it is the stack's own)"
            )
        adopt = f"take it over with {ADOPT}: true, " if found.name == GUIDE_DAEMONSET and not plugin.adopt else ""
        beside[found.where] = Problem(
            f"kubernetes: {found.where} runs NVIDIA's device plugin ({found.images[0]}) in this stack's own namespace "
            f"({NAMESPACE}:devicePlugin.namespace = {plugin.namespace}), and {whose}: this stack would {action}; {adopt}remove it (`kubectl delete daemonset --namespace "
            f"{found.namespace} {found.name}`), or let it serve: a pool used as it is (existing: use) where it lands gets no plugin "
            "from this stack",
            always=True,
        )
    return beside


def other_plugins(theirs: Sequence[DaemonSet], pools: Sequence[PoolNodes], said: Mapping[str, Problem] | None = None) -> list[Problem]:
    """Something of `theirs` that serves nvidia.com/gpu where this stack puts a device plugin;
    `said`: those already named, by where each is (beside_the_stacks)."""
    served = [p for p in pools if p.stack_plugin]
    problems = []
    for found in (d for d in theirs if (d.device_plugin or d.gpu_operator) and d.where not in (said or {})):
        if found.gpu_operator and served:
            # It deploys its operands on every node with an NVIDIA GPU (NVIDIA GPU Operator docs,
            # getting-started), as its ClusterPolicy says, which the stack does not read.
            problems.append(
                Problem(
                    f"kubernetes: the GPU Operator runs in the cluster ({found.where}), and it puts its driver and device plugin on "
                    f"every NVIDIA GPU node its ClusterPolicy lets it: with this stack's on {', '.join(p.name for p in served)}, two "
                    "device plugins; remove it, or leave those GPUs to it",
                    always=True,
                )
            )
        landings = [] if found.gpu_operator else [(p, lands(found, p)) for p in served]
        hits = [
            p.name + (f" (maybe: {landing.why})" if landing.answer == "maybe" else "") for p, landing in landings if landing.answer != "no"
        ]
        if hits:
            problems.append(
                Problem(
                    f"kubernetes: {found.where} runs NVIDIA's device plugin ({found.images[0]}) on nodes of {', '.join(hits)}, "
                    "where this stack puts one too: two device plugins on one node; remove it, pin it to other pools, or "
                    + (f"take it over with {ADOPT}: true" if found.name == GUIDE_DAEMONSET else "leave those pools to it"),
                    always=True,
                )
            )
    problems += [
        Problem(
            f"kubernetes: pool {pool.name} runs AKS's own device plugin (gpuProfile.nvidia.managementMode Managed, a "
            f"systemd unit), and this stack would put its {pool.stack_plugin} there too: give it management aks-managed",
            always=True,
        )
        for pool in served
        if pool.aks_plugin
    ]
    return problems


def adopt(plugin: DevicePluginConfig, seen: Seen, mine: Mine) -> tuple[Adoption | None, list[str]]:
    """What devicePlugin.adopt takes over on this run, the namespace and the guide's DaemonSet each
    by itself: not what the state holds (not known: what carries the stack's own mark), so a
    DaemonSet whose import failed after its namespace's is imported again, not created (AlreadyExists)."""
    if not plugin.adopt:
        return None, []
    name = plugin.namespace
    found = next((d for d in seen.daemon_sets if d.namespace == name and d.name == GUIDE_DAEMONSET), None)
    where = f"DaemonSet {name}/{GUIDE_DAEMONSET}"
    namespace = seen.namespaces.get(name)
    held_namespace = mine.namespace(name) if (ns := mine.state.holds(*stack_state.PLUGIN_NAMESPACE)) is None else ns
    ds_marked = found is not None and found.annotations.get(STACK_ANNOTATION) == mine.owner
    held_daemon_set = ds_marked if (ds := mine.state.holds(*stack_state.PLUGIN_DAEMON_SET)) is None else ds
    # Another stack's mark, on what this run would import: theirs to adopt, as its pool is.
    theirs = [(f"namespace {name}", ownership.others_mark(namespace.annotations, mine.owner))] if namespace and not held_namespace else []
    theirs += [(where, ownership.others_mark(found.annotations, mine.owner))] if found and not held_daemon_set else []
    if other := next(((what, mark) for what, mark in theirs if mark), None):
        raise PreflightError(
            f"preflight: {ADOPT} = true, but {other[0]} belongs to another stack ({other[1]}): adopt it there, or pick another "
            "devicePlugin.namespace"
        )
    if held_namespace and (held_daemon_set or found is None):
        marked = namespace is not None and namespace.annotations.get(ownership.ADOPTED) == mine.owner
        return None, [
            f"{ADOPT}: namespace {name} and its device plugin are this stack's already; nothing is imported"
            + ("" if marked else f"; this `up` marks them adopted ({ownership.ADOPTED})")
        ]
    if refusal := _not_the_guides(name, where, found, seen):
        raise PreflightError(f"preflight: {ADOPT} = true, but {refusal}")
    assert found is not None  # _not_the_guides refuses a DaemonSet that is not there
    if not held_daemon_set and (refusal := _strategy_not_kept(where, strategy_of(found))):
        raise PreflightError(f"preflight: {ADOPT} = true, but {refusal}")
    live = namespace.item if namespace else {}
    adoption = Adoption(name, f"{name}/{GUIDE_DAEMONSET}", live, found.item, not held_namespace, not held_daemon_set)
    others = [d.where for d in seen.daemon_sets if d.namespace == name and d.name != GUIDE_DAEMONSET]
    taken = f"namespace {name} and {where}" if not held_namespace else f"{where} (namespace {name} is the stack's already)"
    line = f"{ADOPT}: this run takes over {taken} (Pulumi's import), and its spec replaces theirs; " + (
        "`pulumi destroy` releases both (Pulumi forgets them, the cluster keeps them)"
        if ownership.plugin_released(plugin)
        else "`pulumi destroy` deletes both (devicePlugin.onDestroy: delete)"
        + (f", and with the namespace {', '.join(others)}" if others else "")
    )
    return adoption, [line]


def _not_the_guides(name: str, where: str, found: DaemonSet | None, seen: Seen) -> str | None:
    if found is None:
        there = f"namespace {name} holds no {where}" if name in seen.namespaces else f"there is no namespace {name}"
        return f"{there} to take over; remove adopt, and the stack creates its own"
    if not found.device_plugin or found.gpu_operator:
        what = (
            "the GPU Operator's" if found.gpu_operator else f"not NVIDIA's device plugin (it runs {', '.join(found.images) or 'no image'})"
        )
        return f"{where} is {what}, not the guide's; remove adopt, or pick another devicePlugin.namespace"
    if dict(found.selector) != GUIDE_SELECTOR or found.selector_expressions:
        # "once a DaemonSet is created, its .spec.selector can not be mutated" (kubernetes/website
        # content/en/docs/concepts/workloads/controllers/daemonset.md; kubernetes#50808), and
        # pulumi-kubernetes replaces a DaemonSet whose selector changes (pulumi-kubernetes#1008),
        # which the engine refuses for an object it imports: the guide's matchLabels alone.
        selects = (
            dict(found.selector) if not found.selector_expressions else {"matchLabels": dict(found.selector), "matchExpressions": "..."}
        )
        return (
            f"{where} selects its pods by {str(selects)[:120]}, not the guide's matchLabels {GUIDE_SELECTOR} alone: a selector cannot "
            "change in place, and Pulumi refuses to replace an object it imports; remove adopt, or delete it and let the stack "
            "create its own"
        )
    return None


def _strategy_not_kept(where: str, strategy: str | None) -> str | None:
    """The owner's plugin runs a MIG strategy the stack's spec would not keep: "mixed" (the stack's
    runs "single" or none: device_plugin_spec.py MIG_ENV), or one from a config file this program
    does not read, which its spec would drop. NVIDIA's flags: NVIDIA/k8s-device-plugin
    cmd/nvidia-device-plugin/main.go at 01421a20 (mig-strategy, config-file)."""
    if strategy == "mixed":
        return (
            f"{where} runs MIG strategy mixed, and the stack's plugin runs single or none: adopting it would take away the "
            "nvidia.com/mig-<slices>g.<memory>gb resources the owner's pods ask for, which would stay Pending; leave adopt off "
            "and use the pools as they are (existing: use), which keeps their plugin, or set its MIG_STRATEGY to single first"
        )
    if strategy is None:
        return (
            f"{where} takes its MIG strategy from a config file or a ConfigMap (--config-file, CONFIG_FILE, or MIG_STRATEGY "
            "from valueFrom), which this program does not read and the stack's spec would drop; leave adopt off and use the "
            "pools as they are (existing: use), or give the plugin its strategy by MIG_STRATEGY first"
        )
    return None
