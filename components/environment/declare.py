"""What a plan declares: the cluster, its GPU pools, the GPU stack, the proof, and the outputs.

One code path for the program and the package: `__main__.py` calls `declare` with no parent, so
every URN stays what 1.0 promised (tests/test_urns.py), and the package's GpuEnvironment calls it
with itself as the parent. Read top to bottom, `declare` is the guide's table of contents: the
cluster (created, or an existing one) -> its GPU pools -> the device plugin (or the GPU Operator)
and GPU metrics on those pools -> one MNIST Job per pool (or per capacity group) -> outputs. Each
step passes the plan's Args, and the components before it, to a constructor, and decides nothing.
"""

from collections.abc import Iterable
from typing import Any

import pulumi

from components.cluster.cluster import GpuCluster, GpuClusterArgs, InCluster
from components.cluster.existing_cluster import ExistingCluster
from components.cost.budget import CostBudget
from components.gpu_stack.dcgm_exporter import DcgmExporter
from components.gpu_stack.device_plugin import NvidiaDevicePlugin
from components.gpu_stack.gpu_operator import GpuOperator
from components.outputs import gpu_metrics_location, group_outputs, pool_outputs
from components.plan import EXPANDER, Message, Plan
from components.pools.capacity_expander import CapacityExpander
from components.pools.existing_pool import UsedPool
from components.pools.gpu_pool import GpuPool
from components.proof.mnist_job import MnistJob

Cluster = GpuCluster | ExistingCluster
Pool = GpuPool | UsedPool


def declare(plan: Plan, parent: pulumi.Resource | None = None) -> dict[str, Any]:
    """Declares what `plan` hands out, each child under `parent` (None: the stack, as the program
    always has), and returns the outputs in the order the program exports them."""
    opts = pulumi.ResourceOptions(parent=parent) if parent is not None else None
    # Steps 1-3: the cluster and its credentials. The guide's first section creates a resource
    # group and a cluster; its other entry point starts from the reader's existing cluster.
    cluster = (
        GpuCluster("gpu-cluster", plan.cluster, opts)
        if isinstance(plan.cluster, GpuClusterArgs)
        else ExistingCluster("existing-cluster", plan.cluster, opts)
    )
    # A monthly budget over what the stack runs, with e-mail alerts (cost.budget), before the GPU
    # pools, which wait for it, so no GPU node bills without it (components/cost/budget.py).
    cost_budget = CostBudget("cost", plan.budget, groups=cluster.billing_groups, opts=opts) if plan.budget is not None else None
    pools = declare_pools(plan, cluster, cost_budget, opts)
    # Steps 4-5: the device plugin on the pools whose GPU stack this program manages; AKS (step 6's
    # successor) or NVIDIA's GPU Operator on the others: the guide warns against two device
    # plugins. Then NVIDIA's DCGM exporter; the capacity groups' priorities on a created cluster.
    device_plugin = (
        NvidiaDevicePlugin("nvidia-device-plugin", plan.device_plugin, cluster=inside(cluster), opts=opts) if plan.device_plugin else None
    )
    exporter = None
    if plan.dcgm_exporter is not None and device_plugin is not None:
        exporter = DcgmExporter(
            "dcgm-exporter", plan.dcgm_exporter, cluster=inside(cluster), namespace=device_plugin.namespace_name, opts=opts
        )
    operator = GpuOperator("gpu-operator", plan.gpu_operator, cluster=inside(cluster), opts=opts) if plan.gpu_operator else None
    expander = CapacityExpander("capacity-expander", plan.expander, cluster=inside(cluster), opts=opts) if plan.expander else None
    # Steps 8-9: one MNIST Job per GPU pool and one per capacity group, side by side; `pulumi up`
    # waits for each, after its pool(s) and what installs their GPU stack (MnistRun.after).
    after = {
        **{p.name: p.node_pool for p in pools},
        "device-plugin": device_plugin,
        "gpu-operator": operator,
        EXPANDER: expander.config_map if expander else None,
    }
    job = MnistJob("mnist", plan.proof, cluster=inside(cluster), after=after, opts=opts) if plan.proof else None
    return outputs(plan, cluster, pools, job, device_plugin, exporter, operator)


def inside(cluster: Cluster) -> InCluster:
    """What a Kubernetes object takes from its cluster: there whenever the plan hands one out."""
    assert cluster.objects is not None, "a plan that hands out a Kubernetes object keeps the Kubernetes provider (build_plan: kubernetes)"
    return cluster.objects


def report(messages: Iterable[Message], resource: pulumi.Resource | None = None) -> None:
    """What the plan said, as the run's info and warnings (on `resource`, when a component said it)."""
    for message in messages:
        (pulumi.log.warn if message.level == "warn" else pulumi.log.info)(message.text, resource)


# Step 2's `az aks nodepool add`, once per GPU pool, one after another: AKS runs one
# agent-pool operation per cluster at a time, so each pool waits for every pool before it,
# which orders deletes too (components/pools/gpu_pool.py, pool_dependencies). A pool the
# owner's as it is (existing: use) is a UsedPool: nothing of it is registered.
def declare_pools(plan: Plan, cluster: Cluster, cost_budget: CostBudget | None, opts: pulumi.ResourceOptions | None = None) -> list[Pool]:
    pools: list[Pool] = []
    for args in plan.gpu_pools:
        before = [p.node_pool for p in pools if p.node_pool is not None]
        pools.append(
            args
            if isinstance(args, UsedPool)
            else GpuPool(f"gpu-pool-{args.pool.name}", args, cluster=cluster, after=before, budget=cost_budget, opts=opts)
        )
    return pools


# Outputs: what was built, and the commands a user types next.
def outputs(
    plan: Plan,
    cluster: Cluster,
    pools: list[Pool],
    job: MnistJob | None,
    device_plugin: NvidiaDevicePlugin | None,
    exporter: DcgmExporter | None,
    operator: GpuOperator | None,
) -> dict[str, Any]:
    guide_pool, said = plan.outputs.guide_pool, plan.outputs
    out: dict[str, Any] = {
        "resourceGroupName": cluster.resource_group_name,
        "clusterName": cluster.cluster_name,
        "gpuPools": pool_outputs(pools, job, said.proof_groups),
    }
    if said.proof_groups:  # the capacity groups (gpuGroups), each with its one Job
        out["gpuGroups"] = group_outputs(said.proof_groups, pools, job)
    if said.estimated_cost is not None:
        out["estimatedCost"] = said.estimated_cost
    if said.gpu_stack:  # where the GPU stack's metrics are
        out["gpuMetrics"] = gpu_metrics_location(said.modes, said.gpu_metrics, exporter, operator)
    if device_plugin is not None:
        out["devicePluginNamespace"] = device_plugin.namespace_name
    if said.adopted is not None:  # what the stack adopted, which a refresh leaves as it is (ownership/adopted_record.py)
        out["adopted"] = said.adopted
    out["kubeconfig"] = cluster.kubeconfig
    out["getCredentialsCommand"] = cluster.get_credentials_command
    if job is not None and (guide_pool or said.proof_alone):
        first = next(iter(job.jobs.values()))  # the guide's one pool's; else the first run's (plan.proof's order)
        out["mnistJobName"] = first.name
        out["mnistJobNamespace"] = first.namespace
        out["jobLogsCommand"] = first.logs_command
        if first.result_command is not None:  # the last proof's line, kept by its watch
            out["jobResultCommand"] = first.result_command
        out["mnistJobUrn"] = first.urn
    return out
