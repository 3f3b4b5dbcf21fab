"""Checks against the Azure subscription that run before any resource is registered.

A preview (`pulumi preview`, `make render`) reports what it finds as warnings; a deployment
(the update step of `pulumi up`) stops with one `PreflightError` that lists every blocking
problem, one per line, so nothing is created that Azure would refuse halfway through.
"""

from __future__ import annotations

from typing import Optional

import pulumi
from pulumi_azure_native import features

from components.errors import PreflightError

# AKS-managed GPU nodes (`gpuPool.dedicatedVhd: true`) are a preview behind this
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


def managed_gpu_feature_state() -> Optional[str]:
    """The subscription's registration state of the managed-GPU preview, read, not created.

    Not a `SubscriptionFeatureRegistration` resource: creating one always fails with
    "cannot create already existing resource", because ARM answers the provider's
    existence check with 200 for every feature, registered or not (pulumi-azure-native
    #1722, open). The same GET, made as an invoke, says the state. A plain (not `_output`)
    invoke returns before the program goes on, so the answer can stop it.
    """
    result = features.get_subscription_feature_registration(
        provider_namespace=MANAGED_GPU_FEATURE_NAMESPACE, feature_name=MANAGED_GPU_FEATURE
    )
    return result.properties.state if result.properties else None


def check_managed_gpu_feature(state: Optional[str], dry_run: bool) -> list[str]:
    """Returns the warning for a preview, raises for a deployment, when the feature is
    not registered; returns nothing when it is."""
    if state == REGISTERED:
        return []
    problem = (
        f"aks-gpu:gpuPool.dedicatedVhd = true needs the subscription feature "
        f"{MANAGED_GPU_FEATURE_NAMESPACE}/{MANAGED_GPU_FEATURE}, which is {state or 'unknown'}; "
        f"register it with `{REGISTER_COMMANDS[0]}`, wait until `az feature show --namespace "
        f"{MANAGED_GPU_FEATURE_NAMESPACE} --name {MANAGED_GPU_FEATURE}` says Registered, then run "
        f"`{REGISTER_COMMANDS[1]}`"
    )
    if dry_run:
        return [problem + " (a deployment stops here until then)"]
    raise PreflightError(problem)


def run(dedicated_vhd: bool, dry_run: Optional[bool] = None) -> list[str]:
    """Every check this stack needs; returns the preview's warnings."""
    dry_run = pulumi.runtime.is_dry_run() if dry_run is None else dry_run
    warnings: list[str] = []
    if dedicated_vhd:
        warnings += check_managed_gpu_feature(managed_gpu_feature_state(), dry_run)
    return warnings
