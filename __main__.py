"""aks-gpu: Microsoft's "Use GPUs for compute-intensive workloads on AKS", as one Pulumi program.

Read top to bottom, `main` is the guide's table of contents:
  config -> the plan (preflight and what it will cost, an existing cluster as read, and
  every decision below: components/plan.py) -> the cluster (created, or an existing one) ->
  its GPU pools -> the device plugin (or the GPU Operator) and GPU metrics on those pools ->
  one MNIST Job per pool (or per capacity group) -> outputs. Each step passes the plan's values on and decides nothing.
"""

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

import pulumi

from components import config
from components.deciding.cost import cost
from components.live.reader import LiveReader
from components.plan import Message, Mode, Plan, Said, build_plan
from components.reading.reader import AzureReader
from components.resources import budget
from components.resources.budget import CostBudget, CostBudgetArgs
from components.resources.capacity_expander import CapacityExpander, CapacityExpanderArgs
from components.resources.cluster import GpuCluster, GpuClusterArgs
from components.resources.dcgm_exporter import DcgmExporter, DcgmExporterArgs
from components.resources.device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.resources.existing_cluster import ExistingCluster, ExistingClusterArgs
from components.resources.existing_pool import UsedPool
from components.resources.gpu_operator import GpuOperator, GpuOperatorArgs
from components.resources.gpu_pool import GpuPool, GpuPoolArgs, merged_tolerations
from components.resources.job_deadline import group_deadline, group_timeout, job_deadline, job_timeout
from components.resources.mnist_job import MnistJob, MnistJobArgs, MnistRun, ProofScript
from components.resources.outputs import gpu_metrics_location, group_outputs, nodes_command, pool_outputs

Cluster = GpuCluster | ExistingCluster
Pool = GpuPool | UsedPool


def main(reader: AzureReader) -> None:
    """The program, reading Azure and the cluster through `reader`: live under `pulumi preview`
    and `pulumi up` (the last line), the offline render's or a test's (tools/mock_engine.py)."""
    # Parse and validate every setting, then read and check the subscription (and an existing
    # cluster) before any resource is registered: a preview warns, a deployment stops.
    mode = Mode.of(pulumi.runtime.is_dry_run())
    said = Said()
    try:
        plan = build_plan(
            config.load(), reader, mode, project=pulumi.get_project(), stack=pulumi.get_stack(), environ=os.environ, said=said
        )
    finally:  # what was said before a stop is printed too
        report(said)
    cluster = declare_cluster(plan, reader)
    cost_budget = declare_budget(plan, cluster)
    pools = declare_pools(plan, cluster, cost_budget)
    device_plugin, exporter, operator = declare_gpu_stack(plan, cluster, pools)
    expander = declare_expander(plan, cluster)
    job = declare_proof(plan, cluster, pools, {"device-plugin": device_plugin, "gpu-operator": operator}, expander)
    export_outputs(plan, cluster, pools, job, device_plugin, exporter, operator)


def report(messages: Iterable[Message]) -> None:
    for message in messages:
        (pulumi.log.warn if message.level == "warn" else pulumi.log.info)(message.text)


# Steps 1-3: the cluster and its credentials. The guide's first section creates a resource
# group and a cluster; its other entry point starts from the reader's existing cluster.
def declare_cluster(plan: Plan, reader: AzureReader) -> Cluster:
    cfg = plan.cfg
    if plan.found is not None:
        return ExistingCluster(
            "existing-cluster",
            ExistingClusterArgs(facts=plan.found, user_kubeconfig=plan.user_kubeconfig or "", subscription_id=plan.subscription),
        )
    return GpuCluster(
        "gpu-cluster",
        GpuClusterArgs(
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
            retire_managed_pool_command=plan.decided.retire_managed_pool_command,
            wait_for_access=reader.wait_for_access if plan.decided.waits_for_access else None,
            subscription_id=plan.subscription,
            priority_expander=plan.decided.expander_priorities is not None,
        ),
    )


