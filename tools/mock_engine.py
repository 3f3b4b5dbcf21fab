"""Runs the real Pulumi program under Pulumi's mock engine and records what it declares: the
machinery behind `make render` and the tests (no cloud, no credentials, no CLI). It merges the
config as the CLI does, records every registration with its options, collects the outputs and
warnings, and calls the program's `main` with an `OfflineReader` over the mocks
(tools/azure_mocks.py). Docs: docs/design/house.md, "The mock engine"."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import logging
import runpy
import sys
import types
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.stack import wait_for_rpcs
from pulumi.runtime.sync_await import _sync_await

from components.seam.reader import AzureReader
from tools import sdk_swaps
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.stack_files import ROOT, as_cli_string, project_name, stack_config


class Secret:
    """A recorded value that Pulumi treats as secret."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:  # never print the value by accident
        return "Secret([secret])"


@dataclass
class Registration:
    """One resource as the program registered it."""

    urn: str
    type: str
    name: str
    custom: bool
    parent: str
    provider: str
    dependencies: list[str]
    inputs: dict[str, Any]
    options: dict[str, Any]
    #: Each input's dependencies (URNs), as the SDK sent them: the edges the engine makes an
    #: input unknown by when a resource it names is replaced delete-first (pulumi/pulumi
    #: step_generator.go calculateDependentReplacements).
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    #: The inputs as the SDK sent them to the engine (a protobuf Struct: every number a
    #: double, a preview's unknowns the UNKNOWN string), which the engine hands a provider.
    wire: Any = field(default=None, repr=False, compare=False)
    #: The ID and the outputs the mocks answered (tools/azure_mocks.py AzureMocks.new_resource),
    #: as the engine was sent them: what the state records once the resource exists (tools/rehearsal.py).
    id: str = ""
    answered: Any = field(default=None, repr=False, compare=False)

    @property
    def outputs(self) -> dict[str, Any]:
        """The outputs, read when asked: only a rehearsal reads them."""
        return _unwrap(rpc.deserialize_properties(self.answered)) if self.answered is not None else {}


@dataclass
class StackOutput:
    value: Any
    secret: bool


@dataclass
class ProgramRun:
    project: str
    stack: str
    preview: bool
    config: dict[str, str]
    resources: list[Registration]
    outputs: dict[str, StackOutput]
    warnings: list[str] = field(default_factory=list)
    #: The program's `pulumi.log.info` lines (the cost figures).
    infos: list[str] = field(default_factory=list)
    #: What the mock engine assumed in Azure's place (a cluster it had no description of).
    notes: list[str] = field(default_factory=list)
    #: The entries of the stack's state, as the run read it from its offline reader (none: a first
    #: `up`), by URN: {"type", "outputs", "inputs", "retainOnDelete"} (saved_state.py).
    state: dict[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def held(self) -> frozenset[str]:
        """The URNs that state holds."""
        return frozenset(self.state)

    def of_type(self, type_: str) -> list[Registration]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: str | None = None) -> Registration:
        """The one resource of a type; for Kubernetes objects, optionally the one so named."""
        found = [r for r in self.of_type(type_) if name is None or (r.inputs.get("metadata") or {}).get("name") == name]
        if len(found) != 1:
            raise LookupError(f"expected one {type_}{f' named {name}' if name else ''}, found {len(found)}")
        return found[0]

    def by_urn(self, urn: str) -> Registration:
        return next(r for r in self.resources if r.urn == urn)


