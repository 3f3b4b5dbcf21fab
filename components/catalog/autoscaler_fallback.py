"""How the cluster autoscaler AKS runs falls back across a capacity group's pools when Azure
fills none of them: one pending pod (the group's proof), the pools in the team's order, each
try failing a given time after its scale-up. A model of the upstream code (kubernetes/autoscaler
at cluster-autoscaler-1.35.2, 2d42588803c7), loop by loop; pure, no clock. Each step's source
(static_autoscaler.go, clusterstate.go, executor.go, exponential_backoff.go, orchestrator.go)
and the walk traced: docs/design/autoscaler-fallback.md, sections 1-6."""

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
    """One scale-up of a pool for the pod: its loop and the loop that backed the pool off, in seconds."""

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
    given), rounded up to a loop; loop by loop until its state at a try repeats one before (the
    state is finite: back-offs are capped, and each pool's failure time fixed)."""
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
    """exponential_backoff.go `Backoff`: doubled only once the previous back-off has expired; a
    failure during it re-arms the same duration. A stale record is forgotten first."""
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
