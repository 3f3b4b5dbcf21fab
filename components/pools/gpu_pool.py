"""One GPU node pool (guide step 2's `az aks nodepool add`), taking its cluster by reference as the
Azure Verified Module's `modules/nodepool` does: a typed `AgentPool`, or a `ManagedGpuPool` for
`management: aks-managed`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pulumi
from pulumi_azure_native import containerservice

from components.catalog import gpu_sizes
from components.gpu_stack import cluster_objects
from components.pools import pool_fields, pool_network
from components.pools.existing_pools import LivePool
from components.pools.managed_gpu_pool import ARM_ENDPOINT, MIG_API_VERSION, STABLE_API_VERSION, ManagedGpuPool
from components.pools.pool_network import PoolNetwork
from components.pools.pool_settings import agent_pool_settings, gpu_pool_settings, sdk_arguments, typed_pool_ignores
from components.pools.settings import GpuPoolConfig
from components.seam.reader import RunningPool

# AKS labels every node with its pool's name: what pins a DaemonSet or a Job to the pools.
AGENT_POOL_LABEL = cluster_objects.AGENT_POOL_LABEL
# Pods per node, stated so the desired state says it (Checkov CKV_AZURE_168: at least 50).
MAX_PODS = pool_network.MAX_PODS

# A GPU pool can wait long for scarce capacity. The managed pool takes them as an input: the
# dynamic provider host never reads customTimeouts (agent_pool_calls.py).
POOL_TIMEOUT_MINUTES = {"create": 60, "update": 60, "delete": 45}
POOL_TIMEOUTS = pulumi.CustomTimeouts(**{op: f"{minutes}m" for op, minutes in POOL_TIMEOUT_MINUTES.items()})

# The gpuManagement output, per gpuPool.management.
GPU_MANAGEMENT_OUTPUTS = {
    "device-plugin": "device-plugin-daemonset",
    "aks-managed": "aks-managed (preview)",
    "gpu-operator": "gpu-operator",
}


# `management: aks-managed`, the guide's retired GPU image's successor (docs/design/gpu-stack.md).
def managed_gpu_pool_properties(
    pool: GpuPoolConfig,
    orchestrator_version: str | None,
    tags: Mapping[str, str] | None = None,
    network: PoolNetwork | None = None,
) -> dict[str, Any]:
    """The typed pool's settings plus gpuProfile.nvidia. With MIG, AKS's device plugin offers each
    slice as one nvidia.com/gpu with migStrategy Single (aks-managed-gpu-nodes.md)."""
    body = {k: v for k, v in gpu_pool_settings(pool, network).items() if v is not None}
    nvidia = {"managementMode": "Managed", **({"migStrategy": "Single"} if pool.mig_profile else {})}
    # As the spec's own example, AgentPoolsCreate_ManagedGPU.json (azure-rest-api-specs
    # aks/stable/2026-08-01/examples, commit 1001d5a2): driver Install, nvidia Managed.
    body["gpuProfile"] = {"driver": "Install", "nvidia": nvidia}
    if orchestrator_version:
        body["orchestratorVersion"] = orchestrator_version
    if tags:
        body["tags"] = dict(tags)
    return body


class Cluster(Protocol):
    """What a GPU pool needs of its cluster, created or looked up."""

    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    #: ManagedCluster.resourceUID: a new value means the cluster was created anew.
    resource_uid: pulumi.Output[str]
    #: What must exist before a pool is added, and be deleted after it.
    dependencies: Sequence[pulumi.Resource]


@dataclass(frozen=True)
class GpuPoolArgs:
    """One GPU pool the stack declares (new or adopted), as the plan resolved it."""

    #: The config's settings, or an adopted pool's as Azure has them (existing_pools.resolve).
    pool: GpuPoolConfig
    #: Plain values for the managed pool's REST calls (the typed pool takes the cluster's outputs).
    resource_group_name: str
    cluster_name: str
    #: Only a managed pool needs it.
    subscription_id: pulumi.Input[str] | None = None
    #: The cluster's kubernetesVersion; None: AKS's.
    kubernetes_version: str | None = None
    #: Something other than this stack moves the version (an upgrade channel, an existing cluster's owner).
    version_moves: bool = False
    tags: Mapping[str, str] | None = None
    #: Its capacity group's (gpuGroups).
    node_labels: Mapping[str, str] | None = None
    #: Unset: a created cluster's.
    network: PoolNetwork | None = None
    #: `existing: adopt`: the cluster's pool as Azure has it, imported on the adopting `up`.
    live: LivePool | None = None
    #: An adopted pool: a destroy releases it (onDestroy: delete sets it false).
    retain_on_delete: bool = False
    #: The pool as it runs in Azure (None: not running, or not read).
    running: RunningPool | None = None


def pool_dependencies(cluster: Cluster, after: Sequence[pulumi.Resource], budget: pulumi.Resource | None) -> list[pulumi.Resource]:
    """What a pool's operations wait for: its cluster (and deployer grant), the budget, and every
    pool before it, so AKS meets one pool operation at a time (docs/design/lifecycle.md).

    A destroy schedules its deletes from direct dependencies alone (pulumi/pulumi step_generator.go
    ScheduleDeletes at 1b594989): without an edge the grant's delete ran beside a pool's, and a 403
    on it cancelled the pool's (step_executor.go cancelDueToError), the nodes billing. Never
    `deletedWith` the cluster: the engine drops such a pool from the state before those deletes
    (step.go DeleteStep.Apply `isDeletedWith`), its nodes running outside the state."""
    return list(cluster.dependencies) + ([budget] if budget is not None else []) + list(after)


class GpuPool(pulumi.ComponentResource):
    """A tainted GPU User pool in an AKS cluster."""

    #: The pool: a typed `AgentPool`, or a `ManagedGpuPool` (management: aks-managed).
    node_pool: pulumi.CustomResource
    pool: GpuPoolConfig
    name: str
    vm_size: str
    #: The Hyper-V generation the GPU nodes boot: "1", "2" or "unknown" (a size not in the catalog).
    generation: str
    #: Who installs the NVIDIA device plugin (the gpuManagement output).
    management: str
    gpus_per_node: int | None

    def __init__(
        self,
        name: str,
        args: GpuPoolArgs,
        *,
        cluster: Cluster,
        after: Sequence[pulumi.Resource] = (),
        budget: pulumi.Resource | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`after`: the stack's GPU pools before this one (`pool_dependencies`); `budget`: before
        any GPU node (docs/lifecycle.md, "The budget before the GPU pools")."""
        super().__init__("aks-gpu:azure:GpuPool", name, None, opts)
        self._name, self._cluster = name, cluster
        self._dependencies = pool_dependencies(cluster, after, budget)
        pool = args.pool
        self.pool = pool
        self.node_pool = self._create_managed_pool(args) if pool.managed else self._create_agent_pool(args)
        self.name = pool.name
        self.vm_size = pool.vm_size
        self.generation = gpu_sizes.generation(pool.vm_size)
        self.management = GPU_MANAGEMENT_OUTPUTS[pool.mode]
        self.gpus_per_node = gpu_sizes.gpus_per_node(pool.vm_size, pool.mig_profile)
        self.register_outputs({"name": self.name, "vmSize": self.vm_size})

    # az aks nodepool add --name gpu --node-vm-size Standard_NC6 --node-count 1
    #   --node-taints sku=gpu:NoSchedule (today's guide). Linux only (the guide).
    def _create_agent_pool(self, args: GpuPoolArgs) -> containerservice.AgentPool:
        pool = args.pool
        # An adopted pool declares what Azure has and is imported by its ARM ID; the engine then
        # refuses to replace it (docs/design/lifecycle.md, "What the stack adopted").
        settings = agent_pool_settings(pool, args.network, args.tags, args.live, args.node_labels)
        return containerservice.AgentPool(
            f"{self._name}-agent-pool",
            resource_group_name=self._cluster.resource_group_name,
            resource_name_=self._cluster.cluster_name,
            agent_pool_name=pool.name,
            orchestrator_version=args.kubernetes_version,
            **sdk_arguments(settings),
            opts=pulumi.ResourceOptions(
                import_=args.live.import_id if args.live else None,
                parent=self,
                depends_on=self._dependencies,
                # An adopted pool is the owner's: its delete only forgets it.
                retain_on_delete=args.retain_on_delete,
                custom_timeouts=POOL_TIMEOUTS,
                ignore_changes=typed_pool_ignores(pool, args.version_moves, settings, args.running),
                # What AKS fixes at creation (pool_fields.py says why azure-native's own list is not enough).
                replace_on_changes=pool_fields.fixed(),
                # AKS refuses a second pool of one name, and azure-native asks for delete-first only
                # for the replacements it reports itself (provider.go Diff: `deleteBeforeReplace`).
                delete_before_replace=True,
            ),
        )

    def _create_managed_pool(self, args: GpuPoolArgs) -> ManagedGpuPool:
        """The names are plain values, so a preview of a cluster update shows no change to the
        pool; the cluster's resourceUID says it was created anew, and the update adds the pool
        again. Its count and version are left to Azure by its own diff, not ignoreChanges."""
        pool = args.pool
        assert args.subscription_id is not None, "a managed pool needs the subscription"
        version = None if args.version_moves else args.kubernetes_version
        return ManagedGpuPool(
            f"{self._name}-managed",
            subscription_id=args.subscription_id,
            resource_group_name=args.resource_group_name,
            cluster_name=args.cluster_name,
            agent_pool_name=pool.name,
            properties=managed_gpu_pool_properties(pool, version, args.tags, args.network),
            api_version=MIG_API_VERSION if pool.mig_profile else STABLE_API_VERSION,
            cluster_resource_uid=self._cluster.resource_uid,
            timeout_minutes=POOL_TIMEOUT_MINUTES,
            arm_endpoint=ARM_ENDPOINT,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=self._dependencies,
                # As the provider's diff asks, stated so the plan shows it whatever it answers.
                delete_before_replace=True,
            ),
        )
