"""What each signal the proof's watch reads means at its source, and which are terminal: the
kubelet's image pulls, the scheduler's FailedScheduling, the cluster autoscaler's pod and status
events, as Kubernetes JSON (dicts). Pure; components/proof/watch_verdict.py decides with them.
The table of what is terminal and why: docs/design/proof-watch.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from components.errors import one_line

# How long a cause that may yet mend is given before the watch calls it terminal. Each is well
# under the 5 minutes from when the cause is observable, and the watch looks every 10 s.
#
# A pull that keeps failing with an error no rule below calls permanent (a rate limit, a
# firewall, a registry that does not answer): the kubelet retries after 10 s, doubling to 300 s
# (pkg/kubelet/kubelet.go `imageBackOffPeriod = time.Second * 10`, `MaxImageBackOff = 300 *
# time.Second`, kubernetes/kubernetes d8302640; the back-off is flowcontrol.Backoff, keyed
# `<pod uid>_<image>` in pkg/kubelet/images/image_manager.go EnsureImageExists, cfce511e). Its
# tries come at about 0, 10, 30, 70 and 150 s: five tries in two and a half minutes. Three
# minutes and four tries ride out a registry's minute of 5xx or one lost connection, and stop a
# pull that failed five times before the kubelet's next try, 160 s later, could mend it.
PULL_FAILING_SECONDS = 180
PULL_FAILED_TRIES = 4
# A NotTriggerScaleUp that persists with no TriggeredScaleUp since: the autoscaler looks every
# 10 s, so three minutes are 18 loops of the same refusal; one that mends shows TriggeredScaleUp,
# which resets this clock (docs/design/proof-watch.md, the NotTriggerScaleUp row, and its sources).
NOT_TRIGGERED_SECONDS = 180
# A pool that cannot add a node (no autoscaler) whose every node the scheduler excludes by a
# taint or by the pod's node selector: a node that just joined carries the kubelet's
# `node.kubernetes.io/not-ready` taint until it is Ready, which NOT_FOR_GOOD leaves out; two
# minutes more cover a node whose labels or taints an `az aks nodepool update` is changing.
UNSCHEDULABLE_SECONDS = 120

# The kubelet's image errors (pkg/kubelet/images/types.go, 64c0164c): the container's waiting
# reason while its image is not there.
PULL_WAITING = frozenset({"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "ImageInspectError"})
# Of those, the ones no retry mends: a name the kubelet cannot parse (applyDefaultImageTag), and
# an image that is not on the node under imagePullPolicy Never (image_manager.go).
PULL_NEVER_MENDS = frozenset({"InvalidImageName", "ErrImageNeverPull"})
# A pull error in the runtime's words that no retry mends: no such tag or digest, no build for
# the node's platform, the registry's 401/403. A 429 or a timeout may pass: PULL_FAILING_SECONDS
# decides (docs/design/proof-watch.md, the `Failed` pull rows, has the words and their sources).
PERMANENT_PULL = re.compile(
    r"manifest unknown|name unknown|: not found|no match for platform|unauthorized|\b401\b|\b403\b|forbidden|"
    r"pull access denied|access denied|denied:|insufficient_scope|repository does not exist",
    re.IGNORECASE,
)
# The kubelet's pull events (pkg/kubelet/events/event.go: PullingImage "Pulling", PulledImage
# "Pulled", FailedToPullImage "Failed", BackOffPullImage "BackOff"; their messages from
# image_manager.go EnsureImageExists: `Pulling image %q`, `Successfully pulled image %q in ...`
# or `Container image %q already present on machine`, `Failed to pull image %q: %v`, `Back-off
# pulling image %q`).
FAILED_PULL = re.compile(r'^Failed to pull image "(?P<image>[^"]*)": (?P<error>.*)$', re.DOTALL)
PULLING = re.compile(r'^Pulling image "(?P<image>[^"]*)"')

# The cluster autoscaler's pod events; on Azure a node group is the pool's scale set,
# `aks-<pool>-<digits>-vmss` (docs/design/proof-watch.md, "The events' words", with their sources).
NOT_TRIGGERED, TRIGGERED = "NotTriggerScaleUp", "TriggeredScaleUp"
# A failed scale-up. Upstream writes it on the autoscaler's status ConfigMap (kube-system/
# cluster-autoscaler-status, its LogRecorder), not on the pod: FailedToScaleUpGroup "Scale-up
# failed for group %s: %v" with the cloud's error when the scale set's PUT is refused (core/
# scaleup/orchestrator/executor.go, e30bf147: Azure's QuotaExceeded and SkuNotAvailable come back
# so), ScaleUpFailed "Failed adding %v nodes to group %v due to %v; source errors: %v" for VMs
# that failed to provision (AllocationFailed, ZonalAllocationFailed,
# OverconstrainedAllocationRequest: clusterstate/clusterstate.go handleInstanceCreationErrors,
# d67f22be), and ScaleUpTimedOut "Nodes added to group %s failed to register within %v" past
# `max-node-provision-time` (15 minutes on AKS). Each backs the group off (5 minutes, doubling to
# 30), and the pod then gets NotTriggerScaleUp "... in backoff after failed scale-up". Other
# autoscalers (GKE's) put FailedScaleUp on the pod itself; the watch takes either.
SCALE_UP_FAILED = frozenset({"FailedScaleUp", "FailedToScaleUpGroup", "ScaleUpFailed", "ScaleUpTimedOut"})
AUTOSCALER_STATUS = "cluster-autoscaler-status"
# The scheduler's FailedScheduling, and the reasons that exclude a node whatever it frees (a
# taint, the node selector). "Insufficient nvidia.com/gpu" is not one: a device plugin may not
# have registered yet (docs/design/proof-watch.md, "The events' words"). Both are searched in one
# reason at a time, after fit_error has cut the message with str methods (no regex over the
# whole message: a lazy group followed by `\s*$` was quadratic in a run of whitespace).
EXCLUDED_FOR_GOOD = re.compile(r"untolerated taint|didn't match Pod's node affinity/selector|didn't match pod's node affinity")
# Since kubernetes v1.35.0 and v1.34.2 the taint filter names no taint ("node(s) had untolerated
# taint(s)", kubernetes/kubernetes#134740, "remove taint values from unschedulable messages",
# cherry-picked as #135023): a node's joining taint can no longer be told from a lasting one by
# the words, only by the node (excluded_for_good's `nodes_joining`).
UNNAMED_TAINT = "untolerated taint(s)"
# Taints a node carries only on its way to Ready (kubernetes pkg/apis/core/v1 well-known taints:
# node.kubernetes.io/not-ready, unreachable, network-unavailable; node.cloudprovider.kubernetes.io/
# uninitialized until the cloud controller initialises it).
NOT_FOR_GOOD = re.compile(
    r"node\.kubernetes\.io/(not-ready|unreachable|network-unavailable)|node\.cloudprovider\.kubernetes\.io/uninitialized"
)


@dataclass(frozen=True)
class Seen:
    """One event, as its reason, message, how often and when it was seen."""

    reason: str
    message: str
    count: int
    first: datetime
    last: datetime
    #: The kind and name of the object it is about (involvedObject, or regarding in events.k8s.io).
    kind: str
    name: str


def timestamp(value: object) -> datetime | None:
    """A Kubernetes time (RFC 3339, `Z` or an offset, whole or with microseconds) as an aware datetime; None if absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def seen(event: Mapping[str, Any]) -> Seen | None:
    """An event of core/v1 (count, firstTimestamp, lastTimestamp) or of events.k8s.io/v1 as the
    core API serves it (eventTime, series.count, series.lastObservedTime): the client-go recorder
    the kubelet, the scheduler and the autoscaler use fills one or the other
    (client-go tools/record and tools/events). None without a time."""
    found = event.get("series")
    series: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    first = timestamp(event.get("firstTimestamp")) or timestamp(event.get("eventTime"))
    last = timestamp(event.get("lastTimestamp")) or timestamp(series.get("lastObservedTime")) or first
    if first is None or last is None:
        return None
    count = event.get("count") or series.get("count") or 1
    about = event.get("involvedObject") or event.get("regarding") or {}
    return Seen(
        reason=str(event.get("reason") or ""),
        message=str(event.get("message") or event.get("note") or ""),
        count=count if isinstance(count, int) and count > 0 else 1,
        first=first,
        last=last,
        kind=str(about.get("kind") or "") if isinstance(about, Mapping) else "",
        name=str(about.get("name") or "") if isinstance(about, Mapping) else "",
    )


