"""The mock engine's three changes inside Pulumi's SDK (tools/sdk_swaps.py): the URN of each alias
of each resource is not computed during a run, each registration's stack trace is made from
the frames without reading their source lines, and the SDK's calls to the monitor run on the
thread that makes them. What the swaps assume of the SDK holds in the SDK installed (the
functions' shapes, their callers, the list only a monitor without alias specs reads, the
executor its monitor calls go to), every stack trace is the SDK's own frame for frame, a
monitor call meets the event loops a worker thread of the SDK's would, and a run sends the
engine byte for byte the requests of the SDK as it ships."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import functools
import inspect
import re
import threading
from pathlib import Path
from typing import Any

import pulumi
import pulumi.resource
import pulumi.runtime.resource
import pytest
from support.sources import nodes, text

from tools import mock_engine, sdk_swaps
from tools.azure_mocks import AzureMocks
from tools.mock_engine import ProgramRun, RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"

CASES: dict[str, tuple[str, bool, dict[str, Any]]] = {
    "dev preview (a pool moved under an alias)": ("dev", True, {}),
    "prod preview": ("prod", True, {}),
    "prod deployment": ("prod", False, {}),
    "team deployment (an existing cluster)": ("team", False, {}),
    "dev, the GPU Operator by Helm": ("dev", True, {"gpuPool": {"name": "gpu", "vmSize": T4, "management": "gpu-operator"}}),
    "dev, the managed pool": ("dev", True, {"gpuPool": {"name": "gpu", "vmSize": T4, "management": "aks-managed"}}),
}


#: Where in the source each request was made: the frames of this test and of the context
#: manager that stands for the SDK as shipped differ by line, not what the request asks.
WHERE = ("sourcePosition", "stackTrace", "parentStackTraceHandle")


def wire(request: Any) -> bytes:
    copy = type(request)()
    copy.CopyFrom(request)
    fields = type(request).DESCRIPTOR.fields_by_name
    for name in WHERE:
        if name in fields:
            copy.ClearField(name)
    # The SDK gathers a resource's dependencies in a set: their order differs from run to run
    # with or without the shortcut, and the engine reads them as a set.
    if "dependencies" in fields:
        urns = sorted(copy.dependencies)
        del copy.dependencies[:]
        copy.dependencies.extend(urns)
    if "propertyDependencies" in fields:
        for deps in copy.propertyDependencies.values():
            urns = sorted(deps.urns)
            del deps.urns[:]
            deps.urns.extend(urns)
    return copy.SerializeToString(deterministic=True)


class WireMonitor(RecordingMonitor):
    """Keeps every request the program sent, as the bytes the engine would receive."""

    def __init__(self) -> None:
        super().__init__(AzureMocks())
        self.sent: list[tuple[str, bytes]] = []

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        self.sent.append(("RegisterResource", wire(request)))
        return super().RegisterResource(request)

    def RegisterResourceOutputs(self, request):  # noqa: N802
        self.sent.append(("RegisterResourceOutputs", wire(request)))
        return super().RegisterResourceOutputs(request)

    def Invoke(self, request):  # noqa: N802
        self.sent.append(("Invoke", wire(request)))
        return super().Invoke(request)


class WhereMonitor(WireMonitor):
    """Notes too, at each registration, the thread it is answered on and the event loops it
    meets (the swaps' run only: a worker thread of the SDK as shipped has no event loop to get)."""

    def __init__(self) -> None:
        super().__init__()
        self.where: list[tuple[int, Any, Any]] = []

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        self.where.append((threading.get_ident(), asyncio.events._get_running_loop(), asyncio.get_event_loop()))
        return super().RegisterResource(request)


def sent_by(
    stack: str, preview: bool, overrides: dict[str, Any], monitor: WireMonitor | None = None
) -> tuple[list[tuple[str, bytes]], Any, ProgramRun]:
    """What a run sent and said, and the run."""
    monitor = monitor or WireMonitor()
    run = run_program(stack, overrides=overrides, monitor=monitor, preview=preview)
    # The SDK's worker threads answer registrations in any order; what each request says is the point.
    return sorted(monitor.sent), ({k: (v.value, v.secret) for k, v in run.outputs.items()}, run.warnings, run.infos), run


@dataclasses.dataclass(frozen=True)
class ShortcutRun:
    """A case's run with the swaps, as a run under the mock engine takes them: what it sent and
    said, the monitor's notes, how many resources it declared, and at each registration the
    SDK's own stack trace and the stand-in's, made side by side from the same frame (only the
    stand-in's is sent). The run's loop's default executor before the run and after it, and
    the run's loop, and the thread's event loop after the run."""

    sent: tuple[list[tuple[str, bytes]], Any, ProgramRun]
    monitor: WhereMonitor
    resources: int
    traces: list[tuple[bytes, bytes, Any]]
    executors: tuple[Any, Any]
    run_loop: Any
    loop_after: Any


@functools.cache
def shortcut_run(case: str) -> ShortcutRun:
    """One run per case for the tests below: the requests compared with the SDK's as shipped,
    the stack traces compared frame for frame, and where the monitor was called."""
    stack, preview, overrides = CASES[case]
    sdk_as_shipped, stand_in = pulumi.runtime.resource._get_stack_trace, sdk_swaps.stack_trace_from_frames
    traces: list[tuple[bytes, bytes, Any]] = []

    def both() -> Any:
        shipped, ours = sdk_as_shipped(), stand_in()
        traces.append((shipped.SerializeToString(deterministic=True), ours.SerializeToString(deterministic=True), ours))
        return ours

    run_loop = sdk_swaps._ensure_event_loop()
    before = run_loop._default_executor  # type: ignore[attr-defined]
    monitor = WhereMonitor()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sdk_swaps, "stack_trace_from_frames", both)
        sent = sent_by(stack, preview, overrides, monitor)
    after = run_loop._default_executor  # type: ignore[attr-defined]
    return ShortcutRun(sent, monitor, len(sent[2].resources), traces, (before, after), run_loop, asyncio.get_event_loop())


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_run_sends_the_engine_the_same_requests_with_the_shortcut_as_without(case: str, monkeypatch: pytest.MonkeyPatch):
    stack, preview, overrides = CASES[case]
    shortcut = shortcut_run(case).sent
    monkeypatch.setattr(sdk_swaps, "alias_urns_left_to_the_engine", contextlib.nullcontext)
    monkeypatch.setattr(sdk_swaps, "stack_traces_from_frames", contextlib.nullcontext)
    monkeypatch.setattr(sdk_swaps, "monitor_called_on_the_calling_thread", contextlib.nullcontext)
    sdk_as_shipped = sent_by(stack, preview, overrides)
    assert shortcut[0] and shortcut[0] == sdk_as_shipped[0]
    assert shortcut[1] == sdk_as_shipped[1]


