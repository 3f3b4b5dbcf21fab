"""The proof's watch, live (components/proof/watch_live.py): against a fake API server over
TLS (tests/fake_kube_api.py) that answers scripted cluster states and records every request,
with a clock the test moves (no real waiting) and a scripted decision, so what is tested is the
looking, the ending and the keeping, not what a look means (tests of `decide` hold that)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import fake_aks
import fake_kube_api
import pytest
from fake_arm import FakeCredential, JsonHandler, serve_handler, silent
from fake_kube_api import Refusal, State, event, job, pod
from support.clock import Clock

from components.cluster import cluster_access
from components.errors import ClusterAccessError, ProofWatchFailed
from components.proof import watch_live as live
from components.proof.watch_verdict import Snapshot, Verdict, WatchFacts

FACTS = WatchFacts(
    namespace="gpu-proof",
    job_name="mnist-train",
    pool_name="gpu",
    spec_hash="hash-now",
    autoscaled=True,
    image="ghcr.io/example/mnist@sha256:abc",
    max_steps=500,
)
CLUSTER = live.ClusterRef("sub", "rg", "aks", entra=False)
JOB_PATH = "/apis/batch/v1/namespaces/gpu-proof/jobs/mnist-train"


@pytest.fixture
def kube(tmp_path) -> Iterator[fake_kube_api.FakeKube]:
    yield from fake_kube_api.serve(tmp_path)


class Scripted:
    """A decision that answers the verdicts it is given, in order (the last one again), and keeps
    every look it was handed."""

    def __init__(self, *verdicts: Verdict) -> None:
        self.verdicts, self.looks = list(verdicts), []

    def __call__(self, facts: WatchFacts, look: Snapshot) -> Verdict:
        self.looks.append(look)
        return self.verdicts[min(len(self.looks), len(self.verdicts)) - 1]


def watching(kube, decide, seconds: float = 3600.0, clock: Clock | None = None, **seams: Any) -> tuple[Any, list[str], Clock]:
    """The watch against the fake; what it returned (or raised), the statuses sent, the clock."""
    clock = clock or Clock()
    said: list[str] = []
    seams.setdefault("kubeconfig", lambda cluster: kube.kubeconfig())
    try:
        got: Any = live.watch(CLUSTER, FACTS, seconds, said.append, clock=lambda: clock.now, sleep=clock.sleep, decide=decide, **seams)
    except ProofWatchFailed as error:
        got = error
    return got, said, clock


WAITING = Verdict("waiting", "waiting for a node in pool gpu (2 minutes so far)")


# --------------------------------------------------------------------------- the three ends


def test_a_proof_that_trains_returns_its_line_and_keeps_it_in_the_result_configmap(kube):
    kube.states = [State(job("j-1", "hash-now", "Complete", succeeded=1), date="Sat, 28 Nov 2026 12:30:00 GMT")]
    trained = Verdict("trained", "PROOF OK: 500 steps on NVIDIA T4 (sm_75)")

    got, said, _ = watching(kube, Scripted(trained))

    assert got == trained and said == []
    [apply] = kube.calls("PATCH", "/configmaps/")
    assert apply.path == "/api/v1/namespaces/gpu-proof/configmaps/mnist-train-result"
    assert apply.content_type == "application/apply-patch+yaml"
    assert apply.query == {"fieldManager": ["aks-gpu-proof-watch"], "force": ["true"]}
    assert apply.body["data"] == {
        "line": "PROOF OK: 500 steps on NVIDIA T4 (sm_75)",
        "outcome": "trained",
        "jobUid": "j-1",
        "finishedAt": "2026-11-28T12:30:00Z",
    }
    assert kube.calls("PATCH", "/jobs/") == []


def test_the_result_configmap_names_the_pool_and_size_that_served_where_the_watch_knows_them(kube):
    kube.states = [State(job("j-1", "hash-now", "Complete", succeeded=1), date="Sat, 28 Nov 2026 12:30:00 GMT")]
    served = Verdict("trained", "PROOF OK", pool="t4b", vm_size="Standard_NC8as_T4_v3")

    assert watching(kube, Scripted(served))[0] == served
    [apply] = kube.calls("PATCH", "/configmaps/")
    assert (apply.body["data"]["pool"], apply.body["data"]["vmSize"]) == ("t4b", "Standard_NC8as_T4_v3")
    assert live.served(Verdict("trained", "PROOF OK", pool="gpu")) == {"pool": "gpu"}, "a size not told is left out, not empty"


def test_a_cause_that_waiting_will_not_mend_ends_the_job_by_its_uid_then_fails_in_that_line(kube):
    kube.states = [State(job("j-1", "hash-now", active=1), [pod("p-1", "j-1")])]
    stop = Verdict("stop", "the image ghcr.io/example/mnist@sha256:abc cannot be pulled on node aks-gpu-0: 403 Forbidden")

    got, _, _ = watching(kube, Scripted(WAITING, stop))

    assert isinstance(got, ProofWatchFailed) and str(got) == stop.line
    [end] = kube.calls("PATCH", "/jobs/")
    assert end.path == JOB_PATH and end.content_type == "application/merge-patch+json"
    assert end.body == {"metadata": {"uid": "j-1"}, "spec": {"activeDeadlineSeconds": 1}}
    [kept] = kube.config_maps.values()
    assert kept["data"]["outcome"] == "stop" and kept["data"]["line"] == stop.line and kept["data"]["jobUid"] == "j-1"
    # The Job is ended before the outcome is kept: a watch stopped in between leaves no Job running.
    assert [r.method + " " + r.path.rsplit("/", 2)[-2] for r in kube.calls("PATCH")] == ["PATCH jobs", "PATCH configmaps"]


def test_a_job_that_failed_by_itself_fails_the_watch_with_its_pods_last_words_and_is_left_as_it_is(kube):
    kube.states = [
        State(job("j-1", "hash-now", active=1)),
        State(job("j-1", "hash-now", "Failed", failed=3), [pod("p-1", "j-1", "Failed")]),
    ]
    failed = Verdict("failed", "PROOF FAILED: CUDA is not available (torch.cuda.is_available() is False)")

    got, _, _ = watching(kube, Scripted(WAITING, failed))

    assert isinstance(got, ProofWatchFailed) and str(got) == failed.line
    assert kube.calls("PATCH", "/jobs/") == []
    assert kube.config_maps[("gpu-proof", "mnist-train-result")]["data"]["outcome"] == "failed"


# --------------------------------------------------------------------------- which Job is ours


def test_the_job_an_earlier_up_left_under_another_spec_is_never_looked_into(kube):
    old = job("j-old", "hash-before", active=1)
    kube.states = [State(old, [pod("p-old", "j-old")]), State(job("j-new", "hash-now", active=1), [pod("p-new", "j-new")])]
    decide = Scripted(WAITING, WAITING, Verdict("trained", "PROOF OK"))

    watching(kube, decide)

    assert decide.looks[0].job is None and decide.looks[0].pods == []
    assert [p["metadata"]["name"] for p in decide.looks[1].pods] == ["p-new"]
    selectors = [r.query["labelSelector"] for r in kube.calls("GET", "/pods$")]
    assert ["batch.kubernetes.io/controller-uid=j-old"] not in selectors


def test_an_unfinished_job_of_this_spec_made_before_this_up_is_waited_past_until_its_replacement(kube):
    stale = job("j-stale", "hash-now", "2026-11-28T11:00:00Z", "Failed", failed=3)
    kube.states = [State(stale), State(stale), State(job("j-new", "hash-now", active=1), [pod("p-new", "j-new")])]
    decide = Scripted(WAITING, WAITING, Verdict("trained", "PROOF OK"))

    got, _, clock = watching(kube, decide)

    assert got.kind == "trained"
    assert [look.job and look.job["metadata"]["uid"] for look in decide.looks] == [None, None, "j-new"]
    assert clock.slept == [live.POLL_SECONDS] * 2


def test_a_job_that_replace_unready_is_deleting_is_not_the_one_to_watch(kube):
    going = job("j-1", "hash-now", "2026-11-28T11:00:00Z", "Complete", succeeded=1)
    going["metadata"]["deletionTimestamp"] = "2026-11-28T12:00:00Z"
    kube.states = [State(going), State(job("j-2", "hash-now", active=1))]
    decide = Scripted(WAITING, Verdict("trained", "PROOF OK"))

    watching(kube, decide)

    assert [look.job and look.job["metadata"]["uid"] for look in decide.looks] == [None, "j-2"]


def test_the_job_this_up_created_before_the_watch_first_looked_is_watched_at_once(kube):
    # Made 60 s before the first look (the fake's clock), within the watch's own time and its margin.
    kube.states = [State(job("j-1", "hash-now", active=1), [pod("p-1", "j-1")])]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    watching(kube, decide)

    assert decide.looks[0].job["metadata"]["uid"] == "j-1"


def test_a_stale_job_not_replaced_within_the_replacement_time_is_watched_as_it_is(kube):
    kube.states = [State(job("j-stale", "hash-now", "2026-11-28T11:00:00Z", active=1), [pod("p-1", "j-stale")])]
    decide = Scripted(WAITING)

    watching(kube, decide, seconds=live.REPLACEMENT_SECONDS + 60)

    seen = [(look.now, look.job and look.job["metadata"]["uid"]) for look in decide.looks]
    first_watched = next(i for i, (_, uid) in enumerate(seen) if uid == "j-stale")
    assert first_watched * live.POLL_SECONDS == live.REPLACEMENT_SECONDS


# --------------------------------------------------------------------------- what a look holds


def test_events_are_asked_per_object_by_uid_and_reach_the_decision_oldest_first(kube):
    the_job = job("j-1", "hash-now", active=1)
    pods = [pod("p-2", "j-1", created="2026-11-28T12:05:00Z"), pod("p-1", "j-1", created="2026-11-28T12:00:00Z")]
    events = [
        event("uid-p-1", "FailedScaleUp", "Node scale up in zones failed: quota", "2026-11-28T12:03:00Z"),
        event("uid-p-1", "NotTriggerScaleUp", "pod didn't trigger scale-up", "2026-11-28T12:01:00Z", type_="Normal"),
        event("j-1", "SuccessfulCreate", "Created pod: p-1", "2026-11-28T12:00:00Z", kind="Job", type_="Normal"),
        event("uid-elsewhere", "Pulled", "not ours", "2026-11-28T12:02:00Z"),
    ]
    kube.states = [State(the_job, pods, events)]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    watching(kube, decide)

    [look] = decide.looks
    assert [p["metadata"]["name"] for p in look.pods] == ["p-1", "p-2"]
    assert [e["reason"] for e in look.events] == ["SuccessfulCreate", "NotTriggerScaleUp", "FailedScaleUp"]
    asked = sorted(r.query["fieldSelector"][0] for r in kube.calls("GET", "/gpu-proof/events$"))
    assert asked == ["involvedObject.uid=j-1", "involvedObject.uid=uid-p-1", "involvedObject.uid=uid-p-2"]


FAILED_GROUP = event(
    "uid-status",
    "FailedToScaleUpGroup",
    "Scale-up failed for group aks-gpu-12345678-vmss: QuotaExceeded",
    "2026-11-28T12:03:00Z",
    kind="ConfigMap",
    name="cluster-autoscaler-status",
    namespace="kube-system",
)


def test_a_pending_pod_of_an_autoscaled_pool_hears_the_autoscalers_status_configmap_too(kube):
    # Upstream's autoscaler records a failed scale-up on kube-system/cluster-autoscaler-status,
    # not on the pod (components/proof/watch_verdict.py): a look that read only the pod's
    # events would miss Azure's words.
    kube.states = [State(job("j-1", "hash-now", active=1), [pod("p-1", "j-1")], [FAILED_GROUP])]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    watching(kube, decide)

    [look] = decide.looks
    assert [e["reason"] for e in look.events] == ["FailedToScaleUpGroup"]
    [asked] = kube.calls("GET", "/kube-system/events$")
    assert asked.query["fieldSelector"] == ["involvedObject.kind=ConfigMap,involvedObject.name=cluster-autoscaler-status"]


def test_the_autoscalers_status_is_not_read_once_the_pod_has_a_node(kube):
    scheduled = pod("p-1", "j-1")
    scheduled["spec"]["nodeName"] = "aks-gpu-12345678-vmss000000"
    kube.states = [State(job("j-1", "hash-now", active=1), [scheduled], [FAILED_GROUP])]
    watching(kube, Scripted(Verdict("trained", "PROOF OK")))
    assert kube.calls("GET", "/kube-system/events$") == []


def test_an_identity_that_may_not_read_kube_systems_events_is_still_watched(kube):
    kube.states = [State(job("j-1", "hash-now", active=1), [pod("p-1", "j-1")], [FAILED_GROUP])]
    kube.refuse = [fake_kube_api.Refusal("GET", "/kube-system/events$", 403)]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    got, said, _ = watching(kube, decide)

    assert got == Verdict("trained", "PROOF OK") and said == []
    [look] = decide.looks
    assert look.events == []


def test_the_running_pods_log_tail_and_the_api_servers_clock_reach_the_decision(kube):
    running = pod("p-1", "j-1", "Running")
    the_job = job("j-1", "hash-now", "2026-11-28T12:06:30Z", active=1)
    kube.states = [State(the_job, [running], logs={"p-1": "step 120/500\n"}, date="Sat, 28 Nov 2026 12:07:00 GMT")]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    watching(kube, decide)

    [look] = decide.looks
    assert look.log_tail == "step 120/500\n"
    assert look.now == datetime(2026, 11, 28, 12, 7, tzinfo=timezone.utc)
    [log] = kube.calls("GET", "/log$")
    assert log.path == "/api/v1/namespaces/gpu-proof/pods/p-1/log" and log.query == {"tailLines": ["5"], "container": ["mnist-train"]}


def test_a_pod_that_has_not_started_has_no_log_and_is_not_asked_for_one(kube):
    kube.states = [State(job("j-1", "hash-now", active=1), [pod("p-1", "j-1", "Pending")])]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    watching(kube, decide)

    assert decide.looks[0].log_tail is None and kube.calls("GET", "/log$") == []


# --------------------------------------------------------------------------- what it says while it waits


def test_each_waiting_line_is_sent_once_and_again_only_when_it_changes(kube):
    kube.states = [State(job("j-1", "hash-now", active=1))]
    node = Verdict("waiting", "waiting for a node in pool gpu (1 minute so far)")
    pull = Verdict("waiting", "pulling ghcr.io/example/mnist@sha256:abc on node aks-gpu-0")
    decide = Scripted(node, node, node, pull, pull, Verdict("waiting", "training: step 40/500"), Verdict("trained", "PROOF OK"))

    _, said, _ = watching(kube, decide)

    assert said == [node.line, pull.line, "training: step 40/500"]


def test_a_line_that_only_counts_on_is_sent_again_at_most_every_thirty_seconds(kube):
    # A duration that grows each look would otherwise be a line in a CI log every 10 s.
    kube.states = [State(job("j-1", "hash-now", active=1))]
    counting = [Verdict("waiting", f"a node being added in pool gpu for {10 * n}s") for n in range(1, 8)]
    decide = Scripted(*counting, Verdict("waiting", "pulling on node aks-gpu-0 for 5s"), Verdict("trained", "PROOF OK"))

    _, said, _ = watching(kube, decide)

    assert said == [
        "a node being added in pool gpu for 10s",
        "a node being added in pool gpu for 40s",
        "a node being added in pool gpu for 70s",
        "pulling on node aks-gpu-0 for 5s",
    ]


def test_a_line_with_the_clusters_line_breaks_is_sent_as_one_line(kube):
    kube.states = [State(job("j-1", "hash-now", active=1))]
    _, said, _ = watching(kube, Scripted(Verdict("waiting", "pulling:\nBack-off\x1b[2J"), Verdict("trained", "PROOF OK")))

    assert said == ["pulling: Back-off\\x1b[2J"]


def test_the_watch_ends_at_its_limit_with_a_waiting_verdict_that_leaves_the_job_to_its_await(kube):
    kube.states = [State(job("j-1", "hash-now", active=1))]

    got, said, clock = watching(kube, Scripted(WAITING), seconds=60)

    assert got.kind == "waiting" and "watched for 1 minutes" in got.line and WAITING.line in got.line
    assert sum(clock.slept) <= 60 and said == [WAITING.line]
    assert kube.calls("PATCH") == []


# --------------------------------------------------------------------------- when it cannot look


def test_a_403_on_the_pods_says_once_that_the_proof_is_not_watched_and_leaves_it_to_the_jobs_await(kube):
    kube.states = [State(job("j-1", "hash-now", active=1))]
    kube.refuse = [Refusal("GET", "/pods$", 403)]
    decide = Scripted(WAITING)

    got, said, clock = watching(kube, decide)

    assert got.kind == "waiting" and got.line.startswith("the proof is not watched: the cluster answered HTTP 403")
    assert "GET /api/v1/namespaces/gpu-proof/pods" in got.line and got.line.endswith("the Job's own await decides")
    assert said == [got.line] and decide.looks == [] and clock.slept == []
    assert kube.calls("PATCH") == []


def test_an_api_server_that_fails_for_a_while_is_asked_again_and_says_so(kube):
    kube.states = [State(job("j-1", "hash-now", active=1))]
    kube.refuse = [Refusal("GET", "/jobs/", 503, times=2)]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    got, said, clock = watching(kube, decide)

    assert got.kind == "trained" and clock.slept == [live.POLL_SECONDS] * 2
    assert said == [f"looking again in 10 s: the cluster answered HTTP 503 Service Unavailable to GET {JOB_PATH}"]


def test_an_api_server_that_cannot_be_reached_is_asked_again_until_the_watchs_limit(kube):
    gone = kube.kubeconfig().replace(kube.url, "https://127.0.0.1:9")

    got, said, clock = watching(kube, Scripted(WAITING), seconds=30, kubeconfig=lambda cluster: gone)

    assert got.kind == "waiting" and said[0].startswith(
        "looking again in 10 s: could not reach the cluster's API server https://127.0.0.1:9"
    )
    assert clock.slept == [live.POLL_SECONDS] * 3 and kube.requests == []


def test_a_look_the_api_server_never_answers_ends_at_the_looks_own_limit_and_is_tried_again(kube, monkeypatch):
    monkeypatch.setattr(live, "LOOK_SECONDS", 0.05)  # the look's limit, on the real clock: nothing answers anyway
    for url in silent("https"):
        mute = kube.kubeconfig().replace(kube.url, url)
        got, said, clock = watching(kube, Scripted(WAITING), seconds=10, kubeconfig=lambda cluster, mute=mute: mute)

    assert got.kind == "waiting" and said == ["looking again in 10 s: the cluster's API server did not answer a look within 0.05 s"]
    assert clock.slept == [live.POLL_SECONDS]


class CutShort(JsonHandler):
    """An API server whose every answer ends before the Content-Length it announced."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100")
        self.end_headers()
        self.wfile.write(b'{"kind": ')
        self.close_connection = True


