"""The plan: what a run will declare, one typed Args per component (docs/design/component-args.md),
and what it says first, as one frozen value. `build_plan` reads through the reader it is handed,
checks, estimates and decides; it registers no resource and logs nothing, and a problem that stops
the run raises its one-line error here, before anything is registered.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import pulumi_kubernetes as k8s

from components.catalog import proof_names
from components.cluster import access_lines, cluster_egress, cluster_facts, existing_cluster_checks
from components.cluster.cluster import GpuClusterArgs
from components.cluster.cluster_facts import ClusterFacts
from components.cluster.existing_cluster import ExistingClusterArgs
from components.cluster.kubeconfig import provider_kubeconfig
from components.cluster.settings import SYSTEM_POOL_NAME
from components.config.values import NAMESPACE, POOL_NAME_PATTERN
from components.cost import cost
from components.cost.budget import CostBudgetArgs
from components.cost.settings import BudgetConfig
from components.errors import ConfigError, PreflightError, error_line, escaped_lines
from components.gpu_stack import cluster_object_checks, cluster_objects
from components.gpu_stack import device_plugin_spec as device_plugin
from components.gpu_stack.cluster_object_checks import Findings
from components.gpu_stack.dcgm_exporter import DcgmExporterArgs
from components.gpu_stack.dcgm_exporter import added_objects as exporter_objects
from components.gpu_stack.device_plugin import NvidiaDevicePluginArgs
from components.gpu_stack.device_plugin import added_objects as plugin_objects
from components.gpu_stack.gpu_operator import GpuOperatorArgs
from components.outputs import OutputsArgs
from components.ownership import adopted_record, adoption, ownership, saved_state, stack_state
from components.pools import existing_pools, groups, pool_network, pool_settings, priority_config_map, priority_expander, tolerations
from components.pools.capacity_expander import CapacityExpanderArgs
from components.pools.existing_pool import UsedPool
from components.pools.existing_pools import LivePool
from components.pools.gpu_pool import GpuPoolArgs
from components.pools.pool_network import PoolNetwork
from components.pools.settings import GpuPoolConfig, Pools
from components.preflight import preflight
from components.proof import proof_fit
from components.proof.job_deadline import group_deadline, group_timeout, job_deadline, job_timeout, unwatched_line
from components.proof.mnist_job import MnistJobArgs, MnistRun, ProofScript
from components.seam import azure_facts
from components.seam.reader import AzureReader, RunningPool, read_errors
from components.stack import StackConfig


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


class Part(enum.Enum):
    """What a component declares (components/environment/component.py): the program declares
    them all; the package's smaller components one each, on a cluster they name."""

    #: The GPU pools and capacity groups, the monthly budget over them.
    POOLS = "pools"
    #: The device plugin or the GPU Operator, the DCGM exporter, the capacity groups' priorities.
    GPU_STACK = "gpu-stack"
    #: The proof Job per pool or group, and its watch.
    PROOF = "proof"


ALL = frozenset(Part)


GPU = "nvidia.com/gpu"
# What a proof Job of a capacity group waits for besides its pools: the priorities (MnistRun.after).
EXPANDER = "capacity-expander"


