"""What each signal the proof's watch reads means at its source, and which are terminal: the
kubelet's image pulls, the scheduler's FailedScheduling, the cluster autoscaler's pod and status
events, as Kubernetes JSON (dicts). Pure; components/deciding/proof/proof_watch.py decides with them.
The table of what is terminal and why: docs/proof-watch.md.
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
# which resets this clock (docs/proof-watch.md, the NotTriggerScaleUp row, and its sources).
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
# decides (docs/proof-watch.md, the `Failed` pull rows, has the words and their sources).
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
# `aks-<pool>-<digits>-vmss` (docs/proof-watch.md, "The events' words", with their sources).
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
# have registered yet (docs/proof-watch.md, "The events' words").
FIT_ERROR = re.compile(r"^0/(?P<nodes>\d+) nodes are available: (?P<reasons>.*?)(?:\.\s+preemption:.*|\.?\s*)$", re.DOTALL)
REASON = re.compile(r"(?:^|, )(?P<count>\d+) (?P<reason>.*?)(?=, \d+ |$)", re.DOTALL)
EXCLUDED_FOR_GOOD = re.compile(r"untolerated taint|didn't match Pod's node affinity/selector|didn't match pod's node affinity")
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


def events_of(events: Iterable[Mapping[str, Any]], kind: str, name: str) -> list[Seen]:
    """The events about one object, oldest last-seen first."""
    found = [s for s in map(seen, events) if s is not None and s.kind == kind and s.name == name]
    return sorted(found, key=lambda s: (s.last, s.first))


def registry(image: str) -> str:
    """The registry an image reference names: its first path component when that looks like a host
    (a dot, a port or `localhost`), else Docker Hub, as the reference grammar reads it
    (distribution/reference normalize.go, splitDockerDomain)."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def scale_set_of(pool: str) -> re.Pattern[str]:
    """The pool's scale set as the autoscaler names its node group: aks-<pool>-<digits>-vmss."""
    return re.compile(rf"\baks-{re.escape(pool)}-\d+-vmss\b", re.IGNORECASE)


# A node of a VMSS pool: its scale set's name and the VM's instance suffix,
# `aks-<pool>-<digits>-vmss<instance>` (azure-aks-docs at fb060abe: "aks-nodepool1-12345678-vmss000000",
# articles/aks/configure-automatic-zone-placement.md; the scale set's own name: docs/proof-watch.md).
NODE_OF_POOL = re.compile(r"^aks-(?P<pool>[a-z0-9]+)-\d+-vmss[0-9a-z]+$", re.IGNORECASE)


def pool_of_node(node: str, pools: Sequence[str]) -> str:
    """Which of `pools` a node is of, by its name (NODE_OF_POOL); "" when the name says none of them."""
    found = NODE_OF_POOL.match(node)
    named = found["pool"].lower() if found else ""
    return next((pool for pool in pools if pool.lower() == named), "")


def excluded_for_good(message: str) -> bool:
    """Whether a FailedScheduling message says every node is excluded by a taint that stays or by
    the pod's node selector or affinity: no node the pool has, and none freed, can take the pod."""
    fit = FIT_ERROR.match(message.strip())
    if fit is None:
        return False
    nodes, excluded = int(fit["nodes"]), 0
    for found in REASON.finditer(fit["reasons"]):
        reason = found["reason"]
        if EXCLUDED_FOR_GOOD.search(reason) and not NOT_FOR_GOOD.search(reason):
            excluded += int(found["count"])
    # The scheduler stops at a node's first failing filter (pkg/scheduler/framework/runtime/
    # framework.go RunFilterPlugins returns on the first status that is not Success), and the
    # taint and affinity filters give one reason each: each node counts at most once here.
    return nodes == 0 or excluded >= nodes


def last_seen(events: Sequence[Seen], reasons: Iterable[str]) -> Seen | None:
    wanted = frozenset(reasons)
    matching = [s for s in events if s.reason in wanted]
    return matching[-1] if matching else None


# Azure's error as the autoscaler quotes it (the Go SDK's "ERROR CODE: <code>" and JSON body).
# Every code is terminal: the autoscaler backs the pool off 5 to 30 minutes after it, longer than
# the proof can wait (docs/proof-watch.md, after the table, and "The events' words").
ERROR_CODE = re.compile(r'ERROR CODE: (?P<code>\w+)|"code"\s*:\s*"(?P<json_code>\w+)"')
ERROR_MESSAGE = re.compile(r'"message"\s*:\s*"(?P<message>(?:[^"\\]|\\.)*)"')


def azure_words(message: str) -> str:
    """What an autoscaler event says of Azure's refusal, on one line: `<code>: <Azure's message>`
    where it quotes an Azure error body, else the event's own words (each cut to SAID)."""
    code, said = ERROR_CODE.search(message), ERROR_MESSAGE.search(message)
    if said is None:
        return one_line(message)
    name = (code["code"] or code["json_code"]) if code else ""
    return one_line(f"{name}: {said['message']}" if name else said["message"])