# A monthly budget over what the stack runs, with e-mail alerts (cost.budget): its scope and
# filter watch where AKS bills the GPU nodes (components/resources/budget.py says why). Created
# before the GPU pools, which wait for it, so no GPU node bills without it; it waits for no pool
# and no Job (a created cluster only, for its node resource group). Preflight has checked the
# permission; a refusal it could not see stops the `up` after the cluster, before any pool.
def declare_budget(plan: Plan, cluster: Cluster) -> CostBudget | None:
    wanted = plan.cfg.cost.budget
    if wanted is None or plan.budget_name is None:
        return None
    assert plan.subscription is not None, "the plan reads it for a budget"
    if isinstance(cluster, GpuCluster):
        # AKS names the node resource group of every cluster it creates (typed Optional by the SDK).
        groups = [cluster.resource_group.name, cast("pulumi.Output[str]", cluster.managed_cluster.node_resource_group)]
        watched = budget.resource_groups(plan.subscription, groups, plan.decided.budget_groups)
    else:
        watched = budget.tagged(plan.subscription, *next(iter(plan.owner.items())))
    return CostBudget(
        "cost",
        CostBudgetArgs(watched=watched, name=plan.budget_name, amount=wanted.amount, contact_emails=wanted.contact_emails),
    )


# Step 2's `az aks nodepool add`, once per GPU pool, one after another: AKS runs one
# agent-pool operation per cluster at a time, so each pool waits for every pool before it,
# which orders deletes too (components/resources/gpu_pool.py, pool_dependencies).
# The guide's pool keeps the URN it had as a child of the cluster component (an alias).
# The managed pool's own provider calls the agentPools API in azure-native's subscription.
def declare_pools(plan: Plan, cluster: Cluster, cost_budget: CostBudget | None) -> list[Pool]:
    cfg, decided = plan.cfg, plan.decided
    pools: list[Pool] = []
    for pool in cfg.gpu_pools:
        if not pool.owned:  # the owner's pool as it is (existing: use): nothing of it is registered
            pools.append(UsedPool(pool, plan.live_pools[pool.name]))
            continue
        pools.append(
            GpuPool(
                f"gpu-pool-{pool.name}",
                GpuPoolArgs(
                    pool=pool,
                    cluster=cluster,
                    resource_group_name=cfg.resource_group_name,
                    cluster_name=cfg.cluster_name,
                    subscription_id=plan.subscription,
                    kubernetes_version=cfg.kubernetes_version,
                    version_moves=decided.version_moves,
                    tags=decided.pool_tags[pool.name],
                    node_labels=decided.pool_labels[pool.name],
                    retain_on_delete=pool.name in decided.released_pools,
                    moved_from=cluster if decided.pool_moved_from_cluster else None,
                    after=[p.node_pool for p in pools if p.node_pool is not None],
                    budget=cost_budget,
                    network=plan.networks[pool.name],
                    live=plan.live_pools.get(pool.name),
                    running=plan.running_pools.get(pool.name),
                ),
            )
        )
    return pools


def serving(plan: Plan, pools: list[Pool], installer: str) -> list[Pool]:
    """The pools whose GPU stack `installer` installs (Decided.serving)."""
    return [p for p in pools if p.name in plan.decided.serving[installer]]


def inside(plan: Plan, cluster: Cluster) -> pulumi.Resource | None:
    """What every Kubernetes object is deleted with (Decided.deleted_with_cluster says when and why)."""
    return cluster.managed_cluster if plan.decided.deleted_with_cluster and isinstance(cluster, GpuCluster) else None


def access(cluster: Cluster) -> Sequence[pulumi.Input[pulumi.Resource]]:
    """Every Kubernetes object waits until the cluster lets the deployer in (GpuCluster.access):
    an edge of their own, never an input of the provider (components/resources/cluster.py says why)."""
    return cluster.access if isinstance(cluster, GpuCluster) else []