def _unwrap(value: Any) -> Any:
    """Turns the RPC layer's secret wrappers into `Secret` markers, recursively."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return Secret(_unwrap(value["value"]))
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    # Protobuf carries every number as a double; counts read better as integers.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: The event loops the runs made, on this thread and on the SDK's workers (close_event_loops).
WORKER_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def close_event_loops() -> None:
    """Closes the event loops the runs made. Left open, one is collected at the interpreter's
    exit, sometimes after its self-pipe socket, and prints "Exception ignored in
    BaseEventLoop.__del__ ... Invalid file descriptor: -1" (asyncio selector_events.py
    `_close_self_pipe`). For a process's end: later runs in it would find a closed loop."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # no running loop: 3.10-3.11 warn
        WORKER_LOOPS.add(asyncio.get_event_loop())  # pulumi/runtime/sync_await.py's, on this thread
    for loop in list(WORKER_LOOPS):
        if not loop.is_closed() and not loop.is_running():
            loop.close()


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The stock mock monitor, plus a record of each registration request."""

    def __init__(self, mocks: pulumi_mocks.Mocks) -> None:
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        #: What each component's `register_outputs` sent, by URN: the outputs the engine writes
        #: into the component's entry in the state (pulumi/pulumi@1b594989 pkg/resource/deploy/
        #: step_executor.go executeRegisterResourceOutputs), which the stock mock monitor drops.
        self.component_outputs: dict[str, dict[str, Any]] = {}

    # The SDK's monitor gives each thread it answers on an event loop of its own (mocks.py
    # Invoke, ReadResource and RegisterResource: `_ensure_event_loop()`). During a run that is
    # the stand-in's, closed after it (sdk_swaps.monitor_called_on_the_calling_thread); a call
    # from another thread makes one nothing closes: each is kept for close_event_loops. A
    # thread that served only an invoke has one too (`make render` left such a loop open once
    # in a loaded run).

    def Invoke(self, request):  # noqa: N802 (gRPC method name)
        try:
            return super().Invoke(request)
        finally:
            WORKER_LOOPS.add(asyncio.get_event_loop())

    def ReadResource(self, request):  # noqa: N802 (gRPC method name)
        try:
            return super().ReadResource(request)
        finally:
            WORKER_LOOPS.add(asyncio.get_event_loop())

    def RegisterResourceOutputs(self, request):  # noqa: N802 (gRPC method name)
        self.component_outputs[request.urn] = _unwrap(rpc.deserialize_properties(request.outputs))
        return super().RegisterResourceOutputs(request)

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        # (The stack's own registration returns before it makes a loop.)
        if request.type != "pulumi:pulumi:Stack":
            WORKER_LOOPS.add(asyncio.get_event_loop())
            timeouts = request.customTimeouts
            self.registrations.append(
                Registration(
                    urn=response.urn,
                    type=request.type,
                    name=request.name,
                    custom=request.custom,
                    parent=request.parent,
                    # A provider reference is "<urn>::<id>"; URNs contain "::" too.
                    provider=request.provider.rsplit("::", 1)[0] if request.provider else "",
                    dependencies=list(request.dependencies),
                    inputs=_unwrap(rpc.deserialize_properties(request.object)),
                    property_dependencies={key: list(deps.urns) for key, deps in request.propertyDependencies.items()},
                    wire=request.object,
                    id=response.id,
                    answered=response.object if response.object else None,
                    options={
                        "protect": bool(request.protect),
                        "customTimeouts": {k: getattr(timeouts, k) for k in ("create", "update", "delete") if getattr(timeouts, k)},
                        "ignoreChanges": list(request.ignoreChanges),
                        "retainOnDelete": bool(request.retainOnDelete),
                        "deleteBeforeReplace": bool(request.deleteBeforeReplace),
                        "replaceOnChanges": list(request.replaceOnChanges),
                        **({"aliases": aliases} if (aliases := alias_urns(request)) else {}),
                        # Pulumi's `import` option: the ID of an object the run takes over.
                        **({"import": request.importId} if request.importId else {}),
                        # The `deletedWith` option: the URN whose delete takes this resource with it.
                        **({"deletedWith": request.deletedWith} if request.deletedWith else {}),
                    },
                )
            )
        return response


def alias_urns(request: Any) -> list[str]:
    """The URNs a registration's aliases stand for, resolved as the engine resolves them
    (pulumi/pulumi step_generator.go collapseAliasToUrn, deployment.go generateURN): a blank
    name or type is the resource's own; a parent contributes its whole qualified type, the
    root Stack's excepted. (The stock mock monitor builds child URNs from the parent's last
    type alone, which agrees for children of top-level components, as every one here is.)
    Only the program's own: the type aliases every azure-native resource carries for its
    older API versions (a spec with a type and nothing else) are left out."""
    urns = []
    for alias in request.aliases:
        if alias.WhichOneof("alias") == "urn":
            urns.append(alias.urn)
            continue
        spec = alias.spec
        if not spec.name:
            continue
        project, stack = spec.project or pulumi.get_project(), spec.stack or pulumi.get_stack()
        parent = spec.parentUrn if spec.WhichOneof("parent") == "parentUrn" else request.parent
        prefix = ""
        if parent and not spec.noParent:
            parent_type = parent.split("::")[2].removeprefix("pulumi:pulumi:Stack$").removeprefix("pulumi:pulumi:Stack")
            prefix = f"{parent_type}$" if parent_type else ""
        urns.append(f"urn:pulumi:{stack}::{project}::{prefix}{spec.type or request.type}::{spec.name or request.name}")
    return urns


class _WarningCollector(logging.Handler):
    """The program's warnings, and its info lines (what `pulumi preview` prints as `info:`)."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.messages: list[str] = []
        self.infos: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno == logging.WARNING:
            self.messages.append(record.getMessage())
        elif record.levelno == logging.INFO:
            self.infos.append(record.getMessage())


