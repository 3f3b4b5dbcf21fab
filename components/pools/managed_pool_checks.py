"""What an AKS-managed GPU pool needs of the subscription and of the machine that runs
Pulumi: the preview feature registered, and an Azure sign-in its own provider can use."""

from __future__ import annotations

from collections.abc import Mapping

from components.cluster.cluster_facts import PERMISSIONS, read_error
from components.pools.settings import Pools, managed_key
from components.problem import Problem
from components.seam.reader import AzureReader, read_errors

# "Register the ManagedGPUExperiencePreview feature flag in your subscription" (azure-aks-docs
# aks-managed-gpu-nodes.md), then, as every AKS preview page adds, "refresh the registration of
# the Microsoft.ContainerService resource provider" (e.g. use-wasi-node-pools.md).
MANAGED_GPU_FEATURE_NAMESPACE = "Microsoft.ContainerService"
MANAGED_GPU_FEATURE = "ManagedGPUExperiencePreview"
FEATURE = f"{MANAGED_GPU_FEATURE_NAMESPACE}/{MANAGED_GPU_FEATURE}"
SHOW = f"az feature show --namespace {MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}"
REGISTER_COMMANDS = (
    f"az feature register --namespace {MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}",
    f"az provider register --namespace {MANAGED_GPU_FEATURE_NAMESPACE}",
)


def _managed_key(pools: Pools) -> str | None:
    """The key that asked for the stack's first AKS-managed pool, or None without one."""
    managed = [p for p in pools.owned if p.managed]
    return managed_key(managed[0], pools.key(managed[0])) if managed else None


def feature_registration(pools: Pools, reader: AzureReader) -> list[Problem]:
    """The managed-GPU preview's registration, read, never created: creating a
    `SubscriptionFeatureRegistration` always fails with "cannot create already existing
    resource", because ARM answers the provider's existence check with 200 for every
    feature (pulumi-azure-native #1722, open)."""
    if (key := _managed_key(pools)) is None:
        return []
    try:
        state = reader.feature_state(MANAGED_GPU_FEATURE_NAMESPACE, MANAGED_GPU_FEATURE)
    except read_errors() as error:  # Azure's answer is the message
        failed = read_error(
            f"{key} (AKS-managed GPU nodes): reading the subscription feature {FEATURE}",
            error,
            forbidden_fix="it needs Microsoft.Features/providers/features/read on the subscription, such as Reader "
            f"({PERMISSIONS}); or check it by hand: `{SHOW}`",
            not_found_fix=f"register it: `{REGISTER_COMMANDS[0]}`",
        )
        return [Problem(str(failed))]
    if state == "Registered":
        return []
    return [
        Problem(
            f"{key} (AKS-managed GPU nodes) needs the subscription feature {FEATURE}, which is {state or 'unknown'}; "
            f"register it with `{REGISTER_COMMANDS[0]}`, wait until `{SHOW}` says Registered, then run `{REGISTER_COMMANDS[1]}`"
        )
    ]


def managed_pool_sign_in(pools: Pools, reader: AzureReader) -> list[Problem]:
    """The managed pool's provider signs in with azure-identity's DefaultAzureCredential, not
    azure-native's: without it, the pool's create would fail after the cluster's."""
    if (key := _managed_key(pools)) is None or (error := reader.sign_in_problem()) is None:
        return []
    return [
        Problem(
            f"{key}: the managed GPU pool is created with azure-identity's DefaultAzureCredential, which cannot sign in "
            f"here ({error}); run `az login`, or in GitHub Actions run azure/login before pulumi (docs/gpu.md)"
        )
    ]


def host_problem(environ: Mapping[str, str]) -> str | None:
    """Why Pulumi's provider host could not unpickle the managed pool's provider here: with
    PYTHONSAFEPATH set, Python does not put the current directory on sys.path (Python docs,
    "PYTHONSAFEPATH"), so the host (`python -u -m pulumi.dynamic`) cannot import `components`."""
    if environ.get("PYTHONSAFEPATH"):
        return (
            f"PYTHONSAFEPATH={environ['PYTHONSAFEPATH']} is set: Pulumi's provider host for the AKS-managed GPU pool "
            "could not import components/ from the project directory, and every operation on the pool would fail; "
            "unset it (env -u PYTHONSAFEPATH pulumi up)"
        )
    return None
