"""The program's errors. Each is a `pulumi.RunError`: the Pulumi CLI prints its one-line
message without a stack trace, and since every check runs before any resource is
registered, nothing is left half-created."""

from __future__ import annotations

import pulumi


class ConfigError(pulumi.RunError):
    """A configuration value that cannot work. The message is one line."""


class PreflightError(pulumi.RunError):
    """A fact about the Azure subscription, or the machine, that would make the deployment fail."""


class CostError(pulumi.RunError):
    """The stack would cost more per hour than aks-gpu:cost.maxHourly allows."""


class AzureReadError(pulumi.RunError):
    """A read of Azure that failed: what was read, what Azure answered, and what to do."""


class ClusterAccessError(pulumi.RunError):
    """The identity that runs the program may not yet create Kubernetes objects in the cluster,
    or the cluster could not be asked (components/azure/cluster_access.py)."""


class ManagedPoolError(pulumi.RunError):
    """A step of the AKS-managed pool's provider that failed: the step, the pool, and Azure's
    answer or the time limit it ran out of. The provider runs in Pulumi's provider host, which
    sends this message alone to the CLI (components/resources/provider_errors.py)."""


class ManagedPoolTimeout(ManagedPoolError, TimeoutError):
    """A step of the AKS-managed pool's provider that ran out of its time limit."""
