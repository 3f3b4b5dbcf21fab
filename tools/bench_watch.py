"""How long one look of the proof's watch takes to decide (components/proof/watch_verdict.py
`decide`) on the largest answers a cluster may give it: 10,000 events, and a 1 MB scheduler message
in the shapes that were slow (a run of whitespace, of ", " pieces). `make bench-watch` prints the
median of several runs of each; docs/design/proof-watch.md records the figures. A benchmark, not a test:
the tests hold what each answer decides, never how long it takes."""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from components.proof.watch_verdict import SPEC_ANNOTATION, Snapshot, WatchFacts, decide

START = datetime(2026, 9, 1, 12, 0, tzinfo=timezone.utc)
FACTS = WatchFacts("gpu-workloads", "mnist-proof-gpu", "gpu", "h", autoscaled=False, image="i", max_steps=500)
RUNS = 7


def at(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def looked(*messages: str) -> Snapshot:
    """A pending pod of a fixed pool, unschedulable since 1 s, and a FailedScheduling per message."""
    pod = {
        "metadata": {"name": "p", "creationTimestamp": at(0)},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "lastTransitionTime": at(1)}]},
    }
    events = [
        {
            "involvedObject": {"kind": "Pod", "name": "p"},
            "reason": "FailedScheduling",
            "message": m,
            "firstTimestamp": at(1),
            "lastTimestamp": at(1),
        }
        for m in messages
    ]
    job = {"metadata": {"name": FACTS.job_name, "annotations": {SPEC_ANNOTATION: "h"}}, "status": {}}
    return Snapshot(now=START + timedelta(seconds=600), job=job, pods=[pod], events=events)


def median_ms(work: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        began = time.perf_counter()
        work()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main() -> None:
    fit = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    cases = {
        "10,000 events": looked(*(f"{fit} {i}" for i in range(10_000))),
        "1 MB of whitespace after the reasons": looked(fit + " " * 1_000_000),
        "1 MB of ', ' pieces": looked(
            "0/2 nodes are available: " + ", " * 500_000 + "2 node(s) didn't match Pod's node affinity/selector."
        ),
    }
    for name, snapshot in cases.items():
        print(f"{name}: {median_ms(functools.partial(decide, FACTS, snapshot)):.1f} ms a look (median of {RUNS})")


if __name__ == "__main__":
    main()