def test_an_answer_cut_short_is_no_answer_and_the_watch_looks_again(kube):
    for url in serve_handler(CutShort):
        cut_short = kube.kubeconfig().replace(kube.url, url)
        got, said, clock = watching(kube, Scripted(WAITING), seconds=10, kubeconfig=lambda cluster, cut_short=cut_short: cut_short)

    assert got.kind == "waiting" and said[0].startswith("looking again in 10 s: could not reach the cluster's API server http://127.0.0.1:")
    assert "\n" not in said[0] and clock.slept == [live.POLL_SECONDS]


def test_an_expired_token_is_renewed_once_and_the_watch_goes_on(kube):
    kube.tokens = {"fresh"}
    tokens = iter(["expired", "fresh"])
    made = []

    def connect(config):
        made.append(config)
        return cluster_access.connect(kube.kubeconfig(next(tokens)))

    got, said, _ = watching(kube, Scripted(Verdict("trained", "PROOF OK")), connect=connect)

    assert got.kind == "trained" and said == [] and len(made) == 2
    assert [r.authorization for r in kube.calls("GET", "/jobs/")] == ["Bearer expired", "Bearer fresh"]


def test_a_token_the_cluster_never_accepts_leaves_the_proof_unwatched_in_one_line(kube):
    kube.tokens = {"other"}

    got, said, _ = watching(kube, Scripted(WAITING))

    assert got.kind == "waiting" and "HTTP 401 Unauthorized to GET " + JOB_PATH in got.line and said == [got.line]


