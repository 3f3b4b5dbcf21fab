"""What an AKS-managed GPU pool needs of the subscription and of the machine that runs
Pulumi: the preview feature registered, and an Azure sign-in its own provider can use."""

from __future__ import annotations

from collections.abc import Mapping

from components.cluster.cluster_facts import PERMISSIONS, read_error
from components.pools.settings import Pools, managed_key
from components.problem import Problem
from components.seam.reader import AzureReader, read_errors

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


def feature_registration(pools: Pools, reader: AzureReader) -> list[Problem]:
    """The managed-GPU preview's registration, read, never created: creating a
    `SubscriptionFeatureRegistration` always fails with "cannot create already existing
    resource", because ARM answers the provider's existence check with 200 for every
    feature (pulumi-azure-native #1722, open). The same GET says the state."""
    managed = [p for p in pools.owned if p.managed]
    if not managed:
        return []
    try:
        state = reader.feature_state(MANAGED_GPU_FEATURE_NAMESPACE, MANAGED_GPU_FEATURE)
    except read_errors() as error:  # Azure's answer is the message
        failed = read_error(
            f"{managed_key(managed[0], pools.key(managed[0]))} (AKS-managed GPU nodes): reading the subscription feature "
            f"{MANAGED_GPU_FEATURE_NAMESPACE}/{MANAGED_GPU_FEATURE}",
            error,
            forbidden_fix="it needs Microsoft.Features/providers/features/read on the subscription, such as Reader "
            f"({PERMISSIONS}); or check it by hand: `az feature show --namespace {MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}`",
            not_found_fix=f"register it: `{REGISTER_COMMANDS[0]}`",
        )
        return [Problem(str(failed))]
    if state == REGISTERED:
        return []
    return [
        Problem(
            f"{managed_key(managed[0], pools.key(managed[0]))} (AKS-managed GPU nodes) needs the subscription feature "
            f"{MANAGED_GPU_FEATURE_NAMESPACE}/{MANAGED_GPU_FEATURE}, which is {state or 'unknown'}; "
            f"register it with `{REGISTER_COMMANDS[0]}`, wait until `az feature show --namespace "
            f"{MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}` says Registered, then run "
            f"`{REGISTER_COMMANDS[1]}`"
        )
    ]


def managed_pool_sign_in(pools: Pools, reader: AzureReader) -> list[Problem]:
    """The managed GPU pool is created by this program's dynamic provider with azure-identity's
    DefaultAzureCredential, not with azure-native's sign-in: without it, the pool's create
    would fail after the cluster had been created."""
    managed = [p for p in pools.owned if p.managed]
    if not managed:
        return []
    error = reader.sign_in_problem()
    if error is None:
        return []
    return [
        Problem(
            f"{managed_key(managed[0], pools.key(managed[0]))}: the managed GPU pool is created with azure-identity's "
            f"DefaultAzureCredential, which cannot sign in here ({error}); run `az login`, or in GitHub "
            "Actions run azure/login before pulumi (docs/gpu.md)"
        )
    ]


def host_problem(environ: Mapping[str, str]) -> str | None:
    """Why the dynamic provider host could not load this module in this environment, if it
    could not. With PYTHONSAFEPATH set to a non-empty string Python does not put the current
    directory on sys.path (Python docs, "PYTHONSAFEPATH"; `python -m` included), so the host,
    started as `python -u -m pulumi.dynamic` in the project directory, cannot import
    `components` to unpickle the provider, and every create, update, refresh and delete of
    the pool fails."""
    if environ.get("PYTHONSAFEPATH"):
        return (
            f"PYTHONSAFEPATH={environ['PYTHONSAFEPATH']} is set: Pulumi's provider host for the AKS-managed GPU pool "
            "could not import components/ from the project directory, and every operation on the pool would fail; "
            "unset it (env -u PYTHONSAFEPATH pulumi up)"
        )
    return None
