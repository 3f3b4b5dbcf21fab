"""A local fake of the AKS agentPools REST calls (GET, PUT, DELETE), on 127.0.0.1.

It answers the way ARM does for what the managed GPU pool relies on (azure-rest-api-specs,
Microsoft.ContainerService agentPools: AgentPools_Get 200 | default error,
AgentPools_CreateOrUpdate 200 | 201, AgentPools_Delete 202 | 204):
  - a pool that does not exist is 404 ResourceNotFound; a cluster that does not exist is
    404 ParentResourceNotFound for the pool beneath it;
  - PUT creates (201) or updates (200) and answers with the stored body; a PUT that changes
    a property AKS fixes at creation is 400, as AKS refuses it;
  - DELETE of a pool that is not there is 204, as ARM's DELETE is idempotent; with the
    cluster gone it is 404.

Two ways to answer, as tests need:
  - at once (the default): PUT answers provisioningState Succeeded, DELETE 204;
  - as long-running operations (`operation_seconds` set), as AKS does: PUT answers 201/200
    with an `Azure-AsyncOperation` status URL that says InProgress until the operation has
    run that long, then Succeeded; DELETE answers 202 with a `Location` that answers 202,
    then 204 (ARM's async operation patterns, "Asynchronous operations" in the ARM RPC
    guide). While an operation runs, any other PUT or DELETE of a pool of the same cluster
    is 409 OperationNotAllowed, as AKS runs one agent-pool operation per cluster at a time.
    `busy` adds that many 409s to the next PUTs or DELETEs; `refuse` answers a method with
    another status and error code (403 AuthorizationFailed, 500, a 400 OperationNotAllowed).
    An operation can run on events instead of the clock, so a test's outcome does not hang on
    how fast the machine is: `operation_seconds = math.inf` runs it for as long as the test
    lasts, and `operation_refusals` ends it once the fake has refused that many requests
    because of it (AKS finishing while a client waits it out).
The LRO answers carry `retry-after-ms`, which azure-core's poller honours (a `Retry-After:
0` would send it back to its 30 s default: base_polling `_extract_delay`).

With `tls`, the fake serves HTTPS with a certificate of its own (`ca_file`): the Azure SDK
sends a bearer token over HTTPS only, so a client with a real credential can talk to it.

It also answers a cluster's listClusterUserCredential (POST, ARM's CredentialResults: the
kubeconfig base64-encoded in `kubeconfigs[0].value`) with the kubeconfig a test puts in
`kubeconfigs` for that cluster; 404 ResourceNotFound for a cluster it holds none for.

Every request is recorded with its method, path, api-version, query, body and the body's raw
bytes, so tests check what went over the wire, not what an SDK method was called with.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import re
import ssl
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from azure.core.credentials import AccessToken
from azure.core.pipeline.policies import SansIOHTTPPolicy

POOL_PATH = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.ContainerService/"
    r"managedClusters/(?P<cluster>[^/]+)/agentPools/(?P<pool>[^/]+)$",
    re.IGNORECASE,
)
CREDENTIAL_PATH = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.ContainerService/"
    r"managedClusters/(?P<cluster>[^/]+)/listClusterUserCredential$",
    re.IGNORECASE,
)
OPERATION_PATH = re.compile(r"^/fake-operations/(?P<id>[0-9a-f-]+)$")
# What AKS cannot change on an existing pool, as its docs say (components/pools/pool_fields.py
# cites each; a PUT that changes one is refused, as AKS refuses it).
FIXED = (
    "vmSize",
    "osType",
    "type",
    "maxPods",
    "vnetSubnetID",
    "podSubnetID",
    "availabilityZones",
    "scaleSetPriority",
    "scaleSetEvictionPolicy",
    "spotMaxPrice",
    "gpuInstanceProfile",
    "gpuProfile",
)
BUSY = {
    "code": "OperationNotAllowed",
    "message": "Operation is not allowed because there's an in progress update node pool operation. Please wait for it to finish before starting a new operation.",
}


@dataclass
class Request:
    method: str
    path: str
    api_version: str
    body: dict[str, Any] | None
    raw: bytes = b""
    query: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Operation:
    """A long-running operation on one pool: done once `ends` has passed, or, with
    `refusals`, once it has caused that many 409s."""

    cluster: tuple[str, str]
    pool: tuple[str, str, str]
    ends: float
    #: What happens to the fake's pools when it ends: the pool's new body, or None (deleted).
    result: dict[str, Any] | None
    delete: bool = False
    applied: bool = False
    #: How many more 409s it causes before it ends, whatever the clock says (None: it ends at `ends`).
    refusals: int | None = None

    def done(self) -> bool:
        if self.refusals is not None:
            return self.refusals <= 0
        return time.monotonic() >= self.ends


@dataclass
class FakeAks:
    """The fake's state: which clusters exist and their pools, keyed by (group, cluster)."""

    clusters: set[tuple[str, str]] = field(default_factory=set)
    pools: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    url: str = ""
    #: Answer PUT and DELETE as long-running operations that take this long (None: at once).
    operation_seconds: float | None = None
    #: With operation_seconds set: operations started now end once the fake has answered this
    #: many 409s because of them, however long that takes (None: after operation_seconds).
    operation_refusals: int | None = None
    #: How many of the next PUTs and DELETEs answer 409 OperationNotAllowed.
    busy: int = 0
    #: The Retry-After of a 409, in seconds (None: no Retry-After).
    busy_retry_after: str | None = None
    #: Answers to give instead, by method: (status, error code[, message]), to every such request.
    refuse: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    #: The user kubeconfig (its text) listClusterUserCredential answers, by (group, cluster).
    kubeconfigs: dict[tuple[str, str], str] = field(default_factory=dict)
    #: The CA certificate a client must trust (with `tls`).
    ca_file: Path | None = None
    operations: dict[str, Operation] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self, operation_seconds: float | None = 0.05) -> None:
        """No pool, no kubeconfig, no request, no operation running, nothing refused and no 409 pending."""
        with self.lock:
            self.pools.clear()
            self.kubeconfigs.clear()
            self.requests.clear()
            self.operations.clear()
            self.refuse.clear()
            self.busy, self.busy_retry_after, self.operation_seconds, self.operation_refusals = 0, None, operation_seconds, None

    def calls(self, method: str | None = None) -> list[Request]:
        return [r for r in self.requests if method is None or r.method == method]

    def pool_calls(self, method: str | None = None) -> list[Request]:
        """The calls on pools themselves, without the polls of operations."""
        return [r for r in self.calls(method) if POOL_PATH.match(r.path)]

    def running(self, cluster: tuple[str, str]) -> Operation | None:
        self.settle()
        return next((op for op in self.operations.values() if op.cluster == cluster and not op.done()), None)

    def refuses(self, method: str, cluster: tuple[str, str]) -> bool:
        """Whether a PUT or DELETE meets a 409: `busy` is pending, or an operation runs on the
        cluster (which counts the refusal toward its `refusals`)."""
        running = self.running(cluster) if method != "GET" else None
        if method == "GET" or not (self.busy > 0 or running):
            return False
        self.busy = max(0, self.busy - 1)
        if running is not None and running.refusals is not None:
            running.refusals -= 1
        return True

    def settle(self) -> None:
        """Apply what the operations that have ended did."""
        for op in self.operations.values():
            if op.done() and not op.applied:
                op.applied = True
                if op.delete:
                    self.pools.pop(op.pool, None)
                elif op.result is not None:
                    op.result["properties"]["provisioningState"] = "Succeeded"


