"""A local fake of the Pulumi engine's gRPC service (pulumirpc.Engine) on 127.0.0.1, keeping each
LogRequest as the CLI's engine would receive it from a provider host, whose address a host is
given as its first argument."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc


class FakeEngine(engine_pb2_grpc.EngineServicer):
    def __init__(self, fail: bool = False) -> None:
        self.logged: list[engine_pb2.LogRequest] = []
        self.fail = fail

    def Log(self, request, context):  # noqa: N802 (gRPC method name)
        self.logged.append(request)
        if self.fail:
            context.abort(grpc.StatusCode.UNAVAILABLE, "the engine is going away")
        return empty_pb2.Empty()


def serve(engine: FakeEngine) -> tuple[grpc.Server, str]:
    """`engine` served on 127.0.0.1; the server (stop it after) and its address."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    engine_pb2_grpc.add_EngineServicer_to_server(engine, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


def served(fail: bool = False) -> Iterator[tuple[FakeEngine, str]]:
    """A FakeEngine and its address, yielded; stopped after."""
    engine = FakeEngine(fail)
    server, address = serve(engine)
    try:
        yield engine, address
    finally:
        server.stop(0)
