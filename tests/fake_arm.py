"""A local fake of Azure Resource Manager's list calls, answered from routes a test sets,
on 127.0.0.1: what the live reads meet instead of Azure."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from azure.core.credentials import AccessToken


class FakeCredential:
    def get_token(self, *scopes, **kwargs):
        return AccessToken("fake-token", 4102444800)


class JsonHandler(BaseHTTPRequestHandler):
    """A request handler that answers JSON, and keeps quiet about each request."""

    # Headers and body go out in two writes; without this, Nagle's algorithm holds the second
    # until the client's delayed ACK, 40 ms a request on Linux (as in fake_aks.py).
    disable_nagle_algorithm = True

    def answer_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve_handler(handler: type[BaseHTTPRequestHandler], tls: tuple[Path, Path] | None = None) -> Iterator[str]:
    """`handler` on 127.0.0.1, over HTTPS with `tls` (a certificate and its key), its URL
    yielded; shut down after (a 20 ms poll: a quick shutdown)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


class FakeArm(JsonHandler):
    """The three ARM list calls, answered from the fixtures (a `value` page each)."""

    routes: dict[str, tuple[int, Any]] = {}
    seen: list[str] = []

    def do_GET(self):
        path = self.path.split("?")[0].lower()
        self.seen.append(self.path)
        self.answer_json(*next((v for k, v in self.routes.items() if path.endswith(k)), (404, {"error": {"code": "NotFound"}})))


def serve():
    """A local fake of ARM on 127.0.0.1 (FakeArm), its URL yielded; shut down after."""
    FakeArm.seen = []
    yield from serve_handler(FakeArm)


def silent(scheme: str) -> Iterator[str]:
    """An endpoint that accepts connections and never answers (not even a TLS handshake),
    for reads that must end at their own deadline; yields its URL, then closes it all."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.05)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:  # the poll's timeout, or the socket closed
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"{scheme}://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    server.close()
    for connection in held:
        connection.close()
