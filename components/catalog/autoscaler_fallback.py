"""How the cluster autoscaler AKS runs falls back across a capacity group's pools when Azure
fills none of them: one pending pod (the group's proof), the pools in the team's order, each
try failing a given time after its scale-up. A model of the upstream code, loop by loop; pure,
no clock. The walk traced, and why: docs/design/autoscaler-fallback.md.

The sources, kubernetes/autoscaler at tag cluster-autoscaler-1.35.2 (2d42588803c7; 1.33.6 and
1.34.5 are the same in these functions), paths under cluster-autoscaler/:
- A loop every `scan-interval`: AKS's 10 s (MicrosoftDocs/azure-aks-docs@fb060abe
  articles/aks/cluster-autoscaler.md, ms.date 07/30/2026, the profile table).
- One pool at a time: while a scale-up is in flight its node is upcoming and stands in the
  snapshot (core/static_autoscaler.go `addUpcomingNodesToClusterSnapshot`), so the pending pod
  fits there and nothing else is scaled for it.
- A slow failure: clusterstate/clusterstate.go `updateScaleRequests` gives up on a scale-up at
  the first loop after its `ExpectedAddTime` (its time plus `max-node-provision-time`, AKS's
  15 minutes: cluster-autoscaler.md), emits `ScaleUpTimedOut` and backs the pool off at that
  loop (`registerFailedScaleUpNoLock` -> `backoffNodeGroup`). The pod is free a loop later,
  when the node that never registered is long unregistered and no longer upcoming
  (`updateReadinessStats`, `GetUpcomingNodes`).
- A fast failure: a refused PUT (quota, `SkuNotAvailable`) backs the pool off in the loop of
  the scale-up itself (core/scaleup/orchestrator/executor.go, `RegisterFailedScaleUp`); a VM
  that failed to provision, under AKS's fast delete, within about a loop once Azure's
  operation ends (clusterstate.go `handleInstanceCreationErrors`, `ScaleUpFailed`).
- The back-off: utils/backoff/exponential_backoff.go `Backoff` (lines 69-93): 5 minutes the
  first time; if the pool's previous back-off has expired, twice that, at most 30 minutes; if
  it is still active, the same duration again from now. `RemoveStaleBackoffData` forgets a
  pool 3 hours after its last failure. The three are upstream's flag defaults
  (config/flags/flags.go); AKS's profile sets none of them, and its overview says "it may take
  up to 30 minutes before making another attempt" (cluster-autoscaler-overview.md).
- The choice: core/scaleup/orchestrator/orchestrator.go `filterValidScaleUpNodeGroups` skips a
  pool still backed off (`IsNodeGroupReadyToScaleUp`; `BackoffStatus`: backed off until its
  time is before now), and the priority expander takes the first of the rest in the team's
  order (docs/design/capacity-groups.md, section 2; the stack's ConfigMap on a created cluster).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

#: The autoscaler's loop, AKS's `scan-interval`.
SCAN_INTERVAL_SECONDS = 10
#: AKS's `max-node-provision-time`: how long a scale-up may take before it counts as failed.
MAX_NODE_PROVISION_SECONDS = 15 * 60
#: Upstream's `initial-node-group-backoff-duration`, `max-node-group-backoff-duration` and
#: `node-group-backoff-reset-timeout` (config/flags/flags.go), which AKS's profile does not set.
INITIAL_BACKOFF_SECONDS = 5 * 60
MAX_BACKOFF_SECONDS = 30 * 60
BACKOFF_RESET_SECONDS = 3 * 60 * 60
#: From a scale-up to the loop that backs its pool off: a node that never registers (or an
#: allocation error that only shows at the timeout) is given up a loop after max-node-provision-time;
SLOW_FAILURE_SECONDS = MAX_NODE_PROVISION_SECONDS + SCAN_INTERVAL_SECONDS
#: a refusal the autoscaler hears at once, within a loop.
FAST_FAILURE_SECONDS = SCAN_INTERVAL_SECONDS


@dataclasses.dataclass(frozen=True)
class Try:
    """One scale-up of a pool for the pod: the loop that started it and the loop that backed the
    pool off, in seconds from the first loop that saw the pod."""

    pool: str
    start: int
    failed: int


@dataclasses.dataclass(frozen=True)
class BackedOff:
    """exponential_backoff.go `exponentialBackoffInfo`: the duration, until when, and the last failure."""

    duration: int
    until: int
    last_failed: int


@dataclasses.dataclass(frozen=True)
class Walk:
    """The autoscaler's tries at a group's pools, in order, up to the try from which it repeats
    what it did before: a pool with no try by then is never tried."""

    pools: tuple[str, ...]
    tries: tuple[Try, ...]

    def first_try(self, pool: str) -> int | None:
        """When the pool is first scaled up, or None: never."""
        return next((t.start for t in self.tries if t.pool == pool), None)

    @property
    def first_tries(self) -> dict[str, int | None]:
        return {pool: self.first_try(pool) for pool in self.pools}

    @property
    def reached(self) -> tuple[str, ...]:
        """The pools the autoscaler ever tries, in the team's order."""
        return tuple(pool for pool in self.pools if self.first_try(pool) is not None)