# --------------------------------------------------------------------------- run


@contextlib.contextmanager
def _program_on_path() -> Iterator[None]:
    sys.path.insert(0, str(ROOT))
    try:
        yield
    finally:
        sys.path.remove(str(ROOT))


def run_program(
    stack: str = "dev",
    config: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    monitor: RecordingMonitor | None = None,
    preview: bool = False,
    stack_file: Path | None = None,
) -> ProgramRun:
    """Runs `__main__.py` for `stack` under mocks and returns what it declared.

    `preview` chooses the run: True is `pulumi preview` (`pulumi.runtime.is_dry_run()`),
    False the update step of `pulumi up`.

    `config` replaces the stack's merged config entirely; `overrides` are applied on top
    (keys without a namespace belong to the project; values are given as in YAML; None
    removes the key).
    Errors the program raises (a `ConfigError`, say) propagate unchanged; pass your own
    `monitor` to see what was registered before one.
    """
    merged = merged_config(stack, config, overrides, stack_file)
    monitor = monitor or RecordingMonitor(AzureMocks())

    def program() -> None:
        with _program_on_path():
            run_main(reader_of(monitor))

    if isinstance(monitor.mocks, AzureMocks):
        monitor.mocks.offline(merged, stack)
    return run_under_mocks(program, stack=stack, config=merged, monitor=monitor, preview=preview)


def merged_config(
    stack: str, config: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None, stack_file: Path | None = None
) -> dict[str, str]:
    """The flat config the CLI would hand the run: `config`, or the stack's file, with
    `overrides` on top, as `run_program` says."""
    project = project_name()
    merged = dict(config) if config is not None else stack_config(stack, stack_file)
    for key, value in (overrides or {}).items():
        full = key if ":" in key else f"{project}:{key}"
        if value is None:  # not set
            merged.pop(full, None)
        else:
            merged[full] = as_cli_string(value)
    return merged


def run_folder(
    folder: Path, stack: str, monitor: RecordingMonitor, modules: Mapping[str, types.ModuleType], preview: bool = True
) -> ProgramRun:
    """Runs another team's program (a folder with its Pulumi.yaml, Pulumi.<stack>.yaml and
    `__main__.py`, examples/consumer-python/) as its project, with its stack's config, and
    `modules` importable by name in place of packages not installed here (a generated SDK)."""
    project_file = folder / "Pulumi.yaml"
    config = stack_config(stack, folder / f"Pulumi.{stack}.yaml", project_file)

    def program() -> None:
        before = {name: sys.modules.get(name) for name in modules}
        sys.modules.update(modules)
        try:
            runpy.run_path(str(folder / "__main__.py"), run_name="__main__")
        finally:
            for name, module in before.items():
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module

    return run_under_mocks(program, stack=stack, config=config, monitor=monitor, preview=preview, project=project_name(project_file))


#: The name the program runs under: not `__main__`, so its last line (the live reader) does not run.
PROGRAM_NAME = "aks_gpu_program"


@functools.cache
def _compiled(path: str, stamp: tuple[int, int]) -> CodeType:
    """The program's code, compiled once per version of the file (`stamp`: its mtime and size)."""
    with io.open_code(path) as source:
        return compile(source.read(), path, "exec")


def run_main(reader: AzureReader) -> None:
    """Runs `__main__.py` under another name than `__main__` (so its last line, which hands
    it the live reader, does not run) and calls its `main` with `reader`. As
    `runpy.run_path(path, run_name=PROGRAM_NAME)` does (runpy `_run_module_code`: a module
    of that name in sys.modules while the code runs, its globals set as `_run_code` sets
    them; sys.argv[0] is left, the program reads no argv), but with the code compiled once:
    run_path compiles the file on every call, some 2 ms of each of the suite's thousand runs."""
    path = ROOT / "__main__.py"
    stat = path.stat()
    module = types.ModuleType(PROGRAM_NAME)
    module.__dict__.update(__file__=str(path), __cached__=None, __loader__=None, __package__="", __spec__=None)
    before = sys.modules.get(PROGRAM_NAME)
    sys.modules[PROGRAM_NAME] = module
    try:
        exec(_compiled(str(path), (stat.st_mtime_ns, stat.st_size)), module.__dict__)
    finally:
        if before is None:
            del sys.modules[PROGRAM_NAME]
        else:
            sys.modules[PROGRAM_NAME] = before
    module.main(reader)