def test_a_kubeconfig_that_cannot_be_had_leaves_the_proof_unwatched_in_one_line(kube):
    def refused(cluster):
        raise ClusterAccessError("fetching the user kubeconfig of cluster rg/aks (listClusterUserCredential): HttpResponseError: 403")

    got, said, _ = watching(kube, Scripted(WAITING), kubeconfig=refused)

    assert got.line == (
        "the proof is not watched: fetching the user kubeconfig of cluster rg/aks (listClusterUserCredential): "
        "HttpResponseError: 403; the Job's own await decides"
    )
    assert said == [got.line] and kube.requests == []


# --------------------------------------------------------------------------- when it cannot end or keep


def test_a_job_replaced_before_the_watch_ends_it_is_left_alone(kube):
    kube.states = [State(job("j-1", "hash-now", active=1))]
    stop = Verdict("stop", "no node can take the pod: 0/3 nodes are available: 3 node(s) had untolerated taint")

    def replaced(facts, look):
        kube.states = [State(job("j-2", "hash-now", active=1))]  # another `up` replaced it meanwhile
        kube.looks = 1
        return stop

    got, _, _ = watching(kube, replaced)

    [end] = kube.calls("PATCH", "/jobs/")
    assert end.body["metadata"]["uid"] == "j-1" and kube.states[0].job["spec"]["activeDeadlineSeconds"] == 3000
    assert str(got) == stop.line


