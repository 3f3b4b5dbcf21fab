"""What the proof's watch makes of one look at the cluster: the Job, its pods, their events and
the running pod's last log lines, as the API server answered them, decide whether the proof
trained, failed, is still on its way (and what it waits for), or cannot start for a cause that
waiting will not mend. Pure: no call out of the process (components/proof/watch_live.py
looks, components/proof/proof_watch.py is the resource that watches during `pulumi up`).
Which causes are terminal, and the sources: docs/design/proof-watch.md, and the signals' own module,
components/proof/proof_signals.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Literal

from components.errors import SAID, cut, one_line
from components.proof import proof_signals as signals
from components.proof.proof_signals import Seen

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
    #: The nodes of the Job's pools (AKS's agentpool label), read while its pod waits for a
    #: node; None: not read (not asked, or refused).
    nodes: Sequence[Mapping[str, Any]] | None = None
    #: The pods on those nodes that hold a GPU (a container that asks for nvidia.com/*), the
    #: proof's own left out; None: not read.
    holders: Sequence[Mapping[str, Any]] | None = None


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


# A Job whose pods the API server refuses (FailedCreate, below) for this long, with no pod made
# since, is refused for good: the Job controller tries again with a back-off of 1 s doubling to
# a minute (kubernetes pkg/controller/job/job_controller.go DefaultJobApiBackOff, MaxJobApiBackOff),
# so two minutes are several of its tries with the same answer (docs/design/proof-watch.md).
FAILED_CREATE_SECONDS = 120
# The Job controller's event when the API server refuses one of its pods: FailedCreate "Error
# creating: %v", on the Job (pkg/controller/controller_utils.go RealPodControl.createPods,
# FailedCreatePodReason; job_controller.go manageJob passes the Job as the controller object).
FAILED_CREATE = "FailedCreate"


@dataclass(frozen=True)
class _Look:
    """One look, its events read once (proof_signals.by_object) and its time aware."""

    facts: WatchFacts
    snapshot: Snapshot
    now: datetime
    events: Mapping[tuple[str, str], Sequence[Seen]]

    def of(self, kind: str, name: str) -> Sequence[Seen]:
        return self.events.get((kind, name), ())


def decide(facts: WatchFacts, look: Snapshot) -> Verdict:
    """What one look says (see the module docstring); a verdict that ends the watch says where
    the proof's pod ran (Verdict.pool, Verdict.vm_size)."""
    # A time without a zone is the API server's UTC (its Date header with -0000 parses naive).
    now = look.now if look.now.tzinfo is not None else look.now.replace(tzinfo=timezone.utc)
    verdict = _decide(_Look(facts, look, now, signals.by_object(look.events)))
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


def _decide(look: _Look) -> Verdict:
    facts, job, pods = look.facts, look.snapshot.job, look.snapshot.pods
    if job is None:
        return Verdict("waiting", f"the Job {facts.namespace}/{facts.job_name} is not created yet")
    annotations = _get(job, "metadata", "annotations")
    if isinstance(annotations, Mapping) and annotations.get(SPEC_ANNOTATION) not in (None, facts.spec_hash):
        return Verdict("waiting", f"the Job {facts.job_name} is an earlier `pulumi up`'s: waiting for this one's to replace it")
    ended = _job_ended(facts, job, pods)
    if ended is not None:
        return ended
    refused = _pods_refused(look, job)
    if not pods:
        return refused or Verdict("waiting", f"the Job {facts.job_name} has no pod yet")
    pod = pods[-1]
    events = look.of("Pod", _name(pod))
    phase = _get(pod, "status", "phase")
    if phase == "Failed":
        return refused or _retry_coming(facts, pods)
    if phase == "Succeeded":
        return Verdict("waiting", f"the proof's pod {_name(pod)} completed; waiting for the Job to say Complete")
    if not _node(pod):
        return _unscheduled(look, pod, events)
    return _on_node(look, pod, events)


# --- the Job: done, a try that failed, or pods the API server refuses ----------------------


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


