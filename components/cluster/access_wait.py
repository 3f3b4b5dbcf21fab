"""The wait for the deployer's cluster access as a Pulumi dynamic resource: its create asks the
cluster, in Pulumi's provider host, until the deployer may create namespaces
(components/cluster/cluster_access.py `wait_for_access`), and every Kubernetes object depends on it
(GpuCluster.access). Why a wait at all: docs/design/lifecycle.md, "The deployer's role assignment".

As the proof's watch (components/proof/proof_watch.py, whose docstring cites the engine):
a preview never calls the dynamic host's Create, so never waits; the create runs as soon as the
grant is done, beside the GPU pools'; no credential is an input or an output (the host fetches
the user kubeconfig from ARM itself, components/proof/watch_live.py `user_kubeconfig`). It waits when the
grant is new: its inputs hold the grant's ID and principal, so a grant the engine creates or
replaces (a first `up`, another identity, one deleted outside Pulumi and refreshed) replaces
the wait, which asks again, and a failed wait is not in the state, so the next `up` asks again.
Nothing remote belongs to it. The provider is pickled into the state by reference: **moving or
renaming this module or the class needs a re-export at the old path**. No typed resource will
replace it: it stands for no object of the cluster's.
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

# The type token: `pulumi-python:` and the dynamic module and name of the class below.
TYPE = "pulumi-python:dynamic/aksgpu:AccessWait"
# What says where the warning of an unreachable API server is shown; any other input names the
# grant asked about, and a new value is a new grant, which a new wait asks about.
STATUS_URN = "statusUrn"


def wait(props: Mapping[str, Any]) -> None:
    """Until the cluster says yes (ClusterAccessError where it will not). An API server this
    runner cannot reach (access.authorizedIpRanges) is a warning, not a stop: what this `up`
    changes in Kubernetes fails by itself there, and an `up` that changes only Azure goes through."""
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
    """Pure: another grant (or cluster) replaces the wait, which asks again; a changed status
    URN is an update that asks nothing. Never delete_before_replace: nothing remote is named after it."""
    old, new = _inputs(olds), _inputs(news)
    changed = sorted(k for k in set(old) | set(new) if is_unknown(new.get(k)) or new.get(k) != old.get(k))
    return DiffResult(changes=bool(changed), replaces=[k for k in changed if k != STATUS_URN], stables=[], delete_before_replace=False)


class AccessWaitProvider(ResourceProvider):
    """The wait's steps. No fields: see the module docstring on pickling. Read and delete are
    the base class's: the state as it is, and nothing remote to delete."""

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
    """Created once the cluster says the granted identity may create namespaces (module docstring)."""

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
        """`grant_id`, `granted`: the deployer's role assignment and the principal it grants."""
        props = {
            **cluster_props(cluster),
            "grantId": grant_id,
            "granted": granted,
            STATUS_URN: status_urn,
        }
        super().__init__(AccessWaitProvider(), name, props, opts)
