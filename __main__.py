"""aks-gpu: Microsoft's "Use GPUs for compute-intensive workloads on AKS", as one Pulumi program.

Read top to bottom, `main` is the guide's table of contents:
  config -> the plan (preflight and what it will cost, an existing cluster as read, and
  every decision below, one Args per component: components/plan.py) -> the cluster (created,
  or an existing one) -> its GPU pools -> the device plugin (or the GPU Operator) and GPU
  metrics on those pools -> one MNIST Job per pool (or per capacity group) -> outputs. Each
  step passes the plan's Args, and the components before it, to a constructor, and decides nothing.
"""

import os
from collections.abc import Iterable

import pulumi

from components import stack as config
from components.cluster.cluster import GpuCluster, GpuClusterArgs
from components.cluster.existing_cluster import ExistingCluster
from components.cost.budget import CostBudget
from components.gpu_stack.dcgm_exporter import DcgmExporter
from components.gpu_stack.device_plugin import NvidiaDevicePlugin
from components.gpu_stack.gpu_operator import GpuOperator
from components.live_reader import LiveReader
from components.outputs import gpu_metrics_location, group_outputs, pool_outputs
from components.plan import EXPANDER, Message, Mode, Plan, Said, build_plan
from components.pools.capacity_expander import CapacityExpander
from components.pools.existing_pool import UsedPool
from components.pools.gpu_pool import GpuPool
from components.proof.mnist_job import MnistJob
from components.seam.reader import AzureReader

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
    # Steps 1-3: the cluster and its credentials. The guide's first section creates a resource
    # group and a cluster; its other entry point starts from the reader's existing cluster.
    cluster = (
        GpuCluster("gpu-cluster", plan.cluster)
        if isinstance(plan.cluster, GpuClusterArgs)
        else ExistingCluster("existing-cluster", plan.cluster)
    )
    # A monthly budget over what the stack runs, with e-mail alerts (cost.budget), before the GPU
    # pools, which wait for it, so no GPU node bills without it (components/cost/budget.py).
    cost_budget = CostBudget("cost", plan.budget, groups=cluster.billing_groups) if plan.budget is not None else None
    pools = declare_pools(plan, cluster, cost_budget)
    # Steps 4-5: the device plugin on the pools whose GPU stack this program manages; AKS (step 6's
    # successor) or NVIDIA's GPU Operator on the others: the guide warns against two device
    # plugins. Then NVIDIA's DCGM exporter; the capacity groups' priorities on a created cluster.
    inside = cluster.objects
    device_plugin = NvidiaDevicePlugin("nvidia-device-plugin", plan.device_plugin, cluster=inside) if plan.device_plugin else None
    exporter = None
    if plan.dcgm_exporter is not None and device_plugin is not None:
        exporter = DcgmExporter("dcgm-exporter", plan.dcgm_exporter, cluster=inside, namespace=device_plugin.namespace_name)
    operator = GpuOperator("gpu-operator", plan.gpu_operator, cluster=inside) if plan.gpu_operator else None
    expander = CapacityExpander("capacity-expander", plan.expander, cluster=inside) if plan.expander else None
    # Steps 8-9: one MNIST Job per GPU pool and one per capacity group, side by side; `pulumi up`
    # waits for each, after its pool(s) and what installs their GPU stack (MnistRun.after).
    after = {
        **{p.name: p.node_pool for p in pools},
        "device-plugin": device_plugin,
        "gpu-operator": operator,
        EXPANDER: expander.config_map if expander else None,
    }
    job = MnistJob("mnist", plan.proof, cluster=inside, after=after) if plan.proof else None
    export_outputs(plan, cluster, pools, job, device_plugin, exporter, operator)


def report(messages: Iterable[Message]) -> None:
    for message in messages:
        (pulumi.log.warn if message.level == "warn" else pulumi.log.info)(message.text)


# Step 2's `az aks nodepool add`, once per GPU pool, one after another: AKS runs one
# agent-pool operation per cluster at a time, so each pool waits for every pool before it,
# which orders deletes too (components/pools/gpu_pool.py, pool_dependencies). A pool the
# owner's as it is (existing: use) is a UsedPool: nothing of it is registered.
def declare_pools(plan: Plan, cluster: Cluster, cost_budget: CostBudget | None) -> list[Pool]:
    pools: list[Pool] = []
    for args in plan.gpu_pools:
        before = [p.node_pool for p in pools if p.node_pool is not None]
        pools.append(
            args
            if isinstance(args, UsedPool)
            else GpuPool(f"gpu-pool-{args.pool.name}", args, cluster=cluster, after=before, budget=cost_budget)
        )
    return pools


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
    guide_pool, outputs = plan.outputs.guide_pool, plan.outputs
    pulumi.export("resourceGroupName", cluster.resource_group_name)
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("gpuPools", pool_outputs(pools, job, outputs.proof_groups))
    if outputs.proof_groups:  # the capacity groups (gpuGroups), each with its one Job
        pulumi.export("gpuGroups", group_outputs(outputs.proof_groups, pools, job))
    if outputs.estimated_cost is not None:
        pulumi.export("estimatedCost", outputs.estimated_cost)
    pulumi.export("gpuMetrics", gpu_metrics_location(outputs.modes, outputs.gpu_metrics, exporter, operator))
    if device_plugin is not None:
        pulumi.export("devicePluginNamespace", device_plugin.namespace_name)
    if outputs.adopted is not None:  # what the stack adopted, which a refresh leaves as it is (ownership/adopted_record.py)
        pulumi.export("adopted", outputs.adopted)
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
