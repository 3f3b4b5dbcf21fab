"""What the proof's watch makes of one look at the cluster: the Job, its pods, their events and
the running pod's last log lines, as the API server answered them, decide whether the proof
trained, failed, is still on its way (and what it waits for), or cannot start for a cause that
waiting will not mend. Pure: no call out of the process (components/azure/live/proof_watch.py
looks, components/resources/proof_watch.py is the resource that watches during `pulumi up`).
Which causes are terminal, and the sources: docs/proof.md, "What the watch calls terminal".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

# The annotation the proof Job carries with the hash of its spec: the watch knows by it that a
# Job of that name is the one this `up` declared, not the one an earlier `up` left.
SPEC_ANNOTATION = "aks-gpu.io/proof-spec"


@dataclass(frozen=True)
class WatchFacts:
    """What the watch knows of the proof before it looks (the watch resource's inputs)."""

    namespace: str
    job_name: str
    #: The GPU pool the Job's pods should land on (AKS's agentpool label).
    pool_name: str
    #: The value of SPEC_ANNOTATION on the Job this `up` declared.
    spec_hash: str
    #: Whether the pool's node count is the cluster autoscaler's (a pool that can add a node).
    autoscaled: bool
    image: str
    max_steps: int


@dataclass(frozen=True)
class Snapshot:
    """One look at the cluster, as the API server answered (Kubernetes JSON, as dicts)."""

    #: The API server's time when it answered (its HTTP Date header): every age is measured on it.
    now: datetime
    #: The Job this `up` declared; None while it is not there yet.
    job: Mapping[str, Any] | None
    #: The Job's pods (label batch.kubernetes.io/controller-uid), oldest first.
    pods: Sequence[Mapping[str, Any]]
    #: The events whose involvedObject is one of those pods or the Job.
    events: Sequence[Mapping[str, Any]]
    #: The last lines of the log of the pod that runs now, where one runs; None otherwise.
    log_tail: str | None = None


@dataclass(frozen=True)
class Verdict:
    """waiting: `line` says what for; trained: the Job completed, `line` is the proof's last line;
    failed: the Job failed by itself, `line` its pods' last words; stop: the proof cannot start
    for a cause that waiting will not mend, `line` names it in the cluster's words (the watch
    then ends the Job)."""

    kind: Literal["waiting", "trained", "failed", "stop"]
    line: str


def decide(facts: WatchFacts, look: Snapshot) -> Verdict:
    """What one look says (see the module docstring)."""
    raise NotImplementedError("filled in by #53's decision work")
