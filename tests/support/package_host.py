"""The engine's side of a Construct of the package's components, called as the engine calls it
(pulumi/pulumi 1b594989 pkg/resource/deploy/source_eval.go, the monitor's RegisterResource of a
remote component; sdk/go/common/resource/plugin/provider_plugin.go Construct, which fills the
ConstructRequest: the inputs as a Struct, project, stack, organization, config, dryRun, parallel,
the monitor's address, the consumer's options), in two ways:

- `construct`: the provider host started as the CLI starts a plugin (tools/package_schema.py),
  against a fake engine and monitor that implement no invoke: what a refusal looks like;
- `construct_as_the_engine`: the package's provider (the SDK's ProviderServicer of a
  PackageProvider, as the host serves it) served in this process with the mock engine's fake Azure
  as its reader, against the mock engine's monitor served over gRPC (tools/mock_engine.py
  RecordingMonitor, AzureMocks' answers): a valid Construct, whose registrations are compared with
  the program's. In this process because the reader is the mock engine's, which no option of the
  shipped host chooses (docs/design/package.md, "Construct over gRPC")."""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
import pulumi
from google.protobuf import empty_pb2, struct_pb2
from pulumi.provider.provider import Provider
from pulumi.provider.server import ProviderServicer
from pulumi.runtime import proto
from pulumi.runtime._grpc_settings import _GRPC_CHANNEL_OPTIONS
from pulumi.runtime.mocks import MockSettings
from pulumi.runtime.proto import engine_pb2_grpc, errors_pb2, provider_pb2_grpc, resource_pb2_grpc, status_pb2

from components.environment.gpu_environment import TYPE
from components.environment.package import NAME, NAMESPACE, project_version
from components.environment.provider import COMPONENTS, PackageProvider
from tools import package_schema
from tools.azure_mocks import AzureMocks, EngineInvokeError, OfflineReader
from tools.mock_engine import RecordingMonitor, Registration, merged_config, reader_of
from tools.stack_files import project_name


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


def property_errors(error: grpc.RpcError) -> list[tuple[str, str]]:
    """The InputPropertiesError details of a refusal (provider/server.py create_grpc_invalid_properties_status)."""
    metadata: Any = dict(error.trailing_metadata() or ())  # type: ignore[attr-defined]
    status = status_pb2.Status.FromString(metadata["grpc-status-details-bin"])
    found = []
    for detail in status.details:
        errors = errors_pb2.InputPropertiesError()
        detail.Unpack(errors)
        found += [(e.property_path, e.reason) for e in errors.errors]
    return found


def refused_input(answer: grpc.RpcError | Any, registered: Sequence[Any]) -> tuple[str, str]:
    """The one input a Construct refused as Pulumi refuses a bad input (INVALID_ARGUMENT), its path
    and one-line reason, with nothing `registered`."""
    assert isinstance(answer, grpc.RpcError) and answer.code() == grpc.StatusCode.INVALID_ARGUMENT
    [(path, reason)] = property_errors(answer)
    assert "\n" not in reason and list(registered) == []
    return path, reason


# --------------------------------------------------------------------------- a valid Construct


def inputs_of(flat: Mapping[str, str]) -> dict[str, Any]:
    """A stack file's settings as a consumer passes them to GpuEnvironment: each `aks-gpu:` key
    under its own name, `azure-native:location` as location, objects as objects."""
    inputs: dict[str, Any] = {}
    for key, value in flat.items():
        name = "location" if key == "azure-native:location" else key.removeprefix("aks-gpu:") if key.startswith("aks-gpu:") else None
        if name is not None:
            inputs[name] = json.loads(value) if value[:1] in ("{", "[") else value
    return inputs


def graph(registrations: Sequence[Registration], component: str = TYPE) -> list[str]:
    """Each registration (type, name, parent, provider, dependencies, inputs, options) with the
    component (GpuEnvironment unless said) taken out of every URN: what the program's graph is, one parent less."""
    environment = next((r for r in registrations if r.type == component), None)
    lines = []
    for r in registrations:
        if r is environment:
            continue
        text = json.dumps([r.type, r.name, r.parent, r.provider, sorted(r.dependencies), r.inputs, r.options], sort_keys=True, default=repr)
        if environment is not None:
            text = text.replace(environment.urn, environment.parent).replace(f"{component}$", "")
        lines.append(text.replace("pulumi:pulumi:Stack$", ""))
    return sorted(lines)


