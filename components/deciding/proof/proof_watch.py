"""What the proof's watch makes of one look at the cluster: the Job, its pods, their events and
the running pod's last log lines, as the API server answered them, decide whether the proof
trained, failed, is still on its way (and what it waits for), or cannot start for a cause that
waiting will not mend. Pure: no call out of the process (components/live/proof_watch.py
looks, components/resources/proof_watch.py is the resource that watches during `pulumi up`).
Which causes are terminal, and the sources: docs/proof-watch.md, and the signals' own module,
components/deciding/proof/proof_signals.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

# The ConfigMap the watch keeps the last proof's line in, named by the one naming rule, which
# the config's check holds to Kubernetes' limits (components/config/workloads.py check_object_names).
from components.catalog.proof_names import result_name as result_name
from components.deciding.proof import proof_signals as signals
from components.deciding.proof.proof_signals import Seen
from components.errors import SAID, cut, one_line

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
    #: The pools the Job's pod may land on, in the team's order (a capacity group's); empty: (pool_name,).
    accepted_pools: tuple[str, ...] = ()
    #: Each pool's vmSize, where the watch is told (a Job of several pools); empty: not told.
    vm_sizes: Mapping[str, str] = field(default_factory=dict)

    @property
    def pools(self) -> tuple[str, ...]:
        """The pools the Job may land on, in the team's order; today's one pool is the one-element case."""
        return tuple(self.accepted_pools) or (self.pool_name,)


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
    #: Where the proof's pod ran, in a verdict that ends the watch: the node's pool ("" where no
    #: node took it, or its name names no pool of the Job) and that pool's vmSize ("" where not told).
    pool: str = ""
    vm_size: str = ""


# The proof's training lines (proof/train_mnist.py train: `step {step}: loss {loss:.4f}`) and the
# line it prints while CUDA says it is not ready (wait_for_cuda: "CUDA is not ready yet ...").
STEP = re.compile(r"^step (\d+): loss", re.MULTILINE)
CUDA_WAIT = "CUDA is not ready yet"


def decide(facts: WatchFacts, look: Snapshot) -> Verdict:
    """What one look says (see the module docstring); a verdict that ends the watch says where
    the proof's pod ran (Verdict.pool, Verdict.vm_size)."""
    verdict = _decide(facts, look)
    if verdict.kind == "waiting":
        return verdict
    pool = ran_on(facts, look.pods)
    return replace(verdict, pool=pool, vm_size=facts.vm_sizes.get(pool, "") if pool else "")


def ran_on(facts: WatchFacts, pods: Sequence[Mapping[str, Any]]) -> str:
    """The pool of the node the newest pod with a node ran on: the Job's one pool, or of several
    the one its node's name names (proof_signals.pool_of_node); "" where no pod had a node."""
    nodes = [_node(pod) for pod in pods if _node(pod)]
    if not nodes:
        return ""
    return facts.pool_name if len(facts.pools) == 1 else signals.pool_of_node(nodes[-1], facts.pools)


def _decide(facts: WatchFacts, look: Snapshot) -> Verdict:
    job = look.job
    if job is None:
        return Verdict("waiting", f"the Job {facts.namespace}/{facts.job_name} is not created yet")
    annotations = _get(job, "metadata", "annotations")
    if isinstance(annotations, Mapping) and annotations.get(SPEC_ANNOTATION) not in (None, facts.spec_hash):
        return Verdict("waiting", f"the Job {facts.job_name} is an earlier `pulumi up`'s: waiting for this one's to replace it")
    ended = _job_ended(facts, job, look.pods)
    if ended is not None:
        return ended
    if not look.pods:
        return Verdict("waiting", f"the Job {facts.job_name} has no pod yet")
    pod = look.pods[-1]
    events = signals.events_of(look.events, "Pod", _name(pod))
    phase = _get(pod, "status", "phase")
    if phase == "Failed":
        return _retry_coming(facts, look.pods)
    if phase == "Succeeded":
        return Verdict("waiting", f"the proof's pod {_name(pod)} completed; waiting for the Job to say Complete")
    if not _node(pod):
        return _unscheduled(facts, look, pod, events)
    return _on_node(facts, look, pod, events)


# --- the Job: done, or a try that failed --------------------------------------------------


