"""One GPU node pool of the cluster (guide step 2's `az aks nodepool add`): a component that takes
its cluster by reference, as the Azure Verified Module's `modules/nodepool` does, so it goes into
a created or an existing cluster and a stack can have several (`aks-gpu:gpuPools`). A typed
`AgentPool`, or a `ManagedGpuPool` for `management: aks-managed`."""

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

# The GPU pool's taints (the guide's sku=gpu, and AKS's Spot taint) are the pools' config's rule
# (components/pools/settings.py, pool_taints): the checks of an existing cluster read it too, and
# what a pod tolerates on the pool is worked out from it (components/pools/tolerations.py).

# AKS labels every node with its pool's name (components/gpu_stack/cluster_objects.py, where the
# label is read too): what pins a DaemonSet or a Job to this program's pools.
AGENT_POOL_LABEL = cluster_objects.AGENT_POOL_LABEL

# Pods per node, stated so the desired state says it (and passes Checkov CKV_AZURE_168, at
# least 50): 250 in a cluster this program creates; in an existing one, what its network
# allows (components/pools/pool_network.py).
MAX_PODS = pool_network.MAX_PODS

# A GPU pool can wait long for scarce capacity; the limits state the worst case accepted.
# The typed pool gets them as customTimeouts, which azure-native gives its operations; the
# managed pool as an input, since the dynamic provider host never reads customTimeouts
# (components/pools/managed_gpu_pool.py).
POOL_TIMEOUT_MINUTES = {"create": 60, "update": 60, "delete": 45}
POOL_TIMEOUTS = pulumi.CustomTimeouts(**{op: f"{minutes}m" for op, minutes in POOL_TIMEOUT_MINUTES.items()})

# The gpuManagement output, per gpuPool.management.
GPU_MANAGEMENT_OUTPUTS = {
    "device-plugin": "device-plugin-daemonset",
    "aks-managed": "aks-managed (preview)",
    "gpu-operator": "gpu-operator",
}


# `dedicatedVhd: true` / `management: aks-managed`: the guide's retired GPU image's successor,
# AKS-managed GPU nodes (gpuProfile.nvidia.managementMode "Managed"), a dynamic resource over
# the agentPools REST API (docs/design/gpu-stack.md, "Who manages the GPU stack", and docs/design/guide-and-azure.md).
def managed_gpu_pool_properties(
    pool: GpuPoolConfig,
    orchestrator_version: str | None,
    tags: Mapping[str, str] | None = None,
    network: PoolNetwork | None = None,
) -> dict[str, Any]:
    """The managed pool's agentPools REST properties: the typed pool's settings
    (gpu_pool_settings), plus gpuProfile.nvidia. With MIG, AKS's device
    plugin offers each slice as one nvidia.com/gpu with migStrategy Single
    (aks-managed-gpu-nodes.md: --gpu-instance-profile MIG1g --gpu-mig-strategy Single)."""
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
    #: What must exist before a pool is added, and be deleted after it (the created cluster and
    #: its deployer grant; nothing for an existing one).
    dependencies: Sequence[pulumi.Resource]


@dataclass(frozen=True)
class GpuPoolArgs:
    """One GPU pool the stack declares (new or adopted), as the plan resolved it; its cluster,
    the pools before it and the budget are GpuPool's `cluster`, `after` and `budget` arguments."""

    #: The pool's settings: the config's, or an adopted pool's as Azure has them (existing_pools.resolve).
    pool: GpuPoolConfig
    #: The cluster's names as plain values, for the managed pool's REST calls (the typed pool takes the cluster's outputs).
    resource_group_name: str
    cluster_name: str
    #: The subscription the managed pool's REST calls go to (only a managed pool needs it).
    subscription_id: pulumi.Input[str] | None = None
    #: The pool's Kubernetes version (the cluster's, kubernetesVersion); None: AKS's.
    kubernetes_version: str | None = None
    #: Something other than this stack moves the Kubernetes version (an upgrade channel, an existing cluster's owner).
    version_moves: bool = False
    #: Azure tags on the pool (on an existing cluster: which stack owns it, for preflight).
    tags: Mapping[str, str] | None = None
    #: Node labels: its capacity group's (gpuGroups); none outside a group.
    node_labels: Mapping[str, str] | None = None
    #: Its subnets and pods per node (pool_network.plan); unset, a created cluster's.
    network: PoolNetwork | None = None
    #: `existing: adopt`: the cluster's pool as Azure has it, imported on the adopting `up`.
    live: LivePool | None = None
    #: The owner's pool, adopted: a destroy, or its removal from the config, releases it
    #: (`retainOnDelete`; onDestroy: delete sets it false).
    retain_on_delete: bool = False
    #: The pool as it runs in Azure, read at preview and `up` (None: not running, or not read).
    running: RunningPool | None = None


