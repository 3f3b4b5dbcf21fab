"""The wait for the deployer's cluster access as a Pulumi dynamic resource: its create asks the
cluster, in Pulumi's provider host, until the deployer may create namespaces
(cluster_access.wait_for_access), and every Kubernetes object depends on it (GpuCluster.access).
Why: docs/design/lifecycle.md, "The deployer's role assignment".

As the proof's watch (components/proof/proof_watch.py, whose docstring cites the engine): a
preview never waits; no credential is an input or an output (the host fetches the user
kubeconfig itself, components/proof/watch_live.py `user_kubeconfig`). Its inputs hold the grant's
ID and principal, so a new or replaced grant replaces the wait, which asks again.
The provider is pickled into the state by reference: **moving or renaming this module or the
class needs a re-export at the old path**. No typed resource will replace it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import ConfigureRequest, CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from components.cluster import cluster_access
from components.proof import watch_live as live_watch
from components.proof.proof_watch import PROVIDER_KEY, cluster_props, cluster_ref, is_unknown
from components.proof.watch_live import ClusterRef
from components.seam import engine_status, provider_host_patch

TYPE = "pulumi-python:dynamic/aksgpu:AccessWait"
# Where the warning of an unreachable API server is shown; any other input names the grant.
STATUS_URN = "statusUrn"


def wait(props: Mapping[str, Any]) -> None:
    """Until the cluster says yes. An API server this runner cannot reach is a warning, not a
    stop: what this `up` changes in Kubernetes fails by itself there, and the rest goes through."""
    kubeconfig = live_watch.user_kubeconfig(cluster_ref(props))
    try:
        cluster_access.wait_for_access(kubeconfig, str(props["granted"]))
    except cluster_access.Unreachable as error:
        engine_status.reporter(str(props[STATUS_URN]), warning=True)(
            f"the deployer's access to the cluster was not checked: {error}; what this `pulumi up` creates or "
            "changes in Kubernetes needs that API server (aks-gpu:access.authorizedIpRanges)"
        )


def _inputs(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k != PROVIDER_KEY}


def diff_wait(olds: Mapping[str, Any], news: Mapping[str, Any]) -> DiffResult:
    """Pure: another grant (or cluster) replaces the wait; a changed status URN is an update."""
    old, new = _inputs(olds), _inputs(news)
    changed = sorted(k for k in set(old) | set(new) if is_unknown(new.get(k)) or new.get(k) != old.get(k))
    return DiffResult(changes=bool(changed), replaces=[k for k in changed if k != STATUS_URN], stables=[], delete_before_replace=False)


class AccessWaitProvider(ResourceProvider):
    """No fields: see the module docstring on pickling. Nothing remote to read or delete."""

    serialize_as_secret_always = False  # it captures nothing secret; keep the state readable

    def configure(self, req: ConfigureRequest) -> None:
        # As the watch's: the host then sends a ClusterAccessError's one line without a traceback.
        provider_host_patch.tell_if_unpatched(whose="the access wait's provider")

    def create(self, props: dict[str, Any]) -> CreateResult:
        wait(props)
        return CreateResult(id_=f"{props['clusterName']}/{props['granted']}", outs=_inputs(props))

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=_inputs(news))  # only the status URN changed (diff_wait)

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_wait(olds, news)


class AccessWait(Resource, module="aksgpu", name="AccessWait"):
    """Created once the cluster says the granted identity may create namespaces."""

    def __init__(
        self,
        name: str,
        *,
        cluster: ClusterRef,
        grant_id: pulumi.Input[str],
        granted: pulumi.Input[str],
        status_urn: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            **cluster_props(cluster),
            "grantId": grant_id,
            "granted": granted,
            STATUS_URN: status_urn,
        }
        super().__init__(AccessWaitProvider(), name, props, opts)