def with_children(registrations: Sequence[Registration], types: Collection[str]) -> list[Registration]:
    """The registrations of `types` and everything registered under them."""
    kept: list[Registration] = []
    for r in registrations:
        if r.type in types or r.parent in {k.urn for k in kept}:
            kept.append(r)
    return kept


class EngineUrns(RecordingMonitor):
    """The mock engine's monitor, naming each resource as the engine does: under a parent, the
    parent's whole qualified type, the root Stack's excepted (pulumi/pulumi 1b594989
    sdk/go/common/resource/urn/urn.go New). The stock mock monitor takes the parent's last type
    alone, Stack included (`graph` drops its `pulumi:pulumi:Stack$`), which agrees with the engine
    for the program's resources, two levels deep, but not for the GpuEnvironment's grandchildren."""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        parent_type = parent.split("::")[2] if parent else ""
        qualified = type_ if parent_type in ("", "pulumi:pulumi:Stack") else f"{parent_type}${type_}"
        return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{qualified}::{name}"


def in_context(context: contextvars.Context, method: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    """A gRPC handler that answers as the mock monitor's `method` does, in a copy of `context`,
    and aborts with a failed invoke's status as the engine does (tools/azure_mocks.EngineInvokeError)."""

    def handler(request: Any, grpc_context: Any) -> Any:
        try:
            return context.copy().run(method, request)
        except EngineInvokeError as error:
            grpc_context.abort(error.code(), error.details())

    return handler


class MockEngineMonitor(resource_pb2_grpc.ResourceMonitorServicer):
    """The mock engine's monitor (tools/mock_engine.RecordingMonitor: AzureMocks' answers, each
    registration recorded) served over gRPC, as the engine serves its resource monitor. Its
    answers read the run's project, stack and preview from Pulumi's settings, as they do under
    `run_program`, so each call runs in a context where the mock engine set them (pulumi's
    settings are context variables: pulumi/runtime/settings.py, `contextproperty`)."""

    def __init__(self, monitor: RecordingMonitor, project: str, stack: str, preview: bool) -> None:
        self.monitor = monitor
        context = contextvars.Context()
        context.run(MockSettings, project=project, stack=stack, dry_run=preview)
        for name in ("GetDeploymentInfo", "Invoke", "ReadResource", "RegisterResource", "RegisterResourceOutputs", "RegisterPackage"):
            setattr(self, name, in_context(context, getattr(monitor, name)))
        self.supports = in_context(context, monitor.SupportsFeature)

    def SupportsFeature(self, request: Any, context: Any) -> Any:  # noqa: N802 (the gRPC method's name)
        # The mock monitor answers with a stand-in object (pulumi/runtime/mocks.py), not the message.
        return proto.SupportsFeatureResponse(hasSupport=self.supports(request, context).hasSupport)


@dataclass
class EngineLog(engine_pb2_grpc.EngineServicer):
    """The engine's log: each line the component says, with its severity (engine.proto LogSeverity)."""

    lines: list[tuple[int, str]] = field(default_factory=list)

    def Log(self, request: Any, context: Any) -> Any:  # noqa: N802 (the gRPC method's name)
        self.lines.append((request.severity, request.message))
        return empty_pb2.Empty()

    def said(self, severity: int) -> list[str]:
        return [message for level, message in self.lines if level == severity]


@contextmanager
def engine_served(monitor: MockEngineMonitor, log: EngineLog) -> Iterator[str]:
    """The engine's log and resource monitor on one local gRPC server; yields its address."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    engine_pb2_grpc.add_EngineServicer_to_server(log, server)
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, server)
    address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    server.start()
    try:
        yield address
    finally:
        server.stop(None)


@contextmanager
def provider_served(provider: Provider, engine: str) -> Iterator[Any]:
    """`provider` served as the SDK's `main` serves it (pulumi 3.272.0 provider/server.py: a
    grpc.aio server of its ProviderServicer on 127.0.0.1:0), on an event loop in a thread of its
    own, so Construct runs with Pulumi's settings of its own, as in the plugin's process; yields
    a ResourceProvider stub over a real channel."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server: list[Any] = []

    async def start() -> int:
        server.append(grpc.aio.server(options=_GRPC_CHANNEL_OPTIONS))
        provider_pb2_grpc.add_ResourceProviderServicer_to_server(ProviderServicer(provider, [], engine_address=engine), server[0])
        port = server[0].add_insecure_port("127.0.0.1:0")
        await server[0].start()
        return port

    try:
        port = asyncio.run_coroutine_threadsafe(start(), loop).result()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield provider_pb2_grpc.ResourceProviderStub(channel)
    finally:
        if server:
            asyncio.run_coroutine_threadsafe(server[0].stop(None), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        # The threads the SDK's calls to the monitor ran on (`run_in_executor(None, ...)`), joined.
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


@dataclass
class Constructed:
    """What one Construct left: the registrations the monitor recorded, the engine's log, and
    the provider's answer (its response, or the gRPC error the engine would read)."""

    registrations: list[Registration]
    log: EngineLog
    answer: Any
    #: What each component's register_outputs sent, by URN (the state's outputs for it).
    component_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)


