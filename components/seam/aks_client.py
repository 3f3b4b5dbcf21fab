"""The AKS management client (azure-mgmt-containerservice's ContainerServiceClient) as every
caller builds it: its retries and socket limits set rather than azure-core's defaults (ten
retries, 300 s to connect and to read: azure/core/configuration.py)."""

from __future__ import annotations

from typing import Any

ARM_ENDPOINT = "https://management.azure.com"


def aks_client(
    credential: Any,
    subscription_id: str,
    api_version: str,
    *,
    retry_policy: Any,
    connect_seconds: float,
    read_seconds: float,
    endpoint: str = ARM_ENDPOINT,
) -> Any:
    """The client for ARM at `endpoint` (a sovereign cloud's, or a test's), its token asked for that endpoint's scope."""
    from azure.mgmt.containerservice import ContainerServiceClient

    endpoint = endpoint.rstrip("/")
    return ContainerServiceClient(
        credential,
        subscription_id,
        base_url=endpoint,
        api_version=api_version,
        credential_scopes=[f"{endpoint}/.default"],
        retry_policy=retry_policy,
        connection_timeout=connect_seconds,
        read_timeout=read_seconds,
    )