def _start(fake: FakeAks, key: tuple[str, str, str], result: dict[str, Any] | None, delete: bool) -> str:
    """A long-running operation on a pool; its status URL."""
    assert fake.operation_seconds is not None
    op_id = str(uuid.uuid4())
    ends = time.monotonic() + fake.operation_seconds
    fake.operations[op_id] = Operation(key[:2], key, ends, result, delete, refusals=fake.operation_refusals)
    return f"{fake.url}/fake-operations/{op_id}"


def _manual_scale(name: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, str] | None:
    """A PUT's count is a manual scale, which AKS refuses while the autoscaler runs the pool
    (hashicorp/terraform-provider-azurerm#4543 quotes the message; the code is not documented)."""
    if old.get("enableAutoScaling") and new.get("enableAutoScaling") and new.get("count") != old.get("count"):
        return {"code": "BadRequest", "message": f"Cannot manually scale AgentPool {name} with cluster autoscaler enabled"}
    return None


def _handler(fake: FakeAks) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; without this, Nagle's algorithm holds the
        # second until the client's delayed ACK, 40 ms a request on Linux.
        disable_nagle_algorithm = True

        def _answer(self, status: int, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _route(self, method: str) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            query = parse_qs(url.query)
            api = query.get("api-version", [""])[0]
            with fake.lock:
                fake.requests.append(Request(method, url.path, api, body, raw, query))
                if (op := OPERATION_PATH.match(url.path)) and method == "GET":
                    return self._operation(op["id"])
                if (credential := CREDENTIAL_PATH.match(url.path)) and method == "POST":
                    return self._credential((credential["rg"], credential["cluster"]))
                match = POOL_PATH.match(url.path)
                if not match:
                    return self._answer(404, {"error": {"code": "NotFound", "message": url.path}})
                rg, cluster, pool = match["rg"], match["cluster"], match["pool"]
                if (rg, cluster) not in fake.clusters:
                    return self._answer(404, {"error": {"code": "ParentResourceNotFound", "message": f"cluster {cluster}"}})
                if method in fake.refuse:
                    status, code, *message = fake.refuse[method]
                    text = message[0] if message else f"{code} (the fake's refusal)"
                    return self._answer(status, {"error": {"code": code, "message": text}})
                if fake.refuses(method, (rg, cluster)):
                    retry = {"Retry-After": fake.busy_retry_after} if fake.busy_retry_after is not None else {}
                    return self._answer(409, {"error": BUSY}, retry)
                fake.settle()
                getattr(self, f"_{method.lower()}")((rg, cluster, pool), body, url.path)

        def _operation(self, op_id: str) -> None:
            op = fake.operations.get(op_id)
            if op is None:  # cleared by a test, or the fake closing: a poller left behind stops here
                return self._answer(404, {"error": {"code": "NotFound", "message": f"operation {op_id}"}})
            fake.settle()
            if op.delete:  # a Location URL: 202 while it runs, then 204
                return self._answer(204) if op.done() else self._answer(202, None, {"Location": self._here(), "retry-after-ms": "5"})
            status = "Succeeded" if op.done() else "InProgress"
            self._answer(200, {"name": op_id, "status": status}, {"retry-after-ms": "5"})

        def _credential(self, cluster: tuple[str, str]) -> None:
            kubeconfig = fake.kubeconfigs.get(cluster)
            if kubeconfig is None:
                return self._answer(404, {"error": {"code": "ResourceNotFound", "message": f"managedClusters/{cluster[1]}"}})
            value = base64.b64encode(kubeconfig.encode()).decode()
            self._answer(200, {"kubeconfigs": [{"name": "clusterUser", "value": value}]})

        def _here(self) -> str:
            return f"{fake.url}{self.path}"

        def _get(self, key, body, path):
            if key not in fake.pools:
                return self._answer(404, {"error": {"code": "ResourceNotFound", "message": f"agentPools/{key[2]}"}})
            self._answer(200, fake.pools[key])

        def _put(self, key, body, path):
            new = dict(body["properties"])
            old = (fake.pools.get(key) or {}).get("properties") or {}
            if changed := next((p for p in FIXED if key in fake.pools and p in new and new[p] != old.get(p)), None):
                refusal = {"code": "PropertyChangeNotAllowed", "message": f"Changing property '{changed}' is not allowed."}
                return self._answer(400, {"error": refusal})
            if key in fake.pools and (refusal := _manual_scale(key[2], old, new)):
                return self._answer(400, {"error": refusal})
            status = 200 if key in fake.pools else 201
            new.setdefault("currentOrchestratorVersion", "1.34.2")
            new["provisioningState"] = "Succeeded"
            kind = "Microsoft.ContainerService/managedClusters/agentPools"
            fake.pools[key] = {"id": path, "name": key[2], "type": kind, "properties": new}
            if fake.operation_seconds is None:
                return self._answer(status, fake.pools[key])
            new["provisioningState"] = "Creating" if status == 201 else "Updating"
            status_url = _start(fake, key, fake.pools[key], delete=False)
            self._answer(status, fake.pools[key], {"Azure-AsyncOperation": status_url, "retry-after-ms": "5"})

        def _delete(self, key, body, path):
            if fake.operation_seconds is None or key not in fake.pools:
                fake.pools.pop(key, None)
                return self._answer(204)
            fake.pools[key]["properties"]["provisioningState"] = "Deleting"
            self._answer(202, None, {"Location": _start(fake, key, None, delete=True), "retry-after-ms": "5"})

        def do_GET(self):
            self._route("GET")

        def do_PUT(self):
            self._route("PUT")

        def do_DELETE(self):
            self._route("DELETE")

        def do_POST(self):
            self._route("POST")

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


class FakeCredential:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("fake-token", 4102444800)


class FakeBearer(SansIOHTTPPolicy):
    """A bearer header for the fake: the SDK's ARM policy refuses to send a token over
    plain http, and the fake serves plain http unless asked for TLS."""

    def on_request(self, request: Any) -> None:
        request.http_request.headers["Authorization"] = "Bearer fake-token"


def client_factory_for(url: str):
    """A stand-in for managed_gpu_pool.client_factory that reaches the fake, whatever
    endpoint the pool's inputs name."""

    def factory(subscription_id: str, api_version: str, endpoint: str = "", seconds: float | None = None) -> Any:
        from azure.mgmt.containerservice import ContainerServiceClient

        return ContainerServiceClient(
            FakeCredential(),
            subscription_id,
            base_url=url,
            api_version=api_version,
            authentication_policy=FakeBearer(),
            polling_interval=0,
            retry_total=0,
        )

    return factory


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "fake-arm.pem", folder / "fake-arm.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_file, key_file


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (an operation given up at its time limit) is no news."""


def serve(tls: bool = False) -> Iterator[FakeAks]:
    fake = FakeAks()
    server = _Server(("127.0.0.1", 0), _handler(fake))
    with tempfile.TemporaryDirectory() as folder:
        scheme = "http"
        if tls:
            fake.ca_file, key_file = _certificate(Path(folder))
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(fake.ca_file, key_file)
            server.socket = context.wrap_socket(server.socket, server_side=True)
            scheme = "https"
        # A short poll: shutdown() waits for serve_forever to notice, 0.5 s by default.
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        fake.url = f"{scheme}://127.0.0.1:{server.server_port}"
        try:
            yield fake
        finally:
            # A poller a timed-out operation left behind keeps its connection open after the
            # server stops listening: with its operation gone, its next poll ends it.
            with fake.lock:
                fake.operations.clear()
            server.shutdown()
            server.server_close()
