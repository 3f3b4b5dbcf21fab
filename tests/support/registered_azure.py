"""A fake Azure that holds what a run has created: the AKS clusters and agent pools the mock engine's
monitor recorded (tools/mock_engine.py RecordingMonitor), as Azure answers for them once they exist.

In a consumer's `pulumi up` the package's components read Azure while they are constructed, and
what they find is what the consumer's program has created so far: the engine answers a custom
resource's RegisterResource once its step is done (pulumi/pulumi 1b594989
pkg/resource/deploy/source_eval.go `resmon.RegisterResource`, `result = <-step.done`; step.go
CreateStep.Apply signals it after the provider's Create), and the consumer's SDK sends a component's
registration only once each `depends_on` resource's has been answered (pulumi 3.272.0
runtime/resource.py `prepare_resource`). A deployment therefore creates what it registers; a
preview creates nothing (the provider's Create is told `Preview`), so Azure holds only what an
earlier deployment left (`earlier`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pulumi

from components.seam.reader import InvokeFailed, RunningPool
from tools.azure_mocks import OfflineReader, existing_cluster
from tools.mock_engine import Registration

CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
# What the agentPools GET has beside a pool's settings; a pool's inputs name its cluster with them.
NAMING = ("agentPoolName", "resourceName", "resourceGroupName")


class RegisteredAzure(OfflineReader):
    """Azure with the clusters and pools registered so far (`registered`, the monitor's record), in a
    deployment, and those an earlier deployment created (`earlier`), in any run; `subscription` is the
    one the client is signed in to. Every other read is OfflineReader's (not read: NotRead)."""

    def __init__(
        self, registered: Callable[[], Sequence[Registration]], subscription: str, earlier: Sequence[Registration] = (), **given: Any
    ) -> None:
        super().__init__(**given)
        self.registered, self.earlier = registered, list(earlier)
        self.subscription = subscription

    def created(self) -> list[Registration]:
        """What exists in Azure now: the earlier deployment's, and this run's where it is a deployment."""
        return self.earlier + ([] if pulumi.runtime.is_dry_run() else list(self.registered()))

    def described(self, resource_group: str, name: str) -> dict[str, Any] | None:
        """getManagedCluster's answer for a created cluster: its own settings, and its pools, the
        system pools it was created with and each agent pool created on it since."""
        created = self.created()
        found = [r for r in created if named(r, CLUSTER, resource_group, name)]
        if not found:
            return None
        given = found[-1].inputs
        pools = [
            {"name": r.inputs["agentPoolName"], **{k: v for k, v in r.inputs.items() if k not in NAMING}}
            for r in created
            if named(r, POOL, resource_group, name)
        ]
        arm_id = f"/subscriptions/{self.subscription}/resourceGroups/{resource_group}/providers/Microsoft.ContainerService/managedClusters/{name}"
        return existing_cluster(
            name,
            resource_group,
            given["location"],
            id=arm_id,
            networkProfile=given["networkProfile"],
            agentPoolProfiles=[*given["agentPoolProfiles"], *pools],
        )

    def cluster(self, resource_group: str, name: str) -> Mapping[str, Any]:
        self._asked("cluster")
        described = self.described(resource_group, name)
        if described is None:  # azure-native's error quotes ARM's (ResourceNotFound, 404), as OfflineReader's
            raise InvokeFailed(f"ResourceNotFound: The Resource 'Microsoft.ContainerService/managedClusters/{name}' was not found")
        self.read.add(name)
        self.described_cluster = described  # what described_pools lists
        return described

    def pool_modes(self, subscription: str, resource_group: str, cluster: str, names: Sequence[str]) -> dict[str, RunningPool]:
        # The agentPools GET of each named pool: a pool not created is its 404, not listed.
        self._asked("pool_modes")
        self.described_cluster = self.described(resource_group, cluster) or {}
        return self.described_pools(names)


def named(registration: Registration, type_: str, resource_group: str, cluster: str) -> bool:
    """A cluster of that name, or a pool on it: both name the cluster by resourceGroupName and resourceName."""
    given = registration.inputs
    return registration.type == type_ and (given.get("resourceGroupName"), given.get("resourceName")) == (resource_group, cluster)
