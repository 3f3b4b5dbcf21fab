"""The mock engine's three changes inside Pulumi's SDK, for the length of a run; none changes
a byte of what a run sends. Why, and what each saves: docs/design/house.md, "The mock engine".

- The URN of each alias of each resource, which the SDK computes as an Output in
  `Resource.__init__` (`collapse_alias_to_urn`, into `self._aliases`), is not computed. Only
  `all_aliases` reads that list, for a monitor without alias specs (pulumi/runtime/resource.py
  `prepare_aliases`); the CLI's engine has them (pulumi/pulumi 1b594989
  pkg/resource/deploy/source_eval.go `SupportsFeature`: "aliasSpecs" true) and so has the mock
  monitor, so what a run sends is the same. An azure-native resource carries some sixty type
  aliases, and their Outputs were half a run's time (pulumi/pulumi#10010).
- The stack trace each registration carries (pulumi/runtime/resource.py `_get_stack_trace`)
  is made from the same frames without `traceback.extract_stack`, which reads every frame's
  source line (linecache), and with each frame's URI made once, not once per registration:
  under pytest a registration's stack is some fifty frames deep, and the SDK's way was a
  fifth of a run's time.
- The SDK's calls to the monitor, which it hands to its event loop's default executor
  (`run_in_executor(None, ...)` in pulumi/runtime/resource.py, invoke.py, settings.py,
  stack.py: a pool of threads, each with an event loop of its own), run at once on the thread
  that makes them, with an event loop of their own as a worker's: the mock monitor answers in
  the process, and the hand-over to a thread and back (the GIL's switch interval, the loop's
  wake-up) was a tenth to a fifth of a run's CPU.

tests/test_sdk_swaps.py pins them: the SDK functions still have the shape and the callers the
swaps assume, nothing else reads the alias list, every stack trace is the SDK's own frame for
frame, and a run sends the engine the same bytes with the swaps as without. It reads the
installed SDK, so `make test` checks it at the top of pyproject.toml's range on pulumi and
`make lowest` at the bottom; unlike the provider host's patch
(components/seam/provider_host_patch.py) it runs only in this repository's own
virtualenvs, never in a user's `pulumi up`, so it needs no range of its own."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pulumi.resource
import pulumi.runtime.resource
from pulumi.runtime import settings
from pulumi.runtime.proto import resource_pb2, source_pb2
from pulumi.runtime.sync_await import _ensure_event_loop


def alias_urn_not_computed(alias: Any, name: str, type_: str, parent: Any) -> None:
    """Stands in for `pulumi.resource.collapse_alias_to_urn` during a run."""
    return None


@contextlib.contextmanager
def alias_urns_left_to_the_engine() -> Iterator[None]:
    """The swap, for one run under a monitor with alias specs; undone after it."""
    if not settings.monitor_supports_feature(resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS):
        yield  # a monitor without alias specs reads the list: leave the SDK as it is
        return
    original = pulumi.resource.collapse_alias_to_urn
    pulumi.resource.collapse_alias_to_urn = alias_urn_not_computed  # type: ignore[assignment]
    try:
        yield
    finally:
        pulumi.resource.collapse_alias_to_urn = original


@functools.cache
def _stack_frame(filename: str, line: int | None) -> source_pb2.StackFrame:
    """A frame as the SDK's `rpc_frame` makes it (`_get_source_position_for_frame`): its file's
    URI and its line, or no position where there is no file, no line, or no absolute path
    ("<string>", "<frozen runpy>": `Path.as_uri` refuses a relative one). One per line of code:
    the stack trace copies it (protobuf copies a message it is given into a repeated field)."""
    if filename == "" or line is None:
        return source_pb2.StackFrame(pc=None)
    try:
        uri = Path(filename).as_uri()
    except ValueError:
        return source_pb2.StackFrame(pc=None)
    return source_pb2.StackFrame(pc=source_pb2.SourcePosition(uri=uri, line=line))


def stack_trace_from_frames() -> source_pb2.StackTrace:
    """Stands in for `pulumi.runtime.resource._get_stack_trace` during a run, with its result:
    up the stack to the third `__init__` (Resource's, CustomResource's or ComponentResource's,
    the concrete class's), then the frames that called it, innermost first; empty where there
    is no such frame or nothing called it. The frames walked as `traceback.extract_stack`
    walks them (`f_back`, each frame's `co_filename`, `co_name` and `f_lineno`), but without
    looking up their source lines, which the SDK never reads."""
    frame: FrameType | None = sys._getframe()
    inits = 0
    while frame is not None:
        if frame.f_code.co_name == "__init__":
            inits += 1
            if inits == 3:
                break
        frame = frame.f_back
    if frame is None or frame.f_back is None:
        return source_pb2.StackTrace()
    frames = []
    caller: FrameType | None = frame.f_back
    while caller is not None:
        frames.append(_stack_frame(caller.f_code.co_filename, caller.f_lineno))
        caller = caller.f_back
    return source_pb2.StackTrace(frames=frames)


@contextlib.contextmanager
def stack_traces_from_frames() -> Iterator[None]:
    """The swap, for one run; undone after it. `register_resource` and `read_resource` call
    `_get_stack_trace` by its module's global name, which is what is swapped."""
    original = pulumi.runtime.resource._get_stack_trace
    pulumi.runtime.resource._get_stack_trace = stack_trace_from_frames
    try:
        yield
    finally:
        pulumi.runtime.resource._get_stack_trace = original


class CallingThread(concurrent.futures.ThreadPoolExecutor):
    """An executor that runs each call at once, on the thread that submits it, as one of the
    SDK's worker threads would: with an event loop of its own set and none running, so the mock
    monitor's own `_sync_await` (pulumi/runtime/mocks.py RegisterResource, Invoke) runs that
    loop and never re-enters the run's. No thread is started: `submit` never reaches the pool.
    A ThreadPoolExecutor because `loop.set_default_executor` takes nothing else."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.loop = asyncio.new_event_loop()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:  # type: ignore[override]
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        running = asyncio.events._get_running_loop()
        outer = asyncio.get_event_loop_policy().get_event_loop()
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(self.loop)
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # noqa: BLE001 (kept in the future, as the pool's worker does: concurrent/futures/thread.py _WorkItem.run)
            future.set_exception(error)
        finally:
            asyncio.set_event_loop(outer)
            asyncio.events._set_running_loop(running)
        return future


@contextlib.contextmanager
def monitor_called_on_the_calling_thread() -> Iterator[CallingThread]:
    """The swap, for one run: the run's event loop (the SDK's, `_ensure_event_loop`) hands its
    executor calls to a CallingThread; its own executor is put back after the run, and the
    stand-in's loop closed. `_default_executor` is where `run_in_executor(None, ...)` looks
    (asyncio/base_events.py); set_default_executor cannot put back the None it starts with."""
    loop = _ensure_event_loop()
    original = loop._default_executor  # type: ignore[attr-defined]
    stand_in = CallingThread()
    loop.set_default_executor(stand_in)
    try:
        yield stand_in
    finally:
        loop._default_executor = original  # type: ignore[attr-defined]
        stand_in.loop.close()