def test_a_job_the_watch_may_not_end_is_named_in_the_line(kube):
    kube.states = [State(job("j-1", "hash-now", active=1))]
    kube.refuse = [Refusal("PATCH", "/jobs/", 403)]
    stop = Verdict("stop", "the cluster autoscaler will not add a node to pool gpu: max node group size reached")

    got, _, _ = watching(kube, Scripted(stop))

    assert str(got).startswith(stop.line + " (the watch could not end Job gpu-proof/mnist-train (the cluster answered HTTP 403")
    assert str(got).endswith("it runs until its activeDeadlineSeconds)")


def test_an_outcome_that_cannot_be_kept_changes_nothing_of_the_verdict_and_says_why(kube):
    kube.states = [State(job("j-1", "hash-now", "Complete", succeeded=1))]
    kube.refuse = [Refusal("PATCH", "/configmaps/", 403)]
    trained = Verdict("trained", "PROOF OK")

    got, said, _ = watching(kube, Scripted(trained))

    assert got == trained
    assert said == [
        "the proof's outcome could not be kept in ConfigMap gpu-proof/mnist-train-result: the cluster answered HTTP 403 "
        "Forbidden to PATCH /api/v1/namespaces/gpu-proof/configmaps/mnist-train-result as the kubeconfig's user 'u'"
    ]


