"""The dev stack run with a reader of the fake AKS's agentPools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from components.errors import PreflightError
from components.pools import agent_pools
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program


class AgentPoolsReader(OfflineReader):
    """The program's reader, answering the pools' GPU management as the live reader does:
    the agentPools GET, here against the local fake of AKS."""

    def __init__(self, azure) -> None:
        super().__init__()
        self.azure = azure

    def pool_modes(self, subscription, resource_group, cluster, names):
        self.reads.append("pool_modes")
        return agent_pools.read(self.azure.client, resource_group, cluster, names)


def run(preview: bool, azure=None, **overrides):
    """The dev stack with `overrides`, handed a reader of the fake AKS (`azure`), or the
    offline render's, which reads no pool."""
    monitor = RecordingMonitor(AzureMocks(reader=AgentPoolsReader(azure) if azure is not None else None))
    try:
        return run_program("dev", overrides=overrides, monitor=monitor, preview=preview), monitor
    except PreflightError as error:
        return error, monitor


def served_azure() -> Iterator[Any]:
    """conftest's `azure` (the fake agentPools API with the dev cluster in it, and a client that
    reaches it), for a fixture of a wider scope: `yield from served_azure()`."""
    import fake_aks
    from conftest import MANAGED_CLUSTER, MANAGED_GROUP

    for fake in fake_aks.serve():
        fake.clusters.add((MANAGED_GROUP, MANAGED_CLUSTER))
        fake.client = fake_aks.client_factory_for(fake.url)("sub", agent_pools.API_VERSION)
        yield fake
