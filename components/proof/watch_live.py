"""The proof's watch, live: during `pulumi up` only, it looks at the proof Job, its pods and their
events through the API server with the kubeconfig's own credential (components/cluster/
cluster_access.py), says what it waits for, and ends the Job when components/proof/
watch_verdict.py finds a cause that waiting will not mend. What it asks and why each, with the
sources: docs/design/proof-watch.md, "What the live watch asks, and why".
"""

from __future__ import annotations

import base64
import email.utils
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from components.catalog import api_versions
from components.catalog.proof_names import result_name
from components.cluster import cluster_access
from components.cluster.kubeconfig import entra_kubeconfig
from components.errors import ClusterAccessError, ProofWatchFailed, cut, error_line, one_line
from components.gpu_stack.cluster_objects import AGENT_POOL_LABEL
from components.proof import watch_verdict as decisions
from components.proof.watch_verdict import AUTOSCALER_STATUS, SPEC_ANNOTATION, Snapshot, Verdict, WatchFacts, condition, timestamp
from components.seam.aks_client import ARM_ENDPOINT, aks_client
from components.seam.deadline import gather

# How often the watch looks: a pull error, a refused scale-up or a failed pod is seen within
# this of its event, far inside the five minutes; a look is four to six small GETs.
POLL_SECONDS = 10.0
# A Job of this `up`'s spec that was there, unfinished, when the watch first looked, and made
# before this `up` (below), is the one replaceUnready is about to replace (pulumi-kubernetes
# provider.go Diff replaces a Job that is not Ready, and every Diff runs before this step): the
# watch waits this long for a new UID, then watches that Job as it is.
REPLACEMENT_SECONDS = 300.0
# "Made before this `up`": older, on the API server's clock, than the watch has run plus this.
# The Job this `up` creates is usually there at the first look; the margin covers its step
# starting a little before the watch's (docs/design/proof.md, "The watch: the reason in minutes").
MADE_BEFORE_MARGIN_SECONDS = 120.0
# One request, and one whole look, at most (or what is left of the watch's time).
REQUEST_SECONDS = 15.0
LOOK_SECONDS = 60.0
# The sign-in, listClusterUserCredential and its retries.
KUBECONFIG_SECONDS = 120.0
CONNECT_SECONDS = 10.0
RETRIES = 3
API_VERSION = api_versions.STABLE
LOG_LINES = 5
# No Job of this `up`'s spec for this long, nor one being deleted: its create was refused (an
# admission webhook, AlreadyExists, a 403) or has not begun (`pulumi up --parallel 1` may run the
# watch first): the watch hands back, and the Job's own step decides (docs/proof.md).
NOT_CREATED_SECONDS = 120.0
# At most this many of the pools' nodes are asked which pods hold their GPUs, a look.
HOLDER_NODES = 5
# The extended resources NVIDIA's device plugin offers (nvidia.com/gpu, nvidia.com/mig-<profile>).
GPU_RESOURCES = "nvidia.com/"
# How often a status that only counts on (its numbers) is sent again (_Status).
REPEAT_SECONDS = 30.0
# What the PATCH that ends the Job sets: already past for any Job that started a second ago.
ENDED_DEADLINE_SECONDS = 1
FIELD_MANAGER = "aks-gpu-proof-watch"
JOB_UID_LABEL = "batch.kubernetes.io/controller-uid"


@dataclass(frozen=True)
class ClusterRef:
    """Where the cluster is: the watch fetches its kubeconfig itself, so no credential is ever an
    input or an output of the watch resource."""

    subscription_id: str
    resource_group_name: str
    cluster_name: str
    #: Entra ID sign-in: the kubeconfig's kubelogin made to sign in without a prompt (cluster.entra_kubeconfig).
    entra: bool
    arm_endpoint: str = ARM_ENDPOINT