def _job_ended(facts: WatchFacts, job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> Verdict | None:
    """trained or failed once the Job says so (its Complete or Failed condition True, as
    pulumi-kubernetes' Job await reads them: provider/pkg/await/checker/job/check.go)."""
    for condition in _list(_get(job, "status", "conditions")):
        if condition.get("status") != "True":
            continue
        last = _last_words(pods)
        if condition.get("type") == "Complete":
            return Verdict("trained", last or f"the Job {facts.job_name} completed (its image prints no PROOF line: read its log)")
        if condition.get("type") == "Failed":
            said = one_line(f"[{condition.get('reason') or 'Failed'}] {condition.get('message') or ''}")
            return Verdict("failed", f"the Job {facts.job_name} failed: {said}" + (f"; its last pod said: {last}" if last else ""))
    return None


def _last_words(pods: Sequence[Mapping[str, Any]]) -> str:
    """The newest pod's container's termination message (the script's PROOF line, the kubelet
    keeping the file's last 4096 bytes), or its reason and exit code; "" when none has ended."""
    for pod in reversed(pods):
        for status in _list(_get(pod, "status", "containerStatuses")):
            ended = _get(status, "state", "terminated") or _get(status, "lastState", "terminated")
            if isinstance(ended, Mapping):
                message = str(ended.get("message") or "").strip()
                lines = [line for line in message.splitlines() if line.strip()]
                proof = [line for line in lines if line.startswith(("PROOF OK", "PROOF FAILED"))]
                if proof or lines:
                    return one_line((proof or lines)[-1])
                if ended.get("exitCode") not in (0, None):
                    return f"{ended.get('reason') or 'terminated'} (exit code {ended.get('exitCode')})"
    return ""


def _retry_coming(facts: WatchFacts, pods: Sequence[Mapping[str, Any]]) -> Verdict:
    failed = sum(1 for pod in pods if _get(pod, "status", "phase") == "Failed")
    return Verdict("waiting", f"try {failed} of the proof failed: {_last_words(pods) or 'no message'}; the Job's next try comes")


# --- a pod no node has taken yet ----------------------------------------------------------


def _unscheduled(facts: WatchFacts, look: Snapshot, pod: Mapping[str, Any], events: Sequence[Seen]) -> Verdict:
    """Pending without a node: the autoscaler's word on the pools, or the scheduler's."""
    name, pool = _name(pod), _pool_words(facts)
    since = _created(pod) or look.now
    failed = _scale_ups_failed(facts, look, since, events)
    if failed and all(p in failed for p in facts.pools):
        return _every_pool_failed(facts, failed)
    # Some of several pools failed: the autoscaler backs each off and tries another (docs/proof-watch.md).
    fell_back = _falling_back(facts, failed)
    scheduling = signals.last_seen(events, ["FailedScheduling"])
    scheduler_says = one_line(scheduling.message) if scheduling else "not scheduled yet"
    if facts.autoscaled:
        triggered = signals.last_seen(events, [signals.TRIGGERED])
        refusals = [s for s in events if s.reason == signals.NOT_TRIGGERED and (triggered is None or s.last > triggered.last)]
        if refusals:
            # Since the first refusal after the last TriggeredScaleUp: an event the recorder
            # aggregated (same message, count and lastTimestamp updated) may have begun before it.
            refused_since = min(s.first for s in refusals)
            if triggered is not None:
                refused_since = max(refused_since, triggered.last)
            age = _seconds(look.now, refused_since)
            said = one_line(refusals[-1].message)
            also = f"; {fell_back}" if fell_back else ""
            if age >= signals.NOT_TRIGGERED_SECONDS:
                return Verdict(
                    "stop",
                    f"the cluster autoscaler will not add a node to {pool} for the proof's pod {name}: {said} "
                    f"(for {_duration(age)}, no TriggeredScaleUp since){also}",
                )
            return Verdict("waiting", f"the cluster autoscaler declines to add a node to {pool} for {_duration(age)}: {said}{also}")
        latest_failure = max((s.last for s in failed.values()), default=None)
        if triggered is not None and (latest_failure is None or triggered.last > latest_failure):
            adding = _between(triggered.message, "[", "]") or triggered.message
            also = f", after {fell_back}" if fell_back else ""
            return Verdict(
                "waiting",
                f"a node being added in {_pool_named(facts, triggered.message)} by the cluster autoscaler ({one_line(adding)}) for "
                f"{_duration(_seconds(look.now, triggered.first))}{also}",
            )
        if fell_back:
            return Verdict("waiting", fell_back)
        return Verdict("waiting", f"the proof's pod {name} waits for a node of {pool}: {scheduler_says}")
    unschedulable_since = _condition_since(pod, "PodScheduled", "False") or since
    age = _seconds(look.now, unschedulable_since)
    if scheduling is not None and signals.excluded_for_good(scheduling.message) and age >= signals.UNSCHEDULABLE_SECONDS:
        return Verdict(
            "stop",
            f"no node can take the proof's pod {name}, and {pool} has no autoscaler to add one: {scheduler_says} (for {_duration(age)})",
        )
    return Verdict("waiting", f"the proof's pod {name} waits for a node of {pool} ({_duration(age)}): {scheduler_says}")


def _scale_ups_failed(facts: WatchFacts, look: Snapshot, since: datetime, pod_events: Sequence[Seen]) -> dict[str, Seen]:
    """Each pool of the Job whose scale-up failed since the pod was created, with its last
    failure: on the autoscaler's status ConfigMap naming the pool's scale set (FailedToScaleUpGroup,
    ScaleUpFailed, ScaleUpTimedOut; proof_signals.SCALE_UP_FAILED), or on the pod (FailedScaleUp),
    which is the pool's it names, else the pool of the scale-up it followed (_pool_failed_on_pod)."""
    status = [
        s
        for s in signals.events_of(look.events, "ConfigMap", signals.AUTOSCALER_STATUS)
        if s.reason in signals.SCALE_UP_FAILED and s.last >= since
    ]
    on_pod = [s for s in pod_events if s.reason in signals.SCALE_UP_FAILED and s.last >= since]
    failed: dict[str, Seen] = {}
    for pool in facts.pools:
        scale_set = signals.scale_set_of(pool)
        found = [s for s in status if scale_set.search(s.message)]
        found += [s for s in on_pod if _pool_failed_on_pod(facts, s, pod_events) == pool]
        if found:
            failed[pool] = max(found, key=lambda s: s.last)
    return failed


def _pool_failed_on_pod(facts: WatchFacts, failure: Seen, pod_events: Sequence[Seen]) -> str:
    """The pool a failure on the pod is about: the Job's one pool; of several, the one whose scale
    set it names, else the one the last TriggeredScaleUp before it named; "" where none says."""
    if len(facts.pools) == 1:
        return facts.pool_name
    named = _pools_in(facts, failure.message)
    if named:
        return named[0]
    before = [s for s in pod_events if s.reason == signals.TRIGGERED and s.first <= failure.last]
    return next(iter(_pools_in(facts, before[-1].message)), "") if before else ""


def _every_pool_failed(facts: WatchFacts, failed: Mapping[str, Seen]) -> Verdict:
    if len(facts.pools) == 1:
        failure = failed[facts.pool_name]
        return Verdict(
            "stop",
            f"the cluster autoscaler could not add a node to pool {facts.pool_name} for the proof: {failure.reason}: "
            f"{signals.azure_words(failure.message)}",
        )
    each = "; ".join(f"pool {p}: {failed[p].reason}: {signals.azure_words(failed[p].message)}" for p in facts.pools)
    return Verdict("stop", f"the cluster autoscaler could not add a node to any pool the proof accepts ({', '.join(facts.pools)}): {each}")


def _falling_back(facts: WatchFacts, failed: Mapping[str, Seen]) -> str:
    """What failed on some of several pools, in the autoscaler's and Azure's words, and the pools
    it tries next in the team's order: "pool t4 could not add a node (<Azure's words>); the
    autoscaler tries the next: t4b, a10"; "" where none failed."""
    if not failed:
        return ""
    could_not = "; ".join(
        f"pool {p} could not add a node ({failed[p].reason}: {signals.azure_words(failed[p].message)})" for p in facts.pools if p in failed
    )
    return f"{could_not}; the autoscaler tries the next: {', '.join(p for p in facts.pools if p not in failed)}"


def _pool_words(facts: WatchFacts) -> str:
    """`pool gpu`; of several, `pool t4, t4b or a10`."""
    pools = facts.pools
    return f"pool {pools[0]}" if len(pools) == 1 else f"pool {', '.join(pools[:-1])} or {pools[-1]}"


def _pools_in(facts: WatchFacts, text: str) -> list[str]:
    """The Job's pools whose scale set `text` names, in the team's order."""
    return [p for p in facts.pools if signals.scale_set_of(p).search(text)]


def _pool_named(facts: WatchFacts, text: str) -> str:
    """`pool <the one text names>`; where it names none of the Job's pools, all of them."""
    named = _pools_in(facts, text)
    return f"pool {named[0]}" if len(named) == 1 else _pool_words(facts)


# --- a pod on a node ----------------------------------------------------------------------


def _on_node(facts: WatchFacts, look: Snapshot, pod: Mapping[str, Any], events: Sequence[Seen]) -> Verdict:
    """On a node: its image, CUDA's start, the training."""
    name, node = _name(pod), _node(pod)
    statuses = _list(_get(pod, "status", "containerStatuses"))
    waiting = [_get(s, "state", "waiting") for s in statuses]
    waiting_on = [w for w in waiting if isinstance(w, Mapping)]
    reason = str(waiting_on[0].get("reason") or "") if waiting_on else ""
    if reason in signals.PULL_WAITING:
        return _pull_failing(facts, look, pod, events, waiting_on[0])
    running = [_get(s, "state", "running") for s in statuses]
    started = [r for r in running if isinstance(r, Mapping)]
    if started:
        return _running(facts, look, pod, started[0])
    pulling = signals.last_seen(events, ["Pulling", "Pulled", "Failed", "BackOff"])
    if pulling is not None and pulling.reason == "Pulling":
        image = (signals.PULLING.match(pulling.message) or {"image": facts.image})["image"]
        return Verdict(
            "waiting",
            f'pulling image "{image}" on node {node} for {_duration(_seconds(look.now, pulling.last))}',
        )
    return Verdict("waiting", f"the proof's pod {name} is starting on node {node}" + (f" ({reason})" if reason else ""))


def _pull_failing(facts: WatchFacts, look: Snapshot, pod: Mapping[str, Any], events: Sequence[Seen], waiting: Mapping[str, Any]) -> Verdict:
    """The kubelet cannot pull the image: terminal at once for a cause no retry mends, else once
    it has failed PULL_FAILED_TRIES times over PULL_FAILING_SECONDS."""
    name, node, reason = _name(pod), _node(pod), str(waiting.get("reason"))
    failures = [s for s in events if s.reason == "Failed" and signals.FAILED_PULL.match(s.message)]
    last = failures[-1] if failures else None
    parsed = signals.FAILED_PULL.match(last.message) if last else None
    image = parsed["image"] if parsed else facts.image
    said = _tail(str(parsed["error"] if parsed else waiting.get("message") or reason))
    where = f'the proof\'s pod {name} cannot pull image "{image}" (registry {signals.registry(image)}) on node {node}'
    if reason in signals.PULL_NEVER_MENDS:
        return Verdict("stop", f"{where}: {reason}: {one_line(waiting.get('message') or said)}")
    tries = sum(s.count for s in failures)
    age = _seconds(look.now, min(s.first for s in failures)) if failures else 0.0
    so_far = f"failing for {_duration(age)}, {tries} {'try' if tries == 1 else 'tries'}"
    if signals.PERMANENT_PULL.search(said) or signals.PERMANENT_PULL.search(str(waiting.get("message") or "")):
        return Verdict("stop", f"{where}: {said} ({so_far})")
    if tries >= signals.PULL_FAILED_TRIES and age >= signals.PULL_FAILING_SECONDS:
        return Verdict("stop", f"{where}: {said} ({so_far})")
    return Verdict("waiting", f'pulling image "{image}" on node {node} failed, the kubelet tries again: {said} ({so_far})')


def _running(facts: WatchFacts, look: Snapshot, pod: Mapping[str, Any], running: Mapping[str, Any]) -> Verdict:
    """Running: the training's step from the log tail, or CUDA's start."""
    node, tail = _node(pod), look.log_tail or ""
    steps = STEP.findall(tail)
    if steps:
        return Verdict("waiting", f"training on node {node}: step {steps[-1]}/{facts.max_steps}")
    started = signals.timestamp(running.get("startedAt"))
    for_how_long = f" for {_duration(_seconds(look.now, started))}" if started else ""
    lines = [line for line in tail.splitlines() if line.strip()]
    if lines and lines[-1].startswith(CUDA_WAIT):
        return Verdict("waiting", f"CUDA starting on node {node}{for_how_long}: {one_line(lines[-1])}")
    if lines:
        return Verdict("waiting", f"the proof runs on node {node}{for_how_long}: {one_line(lines[-1])}")
    return Verdict("waiting", f"the proof runs on node {node}{for_how_long}: CUDA starting")


# --- reading Kubernetes JSON ----------------------------------------------------------------


def _get(value: object, *path: str) -> object:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _list(value: object) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _name(obj: Mapping[str, Any]) -> str:
    return cut(str(_get(obj, "metadata", "name") or "?"))


def _node(pod: Mapping[str, Any]) -> str:
    return cut(str(_get(pod, "spec", "nodeName") or ""))


def _created(obj: Mapping[str, Any]) -> datetime | None:
    return signals.timestamp(_get(obj, "metadata", "creationTimestamp"))


def _condition_since(pod: Mapping[str, Any], kind: str, status: str) -> datetime | None:
    for condition in _list(_get(pod, "status", "conditions")):
        if condition.get("type") == kind and condition.get("status") == status:
            return signals.timestamp(condition.get("lastTransitionTime"))
    return None


def _between(text: str, start: str, end: str) -> str:
    head, found, rest = text.partition(start)
    return rest.rpartition(end)[0] if found and end in rest else ""


def _tail(text: str) -> str:
    """An error on one line, its last SAID characters where it is longer: the runtime wraps its
    cause in context, outermost first (containerd's `failed to pull and unpack image ...: failed
    to resolve reference ...: <ref>: not found`), so the end says why."""
    said = one_line(text, None)
    return said if len(said) <= SAID else "..." + said[-SAID:]


def _seconds(now: datetime, then: datetime) -> float:
    return max(0.0, (now - then).total_seconds())


def _duration(seconds: float) -> str:
    """4m10s, 40s: how long, as `kubectl` writes an age."""
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"
