"""The mock engine's one shortcut changes nothing a run sends: it skips the URN the SDK
computes for each alias of each resource it makes (`Resource._aliases`), which only a monitor
without alias specs reads, and the engine's requests are byte for byte those of the SDK as it
ships (tools/mock_engine.py `_alias_urns_left_to_the_engine`, docs/layout.md "The mock engine")."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from pathlib import Path
from typing import Any

import pulumi
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import resource_pb2

from tools import mock_engine
from tools.azure_mocks import CLIENT_CONFIG_TOKEN, AzureMocks
from tools.mock_engine import RecordingMonitor, run_program

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


def sent_by(stack: str, preview: bool, overrides: dict[str, Any]) -> tuple[list[tuple[str, bytes]], Any]:
    monitor = WireMonitor()
    run = run_program(stack, overrides=overrides, monitor=monitor, preview=preview)
    # The SDK's worker threads answer registrations in any order; what each request says is the point.
    return sorted(monitor.sent), ({k: (v.value, v.secret) for k, v in run.outputs.items()}, run.warnings, run.infos)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_run_sends_the_engine_the_same_requests_with_the_shortcut_as_without(case: str, monkeypatch: pytest.MonkeyPatch):
    stack, preview, overrides = CASES[case]
    shortcut = sent_by(stack, preview, overrides)
    monkeypatch.setattr(mock_engine, "_alias_urns_left_to_the_engine", contextlib.nullcontext)
    sdk_as_shipped = sent_by(stack, preview, overrides)
    assert shortcut[0] and shortcut[0] == sdk_as_shipped[0]
    assert shortcut[1] == sdk_as_shipped[1]


def test_the_shortcut_is_taken_under_the_mock_monitor_and_undone_after_the_run():
    seen: list[Any] = []

    def body() -> None:
        seen.append(pulumi.resource.collapse_alias_to_urn)

    original = pulumi.resource.collapse_alias_to_urn
    mock_engine.run_under_mocks(body, monitor=RecordingMonitor(AzureMocks()))
    assert seen == [mock_engine._alias_urn_not_computed]
    assert pulumi.resource.collapse_alias_to_urn is original


def test_only_a_monitor_without_alias_specs_reads_the_urns_the_shortcut_skips():
    """If an SDK release reads `Resource._aliases` anywhere else, the shortcut may change a
    run: this fails, and the shortcut must be checked again."""
    sdk = Path(pulumi.__file__).parent
    readers = []
    for path in sorted(sdk.rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search(r"\._aliases\b", line) and not re.search(r"self\._aliases\s*(=|\.append)", line):
                readers.append((path.relative_to(sdk).as_posix(), line.strip()))
    assert readers == [("runtime/resource.py", "for parent_alias in parent._aliases:")]
    source = (sdk / "runtime" / "resource.py").read_text(encoding="utf-8")
    # ...inside all_aliases, which prepare_aliases calls only without alias specs.
    prepare = source[source.index("async def prepare_aliases") : source.index("async def _create_provider_ref")]
    assert prepare.index("if supports_alias_specs:") < prepare.index("else:") < prepare.index("all_aliases(")


def test_a_worker_thread_that_served_only_an_invoke_has_its_loop_closed_at_the_end():
    """The mock monitor gives each thread it serves on an event loop of its own, an invoke's
    too; `make render` closes every one it knows of at its exit (close_event_loops). One it
    did not know of was left open once, in a loaded run of test_render."""
    monitor = RecordingMonitor(AzureMocks())
    loops: list[Any] = []

    def invoke_on_a_fresh_thread() -> None:
        monitor.Invoke(resource_pb2.ResourceInvokeRequest(tok=CLIENT_CONFIG_TOKEN, args=struct_pb2.Struct()))
        loops.append(asyncio.get_event_loop())

    def body() -> None:
        thread = threading.Thread(target=invoke_on_a_fresh_thread)
        thread.start()
        thread.join()

    mock_engine.run_under_mocks(body, monitor=monitor)
    assert len(loops) == 1 and loops[0] in mock_engine.WORKER_LOOPS
