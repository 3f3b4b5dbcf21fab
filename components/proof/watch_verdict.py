"""What the proof's watch makes of one look at the cluster: the Job, its pods, their events and
the running pod's last log lines, as the API server answered them, decide whether the proof
trained, failed, is still on its way (and what it waits for), or cannot start for a cause that
waiting will not mend. Pure: no call out of the process (components/proof/watch_live.py looks).
What each signal means at its source, which are terminal, and why: docs/design/proof-watch.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Literal

from components.errors import SAID, cut, one_line

# The annotation the proof Job carries with the hash of its spec: the watch knows by it that a
# Job of that name is the one this `up` declared, not the one an earlier `up` left.
SPEC_ANNOTATION = "aks-gpu.io/proof-spec"

# How long a cause that may yet mend is given before the watch calls it terminal. Each is well
# under the 5 minutes from when the cause is observable, and the watch looks every 10 s.
#
# A pull that keeps failing with an error no rule below calls permanent (a rate limit, a
# firewall, a registry that does not answer): the kubelet retries after 10 s, doubling to 300 s
# (pkg/kubelet/kubelet.go `imageBackOffPeriod`, `MaxImageBackOff`, kubernetes/kubernetes
# d8302640). Its tries come at about 0, 10, 30, 70 and 150 s: three minutes and four tries ride
# out a registry's minute of 5xx or one lost connection, and stop a pull that failed five times
# before the kubelet's next try, 160 s later, could mend it.
PULL_FAILING_SECONDS = 180
PULL_FAILED_TRIES = 4
# A NotTriggerScaleUp that persists with no TriggeredScaleUp since: the autoscaler looks every
# 10 s, so three minutes are 18 loops of the same refusal; one that mends shows TriggeredScaleUp,
# which resets this clock.
NOT_TRIGGERED_SECONDS = 180
# A pool that cannot add a node whose every node the scheduler excludes by a taint or by the
# pod's node selector; two minutes cover a node whose labels or taints an `az aks nodepool
# update` is changing.
UNSCHEDULABLE_SECONDS = 120
# A Job whose pods the API server refuses (FailedCreate "Error creating: %v" on the Job:
# pkg/controller/controller_utils.go createPods) for this long, with no pod made since, is refused
# for good: the Job controller tries again 1 s doubling to a minute (job_controller.go
# DefaultJobApiBackOff, MaxJobApiBackOff), so two minutes are several of its tries.
FAILED_CREATE_SECONDS = 120
FAILED_CREATE = "FailedCreate"

# The kubelet's image errors (pkg/kubelet/images/types.go, 64c0164c): the container's waiting
# reason while its image is not there; of those, the ones no retry mends (image_manager.go).
PULL_WAITING = frozenset({"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "ImageInspectError"})
PULL_NEVER_MENDS = frozenset({"InvalidImageName", "ErrImageNeverPull"})
# A pull error in the runtime's words that no retry mends: no such tag or digest, no build for
# the node's platform, the registry's 401/403. A 429 or a timeout may pass: PULL_FAILING_SECONDS.
PERMANENT_PULL = re.compile(
    r"manifest unknown|name unknown|: not found|no match for platform|unauthorized|\b401\b|\b403\b|forbidden|"
    r"pull access denied|access denied|denied:|insufficient_scope|repository does not exist",
    re.IGNORECASE,
)
# The kubelet's pull events (pkg/kubelet/events/event.go; messages from image_manager.go
# EnsureImageExists).
FAILED_PULL = re.compile(r'^Failed to pull image "(?P<image>[^"]*)": (?P<error>.*)$', re.DOTALL)
PULLING = re.compile(r'^Pulling image "(?P<image>[^"]*)"')
# The proof's training lines (proof/train_mnist.py train: `step {step}: loss {loss:.4f}`) and the
# line it prints while CUDA says it is not ready (wait_for_cuda).
STEP = re.compile(r"^step (\d+): loss", re.MULTILINE)
CUDA_WAIT = "CUDA is not ready yet"

# The cluster autoscaler's pod events, and a failed scale-up: upstream writes it on its status
# ConfigMap (kube-system/cluster-autoscaler-status), not on the pod (FailedToScaleUpGroup,
# ScaleUpFailed, ScaleUpTimedOut); other autoscalers (GKE's) put FailedScaleUp on the pod itself.
NOT_TRIGGERED, TRIGGERED = "NotTriggerScaleUp", "TriggeredScaleUp"
SCALE_UP_FAILED = frozenset({"FailedScaleUp", "FailedToScaleUpGroup", "ScaleUpFailed", "ScaleUpTimedOut"})
AUTOSCALER_STATUS = "cluster-autoscaler-status"
# The scheduler's reasons that exclude a node whatever it frees (a taint, the node selector),
# searched in one reason at a time after excluded_for_good has cut the message with str methods
# (a lazy group followed by `\s*$` over the whole message was quadratic in a run of whitespace).
EXCLUDED_FOR_GOOD = re.compile(r"untolerated taint|didn't match Pod's node affinity/selector|didn't match pod's node affinity")
# Since kubernetes v1.35.0 and v1.34.2 the taint filter names no taint (kubernetes/kubernetes#134740):
# a joining node's taint can be told from a lasting one only by the node.
UNNAMED_TAINT = "untolerated taint(s)"
# Taints a node carries only on its way to Ready (kubernetes pkg/apis/core/v1 well-known taints).
NOT_FOR_GOOD = re.compile(
    r"node\.kubernetes\.io/(not-ready|unreachable|network-unavailable)|node\.cloudprovider\.kubernetes\.io/uninitialized"
)
# A pool's node group, as the Azure provider names it: its scale set, `aks-<pool>-<digits>-vmss`
# (cloudprovider/azure azure_scale_set.go ScaleSet.Id()), and a node of it, the scale set's name and
# the VM's instance suffix. Matched whole, never searched in a message (a message may mention
# another group's scale set).
SCALE_SET = re.compile(r"aks-(?P<pool>[a-z0-9]+)-\d+-vmss", re.IGNORECASE)
NODE_OF_POOL = re.compile(SCALE_SET.pattern + "[0-9a-z]+", re.IGNORECASE)
# The node group a status event of the autoscaler leads with (cluster-autoscaler-1.35.2,
# 2d425888: executor.go:169, clusterstate.go:1178, clusterstate.go:304).
GROUP_LEADS = {
    "FailedToScaleUpGroup": ("Scale-up failed for group ", ": "),
    "ScaleUpFailed": (" nodes to group ", " due to "),
    "ScaleUpTimedOut": ("Nodes added to group ", " failed to register within "),
}
# A NotTriggerScaleUp's reasons for a node group skipped before the pod was fitted to it
# (core/scaleup/orchestrator/skippedreasons.go:42-49).
IN_BACKOFF = "in backoff after failed scale-up"
AT_MAX = "max node group size reached"
# Longest count a message's number may have: int() of a longer digit string is refused.
COUNT_DIGITS = 9

# Azure's error as the autoscaler quotes it: azcore's ResponseError ("RESPONSE <status>: ...",
# "ERROR CODE: <code>", the JSON body), or track 1's retry.Error ("HTTPStatusCode: %d, RawError:
# %w"). Every pattern is a literal lead and a bounded or single-class run: linear in the message.
ERROR_CODE = re.compile(r'ERROR CODE: (?P<code>\w+)|"code"\s*:\s*"(?P<json_code>\w+)"')
ERROR_MESSAGE = re.compile(r'"message"\s*:\s*"(?P<message>(?:[^"\\]|\\.)*)"')
HTTP_STATUS = re.compile(r"RESPONSE (?P<status>\d{3}):|HTTPStatusCode: (?P<v1>\d{3})\b")
# Which refusals of a scale set's PUT pass (the autoscaler tries the pool again when its back-off
# ends) and which will not; the sources: docs/design/proof-watch.md, the FailedToScaleUpGroup rows.
PASSING_STATUS = frozenset({408, 412, 429})
PASSING_CODES = frozenset({"AnotherOperationInProgress"})
LASTING_CODES = frozenset(
    {
        "QuotaExceeded",
        "SkuNotAvailable",
        "SKUNotAvailable",
        "AllocationFailed",
        "ZonalAllocationFailed",
        "OverconstrainedAllocationRequest",
        "OverconstrainedZonalAllocationRequest",
    }
)
NO_ANSWER = (
    "context deadline exceeded",
    "Client.Timeout exceeded",
    "i/o timeout",
    "TLS handshake timeout",
    "connection reset by peer",
    "azure cloud provider throttled",
    "azure cloud provider rate limited",
)


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
    #: The last lines of the log of the pod that runs now, where one runs.
    log_tail: str | None = None
    #: The nodes of the Job's pools, read while its pod waits for a node; None: not read.
    nodes: Sequence[Mapping[str, Any]] | None = None
    #: The pods on those nodes that hold a GPU, the proof's own left out; None: not read.
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


# --- the events, read once ----------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One event: its reason, message, how often and when it was seen, and the kind and name of
    the object it is about (involvedObject, or regarding in events.k8s.io)."""

    reason: str
    message: str
    count: int
    first: datetime
    last: datetime
    kind: str
    name: str