def _pods_refused(look: _Look, job: Mapping[str, Any]) -> Verdict | None:
    """The API server refuses the Job's pods (an admission webhook, PodSecurity, a ResourceQuota):
    the Job controller's FailedCreate since its newest pod was made, while no pod of it waits or
    runs. Terminal once it has lasted FAILED_CREATE_SECONDS, in the API server's words; the
    controller's tries until then are a wait. None where no such refusal is seen."""
    pods = look.snapshot.pods
    if pods and _get(pods[-1], "status", "phase") not in ("Failed", "Succeeded"):
        return None  # a pod was made and is on its way: the refusal, if any, passed
    since = (_created(pods[-1]) if pods else None) or _created(job)
    refusals = [s for s in look.of("Job", _name(job)) if s.reason == FAILED_CREATE and (since is None or s.last >= since)]
    if not refusals:
        return None
    first = max(min(s.first for s in refusals), since) if since is not None else min(s.first for s in refusals)
    age, tries = _seconds(look.now, first), sum(s.count for s in refusals)
    said = f"{one_line(refusals[-1].message)} (for {_duration(age)}, {tries} {'try' if tries == 1 else 'tries'})"
    if age >= FAILED_CREATE_SECONDS:
        return Verdict("stop", f"the API server refuses the proof Job {look.facts.job_name}'s pod: {said}")
    return Verdict(
        "waiting", f"the API server refuses the proof Job {look.facts.job_name}'s pod, and the Job controller tries again: {said}"
    )


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


@dataclass(frozen=True)
class _Failure:
    """A pool's failed scale-up since the pod was made: the event, and whether Azure's refusal
    passes (proof_signals.refusal: the autoscaler tries the pool again after its back-off)."""

    seen: Seen
    passes: bool
    words: str

    @property
    def said(self) -> str:
        return f"{self.seen.reason}: {self.words}"


def _unscheduled(look: _Look, pod: Mapping[str, Any], events: Sequence[Seen]) -> Verdict:
    """Pending without a node: the autoscaler's word on the pools, or the scheduler's."""
    facts, name, pool = look.facts, _name(pod), _pool_list(look.facts.pools)
    since = _created(pod) or look.now
    failed = _scale_ups_failed(look, since, events)
    lasting = {p: f for p, f in failed.items() if not f.passes}
    if lasting and all(p in lasting for p in facts.pools):
        return _every_pool_failed(facts, lasting)
    # Some of several pools failed, or one for now: the autoscaler backs each off and tries
    # another, or the same again once its back-off ends (docs/design/proof-watch.md).
    fell_back = _falling_back(facts, failed)
    scheduling = signals.last_seen(events, ["FailedScheduling"])
    if not facts.autoscaled:
        return _no_autoscaler(look, pod, scheduling, f"{pool} has no autoscaler to add one")
    triggered = signals.last_seen(events, [signals.TRIGGERED])
    refusals = [s for s in events if s.reason == signals.NOT_TRIGGERED and (triggered is None or s.last > triggered.last)]
    if refusals:
        return _not_triggered(look, pod, refusals, triggered, scheduling, failed, fell_back)
    latest_failure = max((f.seen.last for f in failed.values()), default=None)
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
    scheduler_says = one_line(scheduling.message) if scheduling else "not scheduled yet"
    return Verdict("waiting", f"the proof's pod {name} waits for a node of {pool}: {scheduler_says}")


