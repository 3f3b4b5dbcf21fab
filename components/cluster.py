"""Guide steps 1-3: the resource group, the AKS cluster with its GPU node pool, and the
credentials to reach it.

The GPU pool is a separate `AgentPool` rather than a second inline `agentPoolProfiles`
entry: Azure does not allow inline profiles to be updated through the managed cluster
(azure-native `ManagedCluster` docs: "additional agent pools can be defined via the
`AgentPool` resource"), and any change to an inline profile puts every pool of the cluster
into `Scaling` (pulumi/pulumi-azure-native#4264).
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass
from enum import Enum
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s
import yaml
import pulumi_command as command
from pulumi_azure_native import authorization, containerservice, resources

from components import gpu_sizes
from components.config import (
    VERSION_UPGRADE_CHANNELS,
    SYSTEM_POOL_NAME,
    AccessConfig,
    GpuPoolConfig,
    NetworkConfig,
    SystemPoolConfig,
    UpgradeConfig,
    camel_case,
)
from components.managed_gpu_pool import MIG_API_VERSION, STABLE_API_VERSION, ManagedGpuPool

# Today's guide (azure-aks-docs articles/aks/use-nvidia-gpu.md) taints the GPU pool so
# that only pods that ask for it land there: `az aks nodepool add ... --node-taints sku=gpu:NoSchedule`.
GPU_TAINT_KEY = "sku"
GPU_TAINT_VALUE = "gpu"
GPU_TAINT_EFFECT = "NoSchedule"
GPU_TAINT = f"{GPU_TAINT_KEY}={GPU_TAINT_VALUE}:{GPU_TAINT_EFFECT}"

# AKS puts this taint (and label) on every node of a Spot pool (azure-aks-docs
# articles/aks/spot-node-pool.md: "A Spot node pool has the
# kubernetes.azure.com/scalesetpriority=spot:NoSchedule taint"). It is declared explicitly
# as well, so the declared taints equal what Azure reports and no diff appears.
SPOT_TAINT_KEY = "kubernetes.azure.com/scalesetpriority"
SPOT_TAINT = f"{SPOT_TAINT_KEY}=spot:NoSchedule"


# "The default for Azure CNI Overlay is 250. The maximum value you can specify in Azure CNI
# Overlay is 250" pods per node (azure-aks-docs articles/aks/azure-cni-overlay.md). Stated,
# so the desired state says it (and passes Checkov CKV_AZURE_168, at least 50).
MAX_PODS = 250

def gpu_pool_taints(pool: GpuPoolConfig) -> list[str]:
    return [GPU_TAINT, SPOT_TAINT] if pool.spot else [GPU_TAINT]


def gpu_tolerations(pool: GpuPoolConfig) -> tuple[k8s.core.v1.TolerationArgs, ...]:
    """What a pod must tolerate to run on the GPU pool: `sku=gpu`, and the Spot taint."""
    gpu = k8s.core.v1.TolerationArgs(key=GPU_TAINT_KEY, operator="Equal", value=GPU_TAINT_VALUE, effect=GPU_TAINT_EFFECT)
    if not pool.spot:
        return (gpu,)
    spot = k8s.core.v1.TolerationArgs(key=SPOT_TAINT_KEY, operator="Equal", value="spot", effect="NoSchedule")
    return (gpu, spot)


def gpu_pool_settings(pool: GpuPoolConfig) -> dict[str, Any]:
    """The GPU pool's agent-pool properties, as azure-native keyword arguments.

    Autoscaling: `enableAutoScaling` with `minCount`/`maxCount` is `az aks nodepool add
    --enable-cluster-autoscaler --min-count --max-count` (today's guide). User pools may
    scale to zero ("User node pools can contain zero or more nodes", create-node-pools.md).
    Spot: `--priority Spot --eviction-policy Delete --spot-max-price -1`, where -1 means
    "the instance won't be evicted based on price" (spot-node-pool.md).
    """
    settings: dict[str, Any] = {
        "mode": containerservice.AgentPoolMode.USER,
        # gpuInstanceProfile (GA): `az aks nodepool add --gpu-instance-profile MIG1g`
        # (azure-aks-docs articles/aks/gpu-multi-instance.md).
        "gpu_instance_profile": pool.mig_profile,
        # The GPU Operator installs its own driver: `--gpu-driver none` (nvidia-gpu-operator.md).
        "gpu_profile": containerservice.GPUProfileArgs(driver=containerservice.GPUDriver.NONE)
        if pool.mode == "gpu-operator"
        else None,
        "os_type": containerservice.OSType.LINUX,
        "type": containerservice.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
        "vm_size": pool.vm_size,
        "count": pool.node_count,
        "max_pods": MAX_PODS,
        "node_taints": gpu_pool_taints(pool),
    }
    if pool.autoscaling:
        settings.update(enable_auto_scaling=True, min_count=pool.min_count, max_count=pool.max_count)
    if pool.spot:
        settings.update(
            scale_set_priority=containerservice.ScaleSetPriority.SPOT,
            scale_set_eviction_policy=containerservice.ScaleSetEvictionPolicy.DELETE,
            spot_max_price=-1,
        )
    return settings


# `dedicatedVhd: true` / `management: aks-managed`: the guide's "AKS specialized GPU image"
# (the UseGPUDedicatedVHD header) was retired on 2025-01-10 (azure-aks-docs
# includes/aks-gpu-image-retirement.md), and ARM cannot send custom headers anyway. Its
# successor is AKS-managed GPU nodes: AKS installs the driver, the device plugin and the DCGM
# exporter on a pool whose gpuProfile.nvidia.managementMode is "Managed" (azure-aks-docs
# articles/aks/aks-managed-gpu-nodes.md; the az CLI's --enable-managed-gpu=true, which only the
# aks-preview extension has). The pool is a dynamic resource over the agentPools REST API
# (components/managed_gpu_pool.py).
def managed_gpu_pool_properties(pool: GpuPoolConfig, orchestrator_version: Optional[str]) -> dict[str, Any]:
    """The managed pool's agentPools REST properties: the typed pool's settings
    (gpu_pool_settings) in ARM's spelling, plus gpuProfile.nvidia. With MIG, AKS's device
    plugin offers each slice as one nvidia.com/gpu with migStrategy Single
    (aks-managed-gpu-nodes.md: --gpu-instance-profile MIG1g --gpu-mig-strategy Single)."""
    body = {camel_case(k): _rest_value(v) for k, v in gpu_pool_settings(pool).items() if v is not None}
    nvidia = {"managementMode": "Managed", **({"migStrategy": "Single"} if pool.mig_profile else {})}
    # As the spec's own example, AgentPoolsCreate_ManagedGPU.json (azure-rest-api-specs
    # aks/stable/2026-08-01/examples, commit 1001d5a2): driver Install, nvidia Managed.
    body["gpuProfile"] = {"driver": "Install", "nvidia": nvidia}
    if orchestrator_version:
        body["orchestratorVersion"] = orchestrator_version
    return body


def _rest_value(value: Any) -> Any:
    """azure-native's enums are `str` subclasses; the REST body wants plain JSON values."""
    return str(value.value) if isinstance(value, Enum) else value


# The gpuManagement output, per gpuPool.management.
GPU_MANAGEMENT_OUTPUTS = {
    "device-plugin": "device-plugin-daemonset",
    "aks-managed": "aks-managed (preview)",
    "gpu-operator": "gpu-operator",
}

# Built-in role "Azure Kubernetes Service RBAC Cluster Admin": "Lets you manage all
# resources in the cluster" (azure-docs articles/role-based-access-control/built-in-roles.md).
AKS_RBAC_CLUSTER_ADMIN_ROLE = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"


def network_profile(network: NetworkConfig) -> containerservice.ContainerServiceNetworkProfileArgs:
    """Azure CNI Overlay with a network policy engine (azure-aks-docs
    articles/aks/azure-cni-overlay.md, azure-cni-powered-by-cilium.md,
    use-network-policies.md). Cilium is both dataplane and policy engine; Calico enforces
    policy on the Azure dataplane. The plugin can only be chosen when the cluster is created.
    """
    cilium = network.policy == "cilium"
    return containerservice.ContainerServiceNetworkProfileArgs(
        network_plugin=containerservice.NetworkPlugin.AZURE,
        network_plugin_mode=containerservice.NetworkPluginMode.OVERLAY,
        network_dataplane=containerservice.NetworkDataplane.CILIUM if cilium else containerservice.NetworkDataplane.AZURE,
        network_policy=network.policy,
    )


def access_settings(access: AccessConfig) -> dict[str, Any]:
    """The managed cluster's sign-in and API server settings, as azure-native arguments.

    "local": Kubernetes RBAC with the cluster's local accounts, as the guide's cluster.
    "entra": managed Entra ID integration, Azure RBAC for Kubernetes authorization, and
    local accounts disabled, so every call is made by an Entra identity
    (azure-aks-docs articles/aks/manage-local-accounts-managed-azure-ad.md).
    """
    settings: dict[str, Any] = {"enable_rbac": True, "disable_local_accounts": access.entra}
    if access.entra:
        settings["aad_profile"] = containerservice.ManagedClusterAADProfileArgs(
            managed=True,
            enable_azure_rbac=True,
            admin_group_object_ids=list(access.admin_group_object_ids) or None,
        )
    if access.authorized_ip_ranges:
        settings["api_server_access_profile"] = containerservice.ManagedClusterAPIServerAccessProfileArgs(
            authorized_ip_ranges=list(access.authorized_ip_ranges),
        )
    return settings


def entra_kubeconfig(kubeconfig: str) -> str:
    """Makes an Entra ID cluster's kubeconfig sign in without a prompt.

    listClusterUserCredential with format "exec" returns a kubelogin exec plugin that signs
    in with `--login devicecode`, which waits for a human. `--login azurecli` reuses the
    `az login` session instead (a developer's, or CI's OIDC login), as
    `kubelogin convert-kubeconfig -l azurecli` does (Azure/kubelogin docs). The server ID
    (the AKS Entra application) is kept from what AKS returned.
    """
    config = yaml.safe_load(kubeconfig)
    for user in config.get("users") or []:
        exec_ = (user.get("user") or {}).get("exec")
        if not exec_:
            continue
        args = exec_.get("args") or []
        server_id = args[args.index("--server-id") + 1] if "--server-id" in args else None
        exec_["args"] = ["get-token", "--login", "azurecli"] + (["--server-id", server_id] if server_id else [])
        # An exec plugin's `env` overrides the caller's environment (client.authentication.k8s.io
        # ExecConfig), and kubelogin prefers AAD_LOGIN_METHOD over `--login` (Azure/kubelogin
        # options.go UpdateFromEnv): drop it, so the environment of whoever runs the program
        # decides (the workflows set `workloadidentity`, see .github/workflows/pr.yml).
        env = [e for e in exec_.get("env") or [] if e.get("name") != "AAD_LOGIN_METHOD"]
        exec_["env"] = env or None
    return yaml.safe_dump(config, sort_keys=False)


def cluster_ignore_changes(upgrade: UpgradeConfig) -> list[str]:
    """What `pulumi up` must leave to Azure on the managed cluster.

    agentPoolProfiles: a `pulumi refresh` reads every pool of the cluster into this list,
    the separate GPU pool and the autoscaler's counts included, and the next `up` would PUT
    the whole cluster to remove them, putting every pool into Scaling (pulumi-azure-native
    #1532, #579, #4264). Azure cannot update the inline pool through the cluster anyway
    ("The Azure API does not currently allow this property to be updated directly": the
    SDK's ManagedCluster docs), so the System pool is applied when the cluster is created.
    kubernetesVersion: an upgrade channel moves it by itself, and AKS cannot downgrade.
    """
    ignored = ["agentPoolProfiles"]
    if upgrade.channel in VERSION_UPGRADE_CHANNELS:
        ignored.append("kubernetesVersion")
    return ignored


def pool_ignore_changes(pool: GpuPoolConfig, upgrade: UpgradeConfig) -> Optional[list[str]]:
    """What `pulumi up` must leave to Azure on the GPU pool: the count, when the cluster
    autoscaler owns it; the version, when an upgrade channel moves it (AKS upgrades node
    pools with the control plane: auto-upgrade-cluster.md)."""
    ignored = []
    if pool.autoscaling:
        ignored.append("count")
    if upgrade.channel in VERSION_UPGRADE_CHANNELS:
        ignored.append("orchestratorVersion")
    return ignored or None


# Creating or deleting an AKS cluster routinely takes 5-15 minutes, and a GPU pool can wait
# longer for scarce capacity. Explicit limits state the worst case this program accepts
# instead of relying on the provider's default.
CLUSTER_TIMEOUTS = pulumi.CustomTimeouts(create="60m", update="60m", delete="60m")
POOL_TIMEOUTS = pulumi.CustomTimeouts(create="60m", update="60m", delete="45m")


@dataclass(frozen=True)
class GpuClusterArgs:
    location: str
    resource_group_name: str
    cluster_name: str
    system_pool: SystemPoolConfig
    gpu_pool: GpuPoolConfig
    kubernetes_version: Optional[str] = None
    access: AccessConfig = AccessConfig()
    network: NetworkConfig = NetworkConfig()
    upgrade: UpgradeConfig = UpgradeConfig()
    #: sku.tier: Free, Standard (uptime SLA) or Premium.
    tier: str = "Free"
    # Protects the resource group and the cluster from `pulumi destroy` and replacement.
    protect: bool = False


class GpuCluster(pulumi.ComponentResource):
    """A resource group holding an AKS cluster with a tainted GPU User pool."""

    resource_group: resources.ResourceGroup
    managed_cluster: containerservice.ManagedCluster
    #: The GPU pool: a typed `AgentPool`, or, when AKS manages the GPU stack
    #: (`management: aks-managed`), a `ManagedGpuPool` over the agentPools REST API.
    gpu_node_pool: pulumi.CustomResource
    #: With Entra ID access: the deploying identity's cluster-admin role, which this
    #: program's own Kubernetes provider needs.
    deployer_role_assignment: Optional[authorization.RoleAssignment]
    #: The user kubeconfig (secret), from listClusterUserCredential, as `az aks get-credentials` fetches it.
    kubeconfig: pulumi.Output[str]
    #: A Kubernetes provider bound to this cluster; every Kubernetes object of this program uses it.
    provider: k8s.Provider
    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    gpu_pool_name: pulumi.Output[str]
    gpu_pool_vm_size: pulumi.Output[str]
    #: The Hyper-V generation the GPU nodes boot: "1", "2" or "unknown" (a size not in the catalog).
    gpu_pool_generation: pulumi.Output[str]
    #: The command that merges this cluster's credentials into ~/.kube/config (guide step 3).
    get_credentials_command: pulumi.Output[str]
    #: Who installs the NVIDIA device plugin: this program's DaemonSet, or AKS (dedicatedVhd).
    gpu_management: str
    #: Tolerations a pod needs to land on the GPU pool.
    gpu_tolerations: tuple[k8s.core.v1.TolerationArgs, ...]

    def __init__(self, name: str, args: GpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("aks-gpu:azure:GpuCluster", name, None, opts)
        self._name = name
        self.resource_group = self._create_resource_group(args)
        self.managed_cluster = self._create_cluster(args)
        self.gpu_node_pool = self._create_gpu_pool(args)
        self.kubeconfig = self._fetch_credentials(args)
        self.deployer_role_assignment = self._grant_deployer(args)
        self.provider = self._create_provider()

        gpu = args.gpu_pool
        self.resource_group_name = self.resource_group.name
        self.cluster_name = self.managed_cluster.name
        self.gpu_management = GPU_MANAGEMENT_OUTPUTS[gpu.mode]
        self.gpu_pool_name = pulumi.Output.from_input(gpu.name)
        self.gpu_pool_vm_size = pulumi.Output.from_input(gpu.vm_size)
        self.gpu_pool_generation = pulumi.Output.from_input(gpu_sizes.generation(gpu.vm_size))
        # Shell-quoted: a resource group name may hold '(' or ')' (config.ResourceGroupName).
        self.get_credentials_command = pulumi.Output.all(self.resource_group.name, self.managed_cluster.name).apply(
            lambda names: shlex.join(["az", "aks", "get-credentials", "--resource-group", names[0], "--name", names[1]])
        )
        self.gpu_tolerations = gpu_tolerations(gpu)
        self.register_outputs(
            {
                "resourceGroupName": self.resource_group_name,
                "clusterName": self.cluster_name,
                "gpuPoolName": self.gpu_pool_name,
                "gpuPoolVmSize": self.gpu_pool_vm_size,
                "kubeconfig": self.kubeconfig,
            }
        )

    # Step 1: az group create --name myResourceGroup --location eastus
    def _create_resource_group(self, args: GpuClusterArgs) -> resources.ResourceGroup:
        return resources.ResourceGroup(
            f"{self._name}-rg",
            resource_group_name=args.resource_group_name,
            location=args.location,
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )

    # Step 2: az aks create. The cluster keeps a small System pool for kube-system; the GPU
    # nodes come in a separate User pool (_create_gpu_pool).
    def _create_cluster(self, args: GpuClusterArgs) -> containerservice.ManagedCluster:
        return containerservice.ManagedCluster(
            f"{self._name}-aks",
            resource_group_name=self.resource_group.name,
            resource_name_=args.cluster_name,
            location=args.location,
            # dnsPrefix: 1-54 alphanumerics and hyphens (aka.ms/aks-naming-rules); cannot change later.
            dns_prefix=_dns_prefix(args.cluster_name),
            kubernetes_version=args.kubernetes_version,
            identity=containerservice.ManagedClusterIdentityArgs(
                type=containerservice.ResourceIdentityType.SYSTEM_ASSIGNED,
            ),
            sku=containerservice.ManagedClusterSKUArgs(
                name=containerservice.ManagedClusterSKUName.BASE,
                tier=args.tier,
            ),
            **access_settings(args.access),
            network_profile=network_profile(args.network),
            auto_upgrade_profile=containerservice.ManagedClusterAutoUpgradeProfileArgs(
                upgrade_channel=args.upgrade.channel,
                node_os_upgrade_channel=args.upgrade.node_os_channel,
            ),
            agent_pool_profiles=[
                containerservice.ManagedClusterAgentPoolProfileArgs(
                    name=SYSTEM_POOL_NAME,
                    mode=containerservice.AgentPoolMode.SYSTEM,
                    os_type=containerservice.OSType.LINUX,
                    type=containerservice.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
                    vm_size=args.system_pool.vm_size,
                    count=args.system_pool.node_count,
                    max_pods=MAX_PODS,
                ),
            ],
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                custom_timeouts=CLUSTER_TIMEOUTS,
                ignore_changes=cluster_ignore_changes(args.upgrade),
            ),
        )

    # Step 2, the GPU part: az aks nodepool add --name gpu --node-vm-size Standard_NC6
    #   --node-count 1 --node-taints sku=gpu:NoSchedule (today's guide). Linux only (the guide).
    def _create_gpu_pool(self, args: GpuClusterArgs) -> pulumi.CustomResource:
        gpu = args.gpu_pool
        if gpu.managed:
            return self._create_managed_gpu_pool(args)
        return containerservice.AgentPool(
            f"{self._name}-gpu-pool",
            resource_group_name=self.resource_group.name,
            resource_name_=self.managed_cluster.name,
            agent_pool_name=gpu.name,
            orchestrator_version=args.kubernetes_version,
            **gpu_pool_settings(gpu),
            opts=pulumi.ResourceOptions(
                parent=self,
                custom_timeouts=POOL_TIMEOUTS,
                ignore_changes=pool_ignore_changes(gpu, args.upgrade),
                # "You can't change the applied GPU instance profile after node pool creation"
                # (gpu-multi-instance.md), nor the driver setting; azure-native replaces the pool
                # on a gpuInstanceProfile or vmSize change (pulumi-azure-native PR #3655, its
                # forceNewMap), not on gpuProfile: say so, or a mode switch would be an update
                # that AKS refuses.
                replace_on_changes=["gpuProfile", "gpuInstanceProfile"],
                # ...and delete first: the pool's name is fixed, and AKS refuses a second pool of
                # one name. azure-native asks for delete-first only for replacements it reports
                # itself (provider.go Diff: `deleteBeforeReplace := len(replaces) > 0`); one that
                # replaceOnChanges adds is created first unless this option says otherwise
                # (pulumi/pulumi pkg/resource/deploy/step_generator.go); tests/test_lifecycle.py pins it.
                delete_before_replace=True,
            ),
        )

    # Step 3: az aks get-credentials. The user credential (not the admin one), as the CLI
    # fetches by default; ARM returns it base64-encoded. An Entra ID cluster returns a
    # kubelogin exec plugin ("format ... 'exec' ... requires kubelogin binary in the path":
    # the SDK's listManagedClusterUserCredentials docs).
    def _fetch_credentials(self, args: GpuClusterArgs) -> pulumi.Output[str]:
        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=self.resource_group.name,
            resource_name=self.managed_cluster.name,
            format="exec" if args.access.entra else None,
        )
        decode = _decode_entra_kubeconfig if args.access.entra else _decode_kubeconfig
        return pulumi.Output.secret(credentials.kubeconfigs[0].value.apply(decode))

    def _grant_deployer(self, args: GpuClusterArgs) -> Optional[authorization.RoleAssignment]:
        """With Azure RBAC, an Entra identity may do nothing in the cluster until a role says
        so, and that includes whoever runs `pulumi up`: the Kubernetes objects are created
        with its token. Granting this needs Microsoft.Authorization/roleAssignments/write
        (Owner, User Access Administrator or Role Based Access Control Administrator)."""
        if not args.access.grants_deployer:
            return None
        client = authorization.get_client_config_output()
        return authorization.RoleAssignment(
            f"{self._name}-deployer-cluster-admin",
            scope=self.managed_cluster.id,
            principal_id=args.access.deployer_object_id or client.object_id,
            # Azure refuses an assignment whose principalType does not match the principal,
            # and the SDK would otherwise send its default, "User".
            principal_type=args.access.deployer_type,
            role_definition_id=pulumi.Output.concat(
                "/subscriptions/",
                client.subscription_id,
                "/providers/Microsoft.Authorization/roleDefinitions/",
                AKS_RBAC_CLUSTER_ADMIN_ROLE,
            ),
            description="aks-gpu: the identity that runs pulumi up creates the device plugin and the MNIST Job",
            opts=pulumi.ResourceOptions(
                parent=self,
                # The assignment is auto-named with a new GUID, so Pulumi's default replacement
                # (create the new one, then delete the old) would ask ARM for a second assignment
                # of the same role to the same principal at the same scope, which it refuses with
                # RoleAssignmentExists. Delete first (tests/test_lifecycle.py cites the sources).
                delete_before_replace=True,
            ),
        )

    def _create_managed_gpu_pool(self, args: GpuClusterArgs) -> ManagedGpuPool:
        """The AKS-managed GPU pool: a dynamic resource that PUTs, GETs and DELETEs the pool
        through the agentPools REST API (components/managed_gpu_pool.py says why, and what
        its diff updates in place and what it replaces, deleting the old pool first).

        The names are the config's plain values, so a preview of a cluster update shows no
        change to the pool; the cluster's resourceUID tells the pool that the cluster was
        created anew (deleted outside Pulumi, then refresh and up), and the next update adds
        the pool to it again. Its count and version are left to the autoscaler and to an
        upgrade channel by the resource's own diff, not by ignoreChanges: a refresh puts what
        Azure has into the state, and the diff compares that state with the config."""
        gpu = args.gpu_pool
        moves_version = args.upgrade.channel in VERSION_UPGRADE_CHANNELS
        client = authorization.get_client_config_output()
        self._retire_managed_pool_command()
        return ManagedGpuPool(
            f"{self._name}-managed-gpu-pool",
            subscription_id=client.subscription_id,
            resource_group_name=args.resource_group_name,
            cluster_name=args.cluster_name,
            agent_pool_name=gpu.name,
            properties=managed_gpu_pool_properties(gpu, None if moves_version else args.kubernetes_version),
            api_version=MIG_API_VERSION if gpu.mig_profile else STABLE_API_VERSION,
            cluster_resource_uid=self.managed_cluster.resource_uid,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[self.managed_cluster],
                custom_timeouts=POOL_TIMEOUTS,
                # The provider's diff asks for it too (DiffResult.delete_before_replace); stated
                # here so the plan shows it whatever the provider answers.
                delete_before_replace=True,
            ),
        )

    def _retire_managed_pool_command(self) -> command.local.Command:
        """A no-op stand-in for the `az aks nodepool add` Command that earlier releases
        declared for this pool, at the same URN, for one release.

        A stack deployed with that Command holds its delete line, `az aks nodepool delete`.
        Were the Command simply dropped, Pulumi would create the new pool resource first (its
        PUT adopts the running pool) and then delete the Command, running that stored line on
        the very pool just adopted. Declared again with no create, update or delete, the
        Command is updated instead: pulumi-command replaces only on a `triggers` change (its
        `provider:"replaceOnChanges"` tag), runs `update`, else `create`, on an update (none
        here: nothing runs), and a later delete runs the delete of the stored state, which the
        update emptied (pulumi-command commandController.go Update and Delete; pulumi-go-provider
        infer/resource.go: only `replaceOnChanges`-tagged inputs replace, create-first). The
        trigger is the old one, so it does not change. retainOnDelete: the engine decides a
        delete by the flag in the stored state (pulumi/pulumi step.go DeleteStep, #13428), which
        the first `up` writes, so when a later release drops the stand-in, it is forgotten.

        On a stack that never had the Command, this creates a Command that runs nothing.
        docs/lifecycle.md has the manual route (`pulumi state delete`) too."""
        return command.local.Command(
            f"{self._name}-managed-gpu-pool",
            triggers=[self.managed_cluster.identity.apply(lambda i: i.principal_id if i else None)],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.managed_cluster], retain_on_delete=True),
        )

    def _create_provider(self) -> k8s.Provider:
        # No deleteUnreachable: pulumi-kubernetes treats any failure to build a client from
        # the kubeconfig as "the cluster is unreachable", and with deleteUnreachable a
        # `pulumi refresh` then drops every Kubernetes object from the state (a logged-out
        # kubelogin, an authorized IP range that excludes the runner, a network blip), and the
        # next `up` fails with AlreadyExists. docs/lifecycle.md cites the sources. When the
        # cluster really is gone, set PULUMI_K8S_DELETE_UNREACHABLE=true for that one run (README).
        needs: list[pulumi.Resource] = [self.managed_cluster]
        if self.deployer_role_assignment is not None:
            needs.append(self.deployer_role_assignment)
        return k8s.Provider(
            f"{self._name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=needs),
        )


def _dns_prefix(cluster_name: str) -> str:
    prefix = "".join(c if c.isalnum() else "-" for c in cluster_name)[:54].strip("-")
    return prefix or "aks"


def _decode_kubeconfig(value: str) -> str:
    return base64.b64decode(value).decode("utf-8")


def _decode_entra_kubeconfig(value: str) -> str:
    return entra_kubeconfig(_decode_kubeconfig(value))