def timestamp(value: object) -> datetime | None:
    """A Kubernetes time (RFC 3339) as an aware datetime; None if absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def seen(event: Mapping[str, Any]) -> Seen | None:
    """An event of core/v1 (count, firstTimestamp, lastTimestamp) or of events.k8s.io/v1 as the
    core API serves it (eventTime, series): the client-go recorder fills one or the other
    (client-go tools/record and tools/events). None without a time."""
    found = event.get("series")
    series: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    first = timestamp(event.get("firstTimestamp")) or timestamp(event.get("eventTime"))
    last = timestamp(event.get("lastTimestamp")) or timestamp(series.get("lastObservedTime")) or first
    if first is None or last is None:
        return None
    count = event.get("count") or series.get("count") or 1
    about = event.get("involvedObject") or event.get("regarding") or {}
    about = about if isinstance(about, Mapping) else {}
    return Seen(
        reason=str(event.get("reason") or ""),
        message=str(event.get("message") or event.get("note") or ""),
        count=count if isinstance(count, int) and count > 0 else 1,
        first=first,
        last=last,
        kind=str(about.get("kind") or ""),
        name=str(about.get("name") or ""),
    )


def by_object(events: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Seen]]:
    """Every event read once, grouped by the object it is about, each group oldest last-seen first."""
    grouped: dict[tuple[str, str], list[Seen]] = {}
    for event in events:
        if (found := seen(event) if isinstance(event, Mapping) else None) is not None:
            grouped.setdefault((found.kind, found.name), []).append(found)
    for seen_about in grouped.values():
        seen_about.sort(key=lambda s: (s.last, s.first))
    return grouped


def last_seen(events: Sequence[Seen], reasons: Iterable[str]) -> Seen | None:
    wanted = frozenset(reasons)
    return next((s for s in reversed(events) if s.reason in wanted), None)


@dataclass(frozen=True)
class _Look:
    """One look, its events read once and its time aware."""

    facts: WatchFacts
    snapshot: Snapshot
    now: datetime
    events: Mapping[tuple[str, str], Sequence[Seen]]

    def of(self, kind: str, name: str) -> Sequence[Seen]:
        return self.events.get((kind, name), ())


def decide(facts: WatchFacts, look: Snapshot) -> Verdict:
    """What one look says; a verdict that ends the watch says where the proof's pod ran."""
    # A time without a zone is the API server's UTC (its Date header with -0000 parses naive).
    now = look.now if look.now.tzinfo is not None else look.now.replace(tzinfo=timezone.utc)
    verdict = _decide(_Look(facts, look, now, by_object(look.events)))
    if verdict.kind == "waiting":
        return verdict
    pool = ran_on(facts, look.pods)
    return replace(verdict, pool=pool, vm_size=facts.vm_sizes.get(pool, "") if pool else "")


