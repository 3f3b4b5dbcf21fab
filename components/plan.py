"""The plan: what a run will declare, and what it says first, as one frozen value.

`build_plan` reads Azure and the cluster through the reader it is handed, resolves the
config's existing pools from them, runs every check and the cost estimate, and collects
the messages a run prints, in order. It registers no resource and logs nothing, so a test
calls it as a plain function; __main__.py reports its messages and declares from it. A
problem that stops the run raises its one-line error here, before anything is registered.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from components.config import SYSTEM_POOL_NAME, StackConfig, groups
from components.config.values import POOL_NAME_PATTERN
from components.deciding import preflight
from components.deciding.azure import cluster_egress, cluster_facts, priority_expander
from components.deciding.azure.cluster_facts import ClusterFacts
from components.deciding.azure.kubeconfig import provider_kubeconfig
from components.deciding.cost import cost
from components.deciding.existing import (
    adoption,
    cluster_object_checks,
    cluster_objects,
    existing_cluster_checks,
    existing_pools,
    ownership,
    pool_network,
    pool_settings,
    priority_config_map,
    stack_state,
)
from components.deciding.existing.cluster_object_checks import Adoption, Findings
from components.deciding.existing.existing_pools import LivePool
from components.deciding.existing.pool_network import PoolNetwork
from components.deciding.proof import proof_fit
from components.deciding.workloads import device_plugin, tolerations
from components.deciding.workloads.device_plugin import DevicePluginInputs
from components.errors import PreflightError, error_line, escaped_lines
from components.reading import azure_facts, saved_state
from components.reading.reader import AzureReader, RunningPool, read_errors


class Mode(enum.Enum):
    """The run: `pulumi preview` warns where a deployment (`pulumi up`'s update) stops."""

    PREVIEW = "preview"
    DEPLOYMENT = "deployment"

    @property
    def preview(self) -> bool:
        return self is Mode.PREVIEW

    @classmethod
    def of(cls, dry_run: bool) -> Mode:
        return cls.PREVIEW if dry_run else cls.DEPLOYMENT


@dataclass(frozen=True)
class Message:
    """One line a run prints: a warning (`pulumi.log.warn`) or a line for the record (`info`)."""

    level: Literal["warn", "info"]
    text: str


class Said(list[Message]):
    """The messages of a run, in the order it says them."""

    def lines_then_warnings(self, lines: Iterable[str], warnings: Iterable[str]) -> None:
        """What a check returns as (lines, warnings): the lines first, as the run prints them."""
        self.info(lines)
        self.warn(warnings)

    def warn(self, lines: Iterable[str]) -> None:
        self.extend(Message("warn", escaped_lines(line)) for line in lines)

    def info(self, lines: Iterable[str]) -> None:
        self.extend(Message("info", escaped_lines(line)) for line in lines)


# The GPU stacks this program installs on the pools it serves (an aks-managed pool's is AKS's).
INSTALLERS = ("device-plugin", "gpu-operator")
GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class Decided:
    """What each step of __main__.py declares, as plain values: pool names, booleans, marks."""

    #: The guide's one pool (gpuPool), not a gpuPools map: its Job the guide's names, and the
    #: outputs of that one Job.
    guide_pool: bool
    #: A deployment waits until a created cluster lets the deployer in; a preview never does.
    waits_for_access: bool
    #: Each declared pool's version is moved by something else (an upgrade channel, or an
    #: existing cluster's owner), so `pulumi up` leaves it to Azure (pool_settings.pool_ignore_changes).
    version_moves: bool
    #: Each pool the stack declares (not one used as it is), by name: the tags it carries (None on
    #: a created cluster, whose pools carry none), and whether a destroy leaves it to its owner.
    pool_tags: Mapping[str, Mapping[str, str] | None]
    #: Each declared pool's node labels: its capacity group's (gpuGroups), none outside one.
    pool_labels: Mapping[str, Mapping[str, str]]
    released_pools: frozenset[str]
    #: Each installer's pools, in the config's order: the pools whose GPU stack this program
    #: installs (its own, and a used pool's that nothing of the cluster's serves already).
    serving: Mapping[str, tuple[str, ...]]
    #: Every Kubernetes object and the Helm release are deleted with a created, unprotected
    #: cluster (`deletedWith`; docs/lifecycle.md, "pulumi destroy", says why, and why not on an
    #: existing cluster, nor while the cluster is protected). Never the GPU pools, which bill.
    deleted_with_cluster: bool
    #: The marks on the Kubernetes objects this program declares on an existing cluster (none on
    #: a created one); the device plugin's are its inputs' (devicePlugin.adopt adds the adopted mark).
    object_marks: Mapping[str, str]
    #: devicePlugin.adopt on this run: the guide's namespace and DaemonSet, and which of the two
    #: it imports (none that the stack's state holds already); a destroy leaves them or not.
    device_plugin_adoption: Adoption | None
    device_plugin_released: bool
    #: What the device plugin's namespace and DaemonSet are made from (None: it serves no pool):
    #: the plan says from it what the adopting `up` changes, NvidiaDevicePlugin declares it.
    device_plugin: DevicePluginInputs | None
    #: The address and port the proof Job's NetworkPolicy allows for the cluster's proxy.
    proof_proxy: tuple[str, int] | None
    #: The proof's training time limit: the shipped script's, or none for the image's own entrypoint.
    proof_max_seconds: int | None
    #: What each pool's Job asks for: a used pool's MIG `mixed` slice, else nvidia.com/gpu.
    gpu_resources: Mapping[str, str]
    #: Each capacity group with a pool to declare (gpuGroups): its pools, first choice first. The
    #: group gets one proof Job; its pools none of their own.
    proof_groups: Mapping[str, tuple[str, ...]]
    #: What the budget watches on a created cluster: its resource group and node resource group,
    #: where AKS bills the GPU nodes; empty on an existing cluster, where it watches the owner tag.
    budget_groups: tuple[str, ...]
    #: The pools of capacity groups preflight dropped (a size that cannot run at all, a pool the
    #: stack does not run): not in the plan's config, so nothing declares them or their Job.
    dropped_pools: frozenset[str] = frozenset()
    #: On a cluster the stack creates, while a capacity group has a pool: the cluster
    #: autoscaler's priorities (the profile's `expander: priority`), each group's pools in the
    #: team's order. None: no group, or an existing cluster (the owner's).
    expander_priorities: priority_expander.Priorities | None = None
    #: What the stack's own priority ConfigMap holds, where it declares one: the same priorities,
    #: unless the created cluster has its owner's, which the stack uses as it is, never registered
    #: (components/deciding/existing/priority_config_map.py). None: it declares no ConfigMap.
    expander_config_map: priority_expander.Priorities | None = None


@dataclass(frozen=True)
class Plan:
    """What the checks decided; __main__.py declares from it."""

    mode: Mode
    #: The config, with the existing cluster's pools resolved (existing_pools.resolve).
    cfg: StackConfig
    #: The owner tag this stack writes: {tag: "<project>/<stack>"}.
    owner: Mapping[str, str]
    #: The existing cluster as read (None: the program creates one), and its user kubeconfig.
    found: ClusterFacts | None
    user_kubeconfig: str | None
    #: What the stack's state holds.
    state: stack_state.StackState
    #: The cluster's GPU pools this stack uses or adopts, as Azure runs them.
    live_pools: Mapping[str, LivePool]
    #: Each GPU pool's network.
    networks: Mapping[str, PoolNetwork]
    #: What the existing cluster runs in Kubernetes (None: not read, or no existing cluster).
    in_cluster: Findings | None
    #: Each pool that runs already, as it runs (its GPU management, its fixed settings).
    running_pools: Mapping[str, RunningPool]
    #: Where the proof's traffic leaves the cluster.
    egress: cluster_egress.Egress
    #: What it will cost per hour (None: not estimated).
    estimate: cost.Estimate | None
    #: The budget's name, when cost.budget asks for one.
    budget_name: str | None
    #: What __main__.py declares, decided here (`_decide`): it only passes it on.
    decided: Decided
    #: The run's subscription, read once, where a declaration names it (None: none does).
    subscription: str | None = None
    #: What the run says before it declares anything, in order.
    messages: tuple[Message, ...] = field(default=())


def build_plan(
    cfg: StackConfig,
    reader: AzureReader,
    mode: Mode,
    *,
    project: str,
    stack: str,
    environ: Mapping[str, str],
    said: Said | None = None,
) -> Plan:
    """Reads, resolves and checks; returns the plan. `said` collects the messages as they
    come, so a run that stops part-way still prints what it said before (__main__.py)."""
    said = Said() if said is None else said
    said.warn(cfg.warnings)
    preflight.provider_host(cfg.pools, environ)  # an AKS-managed pool's provider must load where Pulumi runs it
    existing = cfg.existing_cluster
    named = cluster_facts.Named(existing.name, existing.resource_group_name, cfg.subscription_id) if existing else cluster_facts.Named(None)
    cluster_facts.check_saved(cfg.preflight.cluster_file, named)
    cluster_objects.check_saved(cfg.preflight.kubernetes_file)
    saved_state.check_saved(cfg.preflight.state_file, project, stack)
    # An existing cluster is read once, here: a cluster that cannot be read stops the run.
    found = cluster_facts.read(reader, existing.resource_group_name, existing.name) if existing else None
    user_kubeconfig = cluster_facts.read_user_kubeconfig(reader, found.resource_group, found.name) if found else None
    owner = existing_cluster_checks.owner_tags(project, stack)
    owner_tag = next(iter(owner.values()))
    # What the stack holds already, from the engine's state, not from a tag its owner can remove
    # (components/deciding/existing/stack_state.py).
    state = stack_state.NOT_READ
    if found is not None:
        state = stack_state.read(reader, (found.resource_group, found.name), project=project, stack=stack)
        if refusal := stack_state.stray_refusal(state, project, stack):
            raise PreflightError(refusal)
    # What this stack adopted is guarded: a config that would replace it stops here.
    if found is not None:
        said.warn(ownership.check_pools(cfg.pools, found, owner_tag, state, mode.preview))
    # The cluster's own GPU pools the stack uses or adopts, read from it: from here on their settings are Azure's.
    subscription = preflight.subscription_reader(cfg.subscription_id, reader)
    arm_id = (
        (lambda: cluster_facts.cluster_id(_read_subscription(subscription), existing.resource_group_name, existing.name))
        if existing
        else None
    )
    resolved, live_pools, existing_lines = existing_pools.resolve(cfg.pools, cfg.mnist_job.enabled, found, owner_tag, state, arm_id)
    cfg = replace(cfg, gpu_pools=resolved)
    said.info(existing_lines)
    # An adopted pool's size, counts, management and scaleDownMode are Azure's: its group's rules hold them now.
    scale_down = {name: live.facts.scale_down_mode for name, live in live_pools.items() if live.how == "adopt"}
    groups.check_pools(cfg.gpu_groups, cfg.gpu_pools, cfg.pools.keys, scale_down)
    networks = _networks(cfg, found, stack, live_pools, state, said)
    in_cluster = _in_cluster(cfg, reader, found, user_kubeconfig, owner_tag, state, mode, said)
    # A pool that runs under the other kind of GPU management cannot be switched: refused here.
    switch_notes, running_pools = preflight.pool_switches(
        cfg.pools,
        (found.resource_group, found.name) if found else (cfg.resource_group_name, cfg.cluster_name),
        reader,
        mode.preview,
        subscription,
    )
    said.warn(switch_notes)
    # What the adopting `up` does to each pool it takes over: the import, then the update field by field.
    said.info(
        pool_settings.adopted_pool_plan(
            pool,
            cfg.pool_key(pool),
            networks[pool.name],
            ownership.pool_marks(pool, owner),
            live,
            running_pools.get(pool.name),
            cfg.gpu_groups.labels_of(pool.name),
        ).line()
        for pool in cfg.gpu_pools
        if (live := live_pools.get(pool.name)) is not None and live.import_id
    )
    checked = preflight.run(
        cfg,
        stack=stack,
        reader=reader,
        found=found,
        networks=networks.values(),
        dry_run=mode.preview,
        in_cluster=in_cluster.problems if in_cluster else (),
        state=state,
        subscription=subscription,
        running=frozenset(running_pools) | (state.pools() or frozenset()),
    )
    said.warn(checked.warnings)
    # A capacity group's pool that cannot run at all is not declared: from here on the config is without it.
    cfg = replace(cfg, gpu_pools=tuple(p for p in cfg.gpu_pools if p.name not in checked.dropped))
    networks = {name: network for name, network in networks.items() if name not in checked.dropped}
    said.lines_then_warnings(*proof_fit.lines(cfg.pools, cfg.mnist_job, live_pools))
    egress = _egress(cfg, found, said)
    # What it will cost per hour, one line per pool; a deployment above cost.maxHourly stops here.
    estimate, cost_lines, cost_warnings = cost.run(billed(cfg), checked.region, reader, dry_run=mode.preview)
    said.lines_then_warnings(cost_lines, cost_warnings)
    said.info(cost.group_lines([(g.key, g.kept) for g in checked.groups], estimate))
    owners_expander = _expander(cfg, reader, found, mode, (project, stack), said)
    budget_name = _budget(cfg, found, owner, estimate, project, stack, said)
    decided = _decide(cfg, found, owner, in_cluster, egress, mode, live_pools, checked.dropped, owners_expander)
    # What the adopting `up` does to the guide's namespace and DaemonSet, field by field: said
    # last, where runs said it while the component still built the DaemonSet's spec.
    said.info(adoption.lines(_plugin_adoption(decided)))
    return Plan(
        mode=mode,
        cfg=cfg,
        owner=owner,
        found=found,
        user_kubeconfig=user_kubeconfig,
        state=state,
        live_pools=live_pools,
        networks=networks,
        in_cluster=in_cluster,
        running_pools=running_pools,
        egress=egress,
        estimate=estimate,
        budget_name=budget_name,
        subscription=_declared_subscription(cfg, found, subscription),
        messages=tuple(said),
        decided=decided,
    )


def _decide(
    cfg: StackConfig,
    found: ClusterFacts | None,
    owner: Mapping[str, str],
    in_cluster: Findings | None,
    egress: cluster_egress.Egress,
    mode: Mode,
    live_pools: Mapping[str, LivePool],
    dropped: frozenset[str] = frozenset(),
    owners_expander: bool = False,
) -> Decided:
    """What __main__.py declares, from the resolved config and what the run read
    (`owners_expander`: the created cluster has its owner's priority ConfigMap)."""
    guide_pool = not cfg.pool_map
    served = in_cluster.served if in_cluster else frozenset()
    gpus = in_cluster.gpus.resources if in_cluster else {}
    serving = {
        installer: tuple(
            p.name for p in cfg.gpu_pools if p.mode == installer and (p.owned or (installer == "device-plugin" and p.name not in served))
        )
        for installer in INSTALLERS
    }
    device_plugin_adoption = in_cluster.adoption if in_cluster else None
    return Decided(
        guide_pool=guide_pool,
        waits_for_access=not mode.preview,
        version_moves=found is not None or pool_settings.version_moves(cfg.upgrade),
        pool_tags={p.name: ownership.pool_marks(p, owner) if found else None for p in cfg.owned_pools},
        pool_labels={p.name: cfg.gpu_groups.labels_of(p.name) for p in cfg.owned_pools},
        released_pools=frozenset(p.name for p in cfg.owned_pools if ownership.released(p)),
        serving=serving,
        deleted_with_cluster=found is None and not cfg.protect,
        object_marks=dict(owner) if found else {},
        device_plugin_adoption=device_plugin_adoption,
        device_plugin_released=ownership.plugin_released(cfg.device_plugin),
        device_plugin=_device_plugin(
            cfg, serving["device-plugin"], live_pools, owner if found else None, adopt=device_plugin_adoption is not None
        ),
        proof_proxy=cluster_egress.proxy_rule(egress, cfg.mnist_job.egress),
        proof_max_seconds=cfg.mnist_job.max_seconds if cfg.mnist_job.runs_script else None,
        gpu_resources={p.name: gpus.get(p.name, GPU) for p in cfg.gpu_pools},
        proof_groups=_groups(cfg),
        budget_groups=_created_groups(cfg) if found is None else (),
        dropped_pools=dropped,
        expander_priorities=(expander := _priorities(cfg, found)),
        expander_config_map=None if owners_expander else expander,
    )


def _priorities(cfg: StackConfig, found: ClusterFacts | None) -> priority_expander.Priorities | None:
    """The autoscaler's priorities on a cluster the stack creates, while a group has a pool."""
    present = _groups(cfg)
    return priority_expander.priorities(present, _outside(cfg)) if present and found is None else None


def _device_plugin(
    cfg: StackConfig, served: tuple[str, ...], live_pools: Mapping[str, LivePool], owner: Mapping[str, str] | None, adopt: bool
) -> DevicePluginInputs | None:
    """The device plugin's inputs, where it serves a pool: each served pool's tolerations once,
    its pools by name wherever the cluster may hold others (StackConfig.select_pools), MIG where
    one is cut, and on an existing cluster (`owner`: the stack's marks) the marks, adopted too
    where devicePlugin.adopt says so."""
    pools = [p for p in cfg.gpu_pools if p.name in served]
    if not pools:
        return None
    return DevicePluginInputs(
        namespace=cfg.device_plugin.namespace,
        image=cfg.device_plugin.image,
        gpu_tolerations=tolerations.merged(tolerations.pool_tolerations(p, live_pools.get(p.name)) for p in pools),
        mig=any(p.mig_profile for p in pools),
        pool_names=tuple(p.name for p in pools) if cfg.select_pools else (),
        marks={} if owner is None else ownership.adopted_marks(owner) if cfg.device_plugin.adopt else dict(owner),
        adopt=adopt,
    )


def _plugin_adoption(decided: Decided) -> list[adoption.Plan]:
    """The adopting `up` of the guide's namespace and DaemonSet, where this run takes them over
    for a plugin it declares (the lines say nothing where the cluster was not read)."""
    plugin, taken = decided.device_plugin, decided.device_plugin_adoption
    return device_plugin.adoption_plans(plugin, taken) if plugin is not None and taken is not None else []


def _expander(cfg: StackConfig, reader: AzureReader, found: ClusterFacts | None, mode: Mode, names: tuple[str, str], said: Said) -> bool:
    """Says what the cluster autoscaler's order among a group's pools comes from: on a cluster
    the stack creates, its profile and its ConfigMap, or the owner's ConfigMap where the cluster
    has one that the stack's state does not hold (returns True: the stack declares none); on an
    existing cluster, what its owner would set. `names`: the project and the stack."""
    present = _groups(cfg)
    if not present:
        return False
    if found is not None:
        said.info([priority_expander.existing_cluster_line(present, _outside(cfg, found), found.resource_group, found.name)])
        return False
    # Read only here: the state tells whether the cluster is there already, and the ConfigMap the stack's.
    cluster = (cfg.resource_group_name, cfg.cluster_name)
    state = stack_state.read(reader, cluster, project=names[0], stack=names[1])
    there = priority_config_map.read(reader, state, cluster)
    if there.owners is not None:
        # A warning where the team's order does not hold; a line for the record where it does.
        ours = priority_expander.priorities(present, _outside(cfg))
        line = priority_config_map.owners_line(ours, cfg.cluster_name, there.owners)
        (said.info if priority_config_map.has_every_line(ours, there.owners) else said.warn)([line])
        return True
    if there.unknown is not None:
        if not mode.preview:
            raise PreflightError(priority_config_map.stop_line(cfg.cluster_name, there.unknown))
        said.warn([priority_config_map.unknown_line(cfg.cluster_name, there.unknown)])
    said.info([priority_expander.created_cluster_line(present, _outside(cfg))])
    return False


def _outside(cfg: StackConfig, found: ClusterFacts | None = None) -> tuple[str, ...]:
    """The pools in no capacity group, whose node groups no group may outrank
    (priority_expander.priorities): a created cluster's System pool and the stack's GPU pools, or
    an existing cluster's pools and the stack's new ones. Only an AKS Linux pool's name makes a
    pattern (values.POOL_NAME_PATTERN): a saved description may hold any text, and no other name
    is a scale set's."""
    grouped = {name for names in cfg.gpu_groups.groups.values() for name in names}
    there = [p.name for p in found.pools] if found is not None else [SYSTEM_POOL_NAME]
    names = dict.fromkeys([*there, *(p.name for p in cfg.gpu_pools)])
    return tuple(n for n in names if n not in grouped and re.fullmatch(POOL_NAME_PATTERN, n))


def _groups(cfg: StackConfig) -> dict[str, tuple[str, ...]]:
    """Each capacity group's pools among those the run declares, first choice first; a group
    with none left has no Job."""
    groups = cfg.gpu_groups
    present = {name: tuple(p.name for p in groups.pools_of(name, cfg.gpu_pools)) for name in groups.groups}
    return {name: pools for name, pools in present.items() if pools}


def billed(cfg: StackConfig) -> cost.Billed:
    """What the cost reads of the config: the pools, a created cluster's System pool, whether
    the Job runs, the cost settings and a saved price list."""
    system_pool = cfg.system_pool if cfg.existing_cluster is None else None
    return cost.Billed(cfg.pools, system_pool, cfg.mnist_job.enabled, cfg.cost, cfg.preflight.prices_file)


def _created_groups(cfg: StackConfig) -> tuple[str, str]:
    """A created cluster's resource group, and the node resource group AKS names for it."""
    return cfg.resource_group_name, azure_facts.node_resource_group(cfg.resource_group_name, cfg.cluster_name, cfg.location)


def _networks(
    cfg: StackConfig, found: ClusterFacts | None, stack: str, live_pools: Mapping[str, LivePool], state: stack_state.StackState, said: Said
) -> dict[str, PoolNetwork]:
    """Each GPU pool's subnets and pods per node, fitted to the cluster's network; a pool this
    stack runs already keeps its own, and a config that moves it is said to replace it."""
    adopted = {name: live.facts for name, live in live_pools.items() if live.how == "adopt"}
    networks = pool_network.plan_pools(cfg.pools, found, stack, adopted, state)
    if found is not None:
        for network in networks.values():
            said.info([network.why])
            said.warn([network.replaces] if network.replaces else [])
    return networks


def _in_cluster(
    cfg: StackConfig,
    reader: AzureReader,
    found: ClusterFacts | None,
    user_kubeconfig: str | None,
    owner_tag: str,
    state: stack_state.StackState,
    mode: Mode,
    said: Said,
) -> Findings | None:
    """What the existing cluster already runs in Kubernetes, read as the Kubernetes provider
    signs in: a namespace this stack would create, another device plugin or the GPU Operator on
    its pools, and the guide's DaemonSet that devicePlugin.adopt takes over on this run. Read
    whatever preflight.mode says: what the stack adopted is guarded by it
    (components/deciding/existing/ownership.py), and two device plugins on one node are never declared."""
    in_cluster = None
    if found is not None and user_kubeconfig:
        pools = cluster_object_checks.stack_pools(cfg.pools, found)
        in_cluster = cluster_object_checks.check(
            stack_objects(cfg), reader, provider_kubeconfig(user_kubeconfig), pools, owner_tag, mode.preview, found, state
        )
        said.warn(in_cluster.warnings)
        said.info(in_cluster.lines)
    if found is not None and not (in_cluster and in_cluster.read):
        said.info([existing_cluster_checks.namespaces_line(cfg.owned_namespaces, found)])
        said.warn(existing_pools.unread_plugin_lines(cfg.pools, cfg.preflight.kubernetes_file))
    return in_cluster


def stack_objects(cfg: StackConfig) -> cluster_object_checks.StackObjects:
    """What the check of what an existing cluster runs reads of the config: the pools, the
    device plugin's settings, the namespaces the stack creates and which key names each."""
    job_namespace = cfg.mnist_job.namespace if cfg.mnist_job.enabled else None
    return cluster_object_checks.StackObjects(
        cfg.pools, cfg.device_plugin, cfg.gpu_operator.namespace, job_namespace, frozenset(cfg.owned_namespaces)
    )


def _egress(cfg: StackConfig, found: ClusterFacts | None, said: Said) -> cluster_egress.Egress:
    """Where the proof's traffic leaves an existing cluster: its HTTP proxy, or an outbound type
    with no way out (a cluster this program creates has neither: components/deciding/azure/cluster_egress.py)."""
    egress = found.egress if found is not None else cluster_egress.Egress()
    enforced = found is None or (found.network_policy or "none").lower() != "none"
    said.lines_then_warnings(*cluster_egress.lines(cfg.mnist_job, found.name if found else cfg.cluster_name, egress, enforced))
    return egress


def _budget(
    cfg: StackConfig,
    found: ClusterFacts | None,
    owner: Mapping[str, str],
    estimate: cost.Estimate | None,
    project: str,
    stack: str,
    said: Said,
) -> str | None:
    """The monthly budget's name, and what it watches said against the estimate (cost.budget):
    a created cluster's resource groups, or the scale sets with an existing cluster's owner tag."""
    if cfg.cost.budget is None:
        return None
    if found is None:
        watched = cost.resource_groups_says(_created_groups(cfg))
    else:
        watched = cost.tagged_says(*next(iter(owner.items())))
    name = cost.budget_name(project, stack, cfg.cluster_name)
    line, warnings = cost.budget_lines(cfg.cost, estimate, name, watched)
    said.lines_then_warnings([line], warnings)
    return name


def _declared_subscription(cfg: StackConfig, found: ClusterFacts | None, subscription: preflight.Subscription) -> str | None:
    """The subscription the declarations name: the budget's scope, an AKS-managed pool's
    provider (it calls the agentPools API there), a created cluster's grant of cluster-admin
    to the deployer, the proof's watch (it fetches the cluster's kubeconfig there). The
    checks' read, so one run reads it once."""
    watched = cfg.mnist_job.enabled and cfg.mnist_job.wait_for_completion
    if (
        cfg.cost.budget is None
        and not any(p.managed for p in cfg.gpu_pools)
        and not (found is None and cfg.access.grants_deployer)
        and not watched
    ):
        return None
    return _read_subscription(subscription)


def _read_subscription(subscription: preflight.Subscription) -> str:
    try:
        return subscription()
    except read_errors() as error:
        raise PreflightError(
            f"preflight: the subscription could not be read ({error_line(error)}); sign in (az login), or set azure-native:subscriptionId"
        ) from error