# --------------------------------------------------------------------------- the kubeconfig, from ARM


class FakeCredentialArm(JsonHandler):
    """listClusterUserCredential, as ARM answers it (CredentialResults: kubeconfigs[].value, base64)."""

    answer: tuple[int, Any] = (200, {})
    seen: list[str] = []

    def do_POST(self):
        self.seen.append(self.path)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.answer_json(*self.answer)


@pytest.fixture
def arm(tmp_path, monkeypatch):
    cert, key = fake_aks._certificate(tmp_path)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))  # azure-core's requests transport trusts the fake
    FakeCredentialArm.seen = []
    served = serve_handler(FakeCredentialArm, tls=(cert, key))
    yield next(served)
    next(served, None)


ENTRA_KUBECONFIG = """apiVersion: v1
kind: Config
current-context: aks
clusters: [{name: aks, cluster: {server: "https://aks.example:443"}}]
contexts: [{name: aks, context: {cluster: aks, user: u}}]
users:
- name: u
  user:
    exec:
      command: kubelogin
      args: [get-token, --login, devicecode, --server-id, 6dae42f8-4368-4678-94ff-3960e28e3630]
      env: [{name: AAD_LOGIN_METHOD, value: devicecode}]
"""


def test_the_kubeconfig_is_fetched_from_arm_in_the_exec_format_and_signs_in_without_a_prompt(arm):
    import base64

    FakeCredentialArm.answer = (
        200,
        {"kubeconfigs": [{"name": "clusterUser", "value": base64.b64encode(ENTRA_KUBECONFIG.encode()).decode()}]},
    )
    cluster = live.ClusterRef("sub-1", "rg-1", "aks-1", entra=True, arm_endpoint=arm)

    got = live.user_kubeconfig(cluster, 30, credential=FakeCredential())

    [path] = FakeCredentialArm.seen
    assert path.startswith(
        "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.ContainerService/managedClusters/aks-1/listClusterUserCredential?"
    )
    assert "format=exec" in path and f"api-version={live.API_VERSION}" in path
    user = json.loads(json.dumps(__import__("yaml").safe_load(got)))["users"][0]["user"]["exec"]
    assert user["args"] == ["get-token", "--login", "azurecli", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"]
    assert user["env"] is None


def test_a_refused_kubeconfig_fetch_is_one_line_naming_the_call(arm):
    FakeCredentialArm.answer = (403, {"error": {"code": "AuthorizationFailed", "message": "no listClusterUserCredential/action"}})
    cluster = live.ClusterRef("sub-1", "rg-1", "aks-1", entra=False, arm_endpoint=arm)

    with pytest.raises(ClusterAccessError) as raised:
        live.user_kubeconfig(cluster, 30, credential=FakeCredential())

    said = str(raised.value)
    assert said.startswith("fetching the user kubeconfig of cluster rg-1/aks-1 (listClusterUserCredential): HttpResponseError:")
    assert "AuthorizationFailed" in said and "\n" not in said


# --------------------------------------------------------------------------- a Job that is not there, or not any more


def test_a_job_whose_create_was_refused_hands_the_proof_back_to_its_step_within_two_minutes(kube):
    # An admission webhook, AlreadyExists or a 403 refused the Job's create, or `pulumi up
    # --parallel 1` ran the watch before the Job's step: no Job of this spec comes.
    kube.states = [State()]
    decide = Scripted(Verdict("waiting", "the Job gpu-proof/mnist-train is not created yet"))

    got, said, clock = watching(kube, decide, seconds=3600.0)

    assert got == Verdict(
        "waiting",
        "the proof is not watched: no Job gpu-proof/mnist-train of this `pulumi up` appeared within 2 minutes "
        "(its create refused, or not begun); the Job's own await decides",
    )
    assert live.NOT_CREATED_SECONDS <= clock.now <= live.NOT_CREATED_SECONDS + live.POLL_SECONDS
    assert said[-1] == got.line


def test_a_job_of_the_name_that_is_not_this_ups_and_stays_is_handed_back_too(kube):
    # A Job someone made by hand under the proof's name (the create's AlreadyExists): another spec, never deleted.
    kube.states = [State(job("j-0", "someone-elses"))]
    got, _, clock = watching(kube, Scripted(Verdict("waiting", "not this up's")))
    assert got.line.startswith("the proof is not watched: no Job gpu-proof/mnist-train of this `pulumi up` appeared")
    assert clock.now <= live.NOT_CREATED_SECONDS + live.POLL_SECONDS


def test_a_replacement_that_takes_longer_than_two_minutes_is_still_watched(kube):
    # replaceUnready deletes the earlier Job in the foreground with its pods first: a Job being
    # deleted is a sign the new one comes.
    going = job("j-0", "hash-old")
    going["metadata"]["deletionTimestamp"] = "2026-11-28T12:00:30Z"
    kube.states = [*[State(going)] * 15, State(), State(job("j-1", "hash-now", "Complete", succeeded=1))]
    decide = Scripted(*[WAITING] * 16, Verdict("trained", "PROOF OK"))

    got, _, clock = watching(kube, decide)

    assert got == Verdict("trained", "PROOF OK") and clock.now > live.NOT_CREATED_SECONDS


def test_the_job_this_up_created_once_deleted_ends_the_watch_at_the_next_look(kube):
    # After a first Ctrl-C the watch goes on (the SDK's dynamic provider host answers the engine's
    # Cancel with nothing: docs/proof.md); deleting the Job is what it sees.
    kube.states = [State(job("j-1", "hash-now", active=1), [pod("p-1", "j-1")]), State()]

    got, said, clock = watching(kube, Scripted(WAITING))

    assert got == Verdict(
        "waiting",
        "the proof is not watched: the Job gpu-proof/mnist-train this `pulumi up` created was deleted; the Job's own await decides",
    )
    assert clock.now == live.POLL_SECONDS and said == [WAITING.line, got.line]
    assert kube.calls("PATCH") == [], "nothing is ended or kept for a Job that is gone"


# --------------------------------------------------------------------------- a pod waiting for a node: its pools' nodes


def gpu_pod(name: str, namespace: str, node: str, resource: str = "nvidia.com/gpu", **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"limits": {resource: "1"}}}]},
        "status": {"phase": "Running"},
    }


