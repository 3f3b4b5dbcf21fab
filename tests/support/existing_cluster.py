"""The dev stack pointed at the mocked existing cluster."""

from __future__ import annotations

T4 = "Standard_NC4as_T4_v3"

TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}


def on_existing(**overrides):
    """The dev stack's keys pointed at the mocked existing cluster, with a current size."""
    return {"existingCluster": TEAM, "gpuPool": {"vmSize": T4}, **overrides}