# Steps 4-5: the gpu-resources namespace and the NVIDIA device plugin DaemonSet on the pools
# whose GPU stack this program manages; AKS (step 6's successor) or NVIDIA's GPU Operator on
# the others: the guide warns against two device plugins. Then NVIDIA's DCGM exporter.
def declare_gpu_stack(
    plan: Plan, cluster: Cluster, pools: list[Pool]
) -> tuple[NvidiaDevicePlugin | None, DcgmExporter | None, GpuOperator | None]:
    cfg, decided = plan.cfg, plan.decided
    device_plugin = exporter = operator = None
    if decided.device_plugin is not None:  # it serves a pool (Decided.serving)
        plugin, adoption = decided.device_plugin, decided.device_plugin_adoption
        device_plugin = NvidiaDevicePlugin(
            "nvidia-device-plugin",
            NvidiaDevicePluginArgs.of(
                plugin,  # the plan's inputs, from which it said what the adopting `up` changes
                provider=cluster.provider,
                imports=(adoption.import_namespace, adoption.import_daemon_set) if adoption else (True, True),
                retain_on_delete=decided.device_plugin_released,
                deleted_with=inside(plan, cluster),
                depends_on=access(cluster),
            ),
        )
        if cfg.monitoring.gpu_metrics:
            exporter = DcgmExporter(
                "dcgm-exporter",
                DcgmExporterArgs(
                    provider=cluster.provider,
                    namespace=device_plugin.namespace_name,
                    image=cfg.monitoring.dcgm_exporter_image,
                    gpu_pool_names=list(decided.serving["device-plugin"]),
                    gpu_tolerations=plugin.gpu_tolerations,
                    deleted_with=inside(plan, cluster),
                    depends_on=access(cluster),
                ),
            )
    if operator_pools := serving(plan, pools, "gpu-operator"):
        operator = GpuOperator(
            "gpu-operator",
            GpuOperatorArgs(
                provider=cluster.provider,
                namespace=cfg.gpu_operator.namespace,
                version=cfg.gpu_operator.version,
                gpu_metrics=cfg.monitoring.gpu_metrics,
                gpu_tolerations=merged_tolerations(operator_pools),
                marks=decided.object_marks,
                deleted_with=inside(plan, cluster),
                depends_on=access(cluster),
            ),
        )
    return device_plugin, exporter, operator


# Capacity groups on a cluster the stack creates: the cluster autoscaler's priorities, so a
# group's pools are scaled in the team's order (the profile's expander is the cluster's, above).
# On an existing cluster both are the owner's: the plan says what they would set. A created
# cluster may have its owner's ConfigMap: used as it is, never declared (the plan says so).
def declare_expander(plan: Plan, cluster: Cluster) -> CapacityExpander | None:
    priorities = plan.decided.expander_config_map
    if priorities is None:
        return None
    return CapacityExpander(
        "capacity-expander",
        CapacityExpanderArgs(
            provider=cluster.provider, priorities=priorities, deleted_with=inside(plan, cluster), depends_on=access(cluster)
        ),
    )


# Steps 8-9: one MNIST Job per GPU pool and one per capacity group, side by side; `pulumi up`
# waits for each. A Job waits for its pool(s) and what installs their device plugin, never for
# the pools after it (docs/design/lifecycle.md, "One pool operation at a time").
def declare_proof(
    plan: Plan,
    cluster: Cluster,
    pools: list[Pool],
    installers: Mapping[str, pulumi.Resource | None],
    expander: CapacityExpander | None = None,
) -> MnistJob | None:
    cfg, decided = plan.cfg, plan.decided
    if not cfg.mnist_job.enabled:
        return None
    by_name = {p.name: p for p in pools}
    # A group's Job after the priorities, so its first scale-up already follows the team's order.
    order = [expander.config_map] if expander is not None else []
    group_runs = [group_run(plan, group, [by_name[n] for n in names], installers, order) for group, names in decided.proof_groups.items()]
    grouped = {name for names in decided.proof_groups.values() for name in names}
    return MnistJob(
        "mnist",
        MnistJobArgs(
            provider=cluster.provider,
            image=cfg.mnist_job.image,
            namespace=cfg.mnist_job.namespace,
            max_steps=cfg.mnist_job.max_steps,
            wait_for_completion=cfg.mnist_job.wait_for_completion,
            script=ProofScript(cfg.mnist_job.max_seconds, cfg.mnist_job.min_accuracy) if cfg.mnist_job.runs_script else None,
            egress=cfg.mnist_job.egress,
            proxy=decided.proof_proxy,
            marks=decided.object_marks,
            deleted_with=inside(plan, cluster),
            depends_on=access(cluster),
            # Each awaited Job's watch (components/resources/proof_watch.py) finds the cluster so.
            watch_on=cluster.ref,
            vm_sizes={p.name: p.vm_size for p in pools},
            runs=[*(pool_run(plan, p, installers) for p in pools if p.name not in grouped), *group_runs],
        ),
    )