def test_a_pending_pod_reads_its_pools_nodes_and_the_pods_that_hold_their_gpus(kube):
    node = {"metadata": {"name": "aks-gpu-12345678-vmss000000", "labels": {"kubernetes.azure.com/agentpool": "gpu"}}}
    other = {"metadata": {"name": "aks-system-1-vmss000000", "labels": {"kubernetes.azure.com/agentpool": "system"}}}
    on_node = [
        gpu_pod("train-7f9c", "research", "aks-gpu-12345678-vmss000000"),
        gpu_pod("mig-1", "research", "aks-gpu-12345678-vmss000000", "nvidia.com/mig-1g.10gb"),
        gpu_pod("p-0", "gpu-proof", "aks-gpu-12345678-vmss000000", **{"batch.kubernetes.io/controller-uid": "j-1"}),
        {
            **gpu_pod("web", "default", "aks-gpu-12345678-vmss000000"),
            "spec": {"nodeName": "aks-gpu-12345678-vmss000000", "containers": [{}]},
        },
        {**gpu_pod("done", "research", "aks-gpu-12345678-vmss000000"), "status": {"phase": "Succeeded"}},
    ]
    kube.states = [State(job("j-1", "hash-now", active=1), [pod("p-1", "j-1")], nodes=[node, other], pods_on_nodes=on_node)]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    watching(kube, decide)

    [look] = decide.looks
    assert look.nodes == [node]
    assert [p["metadata"]["name"] for p in look.holders or []] == ["train-7f9c", "mig-1"], "GPU and MIG holders, not the proof's own"
    [nodes] = kube.calls("GET", "/api/v1/nodes$")
    assert nodes.query == {"labelSelector": ["kubernetes.azure.com/agentpool in (gpu)"]}
    [pods] = kube.calls("GET", "/api/v1/pods$")
    assert pods.query == {"fieldSelector": ["spec.nodeName=aks-gpu-12345678-vmss000000"]}