def reader_of(monitor: RecordingMonitor) -> OfflineReader:
    """The fake Azure the monitor's mocks answer from, which the program is handed as its reader."""
    return monitor.mocks.reader if isinstance(monitor.mocks, AzureMocks) else OfflineReader()


def run_under_mocks(
    body: Callable[[], Any],
    stack: str = "test",
    config: Mapping[str, str] | None = None,
    monitor: RecordingMonitor | None = None,
    preview: bool = False,
    project: str | None = None,
) -> ProgramRun:
    """Runs `body` (a program, or a test that builds one component) under mocks, as project
    `project` (unset: this one's)."""
    project = project or project_name()
    monitor = monitor or RecordingMonitor(AzureMocks())
    collector = _WarningCollector()
    logger = logging.getLogger(f"aks-gpu.mock.{stack}")
    logger.propagate = False
    logger.handlers = [collector]
    logger.setLevel(logging.INFO)  # the SDK logs each registration at debug: records nobody reads

    # As the language host does: a run that fails leaves futures nobody awaits (every object
    # waiting on a failed one fails with it), and asyncio would log each one as it is collected
    # (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec: "we simply turn off the logger
    # for asyncio").
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    settings.ROOT.set(None)  # a fresh root stack for each run in one process
    # ...and a fresh record of failed RPCs: a run that failed after it registered resources (an
    # error raised inside an apply) leaves its exception there, which the next run's
    # wait_for_rpcs would raise again (pulumi/runtime/stack.py, rpc_manager.py).
    settings._get_rpc_manager().clear()
    pulumi_mocks.set_mocks(monitor.mocks, project=project, stack=stack, preview=preview, logger=logger, monitor=monitor)
    pulumi.runtime.set_all_config(dict(config or {}))

    try:
        with (
            _program_on_path(),
            sdk_swaps.alias_urns_left_to_the_engine(),
            sdk_swaps.stack_traces_from_frames(),
            sdk_swaps.monitor_called_on_the_calling_thread(),
        ):
            body()
            _sync_await(wait_for_rpcs())
            outputs = _sync_await(_resolve_outputs(settings.get_root_resource().outputs))  # type: ignore[union-attr]
    except BaseException:
        _abandon_run()
        raise

    return ProgramRun(
        project=project,
        stack=stack,
        preview=preview,
        config=dict(config or {}),
        resources=list(monitor.registrations),
        outputs=outputs,
        warnings=list(collector.messages),
        infos=list(collector.infos),
        notes=list(reader_of(monitor).notes),
        state=dict(reader_of(monitor).held_state),
    )


def _abandon_run() -> None:
    """After a run that failed once it had registered resources (an error raised inside an
    apply), its other tasks still wait on the event loop, and its outputs' tasks in the SDK's
    settings; the next run would resume or await them, and their failures would be its own.
    Cancel them, and forget the failure."""
    loop = asyncio.get_event_loop()
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending and not loop.is_running():
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    settings._get_rpc_manager().clear()
    with settings.SETTINGS.lock:  # the outputs wait_for_rpcs awaits last (pulumi/runtime/stack.py)
        settings.SETTINGS.outputs.clear()


async def _resolve_outputs(exports: Mapping[str, Any]) -> dict[str, StackOutput]:
    resolved: dict[str, StackOutput] = {}
    for name, value in exports.items():
        out = pulumi.Output.from_input(value)
        resolved[name] = StackOutput(value=await _leaves(value), secret=await out.is_secret())
    await asyncio.sleep(0)
    return resolved


async def _leaves(value: Any) -> Any:
    """An export resolved leaf by leaf, as the SDK serializes one (pulumi/runtime/rpc.py
    serialize_property recurses into dicts and lists): a value a preview does not know is None
    where it stands, its siblings known, not the whole export."""
    if isinstance(value, Mapping):
        return {key: await _leaves(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [await _leaves(item) for item in value]
    return await pulumi.Output.from_input(value).future()
