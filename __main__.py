"""aks-gpu: Microsoft's "Use GPUs for compute-intensive workloads on AKS", as one Pulumi program.

Read top to bottom, this is the guide's table of contents:
  config -> preflight and what it will cost -> the cluster (created, or an existing one) ->
  its GPU pools -> the device plugin (or the GPU Operator) and GPU metrics on those pools ->
  one MNIST Job per pool -> a monthly budget, if asked -> outputs.
"""

import os
from typing import cast

import pulumi
from pulumi_azure_native import authorization

from components import config
from components.azure import (
    azure_facts,
    cluster_egress,
    cluster_facts,
    cluster_object_checks,
    cluster_objects,
    cost,
    existing_cluster_checks,
    existing_pools,
    ownership,
    pool_network,
    preflight,
    proof_fit,
    reader,
    stack_state,
)
from components.azure.live.reader import LiveReader
from components.resources import budget
from components.resources.adopted import device_plugin_plans, pool_plan
from components.resources.budget import CostBudget, CostBudgetArgs
from components.resources.cluster import GpuCluster, GpuClusterArgs
from components.resources.dcgm_exporter import DcgmExporter, DcgmExporterArgs
from components.resources.device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.resources.existing_cluster import ExistingCluster, ExistingClusterArgs, provider_kubeconfig
from components.resources.existing_pool import UsedPool
from components.resources.gpu_operator import GpuOperator, GpuOperatorArgs
from components.resources.gpu_pool import GpuPool, GpuPoolArgs, gpu_pool_taints, merged_tolerations, version_moves
from components.resources.job_deadline import job_deadline, job_timeout
from components.resources.mnist_job import MnistJob, MnistJobArgs, MnistRun, ProofScript
from components.resources.outputs import gpu_metrics_location, nodes_command, pool_outputs

# Parse and validate every setting, then check the subscription (and an existing cluster),
# before any resource is registered: a preview warns, a deployment stops.
cfg = config.load()
# Azure and the cluster, read through one reader: live under `pulumi preview` and `pulumi up`,
# the offline render's or a test's when one was handed in (components/azure/reader.py).
azure = reader.handed_in() or LiveReader()
for warning in cfg.warnings:
    pulumi.log.warn(warning)
preflight.provider_host(cfg, os.environ)  # an AKS-managed pool's provider must load where Pulumi runs it
existing = cfg.existing_cluster
named = cluster_facts.Named(existing.name, existing.resource_group_name, cfg.subscription_id) if existing else cluster_facts.Named(None)
cluster_facts.check_saved(cfg.preflight.cluster_file, named)
cluster_objects.check_saved(cfg.preflight.kubernetes_file)
# An existing cluster is read once, here: a cluster that cannot be read stops the run.
found = cluster_facts.read(azure, existing.resource_group_name, existing.name) if existing else None
user_kubeconfig = cluster_facts.read_user_kubeconfig(azure, found.resource_group, found.name) if found else None
# The cluster's own GPU pools the stack uses or adopts (gpuPools.<name>.existing), read from it:
# from here on their settings are Azure's.
owner = existing_cluster_checks.owner_tags(pulumi.get_project(), pulumi.get_stack())
# What the stack holds already, from the engine's state, not from a tag its owner can remove: a
# pool, namespace or DaemonSet it registered is its own whatever its marks say, and its import
# is decided by it. Not known: a run says how to check, and gives no advice that deletes.
state = stack_state.read(azure, (found.resource_group, found.name)) if found is not None else stack_state.NOT_READ
# What this stack adopted is guarded: a config that would replace it stops here, and one that
# no longer names it is told what the engine does (release, or delete where the stack may).
if found is not None:
    for warning in ownership.check_pools(cfg, found, next(iter(owner.values())), state, pulumi.runtime.is_dry_run()):
        pulumi.log.warn(warning)
cfg, live_pools, existing_lines = existing_pools.resolve(cfg, found, next(iter(owner.values())), state)
for line in existing_lines:
    pulumi.log.info(line)
# Each GPU pool's subnets and pods per node, fitted to the cluster's network; a pool this
# stack runs already keeps its own, and a config that moves it is said to replace it.
adopted = {name: live.facts for name, live in live_pools.items() if live.how == "adopt"}
networks = pool_network.plan_pools(cfg, found, pulumi.get_stack(), adopted, state)
if found is not None:
    for network in networks.values():
        pulumi.log.info(network.why)
        if network.replaces:
            pulumi.log.warn(network.replaces)