def test_a_deployer_that_may_not_list_nodes_is_still_watched_and_its_look_says_not_read(kube):
    kube.states = [State(job("j-1", "hash-now", active=1), [pod("p-1", "j-1")])]
    kube.refuse = [fake_kube_api.Refusal("GET", "^/api/v1/nodes$", 403)]
    decide = Scripted(Verdict("trained", "PROOF OK"))

    assert watching(kube, decide)[0] == Verdict("trained", "PROOF OK")
    [look] = decide.looks
    assert (look.nodes, look.holders) == (None, None)


def test_a_pod_on_a_node_asks_for_no_nodes(kube):
    scheduled = pod("p-1", "j-1")
    scheduled["spec"]["nodeName"] = "aks-gpu-12345678-vmss000000"
    kube.states = [State(job("j-1", "hash-now", active=1), [scheduled])]
    watching(kube, Scripted(Verdict("trained", "PROOF OK")))
    assert kube.calls("GET", "^/api/v1/(nodes|pods)$") == []


def test_a_date_header_without_a_zone_is_the_api_servers_utc(kube):
    kube.states = [State(job("j-1", "hash-now", "Complete", succeeded=1), date="Sat, 28 Nov 2026 12:30:00 -0000")]
    decide = Scripted(Verdict("trained", "PROOF OK"))
    watching(kube, decide)
    assert decide.looks[0].now == datetime(2026, 11, 28, 12, 30, tzinfo=timezone.utc)