def by_object(events: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Seen]]:
    """Every event read once (`seen`), grouped by the kind and name of the object it is about,
    each group oldest last-seen first: a look reads each event once, however many it holds."""
    grouped: dict[tuple[str, str], list[Seen]] = {}
    for event in events:
        found = seen(event) if isinstance(event, Mapping) else None
        if found is not None:
            grouped.setdefault((found.kind, found.name), []).append(found)
    for seen_about in grouped.values():
        seen_about.sort(key=lambda s: (s.last, s.first))
    return grouped


def registry(image: str) -> str:
    """The registry an image reference names: its first path component when that looks like a host
    (a dot, a port or `localhost`), else Docker Hub, as the reference grammar reads it
    (distribution/reference normalize.go, splitDockerDomain)."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


# A pool's node group, as the Azure provider names it: its scale set, `aks-<pool>-<digits>-vmss`
# (cloudprovider/azure azure_scale_set.go ScaleSet.Id(); azure-aks-docs
# autoscale-gpu-workloads-with-keda.md: "aks-gpunp-36854149-vmss"). Matched whole, never searched
# in a message: a message may mention another group's scale set (its URL, a neighbour's error).
SCALE_SET = re.compile(r"aks-(?P<pool>[a-z0-9]+)-\d+-vmss", re.IGNORECASE)


def pool_of_group(group: str, pools: Sequence[str]) -> str:
    """Which of `pools` the node group `group` is (SCALE_SET, whole); "" for none of them."""
    return _pool_named(SCALE_SET.fullmatch(group.strip()), pools)


def _pool_named(found: re.Match[str] | None, pools: Sequence[str]) -> str:
    """The one of `pools` that a match of SCALE_SET or NODE_OF_POOL names; "" for none of them."""
    named = found["pool"].lower() if found else ""
    return next((pool for pool in pools if pool.lower() == named), "")


# The node group a status event of the autoscaler is about, from the message's own lead: the
# LogRecorder writes each on the status ConfigMap with the group first (kubernetes/autoscaler
# cluster-autoscaler-1.35.2, 2d425888): FailedToScaleUpGroup "Scale-up failed for group %s: %v"
# (core/scaleup/orchestrator/executor.go:169), ScaleUpFailed "Failed adding %v nodes to group %v
# due to %v; source errors: %v" (clusterstate/clusterstate.go:1178), ScaleUpTimedOut "Nodes
# added to group %s failed to register within %v" (clusterstate.go:304).
GROUP_LEADS = {
    "FailedToScaleUpGroup": ("Scale-up failed for group ", ": "),
    "ScaleUpFailed": (" nodes to group ", " due to "),
    "ScaleUpTimedOut": ("Nodes added to group ", " failed to register within "),
}


def group_of(reason: str, message: str) -> str:
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


def triggered_groups(message: str) -> tuple[str, ...]:
    """The node groups a TriggeredScaleUp names: "pod triggered scale-up: [{<group> <current>->
    <new> (max: <max>)} ...]" (processors/status/eventing_scale_up_processor.go:52; each
    ScaleUpInfo printed "{%v %v->%v (max: %v)}", processors/nodegroupset/nodegroup_set_processor.go:42)."""
    _, found, rest = message.partition("pod triggered scale-up: [")
    if not found:
        return ()
    return tuple(piece.partition(" ")[0] for piece in rest.split("{")[1:])


# NotTriggerScaleUp: "pod didn't trigger scale-up: " and the reasons of every node group the
# autoscaler considered, "<count> <reason>" joined with ", " (eventing_scale_up_processor.go:42
# ReasonsMessage), or "max total nodes in cluster reached". A node group skipped before the pod
# was fitted to it gives one of these (core/scaleup/orchestrator/skippedreasons.go:42-49;
# filterValidScaleUpNodeGroups, orchestrator.go:404-459, checks back-off, then the maximum,
# before any fit): such a group was never asked whether the pod fits it.
IN_BACKOFF = "in backoff after failed scale-up"
AT_MAX = "max node group size reached"
NOT_READY = "not ready for scale-up"


def not_triggered_reasons(message: str) -> tuple[tuple[int, str], ...]:
    """The counted reasons of a NotTriggerScaleUp message (older releases: "pod didn't trigger
    scale-up (it wouldn't fit if a new node is added): ...", e0237d47)."""
    head, found, rest = message.partition(": ")
    if not found or not head.startswith("pod didn't trigger scale-up"):
        return ()
    return counted(rest)


# A node of a VMSS pool: its scale set's name and the VM's instance suffix,
# `aks-<pool>-<digits>-vmss<instance>` (azure-aks-docs at fb060abe: "aks-nodepool1-12345678-vmss000000",
# articles/aks/configure-automatic-zone-placement.md; the scale set's own name: docs/design/proof-watch.md).
NODE_OF_POOL = re.compile(r"^aks-(?P<pool>[a-z0-9]+)-\d+-vmss[0-9a-z]+$", re.IGNORECASE)


def pool_of_node(node: str, pools: Sequence[str]) -> str:
    """Which of `pools` a node is of, by its name (NODE_OF_POOL); "" when the name says none of them."""
    return _pool_named(NODE_OF_POOL.match(node), pools)


# Longest count a message's number may have: int() of a longer digit string is refused
# (CPython's int max str digits), and no cluster has a billion nodes.
COUNT_DIGITS = 9


@dataclass(frozen=True)
class FitError:
    """The scheduler's FailedScheduling message (kubernetes pkg/scheduler/framework/types.go
    FitError.Error(): "0/%v nodes are available:", then either the PreFilter plugin's message or
    "<count> <reason>" for each reason, sorted as strings and joined with ", ", then "."; then
    the preemption's " preemption: ..."), parsed: how many nodes, and each reason's count."""

    nodes: int
    reasons: tuple[tuple[int, str], ...]


def fit_error(message: str) -> FitError | None:
    """The message as a FitError; None for any other wording. Linear: str methods only."""
    text = message.strip()
    head, found, rest = text.partition(" nodes are available:")
    count = head.removeprefix("0/")
    if not found or count == head or not _is_count(count):
        return None
    reasons, _, _ = rest.partition(" preemption:")  # PostFilter's message comes after the reasons
    return FitError(int(count), counted(reasons.strip().removesuffix(".")))


def counted(text: str) -> tuple[tuple[int, str], ...]:
    """ "<count> <reason>, <count> <reason>" (the scheduler's and the autoscaler's lists, both
    joined with ", ") as pairs; a piece that starts with no count belongs to the reason before
    it (a reason may hold ", " itself); text before the first count (a PreFilter message) is
    no reason of a node. Linear: one split, each piece looked at once."""
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


def excluded_for_good(message: str, nodes_joining: bool | None = None) -> bool:
    """Whether a FailedScheduling message says every node is excluded by a taint that stays or by
    the pod's node selector or affinity: no node the pool has, and none freed, can take the pod.
    `nodes_joining`: whether a node of the proof's pools is on its way to Ready (None: not read);
    a taint the scheduler does not name (UNNAMED_TAINT) counts as one that stays only where the
    nodes were read and none is joining."""
    fit = fit_error(message)
    if fit is None:
        return False
    excluded = 0
    for count, reason in fit.reasons:
        if not EXCLUDED_FOR_GOOD.search(reason) or NOT_FOR_GOOD.search(reason):
            continue
        if UNNAMED_TAINT in reason and nodes_joining is not False:
            continue
        excluded += count
    # The scheduler stops at a node's first failing filter (pkg/scheduler/framework/runtime/
    # framework.go RunFilterPlugins returns on the first status that is not Success), and the
    # taint and affinity filters give one reason each: each node counts at most once here.
    return fit.nodes == 0 or excluded >= fit.nodes


def last_seen(events: Sequence[Seen], reasons: Iterable[str]) -> Seen | None:
    wanted = frozenset(reasons)
    return next((s for s in reversed(events) if s.reason in wanted), None)


# Azure's error as the autoscaler quotes it. 1.35 (armcompute, track 2) passes azcore's
# ResponseError up unchanged: "<METHOD> <url>", "RESPONSE <status>: <status text>", "ERROR CODE:
# <code>", the JSON body indented (Azure/azure-sdk-for-go sdk/azcore/internal/exported/
# response_error.go Error(); the autoscaler's azure_scale_set.go initCreateOrUpdate returns it
# as is). 1.33 and 1.34 (track 1) print cloud-provider-azure's retry.Error: "Retriable: %v,
# RetryAfter: %ds, HTTPStatusCode: %d, RawError: %w" (pkg/retry/azure_error.go). Every pattern
# is a literal lead and a bounded or single-class run: linear in the message.
ERROR_CODE = re.compile(r'ERROR CODE: (?P<code>\w+)|"code"\s*:\s*"(?P<json_code>\w+)"')
ERROR_MESSAGE = re.compile(r'"message"\s*:\s*"(?P<message>(?:[^"\\]|\\.)*)"')
HTTP_STATUS = re.compile(r"RESPONSE (?P<status>\d{3}):|HTTPStatusCode: (?P<v1>\d{3})\b")

# Which refusals of a scale set's PUT pass, and which will not. The autoscaler itself does not
# tell them apart: executeScaleUp backs the group off for every error (executor.go:168-172,
# RegisterFailedScaleUp with CloudProviderError) and tries it again when the back-off ends
# (5 minutes, doubling to 30: utils/backoff/exponential_backoff.go). What passes is what its
# Azure provider and Azure's SDK call retriable:
# - 429 and 5xx: the provider's isErrorRetriable (cloudprovider/azure/azure_manager.go:50-64,
#   "429 (Too Many Requests) and 5xx errors are retriable"); 408 too, among azcore's default
#   retry status codes (sdk/azcore/policy RetryOptions.StatusCodes);
# - 412: a lost race on the scale set's ETag, retried at once with a fresh one
#   (azure_scale_set.go isPreconditionFailedError, "a lost race does not surface as an error");
# - 409 while another operation runs on the scale set: ARM's AnotherOperationInProgress ("Wait
#   for concurrent operation to complete", Azure Resource Manager's common deployment errors),
#   and a 409 whose message says an operation "is in progress";
# - no answer at all: Go's `context deadline exceeded` and net/http's `Client.Timeout exceeded`,
#   `i/o timeout`, `TLS handshake timeout`, `connection reset by peer`; and track 1's own
#   throttling, "azure cloud provider throttled" / "rate limited" (vmssclient CreateOrUpdateAsync).
# What will not pass, whatever the status: no quota, a size not offered, no capacity (Azure's
# codes for a node it cannot create: azure-aks-docs upgrade-capacity-cost-planning.md "Common
# errors include: SKUNotAvailable, AllocationFailed, OverconstrainedAllocationRequest,
# QuotaExceeded"; a quota refusal of a scale set is OperationNotAllowed "... exceeding approved
# ... quota"); and any other code, as before.
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
class Refusal:
    """Azure's refusal of a scale-up, as an autoscaler event quotes it."""

    #: Azure's words on one line (azure_words).
    words: str
    #: It passes: the autoscaler tries the pool again once its back-off ends (see PASSING_STATUS).
    passes: bool


def refusal(message: str) -> Refusal:
    """What Azure's refusal in `message` is, and whether it passes (the rules above)."""
    codes = {found["code"] or found["json_code"] for found in ERROR_CODE.finditer(message)}
    status_found = HTTP_STATUS.search(message)
    status = int(status_found["status"] or status_found["v1"]) if status_found else None
    said = ERROR_MESSAGE.search(message)
    in_progress = "in progress" in (said["message"] if said else message).lower()
    words = azure_words(message)
    if codes & LASTING_CODES:
        return Refusal(words, False)
    # Compute's throttling is a 429 whose body's code is OperationNotAllowed ("too many requests
    # have been received for this subscription": learn.microsoft.com troubleshooting-throttling-
    # errors, "the HTTP status is 429 Too Many Requests"): the status decides before that code.
    if status is not None and (status in PASSING_STATUS or 500 <= status < 600):
        return Refusal(words, True)
    if codes & PASSING_CODES or (status == 409 and in_progress) or ("OperationNotAllowed" in codes and in_progress):
        return Refusal(words, True)
    return Refusal(words, status is None and not codes and any(phrase in message for phrase in NO_ANSWER))


def azure_words(message: str) -> str:
    """What an autoscaler event says of Azure's refusal, on one line: `<code>: <Azure's message>`
    where it quotes an Azure error body, else the event's own words (each cut to SAID)."""
    code, said = ERROR_CODE.search(message), ERROR_MESSAGE.search(message)
    if said is None:
        return one_line(message)
    name = (code["code"] or code["json_code"]) if code else ""
    return one_line(f"{name}: {said['message']}" if name else said["message"])