@dataclass(frozen=True)
class Plan:
    """What a run declares, as one typed Args per component (docs/design/component-args.md), and
    what it says first; __main__.py passes each Args to its component's constructor."""

    mode: Mode
    #: What the run declares; the program's run, ALL.
    parts: frozenset[Part]
    #: The GPU pools this run declares or uses: existing pools as Azure has them, less the
    #: capacity groups' pools preflight dropped (the config is never rewritten).
    pools: Pools
    cluster: GpuClusterArgs | ExistingClusterArgs
    budget: CostBudgetArgs | None
    #: Each GPU pool in the config's order: UsedPool for one used as it is (nothing registered).
    gpu_pools: tuple[GpuPoolArgs | UsedPool, ...]
    device_plugin: NvidiaDevicePluginArgs | None
    dcgm_exporter: DcgmExporterArgs | None
    gpu_operator: GpuOperatorArgs | None
    #: None: no capacity group on a created cluster, or the owner's ConfigMap is used as it is.
    expander: CapacityExpanderArgs | None
    proof: MnistJobArgs | None
    outputs: OutputsArgs
    networks: Mapping[str, PoolNetwork] = field(default_factory=dict)
    estimate: cost.Estimate | None = None
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
    by: stack_state.Declarer = stack_state.PROGRAM,
    dynamic_resources: bool = True,
    parts: frozenset[Part] = ALL,
) -> Plan:
    """Reads, resolves and checks; returns the plan. `said` collects the messages as they
    come, so a run that stops part-way still prints what it said before (__main__.py). `by`:
    the package's component that declares what the plan hands out, if one does (its children's
    URNs, and its own outputs, are what the stack's state holds of it). `dynamic_resources`
    False: the run cannot declare Pulumi dynamic resources (the package, in another team's
    program: components/environment/dynamic_host.py), so the proof's Jobs are awaited without
    their watch, and the plan says what that gives up. `parts`: what the run declares; a part
    left out is neither checked nor handed out."""
    said = Said() if said is None else said
    only_used_pools(cfg, parts)
    said.warn(cfg.warnings)
    preflight.provider_host(cfg.pools, environ)  # an AKS-managed pool's provider must load where Pulumi runs it
    run = _Run(cfg, reader, mode, project, stack, said, by, parts)
    run.read_existing()
    said.info(run.doors())
    run.resolve_pools()
    checked = run.check()
    said.lines_then_warnings(*(proof_fit.lines(run.pools, cfg.mnist_job, run.live_pools) if run.proves else ([], [])))
    egress = run.egress()
    # What it will cost per hour, one line per pool; a deployment above cost.maxHourly stops here.
    estimate, cost_lines, cost_warnings = cost.run(billed(cfg, run.pools, run.proves), checked.region, reader, dry_run=mode.preview)
    said.lines_then_warnings(cost_lines, cost_warnings)
    said.info(cost.group_lines([(g.key, g.kept) for g in checked.groups], estimate))
    priorities = run.priorities()
    ours = priorities if not run.owners_expander() else None  # the owner's ConfigMap is used as it is
    budget_name = run.budget_name(estimate)
    plugin = run.device_plugin()
    exporter = run.dcgm_exporter(plugin)
    # What the adopting `up` does to the guide's namespace and DaemonSet, field by field, and what
    # the stack adds beside them: said last, where runs said it while the component still built
    # the DaemonSet's spec.
    adoption_found = run.in_cluster.adoption if run.in_cluster else None
    plans = device_plugin.adoption_plans(plugin, adoption_found) if plugin and adoption_found else []
    said.info(adoption.lines(plans))
    said.info(added_beside(plugin, exporter) if plugin and plans else [])
    subscription_id = run.declared_subscription()
    operator = run.gpu_operator()
    expander = CapacityExpanderArgs(ours) if ours is not None else None
    proof = run.proof(egress, with_expander=ours is not None, watch=dynamic_resources)
    said.info(unwatched_lines(proof))
    # A run of some parts declares a Kubernetes provider only where something of it goes into the
    # cluster; the program's always has (1.0's graph: tests/test_urns.py).
    kubernetes = parts == ALL or any((plugin, operator, expander, proof))
    return Plan(
        mode=mode,
        parts=parts,
        pools=run.pools,
        cluster=run.cluster(subscription_id, priorities is not None, kubernetes),
        budget=run.budget_args(budget_name, subscription_id),
        gpu_pools=run.gpu_pools(subscription_id),
        device_plugin=plugin,
        dcgm_exporter=exporter,
        gpu_operator=operator,
        expander=expander,
        proof=proof,
        outputs=OutputsArgs(
            not cfg.pool_map,
            run.groups(),
            cost.output(estimate) if estimate else None,
            run.pools.modes,
            cfg.monitoring.gpu_metrics,
            run.adopted(plugin),
            Part.GPU_STACK in parts,
            proof_alone=parts == {Part.PROOF},
        ),
        networks=run.networks,
        estimate=estimate,
        messages=tuple(said),
    )


def signed_in(plan: Plan, provider: Any | None, kubeconfig: Any | None) -> Plan:
    """`plan` with its existing cluster's Kubernetes objects signed in with a consumer's provider
    (a ProviderResource) or kubeconfig (an Input[str]), which a component takes from its options and
    inputs (components/environment/sign_in.py); as it is where neither is given."""
    if provider is None and kubeconfig is None:
        return plan
    assert isinstance(plan.cluster, ExistingClusterArgs), "a component that signs in takes its cluster by resource ID"
    return replace(plan, cluster=replace(plan.cluster, provider=provider, kubeconfig=kubeconfig))


