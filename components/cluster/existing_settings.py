"""An existing AKS cluster (`existingCluster`), the keys it refuses, and those only it takes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic.dataclasses import dataclass

from components.config.messages import fail
from components.config.values import MODEL, NAMESPACE, ClusterName, ResourceGroupName

# A GPU pool the cluster already has (`gpuPools.<name>.existing`): `use` reads it and never
# changes it; `adopt` brings it under the stack (docs/existing-cluster.md, "Coming from the guide").
EXISTING_POOL_MODES = ("use", "adopt")
# What `pulumi destroy`, or dropping it from the config, does to what the stack adopted:
# release (Pulumi's `retainOnDelete`: the engine forgets it and sends no delete), or delete.
ON_DESTROY = ("release", "delete")


@dataclass(frozen=True, config=MODEL)
class ExistingClusterConfig:
    """An AKS cluster this stack does not own (docs/existing-cluster.md)."""

    resource_group_name: ResourceGroupName
    """The existing cluster's resource group."""
    name: ClusterName
    """The existing cluster's name."""


# Keys that configure a cluster this program creates: refused unless they hold their default
# (the Pulumi.yaml defaults of the scalar keys arrive with every run).
CLUSTER_ONLY_KEYS = {
    "resourceGroupName": "the cluster's resource group is existingCluster.resourceGroupName",
    "clusterName": "the cluster's name is existingCluster.name",
    "kubernetesVersion": "new pools take the existing cluster's Kubernetes version",
    "systemPool": "the existing cluster has its own System pool",
    "clusterTier": "the existing cluster's tier is its owner's",
    "network": "the existing cluster's network policy engine is read from it",
    "upgrade": "the existing cluster's upgrade channels are its owner's",
    "protect": "protect guards the resource group and cluster this program creates",
    "access": "the stack signs in the way the existing cluster allows and grants nothing on it",
}


def check_existing_cluster(values: Mapping[str, Any], parsed: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    """Each key given, as parsed, against its default: `access: {mode: local}` is the default."""
    for key, why in CLUSTER_ONLY_KEYS.items():
        if key in values and parsed[key] != defaults[key]:
            raise fail(
                f"{NAMESPACE}:{key}",
                values[key],
                f"not used with {NAMESPACE}:existingCluster ({why}); remove it, or remove existingCluster to create a cluster",
            )


def check_without_existing(
    pools: Iterable[Any],
    keys: Mapping[str, str],
    cluster_file: str | None,
    kubernetes_file: str | None = None,
    adopt: bool = False,
    state_file: str | None = None,
    groups: bool = False,
) -> None:
    """What only an existing cluster takes; a created cluster with a capacity group (`groups`)
    takes the saved state and Kubernetes list too, which tell whose the priority expander's
    ConfigMap is (components/pools/priority_config_map.py)."""
    for pool in pools:
        for member, value in (("vnetSubnetId", pool.vnet_subnet_id), ("podSubnetId", pool.pod_subnet_id)):
            if value:
                raise fail(
                    f"{keys[pool.name]}.{member}",
                    value,
                    f"only with {NAMESPACE}:existingCluster: the cluster this program creates has no VNet of its own, and AKS "
                    "takes subnets on all of a cluster's pools or none; remove it",
                )
    if cluster_file:
        raise fail(
            f"{NAMESPACE}:preflight.clusterFile",
            cluster_file,
            f"only with {NAMESPACE}:existingCluster: it describes the existing cluster for the offline render; remove it",
        )
    if kubernetes_file and not groups:
        raise fail(
            f"{NAMESPACE}:preflight.kubernetesFile",
            kubernetes_file,
            f"only with {NAMESPACE}:existingCluster, or {NAMESPACE}:gpuGroups: it lists what the existing cluster runs, or "
            "whether a created one has the priority expander's ConfigMap, for the offline render; remove it",
        )
    if state_file and not groups:
        raise fail(
            f"{NAMESPACE}:preflight.stateFile",
            state_file,
            f"only with {NAMESPACE}:existingCluster, or {NAMESPACE}:gpuGroups: the state is read only for what an existing "
            "cluster holds, or for whose a created cluster's priority expander's ConfigMap is; remove it",
        )
    if adopt:
        raise fail(
            f"{NAMESPACE}:devicePlugin.adopt",
            adopt,
            f"only with {NAMESPACE}:existingCluster: a cluster this program creates runs nothing of others' to take over; remove it",
        )


def check_existing(pool: Any, given: Mapping[str, Any], key: str, existing_cluster: bool) -> None:
    """`existing` on its own, before Azure is read."""
    if not existing_cluster:
        raise fail(
            f"{key}.existing",
            pool.existing,
            f"only with {NAMESPACE}:existingCluster: it names a pool the cluster already has; remove it to add a new pool",
        )
    others = [member for member in given if member not in ("existing", "name")]  # gpuPool names its pool
    if pool.existing == "use" and others:
        raise fail(
            f"{key}.{others[0]}",
            given[others[0]],
            "not with existing: use: the pool is read from Azure as it is (size, counts, taints, GPU settings) and never changed; remove it",
        )
    if pool.existing == "adopt" and "dedicatedVhd" in given:
        raise fail(
            f"{key}.dedicatedVhd", given["dedicatedVhd"], "not with existing: adopt: the pool's GPU stack is read from Azure; remove it"
        )


def check_on_destroy(pool: Any, key: str, device_plugin: Any) -> None:
    """`onDestroy` says what happens to something the stack adopted, and only that."""
    if pool is not None and pool.on_destroy is not None and pool.existing != "adopt":
        raise fail(
            f"{key}.onDestroy",
            pool.on_destroy,
            "only with existing: adopt: a pool the stack creates is deleted with it, and one it uses is never its to delete; remove it",
        )
    if device_plugin is not None and device_plugin.on_destroy is not None and not device_plugin.adopt:
        raise fail(
            f"{NAMESPACE}:devicePlugin.onDestroy",
            device_plugin.on_destroy,
            "only with devicePlugin.adopt: true: a namespace and DaemonSet the stack creates are deleted with it; remove it",
        )
