"""The mock engine's two changes inside Pulumi's SDK, for the length of a run; neither changes
a byte of what a run sends. Why, and what each saves: docs/layout.md, "The mock engine".

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

tests/test_sdk_swaps.py pins them: the SDK functions still have the shape and the callers the
swaps assume, nothing else reads the alias list, every stack trace is the SDK's own frame for
frame, and a run sends the engine the same bytes with the swaps as without. It reads the
installed SDK, so `make test` checks it at the top of pyproject.toml's range on pulumi and
`make lowest` at the bottom; unlike the provider host's patch
(components/resources/provider_host_patch.py) it runs only in this repository's own
virtualenvs, never in a user's `pulumi up`, so it needs no range of its own."""

from __future__ import annotations

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
