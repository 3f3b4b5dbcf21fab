"""Checks against the Azure subscription that run before any resource is registered.

The commonest way a first GPU deployment fails is capacity, not the program: GPU families
start with zero vCPU quota, a size is often not offered to a subscription in a region, and
the guide's Standard_NC6 is retired. Each would otherwise fail `pulumi up` after the cluster
was created, 5-15 minutes and real money in.

A preview (`pulumi preview`, `make render`) reports every problem as a warning. A deployment
(the update step of `pulumi up`) stops with one `PreflightError` that lists every blocking
problem, one per line, before any resource is registered; `aks-gpu:preflight.mode: warn`
makes it warn and go on, `off` skips every check. The facts come from Azure itself, or from
saved az CLI output (components/azure/azure_facts.py); when they cannot be had, a warning says what
was not checked, and nothing is blocked.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional

import pulumi
from pulumi_azure_native import authorization, features

from components.azure import azure_facts, gpu_sizes, pool_network
from components.azure.azure_facts import REGIONAL_CORES, REGIONAL_SPOT_CORES, Facts
from components.azure.cluster_facts import PERMISSIONS, ClusterFacts, read_error
from components.azure.pool_network import PoolNetwork
from components.config import NAMESPACE, SYSTEM_POOL_NAME, StackConfig, managed_key
from components.errors import PreflightError
from components.resources.managed_gpu_pool import OWNER_TAG, host_problem

# AKS-managed GPU nodes (`gpuPool.management: aks-managed`) are a preview behind this
# subscription feature (azure-aks-docs articles/aks/aks-managed-gpu-nodes.md: "Register the
# ManagedGPUExperiencePreview feature flag in your subscription").
MANAGED_GPU_FEATURE_NAMESPACE = "Microsoft.ContainerService"
MANAGED_GPU_FEATURE = "ManagedGPUExperiencePreview"
REGISTERED = "Registered"
# The page's command, then what every AKS preview page adds: "When the status reflects
# Registered, refresh the registration of the Microsoft.ContainerService resource provider
# by using the az provider register command" (azure-aks-docs, e.g. articles/aks/
# use-wasi-node-pools.md, disable-ssh.md).
REGISTER_COMMANDS = (
    f"az feature register --namespace {MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}",
    f"az provider register --namespace {MANAGED_GPU_FEATURE_NAMESPACE}",
)
# Where the subscription comes from when the stack does not set azure-native:subscriptionId:
# the variables azure-native and the Azure SDK read.
SUBSCRIPTION_VARIABLES = ("ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID")
QUOTA_FIX = "request more on the Azure portal's Quotas page (Compute, {location}, '{display}')"


@dataclass(frozen=True)
class Problem:
    message: str
    #: Blocking: Azure would refuse the deployment. Otherwise a warning in every run.
    blocking: bool = True


@dataclass(frozen=True)
class PoolNeed:
    """What one node pool asks of the region."""

    key: str
    vm_size: str
    #: Nodes needed for the deployment to finish: the initial count, and one GPU node for
    #: the MNIST Job even when the pool autoscales from zero.
    nodes: int
    #: Nodes the pool may grow to (the autoscaler's maxCount).
    max_nodes: int
    spot: bool = False
    gpu: bool = False
    gen2: bool = False


# --------------------------------------------------------------------------- entry point


@dataclass(frozen=True)
class Checked:
    #: What a run shows.
    warnings: list[str]
    #: The cluster's region: the config's, or an existing cluster's as read (None when it
    #: could not be read, or preflight is off).
    region: Optional[str]


def run(
    cfg: StackConfig, stack: str, found: Optional[ClusterFacts] = None, networks: Iterable[PoolNetwork] = (),
    dry_run: Optional[bool] = None,
) -> Checked:
    """Every check this stack needs; `found` is the existing cluster, as read (cluster_facts),
    and `networks` how each pool joins its network (pool_network).
    Returns the warnings to show and the cluster's region; raises PreflightError when a
    deployment in `enforce` mode would hit a blocking problem."""
    mode = cfg.preflight.mode
    region = found.location if found is not None else cfg.location
    if mode == "off":
        return Checked([], region)
    dry_run = pulumi.runtime.is_dry_run() if dry_run is None else dry_run
    problems: list[Problem] = []
    node_group, own_pools = None, {}
    if found is not None:
        problems += check_existing_cluster(cfg, found, stack)
        node_group, own_pools = found.node_resource_group, pools_of_stack(found, stack)
    facts, notes = load_facts(cfg, region, node_group)
    if facts is not None and own_pools:
        facts = dataclasses.replace(facts, existing_pools={**facts.existing_pools, **own_pools})
    problems += [
        *(Problem(p) for p in pool_network.problems(list(networks))),
        *retired_sizes(cfg, stack),
        *feature_registration(cfg),
        *managed_pool_sign_in(cfg),
        *(capacity(cfg, facts, stack, region) if facts else []),
    ]
    blocking = [p.message for p in problems if p.blocking]
    if blocking and not dry_run and mode == "enforce":
        raise PreflightError(
            f"preflight: Azure would refuse this deployment ({len(blocking)} problem(s); nothing was created; "
            f"set {NAMESPACE}:preflight.mode to warn to deploy anyway):\n" + "\n".join(f"- {m}" for m in blocking)
        )
    stops = " (a deployment stops here)" if mode == "enforce" else ""
    return Checked([*notes, *(p.message + (stops if p.blocking else "") for p in problems)], region)


def provider_host(cfg: StackConfig, environ: Mapping[str, str]) -> None:
    """An AKS-managed pool runs in Pulumi's dynamic provider host, which must import
    components/ from the project directory; where it could not, every operation on the pool
    fails after the rest of the stack is built. That is certain, whatever preflight.mode
    says: a preview stops too."""
    problem = host_problem(environ) if any(p.managed for p in cfg.gpu_pools) else None
    if problem:
        raise PreflightError(f"preflight: {problem}")


def under_mock_engine() -> bool:
    from pulumi.runtime import mocks, settings

    return isinstance(settings.get_monitor(), mocks.MockMonitor)


def load_facts(cfg: StackConfig, location: str, node_group: Optional[str] = None) -> tuple[Optional[Facts], list[str]]:
    """Files when given; otherwise Azure, except under the mock engine, which makes no call.
    `location` is the cluster's region; `node_group` an existing cluster's node resource group."""
    pf = cfg.preflight
    if pf.skus_file and pf.usage_file:
        return azure_facts.from_files(Path(pf.skus_file), Path(pf.usage_file), location), []
    unchecked = "preflight: VM size offers and vCPU quota were not checked"
    if under_mock_engine():
        return None, [
            f"{unchecked}: the mock engine makes no calls to Azure; set {NAMESPACE}:preflight.skusFile and "
            "usageFile to check saved az CLI output (docs/preflight.md)"
        ]
    try:
        subscription = subscription_id(cfg)
        node_group = node_group or azure_facts.node_resource_group(cfg.resource_group_name, cfg.cluster_name, location)
        return azure_facts.live(subscription, location, node_group), []
    except Exception as error:  # noqa: BLE001 - any failure only means the facts are missing
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        return None, [f"{unchecked}: {type(error).__name__}: {reason}"]


def subscription_id(cfg: StackConfig) -> str:
    """azure-native:subscriptionId, the variables azure-native reads, or the subscription
    azure-native itself resolved (its getClientConfig)."""
    for value in (cfg.subscription_id, *(os.environ.get(v) for v in SUBSCRIPTION_VARIABLES)):
        if value:
            return value
    return authorization.get_client_config().subscription_id


# --------------------------------------------------------------------------- the checks


def retired_sizes(cfg: StackConfig, stack: str) -> list[Problem]:
    problems = []
    for pool in cfg.gpu_pools:
        retired = gpu_sizes.retirement(pool.vm_size)
        if retired is None:
            continue
        key = cfg.pool_key(pool)
        problems.append(
            Problem(
                f"{key}.vmSize {retired.name} ({retired.gpu_model}) was retired by Azure on "
                f"{retired.retired.isoformat() if retired.retired else '?'} and AKS refuses it; pick a current size: "
                f"`{set_size_command(retired.replacement or 'Standard_NC4as_T4_v3', stack, key)}`"
            )
        )
    return problems


def set_size_command(size: str, stack: str, key: str = f"{NAMESPACE}:gpuPool") -> str:
    return f"pulumi config set --path {key}.vmSize {size} -s {stack}"


def feature_registration(cfg: StackConfig) -> list[Problem]:
    """The managed-GPU preview's registration, read, never created: creating a
    `SubscriptionFeatureRegistration` always fails with "cannot create already existing
    resource", because ARM answers the provider's existence check with 200 for every
    feature (pulumi-azure-native #1722, open). The same GET, made as an invoke, says the
    state; a plain (not `_output`) invoke answers before the program goes on."""
    managed = [p for p in cfg.gpu_pools if p.managed]
    if not managed:
        return []
    try:
        result = features.get_subscription_feature_registration(
            provider_namespace=MANAGED_GPU_FEATURE_NAMESPACE, feature_name=MANAGED_GPU_FEATURE
        )
    except Exception as error:  # noqa: BLE001 - the answer is the message
        failed = read_error(
            f"{managed_key(managed[0], cfg.pool_key(managed[0]))} (AKS-managed GPU nodes): reading the subscription feature "
            f"{MANAGED_GPU_FEATURE_NAMESPACE}/{MANAGED_GPU_FEATURE}", error,
            forbidden_fix="it needs Microsoft.Features/providers/features/read on the subscription, such as Reader "
            f"({PERMISSIONS}); or check it by hand: `az feature show --namespace {MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}`",
            not_found_fix=f"register it: `{REGISTER_COMMANDS[0]}`",
        )  # fmt: skip
        return [Problem(str(failed))]
    state = result.properties.state if result.properties else None
    if state == REGISTERED:
        return []
    return [
        Problem(
            f"{managed_key(managed[0], cfg.pool_key(managed[0]))} (AKS-managed GPU nodes) needs the subscription feature "
            f"{MANAGED_GPU_FEATURE_NAMESPACE}/{MANAGED_GPU_FEATURE}, which is {state or 'unknown'}; "
            f"register it with `{REGISTER_COMMANDS[0]}`, wait until `az feature show --namespace "
            f"{MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}` says Registered, then run "
            f"`{REGISTER_COMMANDS[1]}`"
        )
    ]


# The scope azure-mgmt-containerservice asks tokens for (ARM's audience).
ARM_SCOPE = "https://management.azure.com/.default"


def sign_in_error(timeout: float = azure_facts.LIVE_TIMEOUT_SECONDS) -> Optional[str]:
    """Why azure-identity's DefaultAzureCredential cannot get an ARM token here, or None."""
    from azure.identity import DefaultAzureCredential

    try:
        azure_facts.gather([lambda: DefaultAzureCredential().get_token(ARM_SCOPE)], timeout)
    except Exception as error:  # noqa: BLE001 - any failure is the answer
        return f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
    return None


def managed_pool_sign_in(cfg: StackConfig) -> list[Problem]:
    """The managed GPU pool is created by this program's dynamic provider with azure-identity's
    DefaultAzureCredential, not with azure-native's sign-in: without it, the pool's create
    would fail after the cluster had been created. Under the mock engine nothing is asked."""
    managed = [p for p in cfg.gpu_pools if p.managed]
    if not managed or under_mock_engine():
        return []
    error = sign_in_error()
    if error is None:
        return []
    return [
        Problem(
            f"{managed_key(managed[0], cfg.pool_key(managed[0]))}: the managed GPU pool is created with azure-identity's "
            f"DefaultAzureCredential, which cannot sign in here ({error}); run `az login`, or in GitHub "
            "Actions run azure/login before pulumi (docs/variants.md)"
        )
    ]


def pool_needs(cfg: StackConfig, facts: Facts) -> list[PoolNeed]:
    """The pools, less what a deployed stack already runs (Azure's usage counts those)."""
    needs = []
    for gpu in cfg.gpu_pools:
        start = max(gpu.node_count, 1) if cfg.mnist_job.enabled else gpu.node_count
        most = max(gpu.max_count or gpu.node_count, start)
        existing_size, existing_nodes = facts.existing_pools.get(gpu.name, (None, 0))
        if existing_size == gpu.vm_size:
            start, most = max(start - existing_nodes, 0), max(most - existing_nodes, 0)
        needs.append(PoolNeed(cfg.pool_key(gpu), gpu.vm_size, start, most, gpu.spot, gpu=True, gen2=gpu.gen2))
    if cfg.existing_cluster is None:
        # The System pool is created with the cluster and never changed by `pulumi up` after.
        system = cfg.system_pool
        system_nodes = 0 if SYSTEM_POOL_NAME in facts.existing_pools else system.node_count
        needs.append(PoolNeed(f"{NAMESPACE}:systemPool", system.vm_size, system_nodes, system_nodes))
    return needs


def capacity(cfg: StackConfig, facts: Facts, stack: str, location: Optional[str] = None) -> list[Problem]:
    location = location or cfg.location
    needs = pool_needs(cfg, facts)
    problems = [p for need in needs for p in offer(need, facts, location)]
    offered = [n for n in needs if n.vm_size in facts.skus and not facts.skus[n.vm_size].restriction]
    problems += quota(offered, facts, location, lambda need: suggestion(need, facts, location, stack))
    return problems


def offer(need: PoolNeed, facts: Facts, location: str) -> list[Problem]:
    """Is the size offered to this subscription in the region, and does Azure agree with the
    catalog about it?"""
    sku = facts.skus.get(need.vm_size)
    size = f"{need.key}.vmSize {need.vm_size}"
    if sku is None:
        # `az vm list-skus --all` lists every size of the region, offered or not.
        blocking = gpu_sizes.is_gpu_family(need.vm_size)
        return [Problem(f"{size}: Azure lists no such size in {location} ({facts.source})", blocking)]
    if sku.restriction:
        return [Problem(f"{size} is not offered to this subscription in {location} ({sku.restriction}); pick another size or region")]
    problems = []
    known = gpu_sizes.CATALOG.get(need.vm_size)
    if known and sku.gpus is not None and sku.gpus != known.gpus:
        problems.append(Problem(f"{size}: Azure says {sku.gpus} GPU(s) per VM, this program's catalog {known.gpus}", False))
    if known and sku.generations and ("V2" in sku.generations) != known.gen2:
        problems.append(Problem(f"{size}: Azure lists Hyper-V generations {', '.join(sku.generations)}, this program's catalog "
                                f"{'Gen2' if known.gen2 else 'Gen1 only'}; Azure's list decides", False))  # fmt: skip
    if need.gen2 and sku.generations and "V2" not in sku.generations:
        problems.append(Problem(f"{need.key}.gen2 = true but Azure offers {need.vm_size} as {', '.join(sku.generations)} only in {location}"))
    return problems


def quota(needs: list[PoolNeed], facts: Facts, location: str, alternative: Callable[[PoolNeed], str]) -> list[Problem]:
    """Each quota the pools draw on, against its free vCPUs: the size's family and the
    regional total, or for a Spot pool the regional Spot quota instead of both
    (azure-aks-docs articles/aks/spot-node-pool.md)."""
    demands: dict[str, list[tuple[PoolNeed, int]]] = {}
    for need in needs:
        vcpus = facts.skus[need.vm_size].vcpus
        names = [REGIONAL_SPOT_CORES] if need.spot else [facts.skus[need.vm_size].family, REGIONAL_CORES]
        for name in names:
            demands.setdefault(name, []).append((need, vcpus))
    problems = []
    for name, users in demands.items():
        usage = facts.usages.get(name)
        if usage is None:
            problems.append(Problem(f"{users[0][0].key}.vmSize {users[0][0].vm_size}: no quota named {name} in {location} ({facts.source}); not checked", False))  # fmt: skip
            continue
        start = sum(n.nodes * v for n, v in users)
        most = sum(n.max_nodes * v for n, v in users)
        pools = ", ".join(f"{n.key}.vmSize {n.vm_size} ({n.nodes} x {v} vCPUs)" for n, v in users)
        numbers = f"'{usage.display}' ({usage.name}) in {location}: {usage.current} in use, limit {usage.limit}"
        fix = QUOTA_FIX.format(location=location, display=usage.display)
        gpu_users = [n for n, _ in users if n.gpu]
        if start > usage.free:
            extra = alternative(gpu_users[0]) if gpu_users else ""
            problems.append(Problem(f"{pools} need{'s' if len(users) == 1 else ''} {start} vCPUs of {numbers}; {fix}{extra}"))
        elif most > usage.free:
            problems.append(Problem(f"{pools} may grow to {most} vCPUs of {numbers}: the autoscaler would stall; {fix}", False))
    return problems


def suggestion(need: PoolNeed, facts: Facts, location: str, stack: str) -> str:
    """A current catalog size with the same or a newer GPU, offered here, with room in its
    quotas for this pool's start: the one with the fewest vCPUs."""
    fits = []
    for size in gpu_sizes.alternatives(need.vm_size):
        sku = facts.skus.get(size.name)
        if sku is None or sku.restriction:
            continue
        needed = need.nodes * sku.vcpus
        quotas = [REGIONAL_SPOT_CORES] if need.spot else [sku.family, REGIONAL_CORES]
        if all(q in facts.usages and facts.usages[q].free >= needed for q in quotas):
            fits.append((sku.vcpus, size))
    if not fits:
        return ""
    _, size = min(fits, key=lambda f: (f[0], f[1].name))
    return f", or use {size.name} ({size.gpu_model}, offered in {location} with free quota): `{set_size_command(size.name, stack, need.key)}`"


# --------------------------------------------------------------------------- an existing cluster

# OWNER_TAG: the Azure tag this program puts on the pools it adds to an existing cluster:
# which stack owns the pool. A pool of the same name without it is somebody else's, and the
# stack must not touch it (azure-native's create refuses an existing pool: "cannot create
# already existing resource" (provider azCoreClient.CanCreate); the managed pool's create
# refuses it too, managed_gpu_pool.refuse_others_pool).
# NVIDIA GPU Operator v26.7.0 supports Kubernetes 1.33 to 1.36 (NVIDIA/cloud-native-docs
# gpu-operator/platform-support.rst at commit 52dcb7b8, "26.7"; AKS left its table in
# adfe9224, and was 1.30-1.35 at v25.10.1). The other modes state no version: the AKS pages
# use-nvidia-gpu.md, aks-managed-gpu-nodes.md and gpu-multi-instance.md name none
# (azure-aks-docs fb060abe, 2026-08-21).
GPU_OPERATOR_KUBERNETES = ((1, 33), (1, 36))
SUCCEEDED = "Succeeded"


def owner_tags(project: str, stack: str) -> dict[str, str]:
    return {OWNER_TAG: f"{project}/{stack}"}


def namespaces_line(cfg: StackConfig, found: ClusterFacts) -> str:
    """What a preview of an existing cluster cannot show: a namespace this stack would create
    that the cluster already has. pulumi-kubernetes 4.29.0 and later create with a client-side
    create, which the API server answers AlreadyExists (its CHANGELOG, #2926), and a preview's
    dry-run create hides that answer (provider.go Create, `failedPreview`)."""
    names = " ".join(cfg.owned_namespaces)
    return (
        f"namespaces: this stack creates {', '.join(cfg.owned_namespaces)} in {found.name} and deletes them on destroy; if the "
        f"cluster has one already, `pulumi up` stops at it (AlreadyExists), which a preview cannot show: check with "
        f"`kubectl get namespace {names}`, and rename with devicePlugin.namespace, gpuOperator.namespace or mnistJob.namespace"
    )


def pools_of_stack(found: ClusterFacts, stack: str) -> dict[str, tuple[str, int]]:
    """The cluster's pools this stack added (its owner tag): name -> (VM size, nodes)."""
    mine = owner_tags(pulumi.get_project(), stack)[OWNER_TAG]
    return {p.name: (p.vm_size, p.count) for p in found.pools if p.tags.get(OWNER_TAG) == mine}


def check_existing_cluster(cfg: StackConfig, found: ClusterFacts, stack: str) -> list[Problem]:
    """The existing cluster as a deployment would meet it: Succeeded and running, no other
    owner's pool under one of this stack's pool names, a Kubernetes version the chosen mode
    supports, and no GPU pool of others that the GPU Operator would take over. (That it
    can be read at all, cluster_facts.read has made sure.)"""
    where = f"{NAMESPACE}:existingCluster {found.resource_group}/{found.name}"
    problems = []
    if found.provisioning_state != SUCCEEDED:
        problems.append(Problem(
            f"{where} is {found.provisioning_state}, not {SUCCEEDED}: AKS runs one operation at a time on a cluster "
            "(\"Another operation ... is in progress\"), and this program adds pools only to a cluster in Succeeded; "
            "wait, or repair it (`az aks update` with no changes)"
        ))  # fmt: skip
    if found.power_state == "Stopped":
        problems.append(Problem(
            f"{where} is stopped: \"You can only perform start or delete operations on a stopped AKS cluster\" "
            f"(start-stop-cluster.md); start it with `az aks start --resource-group {cfg.resource_group_name} --name {cfg.cluster_name}`"
        ))  # fmt: skip
    policy = found.network_policy
    if policy in (None, "none"):
        problems.append(Problem(
            f"{where} enforces no NetworkPolicy (networkProfile.networkPolicy is {policy or 'unset'}): the policies this "
            "program declares for its namespaces have no effect there", blocking=False
        ))  # fmt: skip
    problems += pool_name_conflicts(cfg, found, stack)
    problems += mode_against_cluster(cfg, found)
    return problems


def pool_name_conflicts(cfg: StackConfig, found: ClusterFacts, stack: str) -> list[Problem]:
    mine = owner_tags(pulumi.get_project(), stack)[OWNER_TAG]
    theirs = {p.name: p.tags.get(OWNER_TAG) for p in found.pools}
    problems = []
    for pool in cfg.gpu_pools:
        if pool.name in theirs and theirs[pool.name] != mine:
            owner = f"it carries {OWNER_TAG} = {theirs[pool.name]}" if theirs[pool.name] else f"it has no {OWNER_TAG} tag"
            problems.append(Problem(
                f"{cfg.pool_key(pool)}: the cluster already has a pool named {pool.name!r}, which this stack did not add "
                f"({owner}); pick another pool name"
            ))  # fmt: skip
    return problems


def mode_against_cluster(cfg: StackConfig, found: ClusterFacts) -> list[Problem]:
    operator = [p for p in cfg.gpu_pools if p.mode == "gpu-operator"]
    if not operator:
        return []
    key = cfg.pool_key(operator[0])
    problems = []
    version = tuple(int(n) for n in (found.kubernetes_version or "0.0").split(".")[:2])
    low, high = GPU_OPERATOR_KUBERNETES
    if not low <= version <= high:
        problems.append(Problem(
            f"{key}.management = gpu-operator: the cluster runs Kubernetes {found.kubernetes_version}, and NVIDIA "
            f"supports the GPU Operator {cfg.gpu_operator.version} on {low[0]}.{low[1]} to {high[0]}.{high[1]} only "
            "(NVIDIA's platform support page)", blocking=False
        ))  # fmt: skip
    ours = {p.name for p in cfg.gpu_pools}
    others = [p for p in found.pools if p.name not in ours and gpu_sizes.is_gpu_family(p.vm_size)]
    if others:
        names = ", ".join(f"{p.name} ({p.vm_size})" for p in others)
        problems.append(Problem(
            f"{key}.management = gpu-operator, but the cluster has GPU pools this stack does not manage: {names}; the GPU "
            "Operator deploys its driver and device plugin on every NVIDIA GPU node of the cluster (NVIDIA GPU Operator "
            "docs, getting-started), which would give those pools a second device plugin; use device-plugin or aks-managed"
        ))  # fmt: skip
    return problems