def ran_on(facts: WatchFacts, pods: Sequence[Mapping[str, Any]]) -> str:
    """The pool of the node the newest pod with a node ran on: the Job's one pool, or of several
    the one its node's name names; "" where no pod had a node."""
    nodes = [_node(pod) for pod in pods if _node(pod)]
    if not nodes:
        return ""
    return facts.pool_name if len(facts.pools) == 1 else _pool_of(NODE_OF_POOL, nodes[-1], facts.pools)


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
        failed = sum(1 for p in pods if _get(p, "status", "phase") == "Failed")
        words = _last_words(pods) or "no message"
        return refused or Verdict("waiting", f"try {failed} of the proof failed: {words}; the Job's next try comes")
    if phase == "Succeeded":
        return Verdict("waiting", f"the proof's pod {_name(pod)} completed; waiting for the Job to say Complete")
    if not _node(pod):
        return _unscheduled(look, pod, events)
    return _on_node(look, pod, events)


# --- the Job: done, a try that failed, or pods the API server refuses ----------------------


def condition(obj: Mapping[str, Any], kind: str) -> bool:
    """Whether the object's condition `kind` is True."""
    return any(c.get("type") == kind and c.get("status") == "True" for c in _list(_get(obj, "status", "conditions")))


def _job_ended(facts: WatchFacts, job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> Verdict | None:
    """trained or failed once the Job says so (its Complete or Failed condition True, as
    pulumi-kubernetes' Job await reads them: provider/pkg/await/checker/job/check.go)."""
    for cond in _list(_get(job, "status", "conditions")):
        if cond.get("status") != "True":
            continue
        last = _last_words(pods)
        if cond.get("type") == "Complete":
            return Verdict("trained", last or f"the Job {facts.job_name} completed (its image prints no PROOF line: read its log)")
        if cond.get("type") == "Failed":
            said = one_line(f"[{cond.get('reason') or 'Failed'}] {cond.get('message') or ''}")
            return Verdict("failed", f"the Job {facts.job_name} failed: {said}" + (f"; its last pod said: {last}" if last else ""))
    return None


def _pods_refused(look: _Look, job: Mapping[str, Any]) -> Verdict | None:
    """The Job controller's FailedCreate since its newest pod was made, while no pod of it waits
    or runs: terminal once it has lasted FAILED_CREATE_SECONDS, a wait until then."""
    pods = look.snapshot.pods
    if pods and _get(pods[-1], "status", "phase") not in ("Failed", "Succeeded"):
        return None  # a pod was made and is on its way: the refusal, if any, passed
    since = (_created(pods[-1]) if pods else None) or _created(job)
    refusals = [s for s in look.of("Job", _name(job)) if s.reason == FAILED_CREATE and (since is None or s.last >= since)]
    if not refusals:
        return None
    first = max(min(s.first for s in refusals), since) if since is not None else min(s.first for s in refusals)
    age, tries = _seconds(look.now, first), sum(s.count for s in refusals)
    said = f"{one_line(refusals[-1].message)} (for {_duration(age)}, {_tries(tries)})"
    if age >= FAILED_CREATE_SECONDS:
        return Verdict("stop", f"the API server refuses the proof Job {look.facts.job_name}'s pod: {said}")
    return Verdict(
        "waiting", f"the API server refuses the proof Job {look.facts.job_name}'s pod, and the Job controller tries again: {said}"
    )


def _last_words(pods: Sequence[Mapping[str, Any]]) -> str:
    """The newest pod's container's termination message (the script's PROOF line), or its reason
    and exit code; "" when none has ended."""
    for pod in reversed(pods):
        for status in _list(_get(pod, "status", "containerStatuses")):
            ended = _get(status, "state", "terminated") or _get(status, "lastState", "terminated")
            if isinstance(ended, Mapping):
                lines = [line for line in str(ended.get("message") or "").strip().splitlines() if line.strip()]
                proof = [line for line in lines if line.startswith(("PROOF OK", "PROOF FAILED"))]
                if proof or lines:
                    return one_line((proof or lines)[-1])
                if ended.get("exitCode") not in (0, None):
                    return f"{ended.get('reason') or 'terminated'} (exit code {ended.get('exitCode')})"
    return ""


# --- a pod no node has taken yet ----------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    """A pool's failed scale-up since the pod was made, whether Azure's refusal passes, and
    `<reason>: <Azure's words>`."""

    seen: Seen
    passes: bool
    said: str


def _unscheduled(look: _Look, pod: Mapping[str, Any], events: Sequence[Seen]) -> Verdict:
    """Pending without a node: the autoscaler's word on the pools, or the scheduler's."""
    facts, name, pool = look.facts, _name(pod), _pool_list(look.facts.pools)
    failed = _scale_ups_failed(look, _created(pod) or look.now, events)
    lasting = {p: f for p, f in failed.items() if not f.passes}
    if lasting and all(p in lasting for p in facts.pools):
        if len(facts.pools) == 1:
            said = lasting[facts.pool_name].said
            return Verdict("stop", f"the cluster autoscaler could not add a node to pool {facts.pool_name} for the proof: {said}")
        each = "; ".join(f"pool {p}: {lasting[p].said}" for p in facts.pools)
        accepts = ", ".join(facts.pools)
        return Verdict("stop", f"the cluster autoscaler could not add a node to any pool the proof accepts ({accepts}): {each}")
    # Some of several pools failed, or one for now: the autoscaler backs each off and tries
    # another, or the same again once its back-off ends (docs/design/proof-watch.md).
    fell_back = _falling_back(facts, failed)
    scheduling = last_seen(events, ["FailedScheduling"])
    if not facts.autoscaled:
        return _no_autoscaler(look, pod, scheduling, f"{pool} has no autoscaler to add one")
    triggered = last_seen(events, [TRIGGERED])
    refusals = [s for s in events if s.reason == NOT_TRIGGERED and (triggered is None or s.last > triggered.last)]
    if refusals:
        return _not_triggered(look, pod, refusals, triggered, scheduling, failed, fell_back)
    latest_failure = max((f.seen.last for f in failed.values()), default=None)
    if triggered is not None and (latest_failure is None or triggered.last > latest_failure):
        head, found, rest = triggered.message.partition("[")
        adding = rest.rpartition("]")[0] if found and "]" in rest else ""
        also = f", after {fell_back}" if fell_back else ""
        return Verdict(
            "waiting",
            f"a node being added in {_pool_named(facts, triggered.message)} by the cluster autoscaler "
            f"({one_line(adding or triggered.message)}) for {_duration(_seconds(look.now, triggered.first))}{also}",
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
    is the same case as a pool without autoscaler; a pool backed off after a refusal that passes
    is a wait; any other refusal that lasts NOT_TRIGGERED_SECONDS is terminal."""
    name, pool = _name(pod), _pool_list(look.facts.pools)
    head, found, rest = refusals[-1].message.partition(": ")
    # "pod didn't trigger scale-up: <count> <reason>, ..." (eventing_scale_up_processor.go:42;
    # older releases: "pod didn't trigger scale-up (it wouldn't fit if a new node is added): ...").
    reasons = {reason for _, reason in _counted(rest)} if found and head.startswith("pod didn't trigger scale-up") else set()
    said = one_line(refusals[-1].message)
    also = f"; {fell_back}" if fell_back else ""
    if AT_MAX in reasons:
        return _no_autoscaler(look, pod, scheduling, f"the cluster autoscaler adds no node to {pool} ({said})", at_max=True, also=also)
    passing = [p for p, f in failed.items() if f.passes]
    if IN_BACKOFF in reasons and passing:
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
    if age >= NOT_TRIGGERED_SECONDS:
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
    unschedulable = [c for c in _list(_get(pod, "status", "conditions")) if c.get("type") == "PodScheduled" and c.get("status") == "False"]
    since = timestamp(unschedulable[0].get("lastTransitionTime")) if unschedulable else None
    age = _seconds(look.now, since or _created(pod) or look.now)
    joining = _nodes_joining(look.snapshot.nodes)
    if scheduling is not None and excluded_for_good(scheduling.message, joining) and age >= UNSCHEDULABLE_SECONDS:
        return Verdict("stop", f"no node can take the proof's pod {name}, and {why}: {scheduler_says} (for {_duration(age)}){also}")
    if at_max:
        return Verdict(
            "waiting", f"{pool} is at its maximum node count{_holders(look)}; the proof's pod {name} waits: {scheduler_says}{also}"
        )
    return Verdict("waiting", f"the proof's pod {name} waits for a node of {pool} ({_duration(age)}){_holders(look)}: {scheduler_says}")


def excluded_for_good(message: str, nodes_joining: bool | None = None) -> bool:
    """Whether the scheduler's FailedScheduling says every node is excluded by a taint that stays
    or by the pod's node selector or affinity. The message (pkg/scheduler/framework/types.go
    FitError.Error()): "0/<n> nodes are available:", "<count> <reason>" joined with ", ", ".",
    then the preemption's " preemption: ..."; cut with str methods only. A taint the scheduler
    does not name counts as one that stays only where the nodes were read and none is joining."""
    head, found, rest = message.strip().partition(" nodes are available:")
    count = head.removeprefix("0/")
    if not found or count == head or not _is_count(count):
        return False
    reasons, _, _ = rest.partition(" preemption:")
    excluded = 0
    for n, reason in _counted(reasons.strip().removesuffix(".")):
        if EXCLUDED_FOR_GOOD.search(reason) and not NOT_FOR_GOOD.search(reason):
            if UNNAMED_TAINT not in reason or nodes_joining is False:
                excluded += n
    # The scheduler stops at a node's first failing filter (framework.go RunFilterPlugins), and
    # the taint and affinity filters give one reason each: each node counts at most once here.
    return int(count) == 0 or excluded >= int(count)


def _counted(text: str) -> tuple[tuple[int, str], ...]:
    """ "<count> <reason>, <count> <reason>" as pairs; a piece that starts with no count belongs
    to the reason before it (a reason may hold ", " itself); text before the first count is no
    reason of a node. Linear: one split, each piece looked at once."""
    pairs: list[tuple[int, list[str]]] = []
    for piece in text.split(", "):
        number, space, reason = piece.partition(" ")
        if space and _is_count(number):
            pairs.append((int(number), [reason]))
        elif pairs:
            pairs[-1][1].append(piece)
    return tuple((count, ", ".join(parts)) for count, parts in pairs)


def _is_count(text: str) -> bool:
    return 0 < len(text) <= COUNT_DIGITS and text.isascii() and text.isdigit()


def _nodes_joining(nodes: Sequence[Mapping[str, Any]] | None) -> bool | None:
    """Whether a node of the Job's pools is on its way to Ready: not Ready, or carrying a taint a
    joining node carries; None where the nodes were not read."""
    if nodes is None:
        return None
    for node in nodes:
        ready = [c for c in _list(_get(node, "status", "conditions")) if c.get("type") == "Ready"]
        if not ready or ready[-1].get("status") != "True":
            return True
        if any(NOT_FOR_GOOD.search(str(t.get("key") or "")) for t in _list(_get(node, "spec", "taints"))):
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
    the pool's scale set, or on the pod (FailedScaleUp), the pool of the scale-up it followed."""
    facts = look.facts
    found: dict[str, list[Seen]] = {}
    for s in look.of("ConfigMap", AUTOSCALER_STATUS):
        if s.reason in SCALE_UP_FAILED and s.last >= since:
            if pool := _pool_of(SCALE_SET, _group_of(s.reason, s.message), facts.pools):
                found.setdefault(pool, []).append(s)
    for s in pod_events:
        if s.reason in SCALE_UP_FAILED and s.last >= since:
            if pool := _pool_failed_on_pod(facts, s, pod_events):
                found.setdefault(pool, []).append(s)
    return {pool: _failure(max(found[pool], key=lambda s: s.last)) for pool in facts.pools if pool in found}


def _failure(seen: Seen) -> _Failure:
    # A VM that failed to provision or never registered does not pass; a refused PUT by Azure's answer.
    passes = seen.reason not in ("ScaleUpFailed", "ScaleUpTimedOut") and _passes(seen.message)
    return _Failure(seen, passes, f"{seen.reason}: {azure_words(seen.message)}")


def _group_of(reason: str, message: str) -> str:
    """The node group a status event names in its lead (GROUP_LEADS); "" where it names none."""
    lead = GROUP_LEADS.get(reason)
    if lead is None:
        return ""
    start, end = lead
    if reason == "ScaleUpFailed":
        adding, found, rest = message.partition(start)
        if not found or not adding.startswith("Failed adding ") or not _is_count(adding.removeprefix("Failed adding ")):
            return ""
    elif message.startswith(start):
        rest = message[len(start) :]
    else:
        return ""
    group, found, _ = rest.partition(end)
    return group if found else ""


def _pool_failed_on_pod(facts: WatchFacts, failure: Seen, pod_events: Sequence[Seen]) -> str:
    """The pool a failure on the pod is about: the Job's one pool; of several, the one of the
    last TriggeredScaleUp before it; "" where none says."""
    if len(facts.pools) == 1:
        return facts.pool_name
    before = [s for s in pod_events if s.reason == TRIGGERED and s.first <= failure.last]
    return next(iter(_pools_in(facts, before[-1].message)), "") if before else ""


def _falling_back(facts: WatchFacts, failed: Mapping[str, _Failure]) -> str:
    """What failed on some of several pools, or on one for now, and the pools the autoscaler
    tries next in the team's order; "" where none failed."""
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
    """The Job's pools a TriggeredScaleUp scaled, in the team's order: "pod triggered scale-up:
    [{<group> <current>-><new> (max: <max>)} ...]" (eventing_scale_up_processor.go:52)."""
    _, found, rest = triggered.partition("pod triggered scale-up: [")
    groups = [piece.partition(" ")[0] for piece in rest.split("{")[1:]] if found else []
    named = {_pool_of(SCALE_SET, group, facts.pools) for group in groups}
    return [p for p in facts.pools if p in named]


def _pool_named(facts: WatchFacts, triggered: str) -> str:
    """`pool <the one a TriggeredScaleUp names>`; where it names none of the Job's pools, all of them."""
    named = _pools_in(facts, triggered)
    return f"pool {named[0]}" if len(named) == 1 else _pool_list(facts.pools)


def _pool_of(pattern: re.Pattern[str], name: str, pools: Sequence[str]) -> str:
    """The one of `pools` that `name`, matched whole by SCALE_SET or NODE_OF_POOL, names; "" for none."""
    found = pattern.fullmatch(name.strip())
    named = found["pool"].lower() if found else ""
    return next((pool for pool in pools if pool.lower() == named), "")


def _passes(message: str) -> bool:
    """Whether Azure's refusal of a scale-up in `message` passes (docs/design/proof-watch.md)."""
    codes = {found["code"] or found["json_code"] for found in ERROR_CODE.finditer(message)}
    status_found = HTTP_STATUS.search(message)
    status = int(status_found["status"] or status_found["v1"]) if status_found else None
    said = ERROR_MESSAGE.search(message)
    in_progress = "in progress" in (said["message"] if said else message).lower()
    if codes & LASTING_CODES:
        return False
    # Compute's throttling is a 429 whose body's code is OperationNotAllowed (learn.microsoft.com
    # troubleshooting-throttling-errors): the status decides before that code.
    if status is not None and (status in PASSING_STATUS or 500 <= status < 600):
        return True
    if codes & PASSING_CODES or (status == 409 and in_progress) or ("OperationNotAllowed" in codes and in_progress):
        return True
    return status is None and not codes and any(phrase in message for phrase in NO_ANSWER)


def azure_words(message: str) -> str:
    """What an autoscaler event says of Azure's refusal, on one line: `<code>: <Azure's message>`
    where it quotes an Azure error body, else the event's own words."""
    code, said = ERROR_CODE.search(message), ERROR_MESSAGE.search(message)
    if said is None:
        return one_line(message)
    name = (code["code"] or code["json_code"]) if code else ""
    return one_line(f"{name}: {said['message']}" if name else said["message"])


# --- a pod on a node ----------------------------------------------------------------------


def _on_node(look: _Look, pod: Mapping[str, Any], events: Sequence[Seen]) -> Verdict:
    """On a node: its image, CUDA's start, the training."""
    facts, name, node = look.facts, _name(pod), _node(pod)
    statuses = _list(_get(pod, "status", "containerStatuses"))
    waiting_on = [w for s in statuses if isinstance(w := _get(s, "state", "waiting"), Mapping)]
    reason = str(waiting_on[0].get("reason") or "") if waiting_on else ""
    if reason in PULL_WAITING:
        return _pull_failing(look, pod, events, waiting_on[0])
    started = [r for s in statuses if isinstance(r := _get(s, "state", "running"), Mapping)]
    if started:
        return _running(look, pod, started[0])
    pulling = last_seen(events, ["Pulling", "Pulled", "Failed", "BackOff"])
    if pulling is not None and pulling.reason == "Pulling":
        image = (PULLING.match(pulling.message) or {"image": facts.image})["image"]
        return Verdict("waiting", f'pulling image "{image}" on node {node} for {_duration(_seconds(look.now, pulling.last))}')
    return Verdict("waiting", f"the proof's pod {name} is starting on node {node}" + (f" ({reason})" if reason else ""))


def _pull_failing(look: _Look, pod: Mapping[str, Any], events: Sequence[Seen], waiting: Mapping[str, Any]) -> Verdict:
    """The kubelet cannot pull the image: terminal at once for a cause no retry mends, else once
    it has failed PULL_FAILED_TRIES times over PULL_FAILING_SECONDS."""
    facts, name, node, reason = look.facts, _name(pod), _node(pod), str(waiting.get("reason"))
    failures = [s for s in events if s.reason == "Failed" and FAILED_PULL.match(s.message)]
    parsed = FAILED_PULL.match(failures[-1].message) if failures else None
    image = parsed["image"] if parsed else facts.image
    said = _tail(str(parsed["error"] if parsed else waiting.get("message") or reason))
    where = f'the proof\'s pod {name} cannot pull image "{image}" (registry {registry(image)}) on node {node}'
    if reason in PULL_NEVER_MENDS:
        return Verdict("stop", f"{where}: {reason}: {one_line(waiting.get('message') or said)}")
    tries = sum(s.count for s in failures)
    age = _seconds(look.now, min(s.first for s in failures)) if failures else 0.0
    so_far = f"failing for {_duration(age)}, {_tries(tries)}"
    permanent = PERMANENT_PULL.search(said) or PERMANENT_PULL.search(str(waiting.get("message") or ""))
    if permanent or (tries >= PULL_FAILED_TRIES and age >= PULL_FAILING_SECONDS):
        return Verdict("stop", f"{where}: {said} ({so_far})")
    return Verdict("waiting", f'pulling image "{image}" on node {node} failed, the kubelet tries again: {said} ({so_far})')


def registry(image: str) -> str:
    """The registry an image reference names: its first path component when that looks like a
    host (a dot, a port or `localhost`), else Docker Hub (distribution/reference splitDockerDomain)."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def _running(look: _Look, pod: Mapping[str, Any], running: Mapping[str, Any]) -> Verdict:
    """Running: the training's step from the log tail, or CUDA's start."""
    facts, node, tail = look.facts, _node(pod), look.snapshot.log_tail or ""
    steps = STEP.findall(tail)
    if steps:
        return Verdict("waiting", f"training on node {node}: step {steps[-1]}/{facts.max_steps}")
    started = timestamp(running.get("startedAt"))
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
    return timestamp(_get(obj, "metadata", "creationTimestamp"))


def _tail(text: str) -> str:
    """An error on one line, its last SAID characters where it is longer: the runtime wraps its
    cause in context, outermost first, so the end says why."""
    said = one_line(text, None)
    return said if len(said) <= SAID else "..." + said[-SAID:]


def _tries(tries: int) -> str:
    return f"{tries} {'try' if tries == 1 else 'tries'}"


def _seconds(now: datetime, then: datetime) -> float:
    return max(0.0, (now - then).total_seconds())


def _duration(seconds: float) -> str:
    """4m10s, 40s: how long, as `kubectl` writes an age."""
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"