def test_the_shortcut_is_taken_under_the_mock_monitor_and_undone_after_the_run():
    seen: list[Any] = []

    def body() -> None:
        seen.append((pulumi.resource.collapse_alias_to_urn, pulumi.runtime.resource._get_stack_trace))

    original = (pulumi.resource.collapse_alias_to_urn, pulumi.runtime.resource._get_stack_trace)
    mock_engine.run_under_mocks(body, monitor=RecordingMonitor(AzureMocks()))
    assert seen == [(sdk_swaps.alias_urn_not_computed, sdk_swaps.stack_trace_from_frames)]
    assert (pulumi.resource.collapse_alias_to_urn, pulumi.runtime.resource._get_stack_trace) == original


def test_the_monitor_answers_on_the_runs_thread_with_a_loop_of_its_own_as_a_worker_would_and_the_executor_is_put_back():
    """What the mock monitor meets is what it met on the SDK's worker threads: no running event
    loop, and a loop of its own that is not the run's (so its own `_sync_await` runs that loop
    and never re-enters the run's); only now on the run's thread. After the run the run's loop
    has its own executor back, and the stand-in's loop is closed."""
    done = shortcut_run("prod preview")
    where = done.monitor.where
    assert len(where) == done.resources + 1 > 10  # and the Stack's own registration
    assert {thread for thread, _, _ in where} == {threading.get_ident()}
    assert {running for _, running, _ in where} == {None}
    loops = {loop for _, _, loop in where}
    assert len(loops) == 1 and done.run_loop not in loops and all(loop.is_closed() for loop in loops)
    before, after = done.executors
    assert after is before
    assert done.loop_after is done.run_loop


def test_a_call_the_stand_in_runs_gives_its_result_or_its_error_through_the_future_and_puts_the_loops_back():
    executor = sdk_swaps.CallingThread()
    previous = sdk_swaps._ensure_event_loop()  # the runs' loop on this thread: put back after
    outer = asyncio.new_event_loop()
    asyncio.set_event_loop(outer)
    try:
        seen: list[Any] = []

        def call(value: int) -> int:
            seen.append((asyncio.events._get_running_loop(), asyncio.get_event_loop()))
            if value < 0:
                raise ValueError("refused")
            return value * 2

        assert executor.submit(call, 21).result() == 42
        failed = executor.submit(call, -1)
        assert isinstance(failed.exception(), ValueError) and str(failed.exception()) == "refused"
        assert seen == [(None, executor.loop)] * 2
        assert asyncio.get_event_loop() is outer and asyncio.events._get_running_loop() is None
    finally:
        executor.loop.close()
        outer.close()
        asyncio.set_event_loop(previous)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_stack_trace_a_run_sends_is_the_sdks_own_frame_for_frame(case: str):
    """The stand-in and the SDK's `_get_stack_trace`, called side by side at every registration
    of a run, from the same frame: the same bytes, and the program's own line among them."""
    done = shortcut_run(case)
    assert len(done.traces) == done.resources
    assert [shipped for shipped, _, _ in done.traces] == [ours for _, ours, _ in done.traces]
    program = (mock_engine.ROOT / "__main__.py").as_uri()
    assert all(any(frame.pc.uri == program for frame in trace.frames) for _, _, trace in done.traces)


# --------------------------------------------------------------------------- what the swaps assume of the SDK

SDK = Path(pulumi.__file__).parent


