"""The proof's watch decides in minutes, in the cluster's words: recorded sequences of what the
API server answers (the Job, its pods, their events, the log's tail), a look every 10 s, each
object shaped and worded as the component that writes it does (sources beside each helper), and
the time each sequence takes to decide held (components/proof/watch_verdict.py decide)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from components.proof.watch_verdict import (
    NOT_TRIGGERED_SECONDS,
    PULL_FAILING_SECONDS,
    SPEC_ANNOTATION,
    UNSCHEDULABLE_SECONDS,
    Snapshot,
    Verdict,
    WatchFacts,
    decide,
)

START = datetime(2026, 9, 1, 12, 0, tzinfo=timezone.utc)
POLL = 10  # the watch's look, every 10 s
FIVE_MINUTES = 300
IMAGE = "docker.io/pytorch/pytorch@sha256:11691e035a3651d25a87116b4f6adc113a27a29d8f5a6a583f8569e0ee5ff897"
POD = "mnist-proof-gpu-x7k2q"
NODE = "aks-gpu-12345678-vmss000000"
SCALE_SET = "aks-gpu-12345678-vmss"
FACTS = WatchFacts(
    namespace="gpu-workloads",
    job_name="mnist-proof-gpu",
    pool_name="gpu",
    spec_hash="0123abcd",
    autoscaled=True,
    image=IMAGE,
    max_steps=500,
)
FIXED = WatchFacts(**{**vars(FACTS), "autoscaled": False})
PROOF_OK = "PROOF OK gpu=NVIDIA A100 80GB PCIe (compute capability 8.0) data=mnist steps=500 accuracy=0.9812 seconds=31.4"
PROOF_FAILED = (
    "PROOF FAILED: no CUDA GPU is visible to PyTorch 2.8.0 (CUDA 12.8): RuntimeError: No CUDA GPUs are available; "
    "the pod got no nvidia.com/gpu, or the node's driver is missing or older than this CUDA needs; nothing was trained"
)


# --- the objects, as each component writes them -------------------------------------------


def at(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def job(conditions: Sequence[Mapping[str, str]] = ()) -> dict[str, Any]:
    """A batch/v1 Job as the Job controller reports it: Complete or Failed with a reason
    (kubernetes pkg/controller/job/job_controller.go: BackoffLimitExceeded "Job has reached the
    specified backoff limit")."""
    return {
        "metadata": {
            "name": FACTS.job_name,
            "namespace": FACTS.namespace,
            "uid": "job-uid",
            "annotations": {SPEC_ANNOTATION: FACTS.spec_hash},
        },
        "status": {"conditions": [{"status": "True", **c} for c in conditions]},
    }


def pod(
    created: float,
    *,
    name: str = POD,
    node: str | None = None,
    phase: str = "Pending",
    unschedulable_since: float | None = None,
    waiting: tuple[str, str] | None = None,
    running_since: float | None = None,
    terminated: str | None = None,
) -> dict[str, Any]:
    """A core/v1 Pod as the scheduler and the kubelet report it: PodScheduled False/Unschedulable
    until a node takes it (pkg/scheduler/schedule_one.go), then the container's waiting (reason
    and message), running (startedAt) or terminated (its termination message) state."""
    state: dict[str, Any] = {"waiting": {"reason": "ContainerCreating"}}
    if waiting is not None:
        state = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
    if running_since is not None:
        state = {"running": {"startedAt": at(running_since)}}
    if terminated is not None:
        failed = terminated.startswith("PROOF FAILED")
        state = {"terminated": {"exitCode": int(failed), "reason": "Error" if failed else "Completed", "message": terminated}}
    conditions = []
    if unschedulable_since is not None:
        conditions.append(
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": at(unschedulable_since)}
        )
    return {
        "metadata": {"name": name, "creationTimestamp": at(created)},
        "spec": {"nodeName": node} if node else {},
        "status": {
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": [] if node is None else [{"name": "mnist-proof", "state": state}],
        },
    }


def event(reason: str, message: str, times: Sequence[float], now: float, *, kind: str = "Pod", name: str = POD) -> dict[str, Any] | None:
    """A core/v1 Event as client-go's recorder writes one that recurs with the same message: one
    object whose count grows and lastTimestamp moves (tools/record/events_cache.go
    eventLogger.eventObserve); None before its first time."""
    seen = [t for t in times if t <= now]
    if not seen:
        return None
    return {
        "involvedObject": {"kind": kind, "name": name, "namespace": FACTS.namespace if kind == "Pod" else "kube-system"},
        "reason": reason,
        "message": message,
        "count": len(seen),
        "firstTimestamp": at(seen[0]),
        "lastTimestamp": at(seen[-1]),
    }


def look(
    now: float, job_: Mapping[str, Any] | None, pods: Sequence[Mapping[str, Any]], *events: Mapping[str, Any] | None, log: str | None = None
) -> Snapshot:
    return Snapshot(now=START + timedelta(seconds=now), job=job_, pods=pods, events=[e for e in events if e], log_tail=log)


# The kubelet's tries at an image that fails: 10 s back-off doubling to 300 s
# (pkg/kubelet/kubelet.go imageBackOffPeriod, MaxImageBackOff), from the first at `first`.
def pull_tries(first: float, until: float = 3600) -> list[float]:
    tries, back_off = [first], 10
    while tries[-1] + back_off < until:
        tries.append(tries[-1] + back_off)
        back_off = min(back_off * 2, 300)
    return tries


# The kubelet's messages (pkg/kubelet/images/image_manager.go EnsureImageExists).
def pulling(image: str = IMAGE) -> str:
    return f'Pulling image "{image}"'


def failed_pull(error: str, image: str = IMAGE) -> str:
    return f'Failed to pull image "{image}": {error}'


# containerd's errors through the CRI, as the kubelet quotes them: Docker Hub's rate limit
# (HTTP 429 "toomanyrequests", docs.docker.com "Docker Hub usage and limits") and a digest the
# registry does not have (containerd core/remotes/docker/resolver.go: "%s: not found").
RATE_LIMITED = (
    f'failed to pull and unpack image "{IMAGE}": failed to copy: httpReadSeeker: failed open: unexpected status code '
    "https://registry-1.docker.io/v2/pytorch/pytorch/manifests/sha256:11691e03: 429 Too Many Requests - Server message: "
    "toomanyrequests: You have reached your unauthenticated pull rate limit. https://www.docker.com/increase-rate-limit"
)
NOT_FOUND = f'rpc error: code = NotFound desc = failed to pull and unpack image "{IMAGE}": failed to resolve reference "{IMAGE}": {IMAGE}: not found'


# The scheduler's FailedScheduling (pkg/scheduler/framework/types.go FitError.Error(), v1.34).
def no_node(nodes: int, *reasons: str) -> str:
    return f"0/{nodes} nodes are available: {', '.join(sorted(reasons))}. preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling."


# The cluster autoscaler's pod events (processors/status/eventing_scale_up_processor.go, 16c271a3).
TRIGGERED = f"pod triggered scale-up: [{{{SCALE_SET} 0->1 (max: 1)}}]"


def not_triggered(*reasons: str) -> str:
    return f"pod didn't trigger scale-up: {', '.join(reasons)}"


# --- the driver -----------------------------------------------------------------------------


def first_verdict(facts: WatchFacts, sequence: Callable[[float], Snapshot], until: float = 3600) -> tuple[float, Verdict, list[str]]:
    """Looks every POLL seconds from 0 and returns when the first verdict that is not "waiting"
    came, that verdict, and the waiting lines on the way (each once)."""
    lines: list[str] = []
    for now in range(0, int(until) + 1, POLL):
        verdict = decide(facts, sequence(now))
        if verdict.kind != "waiting":
            return now, verdict, lines
        if not lines or lines[-1] != verdict.line:
            lines.append(verdict.line)
    raise AssertionError(f"still waiting after {until} s; last: {lines[-1:]}")


def trains(now: float, running_from: float, done_at: float, *events: Mapping[str, Any] | None) -> Snapshot:
    """From `running_from` the pod runs and logs a step line every 100 steps (proof/train_mnist.py
    train: "step {step}: loss {loss:.4f}") until it completes at `done_at`."""
    if now >= done_at:
        return look(now, job([{"type": "Complete"}]), [pod(0, node=NODE, phase="Succeeded", terminated=PROOF_OK)], *events)
    step = min(500, int((now - running_from) // 10) * 100)
    log = "gpu: NVIDIA A100 80GB PCIe, compute capability 8.0\n" + "".join(
        f"step {s}: loss 0.{900 - s:04d}\n" for s in range(100, step + 1, 100)
    )
    return look(now, job(), [pod(0, node=NODE, phase="Running", running_since=running_from)], *events, log=log)


# --- the sequences --------------------------------------------------------------------------


def test_a_pull_that_fails_once_then_succeeds_trains():
    # Docker Hub refuses the first try (429); the kubelet's next try, 10 s later, pulls.
    def sequence(now: float) -> Snapshot:
        events = (
            event("Pulling", pulling(), [t for t in (0, 12) if t <= now], now),
            event("Failed", failed_pull(RATE_LIMITED), [2], now),
            event(
                "Pulled",
                f'Successfully pulled image "{IMAGE}" in 1m50s (1m50s including waiting). Image size: 3378374221 bytes.',
                [122],
                now,
            ),
        )
        if now < 2:
            return look(now, job(), [pod(0, node=NODE)], *events)
        if now < 12:
            return look(now, job(), [pod(0, node=NODE, waiting=("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"'))], *events)
        if now < 123:
            return look(now, job(), [pod(0, node=NODE)], *events)
        return trains(now, 123, 200, *events)

    when, verdict, lines = first_verdict(FACTS, sequence)
    assert (verdict.kind, verdict.line, when) == ("trained", PROOF_OK, 200)
    assert any("failed, the kubelet tries again" in line and "429 Too Many Requests" in line for line in lines)
    assert any(line.startswith(f'pulling image "{IMAGE}" on node {NODE} for ') for line in lines)


def failing_pull(first: float, created: float = 0) -> Callable[[float], Snapshot]:
    """A pod on a node whose image pull fails for good (Docker Hub's rate limit), the kubelet
    trying from `first` on its back-off: each try fails 2 s in, the container waiting in
    ErrImagePull for a while after each failure, then in ImagePullBackOff."""
    tries = pull_tries(first)
    failed = [t + 2 for t in tries]

    def sequence(now: float) -> Snapshot:
        reason = "ErrImagePull" if any(0 <= now - t < 10 for t in failed) else "ImagePullBackOff"
        return look(
            now,
            job(),
            [pod(created, node=NODE, waiting=(reason, f'Back-off pulling image "{IMAGE}"') if now >= failed[0] else None)],
            event("Pulling", pulling(), tries, now),
            event("Failed", failed_pull(RATE_LIMITED), failed, now),
            event("BackOff", f'Back-off pulling image "{IMAGE}"', [t + 3 for t in tries], now),
        )

    return sequence


def test_a_pull_that_keeps_failing_stops_within_five_minutes_of_the_first_failure():
    tries = pull_tries(5)
    when, verdict, _ = first_verdict(FACTS, failing_pull(5))
    first_failure = tries[0] + 2
    assert verdict.kind == "stop"
    assert PULL_FAILING_SECONDS <= when - first_failure <= FIVE_MINUTES
    assert verdict.line.startswith(f'the proof\'s pod {POD} cannot pull image "{IMAGE}" (registry docker.io) on node {NODE}: ')
    assert "toomanyrequests" in verdict.line and verdict.line.endswith("(failing for 3m03s, 5 tries)")


def test_a_digest_the_registry_does_not_have_stops_at_the_first_look_after_the_failure():
    def sequence(now: float) -> Snapshot:
        return look(
            now,
            job(),
            [pod(0, node=NODE, waiting=("ErrImagePull", NOT_FOUND) if now >= 7 else None)],
            event("Pulling", pulling(), [5], now),
            event("Failed", failed_pull(NOT_FOUND), [7], now),
        )

    when, verdict, _ = first_verdict(FACTS, sequence)
    assert (verdict.kind, when) == ("stop", 10)
    assert f"{IMAGE}: not found" in verdict.line and "(registry docker.io)" in verdict.line


def test_an_image_name_the_kubelet_cannot_parse_stops_at_once():
    bad = "docker.io/pytorch/pytorch:2.8.0-cuda12.8@sha256:nothex"
    message = f'Failed to apply default image tag "{bad}": couldn\'t parse image name "{bad}": invalid reference format'
    snapshot = look(30, job(), [pod(0, node=NODE, waiting=("InvalidImageName", message))], event("InspectFailed", message, [3], 30))
    verdict = decide(FACTS, snapshot)
    assert verdict.kind == "stop" and "InvalidImageName" in verdict.line and "invalid reference format" in verdict.line


def scheduler_and_autoscaler_refuse(unschedulable: str, refused: str) -> Callable[[float], Snapshot]:
    """The scheduler's FailedScheduling every minute, the autoscaler's NotTriggerScaleUp every loop from 12 s."""

    def sequence(now: float) -> Snapshot:
        return look(
            now,
            job(),
            [pod(0, unschedulable_since=1)],
            event("FailedScheduling", unschedulable, [1, 61, 121, 181, 241], now),
            event("NotTriggerScaleUp", refused, list(range(12, 3600, 10)), now),
        )

    return sequence


def test_a_pod_that_fits_no_pool_the_autoscaler_could_scale_stops_within_five_minutes():
    # The pool's template refuses the pod (its node selector names no label the pool has): the
    # autoscaler's NotTriggerScaleUp gives the fit's reason (orchestrator.go SchedulablePodGroups).
    unschedulable = no_node(3, "3 node(s) didn't match Pod's node affinity/selector")
    refused = not_triggered(
        "1 node(s) didn't match Pod's node affinity/selector", "2 node(s) had untolerated taint {CriticalAddonsOnly: true}"
    )

    when, verdict, lines = first_verdict(FACTS, scheduler_and_autoscaler_refuse(unschedulable, refused))
    assert verdict.kind == "stop"
    assert NOT_TRIGGERED_SECONDS <= when - 12 <= FIVE_MINUTES
    assert verdict.line == (
        f"the cluster autoscaler will not add a node to pool gpu for the proof's pod {POD}: {refused} (for 3m08s, no TriggeredScaleUp since)"
    )
    assert lines[-1].startswith("the cluster autoscaler declines to add a node to pool gpu for ")


def test_a_pool_at_its_maximum_whose_nodes_cannot_take_the_pod_stops_in_the_schedulers_words():
    # A node group at its maximum is skipped before the pod is fitted to it (orchestrator.go
    # filterValidScaleUpNodeGroups): as a pool without autoscaler, its nodes are all the pod can
    # have, and the scheduler says none of them ever will.
    unschedulable = no_node(
        3, "1 node(s) had untolerated taint {dedicated: training}", "2 node(s) didn't match Pod's node affinity/selector"
    )
    refused = not_triggered("1 max node group size reached", "2 node(s) didn't match Pod's node affinity/selector")

    when, verdict, lines = first_verdict(FACTS, scheduler_and_autoscaler_refuse(unschedulable, refused))
    assert verdict.kind == "stop" and UNSCHEDULABLE_SECONDS <= when - 1 <= FIVE_MINUTES
    assert verdict.line == (
        f"no node can take the proof's pod {POD}, and the cluster autoscaler adds no node to pool gpu ({refused}): {unschedulable} (for 2m09s)"
    )
    assert lines[-1].startswith("pool gpu is at its maximum node count; the proof's pod")


# A scale set's PUT refused for quota, as the Go SDK prints it (azcore ResponseError.Error()),
# quoted by the autoscaler's FailedToScaleUpGroup on its status ConfigMap (executor.go).
QUOTA = (
    f"Scale-up failed for group {SCALE_SET}: PUT https://management.azure.com/subscriptions/0000/resourceGroups/"
    f"MC_rg_aks_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/{SCALE_SET}\n"
    + "-" * 80
    + "\nRESPONSE 409: 409 Conflict\nERROR CODE: OperationNotAllowed\n"
    + "-" * 80
    + '\n{\n  "error": {\n    "code": "OperationNotAllowed",\n    "message": "Operation could not be completed as it results in '
    "exceeding approved standardNCADSA100v4Family Cores quota. Additional details - Deployment Model: Resource Manager, "
    'Location: eastus, Current Limit: 0, Current Usage: 0, Additional Required: 24, (Minimum) New Limit Required: 24."\n  }\n}\n' + "-" * 80
)
# Azure's words for a VM it has no capacity for (AllocationFailed), in the pod event an autoscaler
# writes when a scale-up for it failed ("Node scale up in zones %s associated with this pod
# failed: %s. Pod is at risk of not being scheduled.", the FailedScaleUp text GKE's autoscaler
# writes; upstream writes ScaleUpFailed on its ConfigMap instead, the next test).
ALLOCATION = (
    "Node scale up in zones eastus-1 associated with this pod failed: AllocationFailed: Allocation failed. We do not have "
    "sufficient capacity for the requested VM size in this region. Read more about improving likelihood of allocation "
    "success at http://aka.ms/allocation-guidance. Pod is at risk of not being scheduled."
)


def scale_up_then(failure: Callable[[float], Sequence[Mapping[str, Any] | None]]) -> Callable[[float], Snapshot]:
    def sequence(now: float) -> Snapshot:
        return look(
            now,
            job(),
            [pod(0, unschedulable_since=1)],
            event("FailedScheduling", no_node(2, "2 node(s) didn't match Pod's node affinity/selector"), [1], now),
            event("TriggeredScaleUp", TRIGGERED, [12], now),
            *failure(now),
        )

    return sequence


def test_a_scale_up_azure_refuses_for_quota_stops_with_azures_words():
    when, verdict, lines = first_verdict(
        FACTS,
        scale_up_then(lambda now: [event("FailedToScaleUpGroup", QUOTA, [14], now, kind="ConfigMap", name="cluster-autoscaler-status")]),
    )
    assert (verdict.kind, when) == ("stop", 20)
    assert verdict.line.startswith(
        "the cluster autoscaler could not add a node to pool gpu for the proof: FailedToScaleUpGroup: OperationNotAllowed: "
        "Operation could not be completed as it results in exceeding approved standardNCADSA100v4Family Cores quota."
    )


def test_a_scale_up_azure_has_no_capacity_for_stops_with_azures_words():
    when, verdict, _ = first_verdict(FACTS, scale_up_then(lambda now: [event("FailedScaleUp", ALLOCATION, [95], now)]))
    assert (verdict.kind, when) == ("stop", 100)
    assert (
        "FailedScaleUp: Node scale up in zones eastus-1 associated with this pod failed: AllocationFailed: Allocation failed."
        in verdict.line
    )


def test_vms_azure_failed_to_provision_stop_with_the_autoscalers_words():
    # clusterstate.go handleInstanceCreationErrors: "Failed adding %v nodes to group %v due to %v; source errors: %v",
    # the error azure_scale_set_instance_cache.go gives a VM whose provisioning failed.
    message = f"Failed adding 1 nodes to group {SCALE_SET} due to OutOfResource.provisioning-state-failed; source errors: Azure failed to provision a node for this node group"
    when, verdict, _ = first_verdict(
        FACTS, scale_up_then(lambda now: [event("ScaleUpFailed", message, [400], now, kind="ConfigMap", name="cluster-autoscaler-status")])
    )
    assert (verdict.kind, when) == ("stop", 400)
    assert "Azure failed to provision a node for this node group" in verdict.line


def test_another_pools_failed_scale_up_is_not_this_proofs():
    other = QUOTA.replace(SCALE_SET, "aks-gpu2-87654321-vmss")
    snapshot = scale_up_then(
        lambda now: [event("FailedToScaleUpGroup", other, [14], now, kind="ConfigMap", name="cluster-autoscaler-status")]
    )(60)
    assert decide(FACTS, snapshot).kind == "waiting"


def test_a_scale_up_that_takes_eight_minutes_trains_and_says_how_long_on_the_way():
    def sequence(now: float) -> Snapshot:
        events = (
            event("FailedScheduling", no_node(2, "2 node(s) didn't match Pod's node affinity/selector"), [1], now),
            event("TriggeredScaleUp", TRIGGERED, [12], now),
            # The node joined; its device plugin has not registered nvidia.com/gpu yet.
            event(
                "FailedScheduling",
                no_node(3, "1 Insufficient nvidia.com/gpu", "2 node(s) didn't match Pod's node affinity/selector"),
                [470],
                now,
            ),
            event("Pulling", pulling(), [492], now),
            event("Pulled", f'Container image "{IMAGE}" already present on machine', [560], now),
        )
        if now < 490:
            return look(now, job(), [pod(0, unschedulable_since=1)], *events)
        if now < 561:
            return look(now, job(), [pod(0, node=NODE)], *events)
        return trains(now, 561, 640, *events)

    when, verdict, lines = first_verdict(FACTS, sequence)
    assert (verdict.kind, verdict.line, when) == ("trained", PROOF_OK, 640)
    assert f"a node being added in pool gpu by the cluster autoscaler ({{{SCALE_SET} 0->1 (max: 1)}}) for 7m38s" in lines
    assert any(line.startswith(f'pulling image "{IMAGE}" on node {NODE} for ') for line in lines)


def test_an_untolerated_taint_on_a_pool_without_autoscaler_stops():
    said = no_node(2, "1 node(s) had untolerated taint {CriticalAddonsOnly: true}", "1 node(s) had untolerated taint {sku: gpu}")

    def sequence(now: float) -> Snapshot:
        return look(now, job(), [pod(0, unschedulable_since=1)], event("FailedScheduling", said, [1, 61, 121], now))

    when, verdict, _ = first_verdict(FIXED, sequence)
    assert verdict.kind == "stop"
    assert UNSCHEDULABLE_SECONDS <= when - 1 <= FIVE_MINUTES
    assert verdict.line.startswith(f"no node can take the proof's pod {POD}, and pool gpu has no autoscaler to add one: {said[:60]}")


def test_a_node_still_joining_or_a_gpu_not_yet_offered_does_not_stop_a_fixed_pool():
    for said in (
        no_node(
            2,
            "1 node(s) had untolerated taint {CriticalAddonsOnly: true}",
            "1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }",
        ),
        no_node(2, "1 Insufficient nvidia.com/gpu", "1 node(s) had untolerated taint {CriticalAddonsOnly: true}"),
    ):
        snapshot = look(1800, job(), [pod(0, unschedulable_since=1)], event("FailedScheduling", said, [1], 1800))
        assert decide(FIXED, snapshot).kind == "waiting", said


def test_a_pod_that_runs_and_fails_ends_failed_with_its_proof_failed_line():
    # Three tries (backoffLimit 2, components/proof/job_deadline.py), each a pod of its own.
    names = [f"mnist-proof-gpu-{s}" for s in ("aaaaa", "bbbbb", "ccccc")]

    def sequence(now: float) -> Snapshot:
        pods = []
        for i, name in enumerate(names):
            begins = i * 60
            if now < begins:
                break
            done = now >= begins + 40
            pods.append(
                pod(
                    begins,
                    name=name,
                    node=NODE,
                    phase="Failed" if done else "Running",
                    running_since=begins + 5,
                    terminated=PROOF_FAILED if done else None,
                )
            )
        failed = now >= 160
        conditions = (
            [{"type": "Failed", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]
            if failed
            else []
        )
        return look(now, job(conditions), pods, log="CUDA is not ready yet (CUDA error 802); trying again in 5 s\n")

    when, verdict, lines = first_verdict(FACTS, sequence)
    assert (verdict.kind, when) == ("failed", 160)
    assert verdict.line == (
        f"the Job {FACTS.job_name} failed: [BackoffLimitExceeded] Job has reached the specified backoff limit; its last pod said: {PROOF_FAILED}"
    )
    assert f"try 1 of the proof failed: {PROOF_FAILED}; the Job's next try comes" in lines
    assert any(line.startswith(f"CUDA starting on node {NODE} for ") for line in lines)


def test_a_pod_that_trains_ends_trained_with_its_proof_ok_line_and_says_its_steps_on_the_way():
    when, verdict, lines = first_verdict(FACTS, lambda now: trains(now, 0, 70))
    assert (verdict.kind, verdict.line, when) == ("trained", PROOF_OK, 70)
    assert [line for line in lines if "step" in line] == [f"training on node {NODE}: step {s}/500" for s in (100, 200, 300, 400, 500)]


def test_the_guides_image_completes_without_a_proof_line():
    snapshot = look(60, job([{"type": "Complete"}]), [pod(0, node=NODE, phase="Succeeded", terminated="")])
    verdict = decide(FACTS, snapshot)
    assert verdict.kind == "trained" and verdict.line.startswith(f"the Job {FACTS.job_name} completed")


def test_before_the_job_is_there_or_while_an_earlier_ups_job_is_it_waits():
    assert decide(FACTS, look(0, None, [])) == Verdict("waiting", "the Job gpu-workloads/mnist-proof-gpu is not created yet")
    earlier = job([{"type": "Failed", "reason": "DeadlineExceeded", "message": "Job was active longer than specified deadline"}])
    earlier["metadata"]["annotations"][SPEC_ANNOTATION] = "older"
    assert decide(FACTS, look(0, earlier, [])).kind == "waiting"


def test_a_message_from_the_cluster_is_one_line():
    said = no_node(2, "1 node(s) had untolerated taint {evil: a\nb\u202e}", "1 node(s) had untolerated taint {sku: gpu}")
    snapshot = look(600, job(), [pod(0, unschedulable_since=1)], event("FailedScheduling", said, [1], 600))
    verdict = decide(FIXED, snapshot)
    assert verdict.kind == "stop" and "\n" not in verdict.line and "\u202e" not in verdict.line


# --- a capacity group: one Job, several pools in the team's order -------------------------------
#
# The cluster autoscaler backs a node group off after its scale-up failed and leaves it out of
# the next scale-ups (kubernetes/autoscaler@bdef0a7a cluster-autoscaler/core/scaleup/orchestrator/
# orchestrator.go: filterValidScaleUpNodeGroups skips a group IsNodeGroupReadyToScaleUp answers
# BackoffReason for), so the pod's next TriggeredScaleUp names another pool that fits
# (FAQ.md@55c37cd5: "may attempt to scale up a different group if the pods are still pending").

GROUP_POOLS = ("t4", "t4b", "a10")
SIZES = {"t4": "Standard_NC4as_T4_v3", "t4b": "Standard_NC8as_T4_v3", "a10": "Standard_NV36ads_A10_v5"}
SETS = {"t4": "aks-t4-12345678-vmss", "t4b": "aks-t4b-23456789-vmss", "a10": "aks-a10-34567890-vmss"}
GROUP = WatchFacts(**{**vars(FACTS), "pool_name": "t4", "accepted_pools": GROUP_POOLS, "vm_sizes": SIZES})
STATUS = {"kind": "ConfigMap", "name": "cluster-autoscaler-status"}


def triggered_in(pool: str) -> str:
    return f"pod triggered scale-up: [{{{SETS[pool]} 0->1 (max: 2)}}]"


# Azure's VMs that failed to provision (AllocationFailed, ZonalAllocationFailed), as upstream's
# Azure provider reports them (cloudprovider/azure/azure_scale_set.go@55c37cd5
# instanceStatusFromProvisioningStateAndPowerState: OutOfResource "provisioning-state-failed",
# "Azure failed to provision a node for this node group") and clusterstate.go writes them.
def allocation_failed(pool: str) -> str:
    return (
        f"Failed adding 1 nodes to group {SETS[pool]} due to OutOfResource.provisioning-state-failed; "
        "source errors: Azure failed to provision a node for this node group"
    )


def quota_refused(pool: str) -> str:
    return QUOTA.replace(SCALE_SET, SETS[pool])


def timed_out(pool: str) -> str:
    # clusterstate.go updateScaleRequests: "Nodes added to group %s failed to register within %v".
    return f"Nodes added to group {SETS[pool]} failed to register within 15m0s"


def group_trains(now: float, pool: str, running_from: float, done_at: float, *events: Mapping[str, Any] | None) -> Snapshot:
    node = f"{SETS[pool]}000000"
    if now >= done_at:
        return look(now, job([{"type": "Complete"}]), [pod(0, node=node, phase="Succeeded", terminated=PROOF_OK)], *events)
    return look(now, job(), [pod(0, node=node, phase="Running", running_since=running_from)], *events, log="step 100: loss 0.8000\n")


def test_a_group_whose_first_pool_azure_cannot_fill_trains_on_the_next_and_says_which_served():
    def sequence(now: float) -> Snapshot:
        events = (
            event("FailedScheduling", no_node(2, "2 node(s) didn't match Pod's node affinity/selector"), [1], now),
            event("TriggeredScaleUp", triggered_in("t4"), [12], now),
            event("ScaleUpFailed", allocation_failed("t4"), [190], now, **STATUS),
            event("TriggeredScaleUp", triggered_in("t4b"), [202], now),
        )
        if now < 600:
            return look(now, job(), [pod(0, unschedulable_since=1)], *events)
        return group_trains(now, "t4b", 620, 700, *events)

    when, verdict, lines = first_verdict(GROUP, sequence)
    assert (verdict.kind, verdict.line, when) == ("trained", PROOF_OK, 700)
    assert (verdict.pool, verdict.vm_size) == ("t4b", "Standard_NC8as_T4_v3")
    fell_back = (
        "pool t4 could not add a node (ScaleUpFailed: Failed adding 1 nodes to group aks-t4-12345678-vmss due to "
        "OutOfResource.provisioning-state-failed; source errors: Azure failed to provision a node for this node group)"
    )
    assert f"{fell_back}; the autoscaler tries the next: t4b, a10" in lines
    assert any(
        line.startswith(f"a node being added in pool t4b by the cluster autoscaler ({{{SETS['t4b']} 0->1 (max: 2)}}) for ")
        and line.endswith(f", after {fell_back}; the autoscaler tries the next: t4b, a10")
        for line in lines
    )
    assert not any(line.startswith("a node being added in pool t4 or") for line in lines)


def test_a_group_whose_every_pool_failed_stops_naming_each_in_azures_words():
    def sequence(now: float) -> Snapshot:
        return look(
            now,
            job(),
            [pod(0, unschedulable_since=1)],
            event("TriggeredScaleUp", triggered_in("t4"), [12], now),
            event("FailedToScaleUpGroup", quota_refused("t4"), [14], now, **STATUS),
            event("TriggeredScaleUp", triggered_in("t4b"), [22], now),
            event("ScaleUpFailed", allocation_failed("t4b"), [200], now, **STATUS),
            event("TriggeredScaleUp", triggered_in("a10"), [212], now),
            event("ScaleUpTimedOut", timed_out("a10"), [1112], now, **STATUS),
        )

    when, verdict, lines = first_verdict(GROUP, sequence)
    assert (verdict.kind, when) == ("stop", 1120), "terminal only once the last pool of the group failed too"
    assert verdict.line.startswith(
        "the cluster autoscaler could not add a node to any pool the proof accepts (t4, t4b, a10): "
        "pool t4: FailedToScaleUpGroup: OperationNotAllowed: Operation could not be completed as it results in exceeding approved"
    )
    assert "; pool t4b: ScaleUpFailed: Failed adding 1 nodes to group aks-t4b-23456789-vmss" in verdict.line
    assert verdict.line.endswith("; pool a10: ScaleUpTimedOut: Nodes added to group aks-a10-34567890-vmss failed to register within 15m0s")
    assert (verdict.pool, verdict.vm_size) == ("", ""), "no node ran it"
    assert any(line.endswith("the autoscaler tries the next: a10") for line in lines)


def test_a_group_whose_first_pool_has_no_quota_waits_for_the_next_one_azure_fills():
    def sequence(now: float) -> Snapshot:
        events = (
            event("TriggeredScaleUp", triggered_in("t4"), [12], now),
            event("FailedToScaleUpGroup", quota_refused("t4"), [14], now, **STATUS),
        )
        return look(now, job(), [pod(0, unschedulable_since=1)], *events)

    verdict = decide(GROUP, sequence(20))
    assert verdict.kind == "waiting"
    assert verdict.line.startswith("pool t4 could not add a node (FailedToScaleUpGroup: OperationNotAllowed: Operation could not")
    assert verdict.line.endswith("; the autoscaler tries the next: t4b, a10")
    # The same refusal stops a Job of that one pool, as before groups.
    alone = WatchFacts(**{**vars(FACTS), "pool_name": "t4"})
    assert decide(alone, sequence(20)).kind == "stop"


def test_a_failure_on_the_pod_that_names_no_pool_is_the_pool_of_the_scale_up_it_followed():
    snapshot = look(
        120,
        job(),
        [pod(0, unschedulable_since=1)],
        event("TriggeredScaleUp", triggered_in("t4"), [12], 120),
        event("FailedScaleUp", ALLOCATION, [95], 120),
    )
    verdict = decide(GROUP, snapshot)
    assert verdict.kind == "waiting" and verdict.line.startswith("pool t4 could not add a node (FailedScaleUp: Node scale up in zones")


def test_a_group_pods_refusal_stays_the_pods_and_says_what_failed_before():
    # After t4's failure the others no longer fit the pod's template here (their taint changed):
    # the autoscaler's NotTriggerScaleUp on the pod (skippedreasons.go, the fit's reasons).
    said = not_triggered("1 in backoff after failed scale-up", "2 node(s) had untolerated taint {sku: a10}")

    def sequence(now: float) -> Snapshot:
        return look(
            now,
            job(),
            [pod(0, unschedulable_since=1)],
            event("TriggeredScaleUp", triggered_in("t4"), [12], now),
            event("ScaleUpFailed", allocation_failed("t4"), [100], now, **STATUS),
            event("NotTriggerScaleUp", said, list(range(110, 3600, 10)), now),
        )

    when, verdict, _ = first_verdict(GROUP, sequence)
    assert verdict.kind == "stop" and NOT_TRIGGERED_SECONDS <= when - 110 <= FIVE_MINUTES
    assert verdict.line.startswith(f"the cluster autoscaler will not add a node to pool t4, t4b or a10 for the proof's pod {POD}: {said} ")
    assert "; pool t4 could not add a node (ScaleUpFailed: " in verdict.line


def test_a_group_whose_other_pools_are_at_their_maximum_waits_for_their_gpus_and_says_what_failed_before():
    said = not_triggered("1 in backoff after failed scale-up", "2 max node group size reached")
    busy = no_node(2, "2 Insufficient nvidia.com/gpu")

    now = 1800
    snapshot = look(
        now,
        job(),
        [pod(0, unschedulable_since=1)],
        event("ScaleUpFailed", allocation_failed("t4"), [100], now, **STATUS),
        event("FailedScheduling", busy, [1, 120, 600], now),
        event("NotTriggerScaleUp", said, list(range(110, 3600, 10)), now),
    )

    verdict = decide(GROUP, snapshot)
    assert verdict.kind == "waiting"
    assert verdict.line.startswith(f"pool t4, t4b or a10 is at its maximum node count; the proof's pod {POD} waits: {busy}")
    assert "; pool t4 could not add a node (ScaleUpFailed: " in verdict.line


def test_a_pool_of_its_own_served_the_proof_it_ran_on():
    verdict = decide(FACTS, trains(200, 0, 100))
    assert (verdict.kind, verdict.pool, verdict.vm_size) == ("trained", "gpu", "")
    told = WatchFacts(**{**vars(FACTS), "vm_sizes": {"gpu": "Standard_NC24ads_A100_v4"}})
    assert decide(told, trains(200, 0, 100)).vm_size == "Standard_NC24ads_A100_v4"


# --- what passes and what lasts: the autoscaler's refusals, the API server's, a busy pool -------
#
# Azure's refusals of a scale set's PUT, as the autoscaler's FailedToScaleUpGroup quotes them
# ("Scale-up failed for group %s: %v", executor.go:169): 1.35 passes azcore's ResponseError
# (sdk/azcore/internal/exported/response_error.go Error()), 1.33 and 1.34 cloud-provider-azure's
# retry.Error ("Retriable: %v, RetryAfter: %ds, HTTPStatusCode: %d, RawError: %w").


def refused(status: int, status_text: str, code: str, message: str, group: str = SCALE_SET) -> str:
    line = "-" * 80
    body = '{\n  "error": {\n    "code": "' + code + '",\n    "message": "' + message + '"\n  }\n}'
    return (
        f"Scale-up failed for group {group}: PUT https://management.azure.com/subscriptions/0000/resourceGroups/MC_rg_aks_eastus/"
        f"providers/Microsoft.Compute/virtualMachineScaleSets/{group}\n{line}\nRESPONSE {status}: {status} {status_text}\n"
        f"ERROR CODE: {code}\n{line}\n{body}\n{line}"
    )


# Compute's throttling (learn.microsoft.com troubleshooting-throttling-errors: 429, the body's code OperationNotAllowed).
THROTTLED = refused(
    429,
    "Too Many Requests",
    "OperationNotAllowed",
    "The server rejected the request because too many requests have been received for this subscription.",
)
PASSING = {
    "throttled": THROTTLED,
    "throttled, track 1": (
        f"Scale-up failed for group {SCALE_SET}: Retriable: true, RetryAfter: 17s, HTTPStatusCode: 429, "
        'RawError: {"error":{"code":"SubscriptionRequestsThrottled","message":"Number of write requests exceeded the limit."}}'
    ),
    "busy": refused(409, "Conflict", "AnotherOperationInProgress", "Another operation on this or dependent resource is in progress."),
    "a lost race": refused(412, "Precondition Failed", "PreconditionFailed", "The operation failed the ETag precondition."),
    "a server error": refused(
        500, "Internal Server Error", "InternalServerError", "An unexpected error occured while processing the request."
    ),
    "no answer": f'Scale-up failed for group {SCALE_SET}: PUT "https://management.azure.com/...": context deadline exceeded',
}
LASTING = {
    "quota": QUOTA,
    "size not offered": refused(
        409, "Conflict", "SkuNotAvailable", "The requested VM size Standard_NC4as_T4_v3 is currently not available in location 'eastus'."
    ),
    "no capacity": refused(
        200, "OK", "AllocationFailed", "Allocation failed. We do not have sufficient capacity for the requested VM size in this region."
    ),
    "a bad request": refused(400, "Bad Request", "InvalidParameter", "The value of parameter sku.capacity is invalid."),
}


def scale_up_refused(refusal: str, retried_at: float, joined_at: float) -> Callable[[float], Snapshot]:
    """The autoscaler's PUT refused at 14 s; the pool backed off (NotTriggerScaleUp "in backoff
    after failed scale-up" on the pod every loop) until it is tried again at `retried_at`; the node
    joins at `joined_at` and the proof trains (orchestrator.go filterValidScaleUpNodeGroups)."""

    def sequence(now: float) -> Snapshot:
        backed_off = not_triggered("1 in backoff after failed scale-up", "2 node(s) didn't match Pod's node affinity/selector")
        events = (
            event("FailedScheduling", no_node(2, "2 node(s) didn't match Pod's node affinity/selector"), [1], now),
            event("TriggeredScaleUp", TRIGGERED, [12, retried_at], now),
            event("FailedToScaleUpGroup", refusal, [14], now, kind="ConfigMap", name="cluster-autoscaler-status"),
            event("NotTriggerScaleUp", backed_off, list(range(24, int(retried_at), 10)), now),
        )
        if now < joined_at:
            return look(now, job(), [pod(0, unschedulable_since=1)], *events)
        return trains(now, joined_at + 30, joined_at + 100, *events)

    return sequence


def test_a_scale_up_refusal_that_passes_waits_out_the_autoscalers_back_off_and_trains():
    for what, refusal in PASSING.items():
        when, verdict, lines = first_verdict(FACTS, scale_up_refused(refusal, retried_at=314, joined_at=800))
        assert (verdict.kind, when) == ("trained", 900), what
        assert any(line.startswith("the cluster autoscaler tries pool gpu again when its back-off ends") for line in lines), what
        assert any("pool gpu could not add a node for now (FailedToScaleUpGroup: " in line for line in lines), what


def test_quota_a_size_not_offered_no_capacity_and_any_other_refusal_still_stop_at_once_in_azures_words():
    for what, refusal in LASTING.items():
        when, verdict, _ = first_verdict(FACTS, scale_up_refused(refusal, retried_at=314, joined_at=800))
        assert (verdict.kind, when) == ("stop", 20), what
        assert verdict.line.startswith("the cluster autoscaler could not add a node to pool gpu for the proof: FailedToScaleUpGroup: "), (
            what
        )


def test_a_group_falls_back_past_a_pool_whose_refusal_passes_and_never_counts_it_as_failed_for_good():
    # t4 throttled, t4b without quota, a10's node never registered: 940 s in, one look.
    failures = [
        ("FailedToScaleUpGroup", THROTTLED.replace(SCALE_SET, SETS["t4"]), 14),
        ("FailedToScaleUpGroup", quota_refused("t4b"), 24),
        ("ScaleUpTimedOut", timed_out("a10"), 932),
    ]
    events = [event(reason, message, [at_], 940, **STATUS) for reason, message, at_ in failures]
    triggered = [event("TriggeredScaleUp", triggered_in(p), [t], 940) for p, t in (("t4", 12), ("t4b", 22), ("a10", 32))]

    verdict = decide(GROUP, look(940, job(), [pod(0, unschedulable_since=1)], *triggered, *events))
    assert verdict.kind == "waiting", "t4's refusal passes: the autoscaler tries it again after its back-off"
    assert verdict.line.startswith("pool t4 could not add a node for now (FailedToScaleUpGroup: OperationNotAllowed: The server rejected")
    assert verdict.line.endswith("; the autoscaler tries again when a back-off ends")


def test_a_refusal_of_another_group_whose_words_mention_the_proofs_scale_set_is_not_the_proofs():
    # Another node group's refusal that names the proof's scale set in Azure's words: the event is
    # about the group its message leads with, not about every group it mentions.
    stranger = QUOTA.replace(f"for group {SCALE_SET}:", "for group aks-cpu-99999999-vmss:", 1)
    assert SCALE_SET in stranger and stranger.startswith("Scale-up failed for group aks-cpu-99999999-vmss: ")
    snapshot = scale_up_then(
        lambda now: [event("FailedToScaleUpGroup", stranger, [14], now, kind="ConfigMap", name="cluster-autoscaler-status")]
    )(60)
    assert decide(FACTS, snapshot).kind == "waiting"
    # ScaleUpFailed and ScaleUpTimedOut lead with their group too (clusterstate.go:1178, 304).
    for reason, message in (
        ("ScaleUpFailed", f"Failed adding 1 nodes to group aks-cpu-99999999-vmss due to OtherError; source errors: {SCALE_SET} was busy"),
        ("ScaleUpTimedOut", f"Nodes added to group aks-cpu-99999999-vmss failed to register within 15m0s ({SCALE_SET})"),
    ):
        snapshot = scale_up_then(
            lambda now, r=reason, m=message: [event(r, m, [14], now, kind="ConfigMap", name="cluster-autoscaler-status")]
        )(60)
        assert decide(FACTS, snapshot).kind == "waiting", reason


def busy_pool(freed_at: float) -> Callable[[float], Snapshot]:
    """An autoscaled pool at its maximum, its one GPU held by another team's pod until `freed_at`:
    the autoscaler skips the full group before fitting the pod (orchestrator.go
    filterValidScaleUpNodeGroups: "max node group size reached"), the scheduler finds the node's
    GPU taken (plugins/noderesources/fit.go "Insufficient nvidia.com/gpu")."""
    holder = {"metadata": {"name": "train-7f9c", "namespace": "research"}, "spec": {"nodeName": NODE}}
    node = {"metadata": {"name": NODE}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}, "spec": {}}

    def sequence(now: float) -> Snapshot:
        events = (
            event(
                "FailedScheduling",
                no_node(3, "1 Insufficient nvidia.com/gpu", "2 node(s) didn't match Pod's node affinity/selector"),
                [1],
                now,
            ),
            event(
                "NotTriggerScaleUp",
                not_triggered("1 max node group size reached", "2 node(s) didn't match Pod's node affinity/selector"),
                list(range(12, int(freed_at), 10)),
                now,
            ),
        )
        if now < freed_at:
            snapshot = look(now, job(), [pod(0, unschedulable_since=1)], *events)
            return replace(snapshot, nodes=[node], holders=[holder])
        return trains(now, freed_at + 10, freed_at + 80, *events)

    return sequence


def test_a_pool_at_its_maximum_whose_gpu_another_pod_holds_waits_names_the_holder_and_trains_once_it_is_freed():
    when, verdict, lines = first_verdict(FACTS, busy_pool(freed_at=1500))
    assert (verdict.kind, when) == ("trained", 1580)
    scheduler = no_node(3, "1 Insufficient nvidia.com/gpu", "2 node(s) didn't match Pod's node affinity/selector")
    assert (
        f"pool gpu is at its maximum node count; its GPUs are held by pod research/train-7f9c (node {NODE}); "
        f"the proof's pod {POD} waits: {scheduler}"
    ) in lines


# The Job controller's FailedCreate on the Job (controller_utils.go createPods: "Error creating: %v"),
# an admission webhook's denial as the API server words it (apiserver webhook/errors ToStatusErr).
DENIED = (
    'Error creating: pods "mnist-proof-gpu-x7k2q" is forbidden: admission webhook "validation.gatekeeper.sh" denied the request: '
    '[k8sallowedrepos] container <mnist-proof> has an invalid image repo <docker.io/pytorch/pytorch>, allowed repos are ["myacr.azurecr.io/"]'
)


def test_a_job_whose_pods_the_api_server_refuses_stops_within_three_minutes_in_the_api_servers_words():
    def sequence(now: float) -> Snapshot:
        # The Job controller tries again on its back-off, 1 s doubling to a minute (job_controller.go).
        return look(
            now,
            job(),
            [],
            event(
                "FailedCreate", DENIED, [t for t in (1, 2, 4, 8, 16, 32, 64, 124, 184) if t <= now], now, kind="Job", name=FACTS.job_name
            ),
        )

    when, verdict, lines = first_verdict(FACTS, sequence)
    assert verdict.kind == "stop" and 120 <= when <= 180
    assert verdict.line.startswith(f"the API server refuses the proof Job {FACTS.job_name}'s pod: {DENIED[:120]}")
    assert verdict.line.endswith("(for 2m09s, 8 tries)")
    assert lines[0] == f"the Job {FACTS.job_name} has no pod yet"
    assert any(
        line.startswith("the API server refuses the proof Job mnist-proof-gpu's pod, and the Job controller tries again: ")
        for line in lines
    )


def test_a_refusal_that_passes_before_the_job_controllers_next_try_trains():
    # A ResourceQuota full for a minute: the controller's next pod is made and the proof trains.
    quota = 'Error creating: pods "mnist-proof-gpu-x7k2q" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1'

    def sequence(now: float) -> Snapshot:
        refusals = event("FailedCreate", quota, [1, 2, 4, 8, 16, 32], now, kind="Job", name=FACTS.job_name)
        if now < 70:
            return look(now, job(), [], refusals)
        return trains(now, 80, 150, refusals)

    when, verdict, _ = first_verdict(FACTS, sequence)
    assert (verdict.kind, when) == ("trained", 150)


def test_a_failed_try_whose_retry_the_api_server_refuses_stops_too():
    def sequence(now: float) -> Snapshot:
        failed = pod(0, node=NODE, phase="Failed", terminated=PROOF_FAILED)
        return look(
            now,
            job(),
            [failed],
            event("FailedCreate", DENIED, [t for t in range(60, 3600, 30) if t <= now], now, kind="Job", name=FACTS.job_name),
        )

    when, verdict, _ = first_verdict(FACTS, sequence)
    assert verdict.kind == "stop" and 180 <= when <= 240 and DENIED[:60] in verdict.line


def test_the_newer_schedulers_unnamed_taint_waits_while_a_node_of_the_pool_is_joining_and_stops_once_none_is():
    # kubernetes v1.35.0 and v1.34.2 (kubernetes/kubernetes#134740): "node(s) had untolerated taint(s)".
    said = no_node(1, "1 node(s) had untolerated taint(s)")
    joining = {
        "metadata": {"name": NODE},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]},
        "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
    }
    ready = {
        "metadata": {"name": NODE},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        "spec": {"taints": [{"key": "sku", "value": "a100", "effect": "NoSchedule"}]},
    }
    snapshot = look(600, job(), [pod(0, unschedulable_since=1)], event("FailedScheduling", said, [1], 600))
    assert decide(FIXED, replace(snapshot, nodes=[joining])).kind == "waiting", "a node still joining carries a taint it sheds"
    assert decide(FIXED, snapshot).kind == "waiting", "the nodes not read: nothing says the taint stays"
    stopped = decide(FIXED, replace(snapshot, nodes=[ready]))
    assert stopped.kind == "stop" and stopped.line.endswith(f"{said} (for 9m59s)")


def test_a_date_the_api_server_sends_without_a_zone_is_its_utc():
    snapshot = look(
        600,
        job(),
        [pod(0, unschedulable_since=1)],
        event("FailedScheduling", no_node(1, "1 node(s) didn't match Pod's node affinity/selector"), [1], 600),
    )
    naive = replace(snapshot, now=snapshot.now.replace(tzinfo=None))
    assert decide(FIXED, naive) == decide(FIXED, snapshot)


def test_a_megabyte_of_the_schedulers_whitespace_and_commas_is_read_in_one_pass():
    # A lazy group then `\s*$` over a run of whitespace was quadratic (100,000 spaces: minutes).
    for said in (
        no_node(2, "2 node(s) didn't match Pod's node affinity/selector") + " " * 1_000_000,
        "0/2 nodes are available: " + ", " * 500_000 + "2 node(s) didn't match Pod's node affinity/selector.",
        "0/2 nodes are available: 2 node(s) had untolerated taint {a: " + "1, " * 300_000 + "}.",
    ):
        snapshot = look(600, job(), [pod(0, unschedulable_since=1)], event("FailedScheduling", said, [1], 600))
        assert decide(FIXED, snapshot).kind == "stop"


def test_ten_thousand_events_are_each_read_once_a_look(monkeypatch):
    from components.proof import watch_verdict

    reads = []
    real = watch_verdict.seen
    monkeypatch.setattr(watch_verdict, "seen", lambda e: reads.append(1) or real(e))
    noise = [
        event("FailedScheduling", no_node(2, f"2 node(s) didn't match Pod's node affinity/selector {i}"), [1], 600) for i in range(10_000)
    ]
    snapshot = look(
        600,
        job(),
        [pod(0, unschedulable_since=1)],
        *noise,
        event("NotTriggerScaleUp", not_triggered("1 node(s) didn't match Pod's node affinity/selector"), [12, 590], 600),
    )
    assert decide(FACTS, snapshot).kind == "stop"
    assert len(reads) == 10_001
