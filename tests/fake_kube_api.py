"""A local fake of the Kubernetes API server's paths the proof's watch asks, over TLS on
127.0.0.1, answering a scripted sequence of cluster states (one a look: each GET of the Job
moves to the next, the last one stays) and recording every request (method, path, query, the
Content-Type and the body), so tests check what went over the wire.

It answers as the API server does for what the watch relies on:
  - a Job by name (404 when the state has none); pods by `labelSelector=
    batch.kubernetes.io/controller-uid=<uid>`, only those whose label has that value; events by
    `fieldSelector=involvedObject.uid=<uid>`, only that object's;
  - nodes by a set-based `labelSelector=<key> in (<v>,...)`, only those whose label has one of
    the values; pods of every namespace by `fieldSelector=spec.nodeName=<node>`, only that
    node's (the state's `nodes` and `pods_on_nodes`);
  - a pod's log (`tailLines`) as text, 400 for a pod the state has no log for (the API server's
    answer for a container that has not started);
  - a JSON merge PATCH of the Job: 422 when the body's metadata.uid is not the Job's (the UID is
    immutable: apimachinery objectmeta.go `ValidateObjectMetaUpdate`), else the patched Job;
  - a server-side apply of a ConfigMap: 201 the first time, 200 after, the object kept;
  - the Date header from the state's `date` (an HTTP date) where a step sets one.
`refuse` answers a request whose method and path match with a status instead, `times` times
(None: always); `tokens` are the bearer tokens it accepts (others: 401); `gate`, where set, holds
each GET of the Job until it is set.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import fake_aks
from fake_arm import JsonHandler, serve_handler

JOB = re.compile(r"^/apis/batch/v1/namespaces/(?P<ns>[^/]+)/jobs/(?P<name>[^/]+)$")
PODS = re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/pods$")
LOG = re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?P<pod>[^/]+)/log$")
EVENTS = re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/events$")
CONFIGMAP = re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/configmaps/(?P<name>[^/]+)$")
NODES = re.compile(r"^/api/v1/nodes$")
ALL_PODS = re.compile(r"^/api/v1/pods$")


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    content_type: str
    authorization: str
    body: Any = None


@dataclass
class State:
    """The cluster at one look."""

    job: dict[str, Any] | None = None
    pods: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    logs: dict[str, str] = field(default_factory=dict)
    date: str | None = None
    nodes: list[dict[str, Any]] = field(default_factory=list)
    #: Pods of any namespace, each with its spec.nodeName (what the nodes run).
    pods_on_nodes: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Refusal:
    method: str
    path: str  # a regular expression the path must match
    status: int
    times: int | None = None


@dataclass
class FakeKube:
    states: list[State] = field(default_factory=lambda: [State()])
    requests: list[Request] = field(default_factory=list)
    refuse: list[Refusal] = field(default_factory=list)
    tokens: set[str] = field(default_factory=lambda: {"token"})
    config_maps: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    looks: int = 0
    #: The API server's clock where a state sets none (an HTTP date, as the Date header carries it).
    date: str = "Sat, 28 Nov 2026 12:01:00 GMT"
    url: str = ""
    ca: bytes = b""
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Set: each GET of the Job first waits for it (a test holds a look there while it acts),
    #: and `held` is set once one waits.
    gate: threading.Event | None = None
    held: threading.Event = field(default_factory=threading.Event)

    @property
    def state(self) -> State:
        return self.states[min(max(self.looks - 1, 0), len(self.states) - 1)]

    def calls(self, method: str | None = None, path: str = "") -> list[Request]:
        return [r for r in self.requests if (method is None or r.method == method) and re.search(path, r.path)]

    def kubeconfig(self, token: str = "token") -> str:
        """A kubeconfig for the fake: its CA, a static bearer token."""
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "aks",
                "clusters": [
                    {"name": "aks", "cluster": {"server": self.url, "certificate-authority-data": base64.b64encode(self.ca).decode()}}
                ],
                "contexts": [{"name": "aks", "context": {"cluster": "aks", "user": "u"}}],
                "users": [{"name": "u", "user": {"token": token}}],
            }
        )


def handler(fake: FakeKube) -> type[JsonHandler]:
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def date_time_string(self, timestamp: float | None = None) -> str:
            return fake.state.date or fake.date

        def _route(self, method: str) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if fake.gate is not None and method == "GET" and JOB.match(url.path):
                fake.held.set()
                fake.gate.wait(120)
            with fake.lock:
                if method == "GET" and JOB.match(url.path):
                    fake.looks += 1
                request = Request(
                    method,
                    url.path,
                    parse_qs(url.query),
                    self.headers.get("Content-Type") or "",
                    self.headers.get("Authorization") or "",
                    json.loads(raw) if raw else None,
                )
                fake.requests.append(request)
                if request.authorization.removeprefix("Bearer ") not in fake.tokens:
                    return self.answer_json(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
                for refusal in fake.refuse:
                    if refusal.method == method and re.search(refusal.path, url.path) and refusal.times != 0:
                        if refusal.times is not None:
                            refusal.times -= 1
                        return self.answer_json(refusal.status, {"kind": "Status", "code": refusal.status})
                self._answer(request)

        def _answer(self, request: Request) -> None:
            state, path, query = fake.state, request.path, request.query
            if JOB.match(path) and request.method == "GET":
                return self.answer_json(200, state.job) if state.job else self.answer_json(404, {"kind": "Status", "code": 404})
            if JOB.match(path) and request.method == "PATCH":
                if state.job is None:
                    return self.answer_json(404, {"kind": "Status", "code": 404})
                if (request.body or {}).get("metadata", {}).get("uid") != state.job["metadata"]["uid"]:
                    return self.answer_json(422, {"kind": "Status", "code": 422, "message": "metadata.uid: field is immutable"})
                state.job.setdefault("spec", {}).update(request.body.get("spec") or {})
                return self.answer_json(200, state.job)
            if NODES.match(path):
                # A set-based selector, `key in (a,b)` (apimachinery pkg/labels/selector.go Parse).
                key, _, values = query.get("labelSelector", [""])[0].partition(" in ")
                wanted = set(values.strip("()").split(","))
                items = [n for n in state.nodes if (n["metadata"].get("labels") or {}).get(key) in wanted]
                return self.answer_json(200, {"kind": "NodeList", "items": items})
            if ALL_PODS.match(path):
                key, _, node = query.get("fieldSelector", [""])[0].partition("=")
                items = [p for p in state.pods_on_nodes if key == "spec.nodeName" and p["spec"].get("nodeName") == node]
                return self.answer_json(200, {"kind": "PodList", "items": items})
            if PODS.match(path):
                key, _, uid = query.get("labelSelector", [""])[0].partition("=")
                items = [p for p in state.pods if key and (p["metadata"].get("labels") or {}).get(key) == uid]
                return self.answer_json(200, {"kind": "PodList", "items": items})
            if match := EVENTS.match(path):
                # A field selector is terms joined by ',', each `field=value`, all of which an
                # event must match (apimachinery pkg/fields/selector.go ParseSelector).
                terms = [t.partition("=") for t in query.get("fieldSelector", [""])[0].split(",")]
                items = [
                    e
                    for e in state.events
                    if e.get("metadata", {}).get("namespace", "gpu-proof") == match["ns"]
                    and all(e["involvedObject"].get(k.removeprefix("involvedObject.")) == v for k, _, v in terms)
                ]
                return self.answer_json(200, {"kind": "EventList", "items": items})
            if match := LOG.match(path):
                if match["pod"] not in state.logs:
                    return self.answer_json(400, {"kind": "Status", "code": 400, "message": "container is waiting to start"})
                data = state.logs[match["pod"]].encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return None
            if (match := CONFIGMAP.match(path)) and request.method == "PATCH":
                key = (match["ns"], match["name"])
                status = 200 if key in fake.config_maps else 201
                fake.config_maps[key] = request.body
                return self.answer_json(status, request.body)
            return self.answer_json(404, {"kind": "Status", "code": 404})

        def do_GET(self) -> None:
            self._route("GET")

        def do_PATCH(self) -> None:  # noqa: N802 (http.server calls it by this name)
            self._route("PATCH")

    return Handler


def serve(folder: Path) -> Iterator[FakeKube]:
    """The fake over TLS with a certificate of its own (fake_aks's), yielded; shut down after."""
    fake = FakeKube()
    cert, key = fake_aks._certificate(folder)
    fake.ca = cert.read_bytes()
    served = serve_handler(handler(fake), tls=(cert, key))
    fake.url = next(served)
    try:
        yield fake
    finally:
        next(served, None)


# --------------------------------------------------------------------------- objects as the API server answers them


def job(uid: str, spec_hash: str, created: str = "2026-11-28T12:00:00Z", condition: str | None = None, **status: Any) -> dict[str, Any]:
    """A proof Job, created a minute before the fake's clock by default; `condition` True if set."""
    if condition:
        status["conditions"] = [{"type": condition, "status": "True"}]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "mnist-train",
            "namespace": "gpu-proof",
            "uid": uid,
            "creationTimestamp": created,
            "annotations": {"aks-gpu.io/proof-spec": spec_hash},
        },
        "spec": {"activeDeadlineSeconds": 3000},
        "status": status,
    }


def pod(name: str, job_uid: str, phase: str = "Pending", created: str = "2026-11-28T12:00:00Z") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "gpu-proof",
            "uid": f"uid-{name}",
            "creationTimestamp": created,
            "labels": {"batch.kubernetes.io/controller-uid": job_uid},
        },
        "spec": {"containers": [{"name": "mnist-train"}]},
        "status": {"phase": phase},
    }


def event(
    uid: str, reason: str, message: str, at: str, kind: str = "Pod", type_: str = "Warning", name: str = "", namespace: str = "gpu-proof"
) -> dict[str, Any]:
    return {
        "kind": "Event",
        "metadata": {"namespace": namespace},
        "involvedObject": {"kind": kind, "uid": uid, "name": name},
        "reason": reason,
        "message": message,
        "type": type_,
        "lastTimestamp": at,
    }