def _not_triggered(
    look: _Look,
    pod: Mapping[str, Any],
    refusals: Sequence[Seen],
    triggered: Seen | None,
    scheduling: Seen | None,
    failed: Mapping[str, _Failure],
    fell_back: str,
) -> Verdict:
    """The autoscaler's NotTriggerScaleUp since its last TriggeredScaleUp. A pool at its maximum
    is the same case as a pool without autoscaler: the scheduler's word on its nodes decides
    (a GPU another pod holds is a wait). A pool backed off after a refusal that passes is a
    wait: the autoscaler tries it again when the back-off ends. Any other refusal that lasts
    NOT_TRIGGERED_SECONDS with no TriggeredScaleUp since is terminal."""
    name, pool = _name(pod), _pool_list(look.facts.pools)
    reasons = {reason for _, reason in signals.not_triggered_reasons(refusals[-1].message)}
    said = one_line(refusals[-1].message)
    also = f"; {fell_back}" if fell_back else ""
    if signals.AT_MAX in reasons:
        return _no_autoscaler(look, pod, scheduling, f"the cluster autoscaler adds no node to {pool} ({said})", at_max=True, also=also)
    passing = [p for p, f in failed.items() if f.passes]
    if signals.IN_BACKOFF in reasons and passing:
        return Verdict(
            "waiting",
            f"the cluster autoscaler tries {_pool_list(passing)} again when its back-off ends (5 minutes after a first failure, "
            f"doubling to 30), for a refusal of Azure's that passes{also}",
        )
    # Since the first refusal after the last TriggeredScaleUp: an event the recorder
    # aggregated (same message, count and lastTimestamp updated) may have begun before it.
    refused_since = min(s.first for s in refusals)
    if triggered is not None:
        refused_since = max(refused_since, triggered.last)
    age = _seconds(look.now, refused_since)
    if age >= signals.NOT_TRIGGERED_SECONDS:
        return Verdict(
            "stop",
            f"the cluster autoscaler will not add a node to {pool} for the proof's pod {name}: {said} "
            f"(for {_duration(age)}, no TriggeredScaleUp since){also}",
        )
    return Verdict("waiting", f"the cluster autoscaler declines to add a node to {pool} for {_duration(age)}: {said}{also}")


def _no_autoscaler(look: _Look, pod: Mapping[str, Any], scheduling: Seen | None, why: str, at_max: bool = False, also: str = "") -> Verdict:
    """A pod no node can be added for (a pool without autoscaler, or at its maximum): terminal
    once the scheduler has excluded every node for good for UNSCHEDULABLE_SECONDS, else a wait,
    saying what holds the pool's GPUs where the watch could read it."""
    name, pool = _name(pod), _pool_list(look.facts.pools)
    scheduler_says = one_line(scheduling.message) if scheduling else "not scheduled yet"
    unschedulable_since = _condition_since(pod, "PodScheduled", "False") or _created(pod) or look.now
    age = _seconds(look.now, unschedulable_since)
    joining = _nodes_joining(look.snapshot.nodes)
    if scheduling is not None and signals.excluded_for_good(scheduling.message, joining) and age >= signals.UNSCHEDULABLE_SECONDS:
        return Verdict("stop", f"no node can take the proof's pod {name}, and {why}: {scheduler_says} (for {_duration(age)}){also}")
    if at_max:
        return Verdict(
            "waiting", f"{pool} is at its maximum node count{_holders(look)}; the proof's pod {name} waits: {scheduler_says}{also}"
        )
    return Verdict("waiting", f"the proof's pod {name} waits for a node of {pool} ({_duration(age)}){_holders(look)}: {scheduler_says}")


def _nodes_joining(nodes: Sequence[Mapping[str, Any]] | None) -> bool | None:
    """Whether a node of the Job's pools is on its way to Ready: not Ready, or carrying a taint a
    joining node carries (proof_signals.NOT_FOR_GOOD); None where the nodes were not read."""
    if nodes is None:
        return None
    for node in nodes:
        ready = [c for c in _list(_get(node, "status", "conditions")) if c.get("type") == "Ready"]
        if not ready or ready[-1].get("status") != "True":
            return True
        if any(signals.NOT_FOR_GOOD.search(str(t.get("key") or "")) for t in _list(_get(node, "spec", "taints"))):
            return True
    return False