# What the existing cluster already runs in Kubernetes, read as the Kubernetes provider signs
# in: a namespace this stack would create, another device plugin or the GPU Operator on its
# pools, and the guide's DaemonSet that devicePlugin.adopt takes over on this run. Read whatever
# preflight.mode says: what the stack adopted is guarded by it (components/azure/ownership.py),
# and two device plugins on one node are never declared (preflight.run).
in_cluster = None
if found is not None and user_kubeconfig:
    in_cluster = cluster_object_checks.check(
        cfg,
        azure,
        provider_kubeconfig(user_kubeconfig),
        cluster_object_checks.stack_pools(cfg, found, gpu_pool_taints),
        next(iter(owner.values())),
        pulumi.runtime.is_dry_run(),
        found,
        state,
    )
    for warning in in_cluster.warnings:
        pulumi.log.warn(warning)
    for line in in_cluster.lines:
        pulumi.log.info(line)
if found is not None and not (in_cluster and in_cluster.read):
    pulumi.log.info(existing_cluster_checks.namespaces_line(cfg, found))
    for line in existing_pools.unread_plugin_lines(cfg):
        pulumi.log.warn(line)
# A pool that runs under the other kind of GPU management cannot be switched: refused here.
# The same read decides what a typed pool leaves to Azure: unread, a preview says the plan is
# not known and a deployment stops.
switch_notes, running_pools = preflight.pool_switches(cfg, found, azure, pulumi.runtime.is_dry_run())
for warning in switch_notes:
    pulumi.log.warn(warning)
# What the adopting `up` does to each pool it takes over: the import, then the update field
# by field (a replacement is refused here); the device plugin's below, with its declaration.
for pool in cfg.gpu_pools:
    if (live := live_pools.get(pool.name)) is not None and live.import_id:
        plan = pool_plan(
            pool, cfg.pool_key(pool), networks[pool.name], ownership.pool_marks(pool, owner), live, running_pools.get(pool.name)
        )
        pulumi.log.info(plan.line())
checked = preflight.run(
    cfg,
    stack=pulumi.get_stack(),
    reader=azure,
    found=found,
    networks=networks.values(),
    in_cluster=in_cluster.problems if in_cluster else (),
    state=state,
)
for warning in checked.warnings:
    pulumi.log.warn(warning)
# Each pool's GPU, and whether the proof's image can run on it.
proof_lines, proof_warnings = proof_fit.lines(cfg, live_pools)
for line in proof_lines:
    pulumi.log.info(line)
for warning in proof_warnings:
    pulumi.log.warn(warning)
# Where the proof's traffic leaves an existing cluster: its HTTP proxy, or an outbound type
# with no way out (a cluster this program creates has neither: components/azure/cluster_egress.py).
egress = found.egress if found is not None else cluster_egress.Egress()
enforced = found is None or (found.network_policy or "none").lower() != "none"
egress_lines, egress_warnings = cluster_egress.lines(cfg, found.name if found else cfg.cluster_name, egress, enforced)
for line in egress_lines:
    pulumi.log.info(line)
for warning in egress_warnings:
    pulumi.log.warn(warning)

# What it will cost per hour, one line per pool; a deployment above cost.maxHourly stops here.
estimate, cost_lines, cost_warnings = cost.run(cfg, checked.region, azure)
for line in cost_lines:
    pulumi.log.info(line)
for warning in cost_warnings:
    pulumi.log.warn(warning)

# Steps 1-3: the cluster and its credentials. The guide's first section creates a resource
# group and a cluster; its other entry point starts from the reader's existing cluster.
guide_pool = not cfg.pool_map
cluster: GpuCluster | ExistingCluster
if found is None:
    cluster = GpuCluster(
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
            retire_managed_pool_command=guide_pool and cfg.gpu_pools[0].managed,
            wait_for_access=azure.wait_for_access,
        ),
    )
else:
    cluster = ExistingCluster(
        "existing-cluster",
        ExistingClusterArgs(facts=found, user_kubeconfig=user_kubeconfig or ""),
    )

# A monthly budget over what the stack runs, with e-mail alerts (cost.budget): its scope and
# filter watch where AKS bills the GPU nodes (components/resources/budget.py says why). Created
# before the GPU pools, which wait for it, so no GPU node bills without it; it waits for no pool
# and no Job (a created cluster only, for its node resource group). Preflight has checked the
# permission; a refusal it could not see stops the `up` after the cluster, before any pool.
cost_budget = None
if cfg.cost.budget is not None:
    client_subscription = authorization.get_client_config_output().subscription_id
    if isinstance(cluster, GpuCluster):
        group_names = (cfg.resource_group_name, azure_facts.node_resource_group(cfg.resource_group_name, cfg.cluster_name, cfg.location))
        # AKS names the node resource group of every cluster it creates (typed Optional by the SDK).
        groups = [cluster.resource_group.name, cast("pulumi.Output[str]", cluster.managed_cluster.node_resource_group)]
        watched = budget.resource_groups(client_subscription, groups, group_names)
    else:
        watched = budget.tagged(client_subscription, *next(iter(owner.items())))
    budget_name = budget.budget_name(pulumi.get_project(), pulumi.get_stack(), cfg.cluster_name)
    budget_line, budget_warnings = cost.budget_lines(cfg, estimate, budget_name, watched.says)
    pulumi.log.info(budget_line)
    for warning in budget_warnings:
        pulumi.log.warn(warning)
    cost_budget = CostBudget(
        "cost",
        CostBudgetArgs(watched=watched, name=budget_name, amount=cfg.cost.budget.amount, contact_emails=cfg.cost.budget.contact_emails),
    )