def user_kubeconfig(cluster: ClusterRef, seconds: float = KUBECONFIG_SECONDS, credential: Any = None) -> str:
    """The cluster's user kubeconfig (listClusterUserCredential, format "exec": "only take[s]
    effect when requesting clusterUser credential of AAD clusters", the az CLI's help), made to
    sign in without a prompt on an Entra ID cluster; with DefaultAzureCredential unless given
    one, its retries and sockets bounded as the managed pool's are (seam/aks_client.py);
    ClusterAccessError in one line when it cannot be had within `seconds`."""
    what = f"fetching the user kubeconfig of cluster {cluster.resource_group_name}/{cluster.cluster_name} (listClusterUserCredential)"

    def fetch() -> str:
        from azure.core.pipeline.policies import RetryPolicy
        from azure.identity import DefaultAzureCredential

        client = aks_client(
            credential if credential is not None else DefaultAzureCredential(),
            cluster.subscription_id,
            API_VERSION,
            retry_policy=RetryPolicy(retry_total=RETRIES, timeout=seconds),
            connect_seconds=min(CONNECT_SECONDS, seconds),
            read_seconds=min(REQUEST_SECONDS, seconds),
            endpoint=cluster.arm_endpoint,
        )
        found = client.managed_clusters.list_cluster_user_credentials(cluster.resource_group_name, cluster.cluster_name, format="exec")
        kubeconfigs = found.kubeconfigs or []
        if not kubeconfigs or not kubeconfigs[0].value:
            raise ClusterAccessError(f"{what}: Azure answered no kubeconfig")
        value = kubeconfigs[0].value  # bytes: the SDK decodes the base64 (models CredentialResult `format="base64"`)
        text = (value if isinstance(value, bytes) else base64.b64decode(value)).decode("utf-8")
        return entra_kubeconfig(text) if cluster.entra else text

    try:
        return str(gather([fetch], seconds)[0])
    except ClusterAccessError:
        raise
    except TimeoutError:
        raise ClusterAccessError(f"{what}: no answer within {seconds:g} s") from None
    except Exception as error:  # noqa: BLE001 - Azure's refusal, no sign-in, an answer not UTF-8 or YAML: one line
        raise ClusterAccessError(f"{what}: {error_line(error)}") from None


# --------------------------------------------------------------------------- the API server


class _CannotWatch(Exception):
    """An answer that looking again will not change: the identity was refused (401 with a fresh
    token, 403), or the API server answered what is not Kubernetes JSON."""


class _NoAnswer(Exception):
    """No answer this time (5xx, 429, unreachable, a timeout): the watch looks again."""


class _Refused(Exception):
    """Any other refusal (400, 409, 422, ...): what it means is the caller's to say."""

    def __init__(self, code: int, reason: str, what: str) -> None:
        super().__init__(f"the cluster answered HTTP {code} {reason} to {cut(what)}")
        self.code = code