def _holders(look: _Look) -> str:
    """ "; its GPUs are held by pod team/train-1 (node aks-gpu-...-vmss000000)", where read."""
    holders = look.snapshot.holders
    if holders is None:
        return ""
    if not holders:
        return "; no other pod holds a GPU on its nodes"
    named = [f"{cut(str(_get(h, 'metadata', 'namespace') or '?'))}/{_name(h)} (node {_node(h)})" for h in holders[:3]]
    more = f" and {len(holders) - 3} more" if len(holders) > 3 else ""
    return f"; its GPUs are held by pod{'s' if len(holders) > 1 else ''} {', '.join(named)}{more}"


def _scale_ups_failed(look: _Look, since: datetime, pod_events: Sequence[Seen]) -> dict[str, _Failure]:
    """Each pool of the Job whose scale-up failed since the pod was created, with its last
    failure: on the autoscaler's status ConfigMap, the node group its message leads with being
    the pool's scale set (FailedToScaleUpGroup, ScaleUpFailed, ScaleUpTimedOut; proof_signals
    GROUP_LEADS), or on the pod (FailedScaleUp), which is the pool's of the scale-up it followed
    (_pool_failed_on_pod)."""
    facts = look.facts
    found: dict[str, list[Seen]] = {}
    for s in look.of("ConfigMap", signals.AUTOSCALER_STATUS):
        if s.reason in signals.SCALE_UP_FAILED and s.last >= since:
            if pool := signals.pool_of_group(signals.group_of(s.reason, s.message), facts.pools):
                found.setdefault(pool, []).append(s)
    for s in pod_events:
        if s.reason in signals.SCALE_UP_FAILED and s.last >= since:
            if pool := _pool_failed_on_pod(facts, s, pod_events):
                found.setdefault(pool, []).append(s)
    return {pool: _failure(max(found[pool], key=lambda s: s.last)) for pool in facts.pools if pool in found}


def _failure(seen: Seen) -> _Failure:
    """A VM that failed to provision or never registered (ScaleUpFailed, ScaleUpTimedOut) does
    not pass; a refused PUT passes or not by Azure's answer (proof_signals.refusal)."""
    if seen.reason in ("ScaleUpFailed", "ScaleUpTimedOut"):
        return _Failure(seen, False, signals.azure_words(seen.message))
    refused = signals.refusal(seen.message)
    return _Failure(seen, refused.passes, refused.words)


def _pool_failed_on_pod(facts: WatchFacts, failure: Seen, pod_events: Sequence[Seen]) -> str:
    """The pool a failure on the pod is about: the Job's one pool; of several, the one of the
    last TriggeredScaleUp before it (the pod's own event, naming the groups it scaled); "" where
    none says."""
    if len(facts.pools) == 1:
        return facts.pool_name
    before = [s for s in pod_events if s.reason == signals.TRIGGERED and s.first <= failure.last]
    return next(iter(_pools_in(facts, before[-1].message)), "") if before else ""


def _every_pool_failed(facts: WatchFacts, failed: Mapping[str, _Failure]) -> Verdict:
    if len(facts.pools) == 1:
        return Verdict(
            "stop", f"the cluster autoscaler could not add a node to pool {facts.pool_name} for the proof: {failed[facts.pool_name].said}"
        )
    each = "; ".join(f"pool {p}: {failed[p].said}" for p in facts.pools)
    return Verdict("stop", f"the cluster autoscaler could not add a node to any pool the proof accepts ({', '.join(facts.pools)}): {each}")


def _falling_back(facts: WatchFacts, failed: Mapping[str, _Failure]) -> str:
    """What failed on some of several pools, or on one for now, in the autoscaler's and Azure's
    words, and the pools it tries next in the team's order: "pool t4 could not add a node
    (<Azure's words>); the autoscaler tries the next: t4b, a10"; "" where none failed."""
    if not failed:
        return ""
    could_not = "; ".join(
        f"pool {p} could not add a node{' for now' if failed[p].passes else ''} ({failed[p].said})" for p in facts.pools if p in failed
    )
    rest = [p for p in facts.pools if p not in failed]
    if not rest:
        return f"{could_not}; the autoscaler tries again when a back-off ends"
    return f"{could_not}; the autoscaler tries the next: {', '.join(rest)}"


