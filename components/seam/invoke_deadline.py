"""An azure-native or builtin invoke the program makes before it registers anything (the
existing cluster's getManagedCluster and listClusterUserCredential, the stack's own state:
components/live_reader.py), with a deadline of its own: the SDK gives an invoke none. It
runs on a daemon thread with its own event loop, executor and RPCManager, so that nothing it
leaves behind holds the program's run. Why each, and the sources (pulumi/runtime/invoke.py,
settings.py, sync_await.py, stack.py): docs/design/invoke-deadline.md."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from components.seam.deadline import gather
from components.seam.reader import InvokeFailed

T = TypeVar("T")

# An invoke's first call starts azure-native's plugin (some seconds on a slow runner), then ARM
# answers in one or two; AKS's own calls are not long-running.
INVOKE_SECONDS = 120.0


class DaemonExecutor(ThreadPoolExecutor):
    """Each call on a daemon thread of its own, which nothing joins at exit; a ThreadPoolExecutor,
    as an event loop's default executor must be (asyncio base_events.py `set_default_executor`)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:  # noqa: BLE001 - handed to the future's waiter
                future.set_exception(error)

        threading.Thread(target=run, daemon=True, name="aks-gpu-invoke").start()
        return future


def typed(call: Callable[[], T]) -> T:
    """`call()`, an invoke: its failure, a bare Exception in the SDK, raised as InvokeFailed."""
    try:
        return call()
    except Exception as error:
        if type(error) is Exception:
            raise InvokeFailed(str(error)) from error
        raise


def within(call: Callable[[], T], what: str, seconds: float = INVOKE_SECONDS) -> T:
    """`call()` (an invoke), or TimeoutError naming `what` once `seconds` have passed."""
    context = contextvars.copy_context()

    def isolated() -> T:
        from pulumi.runtime import settings
        from pulumi.runtime.rpc_manager import RPCManager

        settings.SETTINGS.rpc_manager = RPCManager()  # a context variable: this copy's only
        loop = asyncio.new_event_loop()
        loop.set_default_executor(DaemonExecutor())
        asyncio.set_event_loop(loop)
        try:
            return typed(call)
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    try:
        return gather([lambda: context.run(isolated)], seconds)[0]
    except TimeoutError:
        raise TimeoutError(f"{what} got no answer within {seconds:g} s") from None