# What lives inside a cluster this stack creates (every Kubernetes object, the Helm release) is
# deleted with it (`deletedWith`): a destroy, or a replacement of the cluster, deletes none of
# them by itself, and needs no API server (docs/lifecycle.md, "pulumi destroy"). Not the GPU
# pools, which bill: each is deleted by itself, so a destroy that stops part-way leaves none
# running outside the state (GpuPool's pool_dependencies says why). Not on an existing cluster,
# which is not the stack's; not while the cluster is protected, whose delete the engine refuses
# only after it has skipped theirs (the same section says why).
inside = cluster.managed_cluster if isinstance(cluster, GpuCluster) and not cfg.protect else None

# Step 2's `az aks nodepool add`, once per GPU pool, one after another: AKS runs one
# agent-pool operation per cluster at a time, so each pool waits for every pool before it,
# which orders deletes too (components/resources/gpu_pool.py, pool_dependencies).
# The guide's pool keeps the URN it had as a child of the cluster component (an alias).
# The managed pool's own provider calls the agentPools API in azure-native's subscription.
managed = any(pool.managed for pool in cfg.gpu_pools)
subscription_id = authorization.get_client_config_output().subscription_id if managed else None
pools: list[GpuPool | UsedPool] = []
for pool in cfg.gpu_pools:
    if pool.existing == "use":  # the owner's pool as it is: nothing of it is registered
        pools.append(UsedPool(pool, live_pools[pool.name]))
        continue
    pools.append(
        GpuPool(
            f"gpu-pool-{pool.name}",
            GpuPoolArgs(
                pool=pool,
                cluster=cluster,
                resource_group_name=cfg.resource_group_name,
                cluster_name=cfg.cluster_name,
                subscription_id=subscription_id,
                kubernetes_version=cfg.kubernetes_version,
                version_moves=existing is not None or version_moves(cfg.upgrade),
                tags=ownership.pool_marks(pool, owner) if existing else None,
                retain_on_delete=ownership.released(pool),
                moved_from=cluster if guide_pool and existing is None else None,
                after=[p.node_pool for p in pools if p.node_pool is not None],
                budget=cost_budget,
                network=networks[pool.name],
                live=live_pools.get(pool.name),
                running=running_pools.get(pool.name),
            ),
        )
    )


def serving(mode: str) -> list[GpuPool | UsedPool]:
    """The pools whose GPU stack this program installs in `mode`: its own, and a used pool's
    that nothing of the cluster's serves already (in_cluster.served)."""
    served = in_cluster.served if in_cluster else frozenset()
    return [p for p in pools if p.pool.mode == mode and (p.pool.owned or (mode == "device-plugin" and p.name not in served))]


# Every Kubernetes object waits until the cluster lets the deployer in (GpuCluster.access): an
# edge of their own, never an input of the provider (components/resources/cluster.py says why).
access = cluster.access if isinstance(cluster, GpuCluster) else []

# Steps 4-5: the gpu-resources namespace and the NVIDIA device plugin DaemonSet on the pools
# whose GPU stack this program manages; AKS (step 6's successor) or NVIDIA's GPU Operator on
# the others: the guide warns against two device plugins. Then NVIDIA's DCGM exporter.
device_plugin = exporter = operator = None
if plugin_pools := serving("device-plugin"):
    plugin_args = NvidiaDevicePluginArgs(
        provider=cluster.provider,
        namespace=cfg.device_plugin.namespace,
        image=cfg.device_plugin.image,
        gpu_tolerations=merged_tolerations(plugin_pools),
        mig=any(p.pool.mig_profile for p in plugin_pools),
        pool_names=[p.name for p in plugin_pools] if cfg.select_pools else (),
        marks=(ownership.adopted_marks(owner) if cfg.device_plugin.adopt else owner) if existing else {},
        adopt=bool(in_cluster and in_cluster.adoption),
        imports=(in_cluster.adoption.import_namespace, in_cluster.adoption.import_daemon_set)
        if in_cluster and in_cluster.adoption
        else (True, True),
        retain_on_delete=ownership.plugin_released(cfg),
        deleted_with=inside,
        depends_on=access,
    )
    # What the adopting `up` does to the guide's namespace and DaemonSet, field by field.
    for plan in device_plugin_plans(plugin_args, in_cluster.adoption) if in_cluster and in_cluster.adoption else []:
        pulumi.log.info(plan.line())
    device_plugin = NvidiaDevicePlugin("nvidia-device-plugin", plugin_args)
    if cfg.monitoring.gpu_metrics:
        exporter = DcgmExporter(
            "dcgm-exporter",
            DcgmExporterArgs(
                provider=cluster.provider,
                namespace=device_plugin.namespace_name,
                image=cfg.monitoring.dcgm_exporter_image,
                gpu_pool_names=[p.name for p in plugin_pools],
                gpu_tolerations=merged_tolerations(plugin_pools),
                deleted_with=inside,
                depends_on=access,
            ),
        )