@dataclass
class _Api:
    """The API server over one Connection; a 401 makes a new one (the credential plugin signs in
    again: a token outlives no more than an hour) and asks once more."""

    connect: Callable[[], cluster_access.Connection]
    connection: cluster_access.Connection
    #: The API server's clock at its last answer (HTTP Date).
    date: datetime | None = None

    def call(self, what: str, method: str, *args: Any, raw: bool = False, **params: Any) -> Any:
        """The JSON (the text with `raw`) that `method` ("batch.<name>" of BatchV1Api or
        "core.<name>" of CoreV1Api) answers within REQUEST_SECONDS; None for 404. `what`:
        "METHOD path", for the messages."""
        from kubernetes.client import ApiException, BatchV1Api, CoreV1Api
        from urllib3.exceptions import HTTPError

        group, name = method.split(".")
        for attempt in (1, 2):
            api = (BatchV1Api if group == "batch" else CoreV1Api)(self.connection.api)
            try:
                response = getattr(api, name)(*args, **params, _request_timeout=REQUEST_SECONDS, _preload_content=False)
                body = response.data  # read here: a body cut short or too slow is urllib3's error too
            except ApiException as error:
                if error.status == 404:
                    return None
                if error.status == 401 and attempt == 1:
                    self.connection = self.connect()
                    continue
                if error.status in (401, 403):
                    raise _CannotWatch(
                        f"the cluster answered HTTP {error.status} {error.reason} to {cut(what)} as {self.connection.who}"
                    ) from None
                if not error.status:  # the package's own: TLS failed (rest.py wraps urllib3's SSLError)
                    raise _NoAnswer(
                        f"could not reach the cluster's API server {self.connection.server}: {one_line(error.reason)}"
                    ) from None
                if error.status >= 500 or error.status == 429:
                    raise _NoAnswer(f"the cluster answered HTTP {error.status} {error.reason} to {cut(what)}") from None
                raise _Refused(error.status, str(error.reason), what) from None
            except HTTPError as error:  # urllib3's: no answer
                raise _NoAnswer(f"could not reach the cluster's API server {self.connection.server}: {one_line(error)}") from None
            self.date = _server_time(response.headers.get("Date")) or self.date
            text = body.decode("utf-8", errors="replace")
            if raw:
                return text
            try:
                return json.loads(text)
            except ValueError:
                raise _CannotWatch(f"the cluster's API server {self.connection.server} answered {cut(what)} with no JSON") from None
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def now(self) -> datetime:
        return self.date or datetime.now(timezone.utc)


def _server_time(header: str | None) -> datetime | None:
    """The HTTP Date header as an aware time: a date whose zone is "-0000" parses naive
    (CPython Lib/email/utils.py parsedate_to_datetime), and HTTP dates are in UTC (RFC 9110 5.6.7)."""
    try:
        when = email.utils.parsedate_to_datetime(header or "")
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


# --------------------------------------------------------------------------- which Job is ours


@dataclass
class _Ours:
    """Which Job of the proof's name is this `up`'s (SPEC_ANNOTATION, and a stale UID waited
    past); whether this `up`'s Job was there and is gone, and how long no Job of this spec has
    been there (`absent_for`)."""

    facts: WatchFacts
    clock: Callable[[], float]
    started: float
    first: bool = True
    stale: str | None = None
    stale_since: float = 0.0
    #: The UID of this `up`'s Job, once the watch has seen it.
    seen: str | None = None
    #: That Job was there and is not any more: deleted (by a person, after a first Ctrl-C).
    gone: bool = False
    #: The watch's clock when a Job of this spec, or one being deleted, was last there.
    last_sign: float | None = None

    def absent_for(self) -> float:
        return self.clock() - (self.last_sign if self.last_sign is not None else self.started)

    def which(self, job: Mapping[str, Any] | None, now: datetime | None) -> Mapping[str, Any] | None:
        first, self.first = self.first, False
        meta = (job.get("metadata") or {}) if job is not None else {}
        ours = (meta.get("annotations") or {}).get(SPEC_ANNOTATION) == self.facts.spec_hash
        uid = str(meta.get("uid") or "")
        if job is not None and (ours or meta.get("deletionTimestamp")):
            self.last_sign = self.clock()
        if self.seen is not None and (uid != self.seen or meta.get("deletionTimestamp")):
            self.gone = True  # this `up`'s Job deleted: 404, being deleted, or another Job has the name now
            return None
        if job is None or not ours:
            return None  # not there yet, or an earlier `up`'s Job: this one's replaces it
        if meta.get("deletionTimestamp"):
            return None  # replaceUnready's delete, in the foreground: going, with its pods
        made = timestamp(meta.get("creationTimestamp"))
        ran = self.clock() - self.started + MADE_BEFORE_MARGIN_SECONDS
        if first and not condition(job, "Complete") and made and now and (now - made).total_seconds() > ran:
            self.stale, self.stale_since = uid, self.clock()
        if self.stale is not None and uid == self.stale:
            if self.clock() - self.stale_since < REPLACEMENT_SECONDS:
                return None
            self.stale = None  # not replaced after all: watched as it is
        self.seen = uid
        return job


