"""What an AKS-managed GPU pool needs of the subscription and of the machine that runs
Pulumi: the preview feature registered, and an Azure sign-in its own provider can use."""

from __future__ import annotations

from collections.abc import Mapping

from pulumi_azure_native import features

from components.azure import azure_facts
from components.azure.azure_facts import under_mock_engine
from components.azure.cluster_facts import PERMISSIONS, read_error
from components.azure.problem import Problem
from components.config import StackConfig, managed_key

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
            f"{MANAGED_GPU_FEATURE_NAMESPACE}/{MANAGED_GPU_FEATURE}",
            error,
            forbidden_fix="it needs Microsoft.Features/providers/features/read on the subscription, such as Reader "
            f"({PERMISSIONS}); or check it by hand: `az feature show --namespace {MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}`",
            not_found_fix=f"register it: `{REGISTER_COMMANDS[0]}`",
        )
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


def sign_in_error(timeout: float = azure_facts.LIVE_TIMEOUT_SECONDS) -> str | None:
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
