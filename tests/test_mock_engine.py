"""The mock engine itself: every event loop the mock monitor makes is closed at the end. Its three
changes inside the SDK, and the tests that they change nothing a run sends, are
tools/sdk_swaps.py's and tests/test_sdk_swaps.py's."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from google.protobuf import struct_pb2
from pulumi.runtime.proto import resource_pb2

from tools import mock_engine
from tools.azure_mocks import CLIENT_CONFIG_TOKEN, AzureMocks
from tools.mock_engine import RecordingMonitor


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
