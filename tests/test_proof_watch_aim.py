"""#53's aim, measured end to end offline: the live watch (components/proof/watch_live.py)
with the real decision (components/proof/watch_verdict.py), against the fake API server over TLS
(tests/fake_kube_api.py) answering the recorded sequences of tests/test_proof_watch_decide.py
look by look, on a clock the test moves (a look every 10 s, no real waiting). What is held is
the time from `pulumi up`'s start (the watch's, which starts beside the Job's create) to the
watch's end, the Job ended by its PATCH, the cause in the raised line and in `<job>-result`."""

from __future__ import annotations

import email.utils
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import fake_kube_api
import pytest
from fake_kube_api import State
from support.clock import Clock
from test_proof_watch_decide import (
    FACTS,
    GROUP,
    QUOTA,
    SCALE_SET,
    START,
    STATUS,
    allocation_failed,
    event,
    failing_pull,
    group_trains,
    job,
    look,
    no_node,
    pod,
    trains,
    triggered_in,
)

from components.catalog.proof_names import result_name
from components.errors import ProofWatchFailed
from components.proof import watch_live as live
from components.proof.watch_verdict import Snapshot, WatchFacts

TEN_MINUTES = 600
CLUSTER = live.ClusterRef("sub", "rg", "aks", entra=False)


@pytest.fixture
def kube(tmp_path) -> Iterator[fake_kube_api.FakeKube]:
    yield from fake_kube_api.serve(tmp_path)


def served(sequence: Callable[[float], Snapshot], looks: int = 400) -> list[State]:
    """The sequence as the API server answers it at each look (every 10 s from 0): the Job made by
    this `up` (created at its start), its pods labelled with its UID, each event bound to its
    object's UID and namespace, the Date header the snapshot's time."""
    states = []
    for n in range(looks):
        snap = sequence(n * live.POLL_SECONDS)
        the_job = None
        if snap.job is not None:
            the_job = {**snap.job, "metadata": {**snap.job["metadata"], "creationTimestamp": START.strftime("%Y-%m-%dT%H:%M:%SZ")}}
        pods = [_labelled(p) for p in snap.pods]
        events = [_bound(e) for e in snap.events]
        logs = {p["metadata"]["name"]: snap.log_tail for p in pods if snap.log_tail is not None}
        states.append(State(the_job, pods, events, logs=logs, date=email.utils.format_datetime(snap.now, usegmt=True)))
    return states


def _labelled(p: Mapping[str, Any]) -> dict[str, Any]:
    meta = p["metadata"]
    labels = {"batch.kubernetes.io/controller-uid": "job-uid"}
    return {**p, "metadata": {**meta, "uid": f"uid-{meta['name']}", "namespace": FACTS.namespace, "labels": labels}}


def _bound(e: Mapping[str, Any]) -> dict[str, Any]:
    involved = dict(e["involvedObject"])
    involved["uid"] = f"uid-{involved['name']}" if involved["kind"] == "Pod" else "uid-status"
    return {**e, "metadata": {"namespace": involved["namespace"]}, "involvedObject": involved}


def watched(
    kube: fake_kube_api.FakeKube, sequence: Callable[[float], Snapshot], facts: WatchFacts = FACTS, said: list[str] | None = None
) -> tuple[Any, Clock]:
    kube.states = served(sequence)
    clock = Clock()
    status = said.append if said is not None else (lambda line: None)
    try:
        got: Any = live.watch(
            CLUSTER, facts, 4545, status, clock=lambda: clock.now, sleep=clock.sleep, kubeconfig=lambda c: kube.kubeconfig()
        )
    except ProofWatchFailed as error:
        got = error
    return got, clock


def ended(kube: fake_kube_api.FakeKube) -> bool:
    return any(r.body == {"metadata": {"uid": "job-uid"}, "spec": {"activeDeadlineSeconds": 1}} for r in kube.calls("PATCH", "/jobs/"))


def kept(kube: fake_kube_api.FakeKube) -> dict[str, str]:
    return kube.config_maps[(FACTS.namespace, result_name(FACTS.job_name))]["data"]


def test_an_image_no_node_can_pull_fails_up_within_ten_minutes_of_its_start_with_the_registrys_words(kube):
    # The Job's pod on a node that runs, made at 30 s, its first pull at 35 s.
    got, clock = watched(kube, failing_pull(35, created=30))

    assert isinstance(got, ProofWatchFailed) and "toomanyrequests" in str(got) and "(registry docker.io)" in str(got)
    assert clock.now <= TEN_MINUTES, f"decided {clock.now:g} s after `pulumi up` started"
    assert ended(kube) and kept(kube)["outcome"] == "stop" and kept(kube)["line"] == str(got)


def test_a_pool_from_zero_azure_will_not_grow_fails_up_within_ten_minutes_of_the_autoscaler_giving_up(kube):
    gave_up = 95  # the scale set's PUT refused for quota, on the autoscaler's status ConfigMap

    def sequence(now: float) -> Snapshot:
        return look(
            now,
            job(),
            [pod(5, unschedulable_since=6)],
            event("FailedScheduling", no_node(2, "2 node(s) didn't match Pod's node affinity/selector"), [6], now),
            event("TriggeredScaleUp", f"pod triggered scale-up: [{{{SCALE_SET} 0->1 (max: 1)}}]", [15], now),
            event("FailedToScaleUpGroup", QUOTA, [gave_up], now, kind="ConfigMap", name="cluster-autoscaler-status"),
        )

    got, clock = watched(kube, sequence)

    assert isinstance(got, ProofWatchFailed) and "exceeding approved standardNCADSA100v4Family Cores quota" in str(got)
    assert clock.now - gave_up <= TEN_MINUTES
    assert ended(kube) and kept(kube)["outcome"] == "stop"


def test_a_proof_that_trains_returns_its_line_and_leaves_the_job_alone(kube):
    got, clock = watched(kube, lambda now: trains(now, 60, 120))

    assert got.kind == "trained" and got.line.startswith("PROOF OK ")
    assert not ended(kube) and kept(kube)["line"] == got.line
    assert clock.now == 120  # the first look after it completed


def test_a_group_whose_first_pool_azure_cannot_fill_trains_on_the_next_and_keeps_which_served(kube):
    # t4's VM fails to provision at 190 s (ScaleUpFailed on the autoscaler's status ConfigMap),
    # the autoscaler adds a node to t4b at 202 s, which trains from 620 s to 700 s.
    def sequence(now: float) -> Snapshot:
        events = (
            event("TriggeredScaleUp", triggered_in("t4"), [12], now),
            event("ScaleUpFailed", allocation_failed("t4"), [190], now, **STATUS),
            event("TriggeredScaleUp", triggered_in("t4b"), [202], now),
        )
        if now < 600:
            return look(now, job(), [pod(5, unschedulable_since=6)], *events)
        return group_trains(now, "t4b", 620, 700, *events)

    said: list[str] = []
    got, clock = watched(kube, sequence, GROUP, said)

    assert got.kind == "trained" and (got.pool, got.vm_size) == ("t4b", "Standard_NC8as_T4_v3")
    assert clock.now == 700 and not ended(kube)
    assert any(line.startswith("pool t4 could not add a node (ScaleUpFailed: ") for line in said), "the fall-back said while it waits"
    assert (kept(kube)["pool"], kept(kube)["vmSize"]) == ("t4b", "Standard_NC8as_T4_v3")