def _pool_list(pools: Sequence[str]) -> str:
    """`pool gpu`; of several, `pool t4, t4b or a10`."""
    return f"pool {pools[0]}" if len(pools) == 1 else f"pool {', '.join(pools[:-1])} or {pools[-1]}"


def _pools_in(facts: WatchFacts, triggered: str) -> list[str]:
    """The Job's pools a TriggeredScaleUp scaled (its own list of node groups), in the team's order."""
    named = {signals.pool_of_group(group, facts.pools) for group in signals.triggered_groups(triggered)}
    return [p for p in facts.pools if p in named]


def _pool_named(facts: WatchFacts, triggered: str) -> str:
    """`pool <the one a TriggeredScaleUp names>`; where it names none of the Job's pools, all of them."""
    named = _pools_in(facts, triggered)
    return f"pool {named[0]}" if len(named) == 1 else _pool_list(facts.pools)


# --- a pod on a node ----------------------------------------------------------------------


def _on_node(look: _Look, pod: Mapping[str, Any], events: Sequence[Seen]) -> Verdict:
    """On a node: its image, CUDA's start, the training."""
    facts, name, node = look.facts, _name(pod), _node(pod)
    statuses = _list(_get(pod, "status", "containerStatuses"))
    waiting_on = [w for s in statuses if isinstance(w := _get(s, "state", "waiting"), Mapping)]
    reason = str(waiting_on[0].get("reason") or "") if waiting_on else ""
    if reason in signals.PULL_WAITING:
        return _pull_failing(look, pod, events, waiting_on[0])
    started = [r for s in statuses if isinstance(r := _get(s, "state", "running"), Mapping)]
    if started:
        return _running(look, pod, started[0])
    pulling = signals.last_seen(events, ["Pulling", "Pulled", "Failed", "BackOff"])
    if pulling is not None and pulling.reason == "Pulling":
        image = (signals.PULLING.match(pulling.message) or {"image": facts.image})["image"]
        return Verdict(
            "waiting",
            f'pulling image "{image}" on node {node} for {_duration(_seconds(look.now, pulling.last))}',
        )
    return Verdict("waiting", f"the proof's pod {name} is starting on node {node}" + (f" ({reason})" if reason else ""))


def _pull_failing(look: _Look, pod: Mapping[str, Any], events: Sequence[Seen], waiting: Mapping[str, Any]) -> Verdict:
    """The kubelet cannot pull the image: terminal at once for a cause no retry mends, else once
    it has failed PULL_FAILED_TRIES times over PULL_FAILING_SECONDS."""
    facts, name, node, reason = look.facts, _name(pod), _node(pod), str(waiting.get("reason"))
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
    permanent = signals.PERMANENT_PULL.search(said) or signals.PERMANENT_PULL.search(str(waiting.get("message") or ""))
    if permanent or (tries >= signals.PULL_FAILED_TRIES and age >= signals.PULL_FAILING_SECONDS):
        return Verdict("stop", f"{where}: {said} ({so_far})")
    return Verdict("waiting", f'pulling image "{image}" on node {node} failed, the kubelet tries again: {said} ({so_far})')


def _running(look: _Look, pod: Mapping[str, Any], running: Mapping[str, Any]) -> Verdict:
    """Running: the training's step from the log tail, or CUDA's start."""
    facts, node, tail = look.facts, _node(pod), look.snapshot.log_tail or ""
    steps = STEP.findall(tail)
    if steps:
        return Verdict("waiting", f"training on node {node}: step {steps[-1]}/{facts.max_steps}")
    started = signals.timestamp(running.get("startedAt"))
    for_how_long = f" for {_duration(_seconds(look.now, started))}" if started else ""
    lines = [line for line in tail.splitlines() if line.strip()]
    what = "CUDA starting" if lines and lines[-1].startswith(CUDA_WAIT) else "the proof runs"
    return Verdict("waiting", f"{what} on node {node}{for_how_long}: {one_line(lines[-1]) if lines else 'CUDA starting'}")


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
