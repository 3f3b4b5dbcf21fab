"""Each GPU pool of a cluster as it runs: the agentPools GET with the live reader's credential,
within one deadline (pool_modes.py says why it is read)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from azure.mgmt.containerservice import models  # the SDK's data models: no client, no call

from components.catalog import api_versions
from components.cluster import rest_shapes
from components.pools.pool_modes import running_of
from components.seam.aks_client import aks_client
from components.seam.deadline import gather
from components.seam.reader import BadAnswer, RunningPool

API_VERSION = api_versions.STABLE
# The whole read, on a thread the program stops waiting for (deadline.gather): azure-core bounds
# neither a Retry-After nor a silent socket (agent_pool_calls.get_pool).
READ_SECONDS = 30.0
# Each request's own limits, and two retries of a 408, 429 or 5xx, inside that deadline.
CONNECT_SECONDS = 5.0
RETRIES = 2


def client_for(subscription_id: str, credential: Any, timeout: float = READ_SECONDS) -> Any:
    """The client, its retries and socket limits set rather than azure-core's defaults."""
    from azure.core.pipeline.policies import RetryPolicy

    return aks_client(
        credential,
        subscription_id,
        API_VERSION,
        retry_policy=RetryPolicy(retry_total=RETRIES, timeout=timeout),
        connect_seconds=min(CONNECT_SECONDS, timeout),
        read_seconds=timeout,
    )


def read(client: Any, resource_group: str, cluster: str, names: Sequence[str], limit: float = READ_SECONDS) -> dict[str, RunningPool]:
    """Each named pool that exists, as it runs; TimeoutError past `limit` seconds."""
    from azure.core.exceptions import ResourceNotFoundError

    def each() -> dict[str, RunningPool]:
        found = {}
        for name in names:
            try:
                answer = client.agent_pools.get(resource_group, cluster, name).as_dict()
            except ResourceNotFoundError:  # the pool, its cluster or its group is not there
                continue
            if wrong := rest_shapes.problem(answer, models.AgentPool):
                raise BadAnswer(f"the agentPools GET of {name} in cluster {resource_group}/{cluster}: in Azure's answer, {wrong}")
            found[name] = running_of(answer)
        return found

    try:
        return gather([each], limit)[0]
    except TimeoutError:
        pools = ", ".join(names)
        raise TimeoutError(
            f"the agentPools GET of {pools} in cluster {resource_group}/{cluster} got no answer within {limit:g} s"
        ) from None
