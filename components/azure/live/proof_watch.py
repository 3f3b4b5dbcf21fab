"""The proof's watch, live: during `pulumi up` only, it looks at the proof Job, its pods and their
events through the API server with the kubeconfig's own credential (the connection
components/azure/live/cluster_access.py makes), says what it waits for, and ends the Job when
components/azure/proof_watch.py finds a cause that waiting will not mend."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from components.azure.proof_watch import Verdict, WatchFacts


@dataclass(frozen=True)
class ClusterRef:
    """Where the cluster is, for the kubeconfig the watch fetches itself (listClusterUserCredential):
    no credential is ever an input or an output of the watch resource."""

    subscription_id: str
    resource_group_name: str
    cluster_name: str
    #: Entra ID sign-in: the kubeconfig's kubelogin made to sign in without a prompt (cluster.entra_kubeconfig).
    entra: bool
    arm_endpoint: str = "https://management.azure.com"


def watch(
    cluster: ClusterRef,
    facts: WatchFacts,
    seconds: float,
    status: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Verdict:
    """Watches the proof until it trained (returns that Verdict, or a "waiting" one saying why it
    could not watch: the Job's own await then decides), failed, or cannot start (raises
    components.errors.ProofWatchFailed with the line, after ending the Job), or `seconds` pass;
    `status` gets what it waits for, each time that changes."""
    raise NotImplementedError("filled in by #53's live work")