# --------------------------------------------------------------------------- one look


def _items(listed: Any, what: str) -> list[Mapping[str, Any]]:
    found = listed.get("items") if isinstance(listed, Mapping) else None
    if not isinstance(found, list):
        raise _CannotWatch(f"the cluster's answer to the list of {what} has no items list")
    return [item for item in found if isinstance(item, Mapping)]


def _meta(thing: Mapping[str, Any], key: str) -> str:
    return str((thing.get("metadata") or {}).get(key) or "")


def _log_tail(api: _Api, namespace: str, pods: Sequence[Mapping[str, Any]]) -> str | None:
    pod = next((p for p in reversed(pods) if (p.get("status") or {}).get("phase") == "Running"), None)
    if pod is None:
        return None
    container = str((((pod.get("spec") or {}).get("containers") or [{}])[0]).get("name") or "")
    name = _meta(pod, "name")
    try:
        what = f"GET /api/v1/namespaces/{namespace}/pods/{name}/log"
        text = api.call(what, "core.read_namespaced_pod_log", name, namespace, container=container or None, tail_lines=LOG_LINES, raw=True)
    except (_CannotWatch, _NoAnswer, _Refused):
        return None  # a log is the progress, never the verdict: a pod that has not started answers 400
    return str(text) if text is not None else None


def _look(api: _Api, facts: WatchFacts, ours: _Ours) -> Snapshot:
    ns, at = facts.namespace, f"GET /api/v1/namespaces/{facts.namespace}"
    found = api.call(f"GET /apis/batch/v1/namespaces/{ns}/jobs/{facts.job_name}", "batch.read_namespaced_job", facts.job_name, ns)
    job = ours.which(found, api.date)
    if job is None:
        return Snapshot(now=api.now(), job=None, pods=[], events=[])
    listed = api.call(f"{at}/pods", "core.list_namespaced_pod", ns, label_selector=f"{JOB_UID_LABEL}={_meta(job, 'uid')}")
    pods = sorted(_items(listed, "the Job's pods"), key=lambda p: _meta(p, "creationTimestamp"))
    events: list[Mapping[str, Any]] = []
    for uid in [_meta(job, "uid"), *(_meta(p, "uid") for p in pods)]:
        listed = api.call(f"{at}/events", "core.list_namespaced_event", ns, field_selector=f"involvedObject.uid={uid}")
        events += _items(listed, "events")
    waiting = any(not (p.get("spec") or {}).get("nodeName") for p in pods)
    if facts.autoscaled and waiting:
        events += _autoscaler_events(api)
    nodes, holders = _pool_nodes(api, facts, _meta(job, "uid")) if waiting else (None, None)
    # RFC 3339 in UTC, so the strings sort as the times do.
    events.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or _meta(e, "creationTimestamp")))
    tail = _log_tail(api, facts.namespace, pods)
    return Snapshot(now=api.now(), job=job, pods=pods, events=events, log_tail=tail, nodes=nodes, holders=holders)


def _pool_nodes(api: _Api, facts: WatchFacts, job_uid: str) -> tuple[list[Mapping[str, Any]] | None, list[Mapping[str, Any]] | None]:
    """While the Job's pod waits for a node: the nodes of its pools (AKS's agentpool label, a
    set-based selector: apimachinery labels.Parse `in`), and the pods on the first HOLDER_NODES
    of them that hold a GPU, the Job's own left out. None for what may not be read (a deployer
    without cluster-wide list rights): a status says less then."""
    selector = f"{AGENT_POOL_LABEL} in ({','.join(facts.pools)})"
    try:
        nodes = _items(api.call("GET /api/v1/nodes", "core.list_node", label_selector=selector), "nodes")
    except (_CannotWatch, _Refused):
        return None, None
    holders: list[Mapping[str, Any]] = []
    for node in nodes[:HOLDER_NODES]:
        try:
            selector = f"spec.nodeName={_meta(node, 'name')}"
            on_node = _items(api.call("GET /api/v1/pods", "core.list_pod_for_all_namespaces", field_selector=selector), "pods")
        except (_CannotWatch, _Refused):
            return nodes, None
        holders += [p for p in on_node if _holds_gpu(p) and ((p.get("metadata") or {}).get("labels") or {}).get(JOB_UID_LABEL) != job_uid]
    return nodes, holders