def unwatched_lines(proof: MnistJobArgs | None) -> list[str]:
    """Where `up` awaits the proof's Jobs without their watch, what that gives up, with each Job's
    deadline under its name (an awaited Job's: MnistJob._create_job)."""
    if proof is None or proof.watch or not proof.wait_for_completion or not proof.runs:
        return []
    deadlines = {
        proof_names.job_name(proof.job_name, None if run.guide_names else run.pool_name): run.deadline_seconds
        for run in proof.runs
        if run.deadline_seconds is not None
    }
    return [unwatched_line(deadlines)]


def only_used_pools(cfg: StackConfig, parts: frozenset[Part]) -> None:
    """A run without the GPU pools takes the cluster's own pools as they are (existing: use): it
    registers none, and no budget over them."""
    if Part.POOLS not in parts and (owned := cfg.pools.owned):
        raise ConfigError(
            f"{cfg.pools.keys[owned[0].name]}: this run declares no GPU pool, so it takes only the cluster's own as they are (existing: use)"
        )
    if Part.POOLS not in parts and cfg.cost.budget is not None:  # never left out without a word (GpuProof takes `cost` for its limit)
        raise ConfigError(
            f"{NAMESPACE}:cost.budget: this run declares no GPU pool, so no budget over them: "
            "set it where the pools are declared (GpuPools, GpuEnvironment), or leave it out"
        )


def added_beside(plugin: NvidiaDevicePluginArgs, exporter: DcgmExporterArgs | None) -> list[str]:
    """The adopting preview's list of what the stack declares into the owner's namespace, from
    the components that declare it: the plugin's NetworkPolicy, and the DCGM exporter's objects."""
    objects = [*plugin_objects(), *(exporter_objects() if exporter else [])]
    line = adoption.added_line(f"{NAMESPACE}:devicePlugin", plugin.namespace, objects)
    return [line] if line else []