def pool_dependencies(cluster: Cluster, after: Sequence[pulumi.Resource], budget: pulumi.Resource | None) -> list[pulumi.Resource]:
    """What a pool's operations wait for: its cluster (a created one's deployer grant too), the
    stack's budget, and every pool of the stack before it, so AKS meets one pool operation at a
    time, creating and deleting (docs/design/lifecycle.md, "One pool operation at a time", says why).

    A destroy schedules its deletes from each resource's direct dependencies alone (pulumi/pulumi
    step_generator.go ScheduleDeletes, graph/dependency_graph.go DependenciesOf, at 1b594989), so
    each pool names every resource whose delete Azure may refuse: without its edge the grant's
    delete ran beside the first pool's, and a 403 on it cancelled the pool's before it began
    (step_executor.go cancelDueToError), the nodes billing. Each pool is deleted by its own Delete,
    never by `deletedWith` the cluster: the engine drops a skipped pool from the state when its
    step runs, before those deletes (step.go DeleteStep.Apply `isDeletedWith`), which would leave
    its nodes running outside the state. tests/test_failed_destroy.py plays each refusal in each
    configuration (budget or not, grant or not, pools typed or managed, one or several)."""
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
        """`cluster`: created or existing; `after`: the stack's GPU pools before this one, whose
        operations come first (`pool_dependencies` says why); `budget`: the stack's, before any
        GPU node (docs/lifecycle.md, "The budget before the GPU pools")."""
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
        # An adopted pool declares what Azure has and is imported by its ARM ID on the adopting
        # `up`; the engine then refuses to replace it, and the same ID later imports nothing
        # (docs/design/lifecycle.md, "What the stack adopted"). tests/test_existing_gpu_pools.py pins it.
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
                # No `deletedWith` the cluster (pool_dependencies says why). An adopted pool is the
                # owner's: its delete only forgets it (docs/design/lifecycle.md, "What the stack
                # adopted"). tests/test_adopted_guarded.py pins it.
                retain_on_delete=args.retain_on_delete,
                custom_timeouts=POOL_TIMEOUTS,
                # The count and version Azure moves, and what AKS fixes that the settings leave
                # unset, which a refresh may fill in (typed_pool_ignores says why).
                ignore_changes=typed_pool_ignores(pool, args.version_moves, settings, args.running),
                # What AKS fixes at creation (pool_fields.py, each with its source); azure-native
                # replaces only on vmSize and gpuInstanceProfile, so without this a Spot toggle would
                # preview as `~ update` and fail at `up` (docs/lifecycle.md, "What changes a GPU pool").
                replace_on_changes=pool_fields.fixed(),
                # ...and delete first: the pool's name is fixed, and AKS refuses a second pool of
                # one name. azure-native asks for delete-first only for replacements it reports
                # itself (provider.go Diff: `deleteBeforeReplace := len(replaces) > 0`); one that
                # replaceOnChanges adds is created first unless this option says otherwise
                # (pulumi/pulumi pkg/resource/deploy/step_generator.go); tests/test_lifecycle.py pins it.
                delete_before_replace=True,
            ),
        )

    def _create_managed_pool(self, args: GpuPoolArgs) -> ManagedGpuPool:
        """The AKS-managed GPU pool: a dynamic resource that PUTs, GETs and DELETEs the pool
        through the agentPools REST API (components/pools/managed_gpu_pool.py says why, and what
        its diff updates in place and what it replaces, deleting the old pool first).

        The names are the config's plain values, so a preview of a cluster update shows no
        change to the pool; the cluster's resourceUID tells the pool that the cluster was
        created anew (deleted outside Pulumi, then refresh and up), and the next update adds
        the pool to it again. Its count and version are left to the autoscaler and to
        whatever moves the version by the resource's own diff, not by ignoreChanges: a
        refresh puts what Azure has into the state, and the diff compares that state with
        the config."""
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
                # The provider's diff asks for it too (DiffResult.delete_before_replace); stated
                # here so the plan shows it whatever the provider answers.
                delete_before_replace=True,
            ),
        )