def _holds_gpu(pod: Mapping[str, Any]) -> bool:
    """A pod not ended with a container that asks for an NVIDIA resource (nvidia.com/gpu, or a
    MIG slice nvidia.com/mig-<profile>): the scheduler counts it against the node's GPUs."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    containers = (pod.get("spec") or {}).get("containers") or []
    resources = [r for c in containers if isinstance(c, Mapping) and isinstance(r := c.get("resources"), Mapping)]
    asked = [name for r in resources for part in ("requests", "limits") if isinstance(amounts := r.get(part), Mapping) for name in amounts]
    return any(str(name).startswith(GPU_RESOURCES) for name in asked)


def _autoscaler_events(api: _Api) -> list[Mapping[str, Any]]:
    """The events of the autoscaler's status ConfigMap; none where they may not be read or are not there."""
    selector = f"involvedObject.kind=ConfigMap,involvedObject.name={AUTOSCALER_STATUS}"
    try:
        listed = api.call("GET /api/v1/namespaces/kube-system/events", "core.list_namespaced_event", "kube-system", field_selector=selector)
        return _items(listed, "events")
    except (_CannotWatch, _Refused):
        return []


# --------------------------------------------------------------------------- the end


def served(verdict: Verdict) -> dict[str, str]:
    """Where the proof's pod ran, as the ConfigMap's `pool` and `vmSize` (docs/proof.md, "Which
    size served"): each where known, so a reader tells "not known" from a value."""
    return {key: value for key, value in (("pool", verdict.pool), ("vmSize", verdict.vm_size)) if value}


def _finish(api: _Api, facts: WatchFacts, look: Snapshot, verdict: Verdict, status: Callable[[str], None]) -> Verdict:
    """Ends the Job where the verdict is "stop" (a merge PATCH of activeDeadlineSeconds with its
    UID as a precondition), keeps the outcome in the ConfigMap `<job>-result` (server-side
    apply), and returns a "trained" verdict or raises ProofWatchFailed with its line."""
    uid, ns, line = _meta(look.job, "uid") if look.job is not None else "", facts.namespace, verdict.line
    if verdict.kind == "stop" and uid:
        body: dict[str, Any] = {"metadata": {"uid": uid}, "spec": {"activeDeadlineSeconds": ENDED_DEADLINE_SECONDS}}
        try:
            what = f"PATCH /apis/batch/v1/namespaces/{ns}/jobs/{facts.job_name}"
            api.call(what, "batch.patch_namespaced_job", facts.job_name, ns, body, _content_type="application/merge-patch+json")
        except (_CannotWatch, _NoAnswer, _Refused) as error:
            # 409, 422: the UID precondition: another Job has the name now, not ours to end.
            if not (isinstance(error, _Refused) and error.code in (409, 422)):
                line = f"{line} (the watch could not end Job {ns}/{facts.job_name} ({error}); it runs until its activeDeadlineSeconds)"
    name = result_name(facts.job_name)
    finished = api.now().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app.kubernetes.io/managed-by": FIELD_MANAGER}},
        "data": {"line": verdict.line, "outcome": verdict.kind, "jobUid": uid, "finishedAt": finished, **served(verdict)},
    }
    try:
        apply: dict[str, Any] = {"field_manager": FIELD_MANAGER, "force": True, "_content_type": "application/apply-patch+yaml"}
        api.call(f"PATCH /api/v1/namespaces/{ns}/configmaps/{name}", "core.patch_namespaced_config_map", name, ns, body, **apply)
    except (_CannotWatch, _NoAnswer, _Refused) as error:
        status(f"the proof's outcome could not be kept in ConfigMap {ns}/{name}: {error}")
    if verdict.kind == "trained":
        return verdict
    raise ProofWatchFailed(line)