def swapped_calls(source: str) -> list[str]:
    """Each call of `collapse_alias_to_urn` in a module's source: what takes its result, the
    name it is called by, how many arguments it is given (and whether any by keyword)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "collapse_alias_to_urn":
            taker = parents[node]
            took = ast.unparse(taker.func) if isinstance(taker, ast.Call) else type(taker).__name__
            keywords = " and keywords" if node.keywords else ""
            found.append(f"{took}({ast.unparse(node.func)}: {len(node.args)} arguments{keywords})")
    return found


def resource_source() -> str:
    return text(SDK / "resource.py")


def test_resource_init_calls_the_swapped_name_as_the_stand_in_takes_it_and_keeps_the_result_in_aliases_alone():
    """The swap replaces the module global `pulumi.resource.collapse_alias_to_urn`: it holds
    where `Resource.__init__` calls that name, with the four arguments the stand-in takes, and
    keeps what it returns only in `self._aliases` (which the test below follows)."""
    assert swapped_calls(resource_source()) == ["self._aliases.append(collapse_alias_to_urn: 4 arguments)"]
    assert pulumi.resource.collapse_alias_to_urn is pulumi.runtime.resource.collapse_alias_to_urn
    kinds = [p.kind for p in inspect.signature(pulumi.runtime.resource.collapse_alias_to_urn).parameters.values()]
    assert kinds == [p.kind for p in inspect.signature(sdk_swaps.alias_urn_not_computed).parameters.values()]


@pytest.mark.parametrize(
    "change",
    [
        ("self._aliases.append(collapse_alias_to_urn(", "self._aliases.append(runtime.collapse_alias_to_urn("),
        ("self._aliases.append(collapse_alias_to_urn(", "self._alias_urns.append(collapse_alias_to_urn("),
        ("collapse_alias_to_urn(alias, name, t, opts.parent)", "collapse_alias_to_urn(alias, name, t, opts.parent, opts)"),
        ("collapse_alias_to_urn(alias, name, t, opts.parent)", "collapse_alias_to_urn(alias, name, t, parent=opts.parent)"),
    ],
    ids=["another name", "its result kept elsewhere", "a fifth argument", "an argument by keyword"],
)
def test_an_sdk_that_calls_the_swapped_function_another_way_fails_the_test_above(change):
    old, new = change
    source = resource_source()
    assert old in source
    assert swapped_calls(source.replace(old, new)) != swapped_calls(source)


def test_only_a_monitor_without_alias_specs_reads_the_urns_the_shortcut_skips():
    """If an SDK release reads `Resource._aliases` anywhere else, the shortcut may change a
    run: this fails, and the shortcut must be checked again."""
    sdk = SDK
    readers = []
    for path in sorted(sdk.rglob("*.py")):
        for line in text(path).splitlines():
            if re.search(r"\._aliases\b", line) and not re.search(r"self\._aliases\s*(=|\.append)", line):
                readers.append((path.relative_to(sdk).as_posix(), line.strip()))
    assert readers == [("runtime/resource.py", "for parent_alias in parent._aliases:")]
    source = text(sdk / "runtime" / "resource.py")
    # ...inside all_aliases, which prepare_aliases calls only without alias specs.
    prepare = source[source.index("async def prepare_aliases") : source.index("async def _create_provider_ref")]
    assert prepare.index("if supports_alias_specs:") < prepare.index("else:") < prepare.index("all_aliases(")


def test_every_call_the_sdk_hands_to_an_executor_goes_to_the_loops_default_one():
    """The monitor's swap sets the run's loop's default executor: it holds where every
    `run_in_executor` of the SDK's runtime (the monitor's and the engine's calls) passes None,
    the default. One that named an executor of its own would run on a thread as shipped: no
    request would change, the run would only take longer."""
    calls = []
    for path in sorted((SDK / "runtime").rglob("*.py")):
        for node in nodes(path):
            if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "run_in_executor":
                calls.append((path.relative_to(SDK).as_posix(), ast.unparse(node.args[0])))
    assert len(calls) >= 5 and {executor for _, executor in calls} == {"None"}, calls
    assert {path for path, _ in calls} >= {"runtime/resource.py", "runtime/invoke.py"}


def test_the_sdk_calls_get_stack_trace_by_its_global_name_with_no_arguments_and_nowhere_else():
    """The stack trace's swap replaces the module global `pulumi.runtime.resource._get_stack_trace`:
    it holds where the SDK calls that name without arguments (registrations and reads), and no
    other module of the SDK names it (an import by value would keep the SDK's own)."""
    calls = []
    for path in sorted(SDK.rglob("*.py")):
        for node in nodes(path):
            if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "_get_stack_trace":
                calls.append((path.relative_to(SDK).as_posix(), ast.unparse(node)))
            elif isinstance(node, ast.ImportFrom) and any(alias.name == "_get_stack_trace" for alias in node.names):
                calls.append((path.relative_to(SDK).as_posix(), ast.unparse(node)))
    assert calls and set(calls) == {("runtime/resource.py", "_get_stack_trace()")}
    assert not inspect.signature(pulumi.runtime.resource._get_stack_trace).parameters