@dataclass
class _Run:
    """One plan's reads so far, set in build_plan's order; each method decides one piece."""

    cfg: StackConfig
    reader: AzureReader
    mode: Mode
    project: str
    stack: str
    said: Said
    by: stack_state.Declarer = stack_state.PROGRAM
    parts: frozenset[Part] = ALL
    found: ClusterFacts | None = None
    user_kubeconfig: str | None = None
    state: stack_state.StackState = stack_state.NOT_READ
    pools: Pools = field(init=False)
    live_pools: Mapping[str, LivePool] = field(init=False)
    networks: dict[str, PoolNetwork] = field(init=False)
    in_cluster: Findings | None = None
    running_pools: Mapping[str, RunningPool] = field(default_factory=dict)
    #: The stack's marks (`aks-gpu-stack`), and the subscription's read, made once.
    owner: dict[str, str] = field(init=False)
    owner_tag: str = field(init=False)
    subscription: preflight.Subscription = field(init=False)

    def __post_init__(self) -> None:
        self.owner = existing_cluster_checks.owner_tags(self.project, self.stack)
        self.owner_tag = next(iter(self.owner.values()))
        self.subscription = preflight.subscription_reader(self.cfg.subscription_id, self.reader)

    @property
    def marks(self) -> dict[str, str]:
        """The stack's marks on the objects it declares in a cluster it shares."""
        return dict(self.owner) if self.found else {}

    def read_existing(self) -> None:
        """The saved files checked, then an existing cluster read once, its user kubeconfig, and what
        the stack holds already, from the engine's state (components/ownership/stack_state.py)."""
        cfg, existing = self.cfg, self.cfg.existing_cluster
        named = (
            cluster_facts.Named(existing.name, existing.resource_group_name, cfg.subscription_id) if existing else cluster_facts.Named(None)
        )
        cluster_facts.check_saved(cfg.preflight.cluster_file, named)
        cluster_objects.check_saved(cfg.preflight.kubernetes_file)
        saved_state.check_saved(cfg.preflight.state_file, self.project, self.stack)
        if existing is None:
            return
        self.found = found = cluster_facts.read(self.reader, existing.resource_group_name, existing.name)
        self.user_kubeconfig = cluster_facts.read_user_kubeconfig(self.reader, found.resource_group, found.name)
        self.state = stack_state.read(self.reader, (found.resource_group, found.name), project=self.project, stack=self.stack, by=self.by)
        if refusal := stack_state.stray_refusal(self.state, self.project, self.stack):
            raise PreflightError(refusal)
        declared = [p.name for p in cfg.pools.pools if p.existing != "use"]  # `use` registers nothing
        if refusal := stack_state.sibling_refusal(self.state, declared, self.project, self.stack):
            raise PreflightError(refusal)
        self.said.warn(ownership.unread_state(self.state, found, self.owner_tag))
        # What this stack adopted is guarded: a config that would replace it stops here.
        self.said.warn(ownership.check_pools(self.cfg.pools, found, self.owner_tag, self.state, self.mode.preview))

    def doors(self) -> list[str]:
        """Who may reach the cluster: a created one's settings still the guide's, and the role the
        deployer needs in Kubernetes where Entra ID decides it (access_lines.py)."""
        if self.found is not None:
            return access_lines.existing_cluster_role(self.found)
        return [*access_lines.guide_defaults(self.cfg.access, self.cfg.system_pool), *access_lines.created_cluster_role(self.cfg.access)]

    def resolve_pools(self) -> None:
        """The cluster's own GPU pools the stack uses or adopts: from here on their settings are
        Azure's, which their groups' rules hold. Then each pool's network."""
        cfg, found, existing = self.cfg, self.found, self.cfg.existing_cluster
        arm_id = (
            (lambda: cluster_facts.cluster_id(_read_subscription(self.subscription), existing.resource_group_name, existing.name))
            if existing
            else None
        )
        resolved, self.live_pools, lines = existing_pools.resolve(
            cfg.pools, self.proves, found, self.owner_tag, self.state, arm_id, declares_pools=Part.POOLS in self.parts
        )
        self.pools = Pools(resolved, cfg.pools.keys, cfg.pools.given)
        self.said.info(lines)
        adopted = {name: live.facts for name, live in self.live_pools.items() if live.how == "adopt"}
        groups.check_pools(cfg.gpu_groups, self.pools.pools, self.pools.keys, {n: f.scale_down_mode for n, f in adopted.items()})
        # Each GPU pool's subnets and pods per node, fitted to the cluster's network; a pool this
        # stack runs already keeps its own, and a config that moves it is said to replace it.
        self.networks = pool_network.plan_pools(self.pools, found, self.stack, adopted, self.state)
        for network in self.networks.values() if found else ():
            self.said.info([network.why])
            self.said.warn([network.replaces] if network.replaces else [])

    def check(self) -> preflight.Checked:
        """What the cluster runs, the pools' GPU management (never switched), what adopting does, then
        preflight; a capacity group's pool that cannot run at all is not declared."""
        cfg, found, said = self.cfg, self.found, self.said
        self.read_in_cluster()
        cluster = (found.resource_group, found.name) if found else (cfg.resource_group_name, cfg.cluster_name)
        notes, self.running_pools = preflight.pool_switches(self.pools, cluster, self.reader, self.mode.preview, self.subscription)
        said.warn(notes)
        said.info(self.adopting_lines())
        checked = preflight.run(
            cfg,
            stack=self.stack,
            reader=self.reader,
            found=found,
            networks=self.networks.values(),
            dry_run=self.mode.preview,
            in_cluster=self.in_cluster.problems if self.in_cluster else (),
            state=self.state,
            subscription=self.subscription,
            running=frozenset(self.running_pools) | (self.state.pools() or frozenset()),
            pools=self.pools,
            proves=self.proves,
            budget=self.budget,
        )
        said.warn(checked.warnings)
        self.pools = self.pools.without(checked.dropped)
        self.networks = {name: network for name, network in self.networks.items() if name not in checked.dropped}
        return checked

    def read_in_cluster(self) -> None:
        """What the existing cluster already runs in Kubernetes, read as the provider signs in, whatever
        preflight.mode says: what the stack adopted is guarded by it, and two device plugins on one
        node are never declared."""
        cfg, pools, found = self.cfg, self.pools, self.found
        if not self.in_kubernetes:  # nothing of the stack's goes there
            return
        stack = Part.GPU_STACK in self.parts
        if found is not None and self.user_kubeconfig:
            job_namespace = cfg.mnist_job.namespace if self.proves else None
            objects = cluster_object_checks.StackObjects(pools, cfg.device_plugin, cfg.gpu_operator.namespace, job_namespace, stack)
            kubeconfig = provider_kubeconfig(self.user_kubeconfig)
            stack_pools = cluster_object_checks.stack_pools(pools, found, installs=stack, on_used=self.serves_named_pools)
            self.in_cluster = cluster_object_checks.check(
                objects, self.reader, kubeconfig, stack_pools, self.owner_tag, self.mode.preview, found, self.state, installs=stack
            )
            self.said.warn(self.in_cluster.warnings)
            self.said.info(self.in_cluster.lines)
        if found is not None and not (self.in_cluster and self.in_cluster.read):
            owned = cfg.owned_namespaces(pools.modes if stack else frozenset(), proof=self.proves)
            self.said.info([existing_cluster_checks.namespaces_line(owned, found)])
            self.said.warn(existing_pools.unread_plugin_lines(pools, cfg.preflight.kubernetes_file) if stack else [])

    @property
    def proves(self) -> bool:
        """Whether the run declares the proof: its part, and mnistJob.enabled."""
        return Part.PROOF in self.parts and self.cfg.mnist_job.enabled

    @property
    def budget(self) -> BudgetConfig | None:
        """The monthly budget over the pools, where the run declares them (cost.budget)."""
        return self.cfg.cost.budget if Part.POOLS in self.parts else None

    @property
    def in_kubernetes(self) -> bool:
        """Whether the run declares anything inside the cluster: the GPU stack, or the proof."""
        return bool(self.parts & {Part.GPU_STACK, Part.PROOF})

    def adopting_lines(self) -> list[str]:
        return [
            pool_settings.adopted_pool_plan(
                pool,
                self.pools.key(pool),
                self.networks[pool.name],
                ownership.pool_marks(pool, self.owner),
                live,
                self.running_pools.get(pool.name),
                self.cfg.gpu_groups.labels_of(pool.name),
            ).line()
            for pool in self.pools.pools
            if (live := self.live_pools.get(pool.name)) is not None and live.import_id
        ]

    def egress(self) -> cluster_egress.Egress:
        """Where the proof's traffic leaves an existing cluster (a created one has no proxy)."""
        found = self.found
        egress = found.egress if found is not None else cluster_egress.Egress()
        enforced = found is None or (found.network_policy or "none").lower() != "none"
        name = found.name if found else self.cfg.cluster_name
        if self.proves:  # where the proof's traffic goes
            self.said.lines_then_warnings(*cluster_egress.lines(self.cfg.mnist_job, name, egress, enforced))
        return egress

    def groups(self) -> dict[str, tuple[str, ...]]:
        """Each capacity group with a pool the run declares: its pools, first choice first."""
        groups = self.cfg.gpu_groups
        present = {name: tuple(p.name for p in groups.pools_of(name, self.pools.pools)) for name in groups.groups}
        return {name: names for name, names in present.items() if names}

    def outside(self, found: ClusterFacts | None = None) -> tuple[str, ...]:
        """The pools in no capacity group, which no group may outrank. Only an AKS Linux pool's name
        makes a pattern: a saved description may hold any text, and no other name is a scale set's."""
        grouped = {name for names in self.cfg.gpu_groups.groups.values() for name in names}
        there = [p.name for p in found.pools] if found is not None else [SYSTEM_POOL_NAME]
        names = dict.fromkeys([*there, *(p.name for p in self.pools.pools)])
        return tuple(n for n in names if n not in grouped and re.fullmatch(POOL_NAME_PATTERN, n))

    def priorities(self) -> priority_expander.Priorities | None:
        """The autoscaler's priorities on a cluster the stack creates, while a group has a pool."""
        present = self.groups() if Part.GPU_STACK in self.parts else {}
        return priority_expander.priorities(present, self.outside()) if present and self.found is None else None

    def owners_expander(self) -> bool:
        """Says where the autoscaler's order among a group's pools comes from; True: the owner's
        ConfigMap, which the stack's state does not hold, is used and the stack declares none."""
        cfg, found, said, present = self.cfg, self.found, self.said, self.groups()
        if not present:
            return False
        if found is not None:
            said.info([priority_expander.existing_cluster_line(present, self.outside(found), found.resource_group, found.name)])
            return False
        # Read only here: the state tells whether the cluster is there already, and the ConfigMap the stack's.
        cluster = (cfg.resource_group_name, cfg.cluster_name)
        state = stack_state.read(self.reader, cluster, project=self.project, stack=self.stack, by=self.by)
        there = priority_config_map.read(self.reader, state, cluster)
        if there.owners is not None:
            # A warning where the team's order does not hold; a line for the record where it does.
            ours = priority_expander.priorities(present, self.outside())
            line = priority_config_map.owners_line(ours, cfg.cluster_name, there.owners)
            (said.info if priority_config_map.has_every_line(ours, there.owners) else said.warn)([line])
            return True
        if there.unknown is not None:
            if not self.mode.preview:
                raise PreflightError(priority_config_map.stop_line(cfg.cluster_name, there.unknown))
            said.warn([priority_config_map.unknown_line(cfg.cluster_name, there.unknown)])
        said.info([priority_expander.created_cluster_line(present, self.outside(), cfg.resource_group_name, cfg.cluster_name)])
        return False

    def created_groups(self) -> tuple[str, str]:
        cfg = self.cfg
        return cfg.resource_group_name, azure_facts.node_resource_group(cfg.resource_group_name, cfg.cluster_name, cfg.location)

    def budget_name(self, estimate: cost.Estimate | None) -> str | None:
        """The monthly budget's name, and what it watches said against the estimate."""
        if self.budget is None:
            return None
        if self.found is None:
            watched = cost.resource_groups_says(self.created_groups())
        else:
            watched = cost.tagged_says(*next(iter(self.owner.items())))
        name = cost.budget_name(self.project, self.stack, self.cfg.cluster_name)
        line, warnings = cost.budget_lines(self.cfg.cost, estimate, name, watched)
        self.said.lines_then_warnings([line], warnings)
        return name

    def budget_args(self, name: str | None, subscription: str | None) -> CostBudgetArgs | None:
        """The budget; on an existing cluster, the owner tag of the scale sets it watches."""
        wanted = self.budget
        if wanted is None or name is None:
            return None
        assert subscription is not None, "the plan reads it for a budget"
        # A created cluster's groups come from the cluster itself (GpuCluster.billing_groups).
        owner_tag = None if self.found is None else next(iter(self.owner.items()))
        return CostBudgetArgs(name, wanted.amount, wanted.contact_emails, subscription, owner_tag)

    def declared_subscription(self) -> str | None:
        """The subscription the budget, an AKS-managed pool's provider, the deployer's grant and the
        proof's watch name: the checks' read, so one run reads it once."""
        cfg = self.cfg
        if (
            self.budget is None
            and not any(p.managed for p in self.pools.pools)
            and not (self.found is None and cfg.access.grants_deployer)
            and not (self.proves and cfg.mnist_job.wait_for_completion)
        ):
            return None
        return _read_subscription(self.subscription)

    def cluster(self, subscription: str | None, expander: bool, kubernetes: bool = True) -> GpuClusterArgs | ExistingClusterArgs:
        """The existing cluster as read, with a Kubernetes provider where `kubernetes`, or the one the program creates."""
        cfg = self.cfg
        if self.found is not None:
            return ExistingClusterArgs(
                facts=self.found, user_kubeconfig=self.user_kubeconfig or "", subscription_id=subscription, kubernetes=kubernetes
            )
        return GpuClusterArgs(
            location=cfg.location,
            resource_group_name=cfg.resource_group_name,
            cluster_name=cfg.cluster_name,
            kubernetes_version=cfg.kubernetes_version,
            system_pool=cfg.system_pool,
            access=cfg.access,
            network=cfg.network,
            upgrade=cfg.upgrade,
            tier=cfg.cluster_tier,
            protect=cfg.protect,
            subscription_id=subscription,
            priority_expander=expander,
        )

    def gpu_pools(self, subscription: str | None) -> tuple[GpuPoolArgs | UsedPool, ...]:
        """Each GPU pool; its version is left to Azure where an upgrade channel or an existing cluster's owner moves it."""
        cfg, found = self.cfg, self.found
        moves = found is not None or pool_settings.version_moves(cfg.upgrade)
        return tuple(
            UsedPool(pool, self.live_pools[pool.name])
            if not pool.owned
            else GpuPoolArgs(
                pool=pool,
                resource_group_name=cfg.resource_group_name,
                cluster_name=cfg.cluster_name,
                subscription_id=subscription,
                kubernetes_version=cfg.kubernetes_version,
                version_moves=moves,
                tags=ownership.pool_marks(pool, self.owner) if found else None,
                node_labels=cfg.gpu_groups.labels_of(pool.name),
                retain_on_delete=ownership.released(pool),
                network=self.networks[pool.name],
                live=self.live_pools.get(pool.name),
                running=self.running_pools.get(pool.name),
            )
            for pool in self.pools.pools
        )

    def served(self, installer: str) -> list[GpuPoolConfig]:
        """The pools whose GPU stack `installer` puts on: its own, and a used pool nothing serves already."""
        served = self.in_cluster.served if self.in_cluster else frozenset()
        plugin = installer == "device-plugin"
        return [
            p
            for p in self.pools.pools
            if p.mode == installer and (p.owned or (plugin and p.name not in served) or (not plugin and self.serves_named_pools))
        ]

    @property
    def serves_named_pools(self) -> bool:
        """A run of the GPU stack without the pools (the package's GpuStack) serves the pools it is
        given, all the cluster's own: one without a driver gets the GPU Operator there, which the
        program leaves to the owner of a pool it only uses."""
        return Part.GPU_STACK in self.parts and Part.POOLS not in self.parts

    def tolerations(self, pools: Iterable[GpuPoolConfig]) -> tuple[k8s.core.v1.TolerationArgs, ...]:
        return tolerations.merged(tolerations.pool_tolerations(p, self.live_pools.get(p.name)) for p in pools)

    def device_plugin(self) -> NvidiaDevicePluginArgs | None:
        """The device plugin, where it serves a pool, and what of the guide's it takes over."""
        cfg, serves = self.cfg, self.served("device-plugin")
        if not serves or Part.GPU_STACK not in self.parts:
            return None
        found = self.in_cluster.adoption if self.in_cluster else None
        marks = ownership.adopted_marks(self.owner) if cfg.device_plugin.adopt else dict(self.owner)
        return NvidiaDevicePluginArgs(
            namespace=cfg.device_plugin.namespace,
            image=cfg.device_plugin.image,
            gpu_tolerations=self.tolerations(serves),
            mig=any(p.mig_profile for p in serves),
            pool_names=tuple(p.name for p in serves) if cfg.select_pools else (),
            marks=marks if self.found else {},
            adopt=found is not None,
            imports=(found.import_namespace, found.import_daemon_set) if found else (True, True),
            retain_on_delete=ownership.plugin_released(cfg.device_plugin),
        )

    def adopted(self, plugin: NvidiaDevicePluginArgs | None) -> dict[str, Any] | None:
        """The `adopted` output: what the state's record holds, and what this run adopts, with
        the onDestroy it declares (ownership/adopted_record.py)."""
        if self.found is None:
            return None
        pools = {p.name: p.on_destroy or adopted_record.RELEASE for p in self.pools.pools if p.existing == "adopt"}
        objects: tuple[dict[str, str], dict[str, str]] = ({}, {})
        if plugin is not None and self.cfg.device_plugin.adopt:
            name, on_destroy = plugin.namespace, self.cfg.device_plugin.on_destroy or adopted_record.RELEASE
            objects = ({name: on_destroy}, {f"{name}/{cluster_objects.GUIDE_DAEMONSET}": on_destroy})
        return self.state.adopted.carried(adopted_record.Record(pools, *objects)).output(self.owner_tag)

    def dcgm_exporter(self, plugin: NvidiaDevicePluginArgs | None) -> DcgmExporterArgs | None:
        if plugin is None or not self.cfg.monitoring.gpu_metrics:
            return None
        served = [p.name for p in self.served("device-plugin")]
        return DcgmExporterArgs(
            image=self.cfg.monitoring.dcgm_exporter_image, gpu_pool_names=served, gpu_tolerations=plugin.gpu_tolerations
        )

    def gpu_operator(self) -> GpuOperatorArgs | None:
        if not (served := self.served("gpu-operator")) or Part.GPU_STACK not in self.parts:
            return None
        cfg = self.cfg
        return GpuOperatorArgs(
            namespace=cfg.gpu_operator.namespace,
            version=cfg.gpu_operator.version,
            gpu_metrics=cfg.monitoring.gpu_metrics,
            gpu_tolerations=self.tolerations(served),
            marks=self.marks,
        )

    def proof(self, egress: cluster_egress.Egress, with_expander: bool, watch: bool = True) -> MnistJobArgs | None:
        """One proof Job per GPU pool in no capacity group, and one per group (steps 8-9): each waits
        for its pool(s) and what installs their GPU stack, never for the pools after it (docs/
        lifecycle.md, "One pool operation at a time"); a group's after the priorities too
        (`with_expander`), so its first scale-up already follows the team's order. `watch` False:
        an awaited Job has no watch beside it (build_plan's `dynamic_resources`)."""
        cfg, job = self.cfg, self.cfg.mnist_job
        if not self.proves:
            return None
        max_seconds = job.max_seconds if job.runs_script else None
        gpus = self.in_cluster.gpus.resources if self.in_cluster else {}
        proof_groups = self.groups()
        grouped = {name for names in proof_groups.values() for name in names}
        by_name = {p.name: p for p in self.pools.pools}
        # A pool's own Job fails by itself (activeDeadlineSeconds) before `pulumi up` stops waiting for it.
        own = [
            MnistRun(
                pool_name=p.name,
                gpu_tolerations=self.tolerations([p]),
                create_timeout=job_timeout(p, max_seconds),
                deadline_seconds=job_deadline(p, max_seconds),
                after=(p.name, p.mode),
                pin=cfg.select_pools,
                guide_names=not cfg.pool_map,
                gpu_resource=gpus.get(p.name, GPU),
                autoscaled=p.autoscaling,
            )
            for p in self.pools.pools
            if p.name not in grouped
        ]
        group_runs = [
            self.group_run(group, [by_name[n] for n in names], max_seconds, gpus.get(names[0], GPU), with_expander)
            for group, names in proof_groups.items()
        ]
        return MnistJobArgs(
            image=job.image,
            namespace=job.namespace,
            max_steps=job.max_steps,
            wait_for_completion=job.wait_for_completion,
            watch=watch,
            script=ProofScript(job.max_seconds, job.min_accuracy) if job.runs_script else None,
            egress=job.egress,
            proxy=cluster_egress.proxy_rule(egress, job.egress),
            marks=self.marks,
            vm_sizes={p.name: p.vm_size for p in self.pools.pools},
            runs=[*own, *group_runs],
        )

    def group_run(
        self, group: str, members: list[GpuPoolConfig], max_seconds: int | None, gpu_resource: str, with_expander: bool
    ) -> MnistRun:
        """A group's one Job, on any of its pools, waiting until the autoscaler first tries the last one."""
        after = [*(n for m in members for n in (m.name, m.mode)), *([EXPANDER] if with_expander else [])]
        return MnistRun(
            pool_name=group,
            gpu_tolerations=self.tolerations(members),
            create_timeout=group_timeout(members, max_seconds),
            deadline_seconds=group_deadline(members, max_seconds),
            after=tuple(dict.fromkeys(after)),
            pin=True,
            guide_names=False,
            gpu_resource=gpu_resource,
            autoscaled=True,
            accepted_pools=tuple(m.name for m in members),
            group=True,
        )


def billed(cfg: StackConfig, pools: Pools | None = None, proves: bool = True) -> cost.Billed:
    """What the cost reads: the run's pools (None: the config's) and a created cluster's System pool;
    `proves`: whether the run declares the proof (mnistJob.enabled, where it declares it)."""
    system_pool = cfg.system_pool if cfg.existing_cluster is None else None
    run_pools = pools or cfg.pools
    job = cfg.mnist_job
    runs = job.enabled and proves
    max_seconds = job.max_seconds if job.runs_script else None
    # A used pool the proof scales from zero is held for at most its Job's deadline (`proof`).
    proof_seconds = {p.name: job_deadline(p, max_seconds) for p in run_pools.pools if not p.owned and p.can_scale_to_zero and runs}
    return cost.Billed(run_pools, system_pool, runs, cfg.cost, cfg.preflight.prices_file, proof_seconds)


def _read_subscription(subscription: preflight.Subscription) -> str:
    try:
        return subscription()
    except read_errors() as error:
        raise PreflightError(
            f"preflight: the subscription could not be read ({error_line(error)}); sign in (az login), or set azure-native:subscriptionId"
        ) from error