if operator_pools := serving("gpu-operator"):
    operator = GpuOperator(
        "gpu-operator",
        GpuOperatorArgs(
            provider=cluster.provider,
            namespace=cfg.gpu_operator.namespace,
            version=cfg.gpu_operator.version,
            gpu_metrics=cfg.monitoring.gpu_metrics,
            gpu_tolerations=merged_tolerations(operator_pools),
            marks=owner if existing else {},
            deleted_with=inside,
            depends_on=access,
        ),
    )


# Steps 8-9: one MNIST training Job per GPU pool, each on its own pool; `pulumi up` waits
# for every Job to complete (they run side by side). The Jobs run the shipped script
# (proof/train_mnist.py) in PyTorch's image, or the guide's image as the guide runs it. A Job
# waits for its own pool and for what installs that pool's device plugin (this program's
# DaemonSet, or the GPU Operator's release, neither of which waits for any pool; AKS does it
# on an aks-managed pool), never for the pools after it.
def proof_needs(pool: GpuPool | UsedPool) -> list[pulumi.Resource]:
    installer = {"device-plugin": device_plugin, "gpu-operator": operator}.get(pool.pool.mode)
    return [r for r in (pool.node_pool, installer) if r is not None]


job = None
if cfg.mnist_job.enabled:
    # Each Job fails by itself (activeDeadlineSeconds) before `pulumi up` stops waiting for it:
    # the training's time limit is the script's, or none for the image's own entrypoint.
    max_seconds = cfg.mnist_job.max_seconds if cfg.mnist_job.runs_script else None
    job = MnistJob(
        "mnist",
        MnistJobArgs(
            provider=cluster.provider,
            image=cfg.mnist_job.image,
            namespace=cfg.mnist_job.namespace,
            max_steps=cfg.mnist_job.max_steps,
            wait_for_completion=cfg.mnist_job.wait_for_completion,
            script=ProofScript(cfg.mnist_job.max_seconds, cfg.mnist_job.min_accuracy) if cfg.mnist_job.runs_script else None,
            egress=cfg.mnist_job.egress,
            proxy=cluster_egress.proxy_rule(egress, cfg.mnist_job.egress),
            marks=owner if existing else {},
            deleted_with=inside,
            depends_on=access,
            runs=[
                MnistRun(
                    pool_name=p.name,
                    gpu_tolerations=p.tolerations,
                    create_timeout=job_timeout(p.pool, max_seconds),
                    deadline_seconds=job_deadline(p.pool, max_seconds),
                    depends_on=proof_needs(p),
                    pin=cfg.select_pools,
                    guide_names=guide_pool,
                    gpu_resource=in_cluster.gpus.resources.get(p.name, "nvidia.com/gpu") if in_cluster else "nvidia.com/gpu",
                )
                for p in pools
            ],
        ),
    )

# Outputs: what was built, and the commands a user types next.
pulumi.export("resourceGroupName", cluster.resource_group_name)
pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("gpuPools", pool_outputs(pools, job))
if guide_pool:  # the guide's one pool, by the names earlier releases exported
    gpu = pools[0]
    pulumi.export("gpuPoolName", gpu.name)
    pulumi.export("gpuPoolVmSize", gpu.vm_size)
    pulumi.export("gpuPoolGeneration", gpu.generation)
    pulumi.export("gpuManagement", gpu.management)
    pulumi.export("gpusPerNode", gpu.gpus_per_node)
    pulumi.export("gpuNodesCommand", nodes_command(gpu.name))  # the guide's "confirm that GPUs are schedulable"
if estimate is not None:
    pulumi.export("estimatedCost", cost.output(estimate))
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
    pulumi.export("mnistJobUrn", first.urn)
