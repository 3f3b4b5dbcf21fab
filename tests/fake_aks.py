"""A local fake of the AKS agentPools REST calls (GET, PUT, DELETE), on 127.0.0.1.

It answers the way ARM does for what the managed GPU pool relies on (azure-rest-api-specs,
Microsoft.ContainerService agentPools: AgentPools_Get 200 | default error,
AgentPools_CreateOrUpdate 200 | 201, AgentPools_Delete 202 | 204):
  - a pool that does not exist is 404 ResourceNotFound; a cluster that does not exist is
    404 ParentResourceNotFound for the pool beneath it;
  - PUT creates (201) or updates (200) and answers with the stored body, provisioningState
    Succeeded; a PUT that changes a property AKS fixes at creation is 400, as AKS refuses it;
  - DELETE of a pool that is not there is 204, as ARM's DELETE is idempotent; with the
    cluster gone it is 404.
Every request is recorded with its method, path, api-version and body, so tests check what
went over the wire, not what an SDK method was called with.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator, Optional
from urllib.parse import parse_qs, urlsplit

from azure.core.credentials import AccessToken
from azure.core.pipeline.policies import SansIOHTTPPolicy

POOL_PATH = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.ContainerService/"
    r"managedClusters/(?P<cluster>[^/]+)/agentPools/(?P<pool>[^/]+)$",
    re.IGNORECASE,
)
# What AKS cannot change on an existing pool (the managed pool's replace set).
FIXED = ("vmSize", "osType", "type", "mode", "maxPods", "scaleSetPriority", "gpuInstanceProfile", "gpuProfile")


@dataclass
class Request:
    method: str
    path: str
    api_version: str
    body: Optional[dict[str, Any]]


@dataclass
class FakeAks:
    """The fake's state: which clusters exist and their pools, keyed by (group, cluster)."""

    clusters: set[tuple[str, str]] = field(default_factory=set)
    pools: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    url: str = ""

    def calls(self, method: Optional[str] = None) -> list[Request]:
        return [r for r in self.requests if method is None or r.method == method]


def _handler(fake: FakeAks) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: Optional[dict[str, Any]] = None) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _route(self, method: str) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            api = parse_qs(url.query).get("api-version", [""])[0]
            fake.requests.append(Request(method, url.path, api, body))
            match = POOL_PATH.match(url.path)
            if not match:
                return self._answer(404, {"error": {"code": "NotFound", "message": url.path}})
            rg, cluster, pool = match["rg"], match["cluster"], match["pool"]
            if (rg, cluster) not in fake.clusters:
                return self._answer(404, {"error": {"code": "ParentResourceNotFound", "message": f"cluster {cluster}"}})
            key = (rg, cluster, pool)
            getattr(self, f"_{method.lower()}")(key, body, url.path)

        def _get(self, key, body, path):
            if key not in fake.pools:
                return self._answer(404, {"error": {"code": "ResourceNotFound", "message": f"agentPools/{key[2]}"}})
            self._answer(200, fake.pools[key])

        def _put(self, key, body, path):
            new = dict(body["properties"])
            old = (fake.pools.get(key) or {}).get("properties") or {}
            for prop in FIXED:
                if key in fake.pools and prop in new and new[prop] != old.get(prop):
                    return self._answer(400, {"error": {"code": "PropertyChangeNotAllowed", "message": f"Changing property '{prop}' is not allowed."}})
            status = 200 if key in fake.pools else 201
            new.setdefault("currentOrchestratorVersion", "1.34.2")
            new["provisioningState"] = "Succeeded"
            fake.pools[key] = {"id": path, "name": key[2], "type": "Microsoft.ContainerService/managedClusters/agentPools", "properties": new}
            self._answer(status, fake.pools[key])

        def _delete(self, key, body, path):
            fake.pools.pop(key, None)
            self._answer(204)

        def do_GET(self):  # noqa: N802
            self._route("GET")

        def do_PUT(self):  # noqa: N802
            self._route("PUT")

        def do_DELETE(self):  # noqa: N802
            self._route("DELETE")

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


class FakeCredential:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("fake-token", 4102444800)


class FakeBearer(SansIOHTTPPolicy):
    """A bearer header for the fake: the SDK's ARM policy refuses to send a token over
    plain http, and the fake serves plain http."""

    def on_request(self, request: Any) -> None:
        request.http_request.headers["Authorization"] = "Bearer fake-token"


def client_factory_for(url: str):
    """A stand-in for managed_gpu_pool.client_factory that reaches the fake."""

    def factory(subscription_id: str, api_version: str) -> Any:
        from azure.mgmt.containerservice import ContainerServiceClient

        return ContainerServiceClient(
            FakeCredential(), subscription_id, base_url=url, api_version=api_version,
            authentication_policy=FakeBearer(), polling_interval=0, retry_total=0,
        )  # fmt: skip

    return factory


def serve() -> Iterator[FakeAks]:
    fake = FakeAks()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    # A short poll: shutdown() waits for serve_forever to notice, 0.5 s by default.
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    fake.url = f"http://127.0.0.1:{server.server_port}"
    try:
        yield fake
    finally:
        server.shutdown()