def construct_as_the_engine(
    stack: str,
    preview: bool,
    config: Mapping[str, str] | None = None,
    reader: OfflineReader | None = None,
    component: str = TYPE,
    given: Mapping[str, Any] | None = None,
    providers: Mapping[str, str] | None = None,
) -> Constructed:
    """A consumer's program that declares one `component` (GpuEnvironment unless said) with `stack`'s
    settings as its inputs (or `given`; `providers`: its providers option by package, each "<urn>::<id>"
    of a provider the monitor holds already), its own stack config holding no `aks-gpu:` key: the engine's
    Construct of it (pulumi/pulumi 1b594989 pkg/resource/deploy/source_eval.go RegisterResource of a
    remote component, and sdk/go/common/resource/plugin/provider_plugin.go Construct, which fills the
    request) to the package's provider, served here with the mock engine's fake Azure as its reader,
    against the mock engine's monitor over gRPC. Azure answers as it does for the program's run of
    `stack`, or as `reader` does (the stack's state an earlier run left, an existing cluster, say)."""
    merged = merged_config(stack) if config is None else dict(config)
    project = project_name()
    monitor = EngineUrns(AzureMocks(reader=reader))
    monitor.mocks.offline(merged, stack)
    for reference in (providers or {}).values():  # what the consumer registered before: its providers
        urn, id_ = reference.rsplit("::", 1)
        monitor.resources[urn] = RecordingMonitor.ResourceRegistration(urn, id_, {})
    log = EngineLog()
    provider = PackageProvider(COMPONENTS, NAME, NAMESPACE, project_version(), reader=lambda: reader_of(monitor))
    consumers = {key: value for key, value in merged.items() if not key.startswith("aks-gpu:")}
    inputs = struct_pb2.Struct()
    inputs.update(inputs_of(merged) if given is None else dict(given))
    request = proto.ConstructRequest(
        # source_eval.go newResourceMonitor: constructInfo (the run's project, stack, organization,
        # config, dry run, parallelism, the monitor's address); a diy backend's organization is
        # "organization" (the SDK's default, provider/server.py _construct).
        project=project,
        stack=stack,
        organization="organization",
        config=consumers,
        configSecretKeys=[],
        dryRun=preview,
        # pkg/cmd/pulumi/operations/up.go defaultParallel: GOMAXPROCS * 4 unless --parallel.
        parallel=4 * (os.cpu_count() or 1),
        type=component,
        name="env",
        # The consumer declared it at its stack's top: its parent is the consumer's root Stack.
        parent=f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}",
        inputs=inputs,
        # Plain inputs: no dependencies, no options set (Protect, RetainOnDelete unset); the
        # consumer's providers by package, as source_eval.go's providerRefs.
        providers=dict(providers or {}),
        accepts_output_values=True,
    )
    with (
        engine_served(MockEngineMonitor(monitor, project, stack, preview), log) as engine,
        provider_served(provider, engine) as stub,
    ):
        request.monitorEndpoint = engine
        try:
            answer = stub.Construct(request)
        except grpc.RpcError as error:
            answer = error
    return Constructed(list(monitor.registrations), log, answer, dict(monitor.component_outputs))