def walk(pools: Sequence[str], fails_after: Mapping[str, int] | None = None) -> Walk:
    """The autoscaler's tries at `pools` (the team's order) for one pending pod, each pool's try
    failing `fails_after[pool]` seconds after its scale-up (SLOW_FAILURE_SECONDS where not
    given), rounded up to a loop. Loop by loop from the first loop that sees the pod, until the
    autoscaler's state at a try repeats one before (the state is finite: back-offs are capped,
    and each pool's failure time fixed), so the walk repeats from there on."""
    given = fails_after or {}
    after = {pool: _loops(given.get(pool, SLOW_FAILURE_SECONDS)) for pool in pools}
    backed_off: dict[str, BackedOff] = {}
    tries: list[Try] = []
    seen: set[tuple[object, ...]] = set()
    now = 0
    while True:
        backed_off = {p: b for p, b in backed_off.items() if not _stale(b, now)}
        pool = next((p for p in pools if p not in backed_off or backed_off[p].until < now), None)
        if pool is None:  # every pool backed off: the pod waits a loop
            now += SCAN_INTERVAL_SECONDS
            continue
        state = (pool, *sorted((p, b.duration, max(b.until - now, -1), b.last_failed - now) for p, b in backed_off.items()))
        if state in seen:
            return Walk(tuple(pools), tuple(tries))
        seen.add(state)
        failed = now + after[pool]
        backed_off[pool] = back_off(backed_off.get(pool), failed)
        tries.append(Try(pool, now, failed))
        now = failed + SCAN_INTERVAL_SECONDS  # the pod is free at the next loop


def reach(pool_count: int) -> int:
    """How many pools of a group of `pool_count` the autoscaler ever tries when every try fails slowly."""
    return len(walk([f"pool-{n}" for n in range(pool_count)]).reached)


def back_off(previous: BackedOff | None, now: int) -> BackedOff:
    """exponential_backoff.go `Backoff`: doubled only once the previous back-off has expired;
    a failure during it re-arms the same duration. A stale record is forgotten first
    (`updateScaleRequests` runs `RemoveStaleBackoffData` before it registers a failure)."""
    duration = INITIAL_BACKOFF_SECONDS
    if previous is not None and not _stale(previous, now):
        duration = previous.duration
        if previous.until < now:
            duration = min(2 * previous.duration, MAX_BACKOFF_SECONDS)
    return BackedOff(duration, now + duration, now)


def _stale(backed_off: BackedOff, now: int) -> bool:
    """RemoveStaleBackoffData: `lastFailedExecution + backoffResetTimeout` before now."""
    return backed_off.last_failed + BACKOFF_RESET_SECONDS < now


def _loops(seconds: int) -> int:
    """A failure is registered in a loop: `seconds`, rounded up to whole loops."""
    if seconds < 0:
        raise ValueError(f"a try fails after 0 seconds or more, not {seconds}")
    return -(-seconds // SCAN_INTERVAL_SECONDS) * SCAN_INTERVAL_SECONDS
