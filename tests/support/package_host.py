"""The engine's side of a Construct of the package's components: the provider host started as the
CLI starts a plugin (tools/package_schema.py), a fake engine (its log) and a fake resource monitor
(what the component registers) served here over gRPC, and Construct called as the engine calls it
(pulumi/pulumi 1b594989 pkg/resource/deploy/source_eval.go, the monitor's RegisterResource of a
remote component: the inputs as a Struct, the monitor's address, project, stack, config, dryRun)."""

from __future__ import annotations

from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import proto
from pulumi.runtime.proto import engine_pb2_grpc, resource_pb2_grpc

from tools import package_schema


@dataclass
class FakeEngine(engine_pb2_grpc.EngineServicer, resource_pb2_grpc.ResourceMonitorServicer):
    """Records what the component logs and registers; answers each registration with its URN."""

    logs: list[str] = field(default_factory=list)
    registered: list[Any] = field(default_factory=list)

    def Log(self, request: Any, context: Any) -> Any:  # noqa: N802 (the gRPC method's name)
        self.logs.append(request.message)
        return empty_pb2.Empty()

    def SupportsFeature(self, request: Any, context: Any) -> Any:  # noqa: N802
        return proto.SupportsFeatureResponse(hasSupport=True)

    def RegisterResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.registered.append(request)
        return proto.RegisterResourceResponse(urn=f"urn:pulumi:test::aks-gpu::{request.type}::{request.name}", object=struct_pb2.Struct())

    def RegisterResourceOutputs(self, request: Any, context: Any) -> Any:  # noqa: N802
        return empty_pb2.Empty()


def construct(component: str, inputs: dict[str, Any], *, preview: bool = True) -> tuple[FakeEngine, grpc.RpcError | Any]:
    """One Construct of `component` with `inputs`; the fake engine and the host's answer (its
    response, or the gRPC error the engine would read)."""
    engine = FakeEngine()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    engine_pb2_grpc.add_EngineServicer_to_server(engine, server)
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(engine, server)
    address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    server.start()
    struct = struct_pb2.Struct()
    struct.update(inputs)
    request = proto.ConstructRequest(
        project="aks-gpu",
        stack="test",
        dryRun=preview,
        monitorEndpoint=address,
        type=f"aks-gpu:index:{component}",
        name="env",
        inputs=struct,
    )
    try:
        with package_schema.started_host(engine=address) as stub:
            try:
                return engine, stub.Construct(request)
            except grpc.RpcError as error:
                return engine, error
    finally:
        server.stop(None)