# --------------------------------------------------------------------------- the watch


class _Status:
    """Sends each line once, when it differs from the last one sent; a line that differs only in
    its numbers (a duration counting up, the training's step) at most every REPEAT_SECONDS. A
    non-interactive run prints the resource's row at each status it gets (pulumi/pulumi@1b594989
    pkg/backend/display/jsonmessage.go `rowUpdated`), so a CI log gets a line per change."""

    def __init__(self, send: Callable[[str], None], clock: Callable[[], float]) -> None:
        self.send, self.clock, self.last, self.sent_at = send, clock, "", float("-inf")

    def __call__(self, line: str) -> None:
        line = one_line(line, None)  # a status is one line, whatever the cluster's words held
        if line == self.last:
            return
        if re.sub(r"\d+", "#", line) == re.sub(r"\d+", "#", self.last) and self.clock() - self.sent_at < REPEAT_SECONDS:
            return
        self.last, self.sent_at = line, self.clock()
        self.send(line)


def _not_watched(status: _Status, why: str) -> Verdict:
    verdict = Verdict("waiting", f"the proof is not watched: {why}; the Job's own await decides")
    status(verdict.line)
    return verdict


def watch(
    cluster: ClusterRef,
    facts: WatchFacts,
    seconds: float,
    status: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    decide: Callable[[WatchFacts, Snapshot], Verdict] = decisions.decide,
    kubeconfig: Callable[[ClusterRef], str] = user_kubeconfig,
    connect: Callable[[str], cluster_access.Connection] = cluster_access.connect,
) -> Verdict:
    """Watches the proof until it trained (returns that Verdict, or a "waiting" one saying why it
    could not watch: the Job's own await then decides), failed, or cannot start (raises
    ProofWatchFailed with the line, after ending the Job), or `seconds` pass; `status` gets what
    it waits for, each time that changes. `decide`, `kubeconfig` and `connect`: a test's seams."""
    started = clock()
    deadline = started + seconds
    say = _Status(status, clock)
    try:
        config = kubeconfig(cluster)
        api = _Api(lambda: connect(config), connect(config))
    except ClusterAccessError as error:
        return _not_watched(say, str(error))
    ours = _Ours(facts, clock, started)
    while True:
        within = min(LOOK_SECONDS, max(deadline - clock(), 1.0))
        try:
            # A daemon thread the watch stops waiting for (deadline.gather): a socket timeout
            # bounds each read, not a server that trickles.
            look = gather([lambda: _look(api, facts, ours)], within)[0]
        except (_CannotWatch, ClusterAccessError) as error:  # ClusterAccessError: the credential plugin, run again after a 401
            return _not_watched(say, str(error))
        except (_NoAnswer, _Refused) as error:  # _Refused: what no GET of the watch should meet (400, 410)
            say(f"looking again in {POLL_SECONDS:g} s: {error}")
        except TimeoutError:  # gather's
            say(f"looking again in {POLL_SECONDS:g} s: the cluster's API server did not answer a look within {within:g} s")
        else:
            job = f"{facts.namespace}/{facts.job_name}"
            if ours.gone:
                return _not_watched(say, f"the Job {job} this `pulumi up` created was deleted")
            if look.job is None and ours.absent_for() >= NOT_CREATED_SECONDS:
                return _not_watched(
                    say,
                    f"no Job {job} of this `pulumi up` appeared within {NOT_CREATED_SECONDS / 60:g} minutes "
                    "(its create refused, or not begun)",
                )
            verdict = decide(facts, look)
            if verdict.kind != "waiting":
                return _finish(api, facts, look, verdict, say)
            say(verdict.line)
        if clock() + POLL_SECONDS > deadline:
            return Verdict("waiting", f"watched for {seconds / 60:g} minutes, the watch's limit: {say.last}; the Job's own await decides")
        sleep(POLL_SECONDS)
