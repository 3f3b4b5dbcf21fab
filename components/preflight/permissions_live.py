"""The signed-in identity's effective permissions at a scope, live: ARM's `GET {scope}/providers/
Microsoft.Authorization/permissions` (api-version 2022-04-01), every page, through azure-mgmt-core's
pipeline with the live reader's credential (permissions.py says what they allow)."""

from __future__ import annotations

from typing import Any

from components.preflight.permissions import shape_problem
from components.seam.reader import BadAnswer

API_VERSION = "2022-04-01"
TIMEOUT_SECONDS = 15


def read(
    subscription_id: str, credential: Any, base_url: str | None = None, timeout: float = TIMEOUT_SECONDS, resource_group: str | None = None
) -> list[dict[str, Any]]:
    """The caller's permissions at the subscription's scope (or `resource_group`'s), every page.
    Raises on any failure (a group not there yet answers 404). `base_url`: the tests' fake of ARM."""
    from azure.core.pipeline.policies import RetryPolicy, UserAgentPolicy
    from azure.core.rest import HttpRequest
    from azure.mgmt.core import ARMPipelineClient
    from azure.mgmt.core.policies import ARMChallengeAuthenticationPolicy

    endpoint = base_url or "https://management.azure.com"
    client: Any = ARMPipelineClient(
        base_url=endpoint,
        policies=[
            UserAgentPolicy("aks-gpu-preflight"),
            RetryPolicy(retry_total=2, timeout=timeout),
            ARMChallengeAuthenticationPolicy(credential, f"{endpoint}/.default"),
        ],
    )
    options = {"connection_timeout": 5, "read_timeout": timeout, "enforce_https": not endpoint.startswith("http://")}
    scope = f"/subscriptions/{subscription_id}" + (f"/resourceGroups/{resource_group}" if resource_group else "")
    url: str | None = f"{endpoint}{scope}/providers/Microsoft.Authorization/permissions?api-version={API_VERSION}"
    found: list[dict[str, Any]] = []
    while url:
        response = client.send_request(HttpRequest("GET", url), **options)
        response.raise_for_status()
        try:
            page = response.json()
        except ValueError as error:
            raise BadAnswer(f"Azure's answer is no JSON: {error}") from None
        values = page.get("value") if isinstance(page, dict) else None
        if not isinstance(values, list) or not all(isinstance(v, dict) for v in values):
            raise BadAnswer(f"Azure's answer is not a list of permissions: {str(page)[:200]}")
        if problem := shape_problem(values):  # typed at the seam: actions and notActions are lists of strings
            raise BadAnswer(f"Azure's answer is not a list of permissions: {problem}")
        found += values
        url = page.get("nextLink")
    return found