def pool_run(plan: Plan, p: Pool, installers: Mapping[str, pulumi.Resource | None]) -> MnistRun:
    """A pool's own Job: on its pool, after it and what installs its GPU stack. It fails by itself
    (activeDeadlineSeconds) before `pulumi up` stops waiting for it."""
    max_seconds = plan.decided.proof_max_seconds
    return MnistRun(
        pool_name=p.name,
        gpu_tolerations=p.tolerations,
        create_timeout=job_timeout(p.pool, max_seconds),
        deadline_seconds=job_deadline(p.pool, max_seconds),
        depends_on=[r for r in (p.node_pool, installers.get(p.pool.mode)) if r is not None],
        pin=plan.cfg.select_pools,
        guide_names=plan.decided.guide_pool,
        gpu_resource=plan.decided.gpu_resources[p.name],
        autoscaled=p.pool.autoscaling,
    )


def group_run(
    plan: Plan,
    group: str,
    members: Sequence[Pool],
    installers: Mapping[str, pulumi.Resource | None],
    after: Sequence[pulumi.Resource] = (),
) -> MnistRun:
    """A capacity group's one Job, named after the group: on the nodes of any of its pools (the
    pools by AKS's agentpool label), tolerating each pool's taints, after every pool and what
    installs their GPU stack, and waiting until the autoscaler first tries the last pool, every
    try before failing slowly, then as long as the slowest of them needs (each scales from zero;
    job_deadline.group_deadline)."""
    max_seconds = plan.decided.proof_max_seconds
    waits = [*(r for m in members for r in (m.node_pool, installers.get(m.pool.mode)) if r is not None), *after]
    return MnistRun(
        pool_name=group,
        gpu_tolerations=merged_tolerations(members),
        create_timeout=group_timeout([m.pool for m in members], max_seconds),
        deadline_seconds=group_deadline([m.pool for m in members], max_seconds),
        depends_on=list(dict.fromkeys(waits)),
        pin=True,
        guide_names=False,
        gpu_resource=plan.decided.gpu_resources[members[0].name],
        autoscaled=True,
        accepted_pools=tuple(m.name for m in members),
        group=True,
    )


# Outputs: what was built, and the commands a user types next.
def export_outputs(
    plan: Plan,
    cluster: Cluster,
    pools: list[Pool],
    job: MnistJob | None,
    device_plugin: NvidiaDevicePlugin | None,
    exporter: DcgmExporter | None,
    operator: GpuOperator | None,
) -> None:
    cfg, guide_pool = plan.cfg, plan.decided.guide_pool
    pulumi.export("resourceGroupName", cluster.resource_group_name)
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("gpuPools", pool_outputs(pools, job, plan.decided.proof_groups))
    if plan.decided.proof_groups:  # the capacity groups (gpuGroups), each with its one Job
        pulumi.export("gpuGroups", group_outputs(plan.decided.proof_groups, pools, job))
    if guide_pool:  # the guide's one pool, by the names earlier releases exported
        gpu = pools[0]
        pulumi.export("gpuPoolName", gpu.name)
        pulumi.export("gpuPoolVmSize", gpu.vm_size)
        pulumi.export("gpuPoolGeneration", gpu.generation)
        pulumi.export("gpuManagement", gpu.management)
        pulumi.export("gpusPerNode", gpu.gpus_per_node)
        pulumi.export("gpuNodesCommand", nodes_command(gpu.name))  # the guide's "confirm that GPUs are schedulable"
    if plan.estimate is not None:
        pulumi.export("estimatedCost", cost.output(plan.estimate))
    pulumi.export("gpuMetrics", gpu_metrics_location(cfg.modes, cfg.monitoring.gpu_metrics, exporter, operator))
    if device_plugin is not None:
        pulumi.export("devicePluginNamespace", device_plugin.namespace_name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("getCredentialsCommand", cluster.get_credentials_command)
    if job is not None and guide_pool:
        first = job.jobs[pools[0].name]
        pulumi.export("mnistJobName", first.name)
        pulumi.export("mnistJobNamespace", first.namespace)
        pulumi.export("jobLogsCommand", first.logs_command)
        if first.result_command is not None:  # the last proof's line, kept by its watch
            pulumi.export("jobResultCommand", first.result_command)
        pulumi.export("mnistJobUrn", first.urn)


# Pulumi's language host runs this file as __main__ (pulumi/pulumi
# sdk/python/cmd/pulumi-language-python-exec: `runpy.run_path(args.PROGRAM, run_name='__main__')`):
# the live reader, one credential for the run. The mock engine and the offline render run it
# under another name and call `main` with their own reader (tools/mock_engine.py).
if __name__ == "__main__":
    main(LiveReader())
