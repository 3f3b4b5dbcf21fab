"""Whether a GPU pool that already runs in Azure is managed the way the config now says, read
before anything is registered: a switch between `aks-managed` and the other modes is refused
in one line, in a preview and in a deployment alike.

Why refuse. The two kinds of pool are different Pulumi resources (a typed `AgentPool`; the
dynamic `ManagedGpuPool`) for one AKS pool name. Unaliased, the engine creates the new
resource while the program runs and deletes the old one only after it (pulumi/pulumi
pkg/resource/deploy/step_generator.go: a URN with no old state is a CreateStep;
GenerateDeletes deletes what was not registered, through the old state's provider). The
managed pool's PUT adopts the running pool, and the old `AgentPool`'s delete then removes the
pool just adopted; the other way, azure-native's create of a pool that exists fails
("cannot create already existing resource": provider.go CanCreate). AKS cannot switch in
place either: "The managementMode, migStrategy, and driver fields under gpuProfile are
immutable after node pool creation" (aks-managed-gpu-nodes.md, ms.date 07/02/2026). An alias
across the types would not make it safe: the engine's providerChanged asks the *new*
provider's DiffConfig, which the dynamic provider host does not implement, and the outcome
rests on the diff of a provider that never saw the old state (docs/lifecycle.md).

The way through, with `gpuPool` and `gpuPools` alike: a new pool name (`gpuPool.name`, or the
entry's key), so one `up` creates the new pool and then deletes the old one (quota for both
for a while); with `gpuPools`, also two `up`s with the entry removed in between. Between `device-plugin` and
`gpu-operator` nothing is refused: both are a typed pool, and the driver setting replaces it,
deleting first (components/azure/pool_mutability.py).

The read: the agentPools GET at api 2026-08-01, whose GPUProfile has
`nvidia.managementMode` (azure-native's invokes type pools at 2025-09-01, which has no
`nvidia`), through the reader the program is handed (live: azure-identity's
DefaultAzureCredential, as the managed pool's own provider reads). A pool or cluster that is
not there (404) is no switch. A read that fails otherwise is a warning that nothing was
checked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from components.azure.reader import AzureReader, NotRead
from components.config import StackConfig

# Must equal components.resources.managed_gpu_pool.STABLE_API_VERSION (a test checks):
# knowledge does not import the components.
API_VERSION = "2026-08-01"
TIMEOUT_SECONDS = 30


def mode_of(pool: Mapping[str, Any]) -> str:
    """The GPU management of a pool as the agentPools GET returns it (`as_dict()`: snake_case,
    or the REST body's camelCase)."""
    properties = pool.get("properties") or pool
    profile = properties.get("gpu_profile") or properties.get("gpuProfile") or {}
    nvidia = profile.get("nvidia") or {}
    if str(nvidia.get("management_mode") or nvidia.get("managementMode") or "").lower() == "managed":
        return "aks-managed"
    if str(profile.get("driver") or "").lower() == "none":
        return "gpu-operator"
    return "device-plugin"


def client_for(subscription_id: str, credential: Any, timeout: float = TIMEOUT_SECONDS) -> Any:
    from azure.mgmt.containerservice import ContainerServiceClient

    return ContainerServiceClient(
        credential,
        subscription_id,
        api_version=API_VERSION,
        retry_total=2,
        connection_timeout=5,
        read_timeout=timeout,
    )


def read(client: Any, resource_group: str, cluster: str, names: Sequence[str]) -> dict[str, str]:
    """Each named pool's GPU management, for the pools that exist."""
    from azure.core.exceptions import ResourceNotFoundError

    found = {}
    for name in names:
        try:
            found[name] = mode_of(client.agent_pools.get(resource_group, cluster, name).as_dict())
        except ResourceNotFoundError:  # the pool, its cluster or its group is not there
            continue
    return found


def switches(cfg: StackConfig, running: Mapping[str, str], cluster: str) -> list[str]:
    """One line for each pool whose kind the config would switch."""
    lines = []
    for pool in cfg.owned_pools:
        was = running.get(pool.name)
        if was is None or (was == "aks-managed") == pool.managed:
            continue
        key = cfg.pool_key(pool)
        single = key.endswith(":gpuPool")
        rename = f"{key}.name" if single else f"the entry's key in {key.rsplit('.', 1)[0]}"
        two_ups = "" if single else "; or remove the entry, `pulumi up`, then add it back"
        lines.append(
            f"{key}.management = {pool.mode}: node pool {pool.name} in cluster {cluster} runs {was} (read from Azure), and "
            "AKS cannot switch a pool's GPU management in place; nothing was changed. Give the pool a new name "
            f"({rename}): one `pulumi up` creates the new pool, then deletes the old one (GPU quota for both for a while)"
            f"{two_ups} (docs/lifecycle.md)"
        )
    return lines


def check(
    cfg: StackConfig, resource_group: str, cluster: str, subscription: Callable[[], str], reader: AzureReader
) -> tuple[list[str], list[str]]:
    """(refusals, notes): the switches the config asks for, and what could not be read."""
    try:
        running = reader.pool_modes(subscription(), resource_group, cluster, [p.name for p in cfg.gpu_pools])
    except NotRead:  # offline: nothing runs that a render could know of
        return [], []
    except Exception as error:  # noqa: BLE001 - a failed read only means nothing was checked
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        return [], [f"preflight: the GPU pools' management in Azure was not checked: {type(error).__name__}: {reason}"]
    return switches(cfg, running, cluster), []
